"""What a search question asks for, read without any LLM call.

``analyze(question_core, schema, folders)`` (the core is the question with its time
phrase removed, :attr:`memserver.timeparse.window.TimeQuery.query`) returns an :class:`Intent`:

* ``terms``: the topical words (stop words, question words and folder words removed),
  what the keyword arm searches for; ``prefixes``: Mongolian word stems (case suffixes
  such as -тэй, -ын, -ийг stripped) searched as prefixes;
* ``identifiers``: tokens such as ``INV-2026-044`` (letters, digits and dashes) that
  must match exactly; ``names``: the terms the question writes as a name would be
  (capitalised after its first word, or holding a digit: "Zgorzelec", "Q3");
* ``folders``: schema folders the question names ("meetings", "decision", "уулзалт");
* ``relation``: a typed edge the question asks to follow ("who reports to X": verb
  ``reports_to``), from the schema's link fields and ``link_verbs`` patterns, with
  where in the question it was found (names after it are the edge's target);
* ``ngrams``: every run of 1-6 normalised words (with Mongolian suffix variants), what
  the title/alias arm compares with page names exactly;
* ``kind``: ``identifier``, ``relational``, ``entity`` (short, mostly a name) or
  ``concept`` (anything else); the search picks per-arm weights from it.

``plan_graph`` turns the entities a question names (title arm hits) into the typed-edge
paths the graph arm follows.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from memserver.kb.abbreviations import shortened
from memserver.kb.schema import FolderSpec, Schema
from memserver.kb.words import STOPWORDS, is_cyrillic, mn_stems, normalize_name, words
from memserver.search.fusion import Hit

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_IDENTIFIER = re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[^\W\d_])[^\W_]+(?:[-/.][^\W_]+)+\b")
# Amounts written as one token: "$27,950", "€1.2", "18,400" (grouped digits or a currency
# sign); plain numbers ("2 weeks", "2026") are not.
_FIGURE = re.compile(r"[$€£¥₮]\d+(?:[,.]\d+)*|(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w,])")
MAX_NGRAM = 6


@dataclass(frozen=True)
class Relation:
    """A typed edge a question asks to follow."""

    verb: str
    from_folder: str  # the folder whose pages hold the edge
    to_folder: str  # the folder it points into
    start: int  # word position of the phrase in the question
    end: int


@dataclass(frozen=True)
class Intent:
    kind: str  # identifier | relational | entity | concept
    words: tuple[str, ...]  # normalised words of the question core
    terms: tuple[str, ...]
    prefixes: tuple[str, ...]
    identifiers: tuple[str, ...]
    folders: tuple[str, ...]
    relation: Relation | None
    ngrams: tuple[str, ...]
    names: tuple[str, ...] = ()
    # a name's spellings in the other script: Latin when it names in Cyrillic a page
    # titled in Latin letters ("глобекстэй" -> ("globex",)), Cyrillic when it is a name
    # written in Latin letters ("darkhan" -> ("дархан",)): search.cross_script
    across: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def has_topic(self) -> bool:
        """Whether anything besides folder and stop words is asked about."""
        return bool(self.terms or self.identifiers)

    def summary(self) -> dict[str, object]:
        """The reading a search response reports (``intent``)."""
        return {
            "kind": self.kind,
            "terms": list(self.terms),
            "identifiers": list(self.identifiers),
            "folders": list(self.folders),
            "relation": self.relation.verb if self.relation is not None else None,
        }


def _en_stem(word: str) -> str:
    """A crude English stem for matching phrases ("reports"/"reported" -> "report")."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def ngrams(tokens: list[str], max_n: int = MAX_NGRAM) -> list[str]:
    """Runs of 1..max_n words, plus variants with the last word's Mongolian ending removed.

    Single stop words and single characters are left out (they name nothing).
    """
    out: dict[str, None] = {}
    for n in range(min(max_n, len(tokens)), 0, -1):
        for i in range(len(tokens) - n + 1):
            run = tokens[i : i + n]
            if n == 1 and (run[0] in STOPWORDS or len(run[0]) < 2):
                continue
            out[" ".join(run)] = None
            for stem in mn_stems(run[-1]):
                out[" ".join([*run[:-1], stem])] = None
    return list(out)


def written_names(text: str) -> set[str]:
    """The words of ``text`` written as a name would be, normalised: capitalised anywhere
    but as the first word (which any sentence capitalises), or holding a digit."""
    out: set[str] = set()
    for i, match in enumerate(_WORD.finditer(text)):
        word = match.group(0)
        if (i > 0 and word[0].isupper()) or any(c.isdigit() for c in word):
            out.update(words(word))
    return out


def identifiers(text: str) -> list[str]:
    """Tokens like INV-2026-044 or PO/7781 (letters and digits joined by - / .) and
    amounts like $27,950 or 18,400: a note holds them exactly as asked."""
    found = [m.group(0) for m in _IDENTIFIER.finditer(text)]
    found += [m.group(0) for m in _FIGURE.finditer(text)]
    return list(dict.fromkeys(found))


def _folder_names(spec: FolderSpec) -> set[str]:
    names = {spec.name.lower(), spec.type.lower()}
    for name in list(names):
        names.add(_en_stem(name))
        names.add(name + "s")
        if name.endswith("y"):
            names.add(name[:-1] + "ies")
        if name.endswith("ies"):
            names.add(name[:-3] + "y")
    return {normalize_name(n) for n in names if n}


def _lead_words(spec: FolderSpec) -> set[str]:
    """The one-word names a description opens with: "Meetings, calls, demos, kickoffs,
    reviews, one-on-ones and syncs, internal or ..." gives meetings ... syncs."""
    lead = re.split(r"[:.;(]", spec.description, maxsplit=1)[0]
    out: set[str] = set()
    for item in lead.split(","):
        parts = [p.strip() for p in re.split(r"\s+and\s+|\s+or\s+", item.strip())]
        if not all(p and " " not in p for p in parts):
            break  # the list of names has ended ("internal or with customers ...")
        out.update(normalize_name(p) for p in parts)
    return {w for w in out if w and w not in STOPWORDS}


def _native_folder_words(specs: Iterable[FolderSpec]) -> dict[str, str]:
    """Description words that belong to exactly one folder -> that folder: Cyrillic
    words anywhere in it, and the names its description opens with (``_lead_words``)."""
    seen: dict[str, set[str]] = {}
    for spec in specs:
        for word in words(spec.description):
            if is_cyrillic(word) and len(word) >= 4 and word not in STOPWORDS:
                seen.setdefault(word, set()).add(spec.name)
        for word in _lead_words(spec):
            for form in {word, _en_stem(word)}:
                seen.setdefault(form, set()).add(spec.name)
    return {word: next(iter(owners)) for word, owners in seen.items() if len(owners) == 1}


def folder_mentions(tokens: list[str], specs: Collection[FolderSpec]) -> dict[str, list[int]]:
    """Folders the question names -> the word positions that name them."""
    by_name = {spec.name: _folder_names(spec) for spec in specs}
    native = _native_folder_words(specs)
    found: dict[str, list[int]] = {}
    for i, token in enumerate(tokens):
        variants = {token, _en_stem(token), *mn_stems(token)}
        for folder, names in by_name.items():
            if variants & names:
                found.setdefault(folder, []).append(i)
        for variant in variants:
            if variant in native:
                found.setdefault(native[variant], []).append(i)
    return found


@dataclass(frozen=True)
class _Phrase:
    stems: tuple[str, ...]
    verb: str
    from_folder: str
    to_folder: str


def _phrases(schema: Schema, folders: Collection[str]) -> list[_Phrase]:
    out: list[_Phrase] = []

    def add(text: str, verb: str, src: str, dst: str) -> None:
        stems = tuple(_en_stem(w) for w in words(text.replace("_", " ")))
        if not stems:
            return
        if len(stems) == 1 and (stems[0] in STOPWORDS or words(text)[0] in STOPWORDS):
            return  # "for", "about": too common to mean an edge on their own
        out.append(_Phrase(stems, verb, src, dst))

    folder_words = set().union(*(_folder_names(spec) for spec in schema.folders))
    for spec in schema.folders:
        if spec.name not in folders:
            continue
        for field in spec.fields:
            if field.type in ("link", "links") and field.folder and field.folder in folders:
                verb = field.verb or field.name
                add(verb, verb, spec.name, field.folder)
                # A field named like a folder ("project") names the folder, not an edge.
                if field.name != verb and normalize_name(field.name) not in folder_words:
                    add(field.name, verb, spec.name, field.folder)
        for lv in spec.link_verbs:
            if lv.to not in folders:
                continue
            add(lv.verb, lv.verb, spec.name, lv.to)
            for phrase in lv.phrases:
                add(phrase.text, lv.verb, spec.name, lv.to)
    # Longer phrases first: "reports directly to" before "reports to".
    out.sort(key=lambda p: -len(p.stems))
    return out


def find_relation(tokens: list[str], schema: Schema, folders: Collection[str]) -> Relation | None:
    """The first (longest) typed-edge phrase found in the question."""
    stems = [_en_stem(t) for t in tokens]
    for phrase in _phrases(schema, folders):
        n = len(phrase.stems)
        for i in range(len(stems) - n + 1):
            window = stems[i : i + n]
            if all(
                w == p or (is_cyrillic(p) and tokens[i + j].startswith(p))
                for j, (w, p) in enumerate(zip(window, phrase.stems, strict=True))
            ):
                return Relation(phrase.verb, phrase.from_folder, phrase.to_folder, i, i + n)
    return None


def analyze(core: str, schema: Schema, folders: Collection[str]) -> Intent:
    """Read the question core (time phrase already removed) against the schema."""
    tokens = words(core)
    specs = [spec for spec in schema.folders if spec.name in folders]
    mentions = folder_mentions(tokens, specs)
    relation = find_relation(tokens, schema, folders)
    idents = identifiers(core)
    folder_positions = {i for positions in mentions.values() for i in positions}
    relation_positions = set(range(relation.start, relation.end)) if relation else set()
    ident_words = {w for ident in idents for w in words(ident)}
    terms: list[str] = []
    prefixes: list[str] = []
    for i, token in enumerate(tokens):
        if token in STOPWORDS or i in folder_positions or i in relation_positions:
            continue
        if token in ident_words or (len(token) < 2 and not token.isdigit()):
            continue
        terms.append(token)
        prefixes.extend(mn_stems(token)[-1:])  # the shortest stem: widest prefix
    if idents:
        kind = "identifier"
    elif relation is not None:
        kind = "relational"
    elif 0 < len(terms) <= 3 and len(tokens) <= 5:
        kind = "entity"
    else:
        kind = "concept"
    named = written_names(core)
    return Intent(
        kind=kind,
        words=tuple(tokens),
        terms=tuple(dict.fromkeys(terms)),
        names=tuple(t for t in dict.fromkeys(terms) if t in named),
        prefixes=tuple(dict.fromkeys(prefixes)),
        identifiers=tuple(idents),
        folders=tuple(sorted(mentions, key=lambda f: min(mentions[f]))),
        relation=relation,
        ngrams=tuple(dict.fromkeys([*ngrams(tokens), *ngrams(shortened(tokens))])),
    )


# --------------------------------------------------------------------------- graph paths


def folder_verbs(schema: Schema, a: str, b: str) -> list[str]:
    """Typed verbs declared between folders ``a`` and ``b`` (either way)."""
    verbs: set[str] = set()
    for src, dst in ((a, b), (b, a)):
        try:
            spec = schema.folder(src)
        except Exception:  # an unknown folder declares no verbs
            continue
        for f in spec.fields:
            if f.type in ("link", "links") and f.folder == dst:
                verbs.add(f.verb or f.name)
        verbs.update(lv.verb for lv in spec.link_verbs if lv.to == dst)
    return sorted(verbs)


@dataclass(frozen=True)
class GraphPlan:
    """Which edges to follow from which entity, into which folder."""

    entity: str  # page id
    into: str  # folder
    verbs: tuple[str, ...] | None
    direction: str
    label: str


def plan_graph(
    entities: Sequence[Hit],
    intent: Intent,
    schema: Schema,
    folders: Collection[str],
) -> list[GraphPlan]:
    """Graph paths the question asks for, from the entities it names.

    * a relation ("who reports to X", "projects owned by X") whose ends fit the entity's
      folder: that verb, inward when the entity is the edge's target;
    * else a folder the question names ("latest meeting with X"): every typed verb
      between the two folders (falling back to any edge when none is declared).
    """
    plans: list[GraphPlan] = []
    relation = intent.relation
    for ent in entities:
        ent_folder = ent.folder
        if relation is not None and ent_folder in (relation.from_folder, relation.to_folder):
            plans.append(_relation_plan(ent, relation, intent))
            continue
        for target in intent.folders:
            if target == ent_folder or target not in folders:
                continue
            verbs = folder_verbs(schema, target, ent_folder)
            plans.append(
                GraphPlan(ent.id, target, tuple(verbs) or None, "both", "+".join(verbs) or "linked")
            )
    return plans


def _relation_plan(ent: Hit, relation: Relation, intent: Intent) -> GraphPlan:
    if relation.from_folder == relation.to_folder:
        # Same folder both ends: the word order decides ("who reports to X" = inward).
        position = _entity_position(ent, intent)
        inward = position is None or position >= relation.end
    else:
        inward = ent.folder == relation.to_folder
    into = relation.from_folder if inward else relation.to_folder
    return GraphPlan(ent.id, into, (relation.verb,), "in" if inward else "out", relation.verb)


def _entity_position(ent: Hit, intent: Intent) -> int | None:
    """Where in the question the entity's matched name starts (word index)."""
    gram = (ent.name or "").split()
    if not gram:
        return None
    words = list(intent.words)
    for i in range(len(words) - len(gram) + 1):
        if all(words[i + j].startswith(g) for j, g in enumerate(gram)):
            return i
    return None
