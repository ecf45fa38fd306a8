"""Which field or section of the subject's page a question asks about, by meaning.

A schema field says what it is in its own words: its name, its link verb and that
verb's patterns, its enum values. Those words, and every word of the lexicon's meanings
that share one of them (``lang/*.yaml``: "boss" and "дарга" mean what "reports to"
means), name the field in a question. The answer's type narrows the candidates: "who"
asks a link to people, "when" a date, "how much" a number; when the question's words
name no field, the one field of that type the subject's folder has is asked ("until
when does Initech's contract run?": its one date field); a field its words name is asked
whatever the type ("when did Globex become a customer?": the day its status changed). Otherwise an embedder, when
given, picks the field whose text is nearest the question's topical words, if it stands
clearly above the rest.

A link within one folder is read in both directions: "who does Bob report to" asks
Bob's own value; "who reports to Alex Kim" and "Alex Kim's direct reports" ask the pages
that link to Alex. A verb phrase of the field's own with the name after it, or an
inverse word ("manages") with the name before it, asks the pages that link in. A link
from a folder of people to the subject's is read from its other end when a question
asking who says its verb ("who works at Globex?": the people whose company is Globex).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from memserver.kb.schema import FieldSpec, FolderSpec, Schema
from memserver.kb.words import STOPWORDS
from read_agent.reading.lexicon import Lexicon, Match, find, meanings_of, same, tokens
from read_agent.reading.model import FieldAsked, Wants

# (a question's words, texts) -> their vectors: the question embedded as a query, the
# texts as passages (read_agent.reading.embedding)
Embed = Callable[[str, Sequence[str]], tuple[np.ndarray, Sequence[np.ndarray]]]
EMBED_MARGIN = 0.02  # a field picked by the embedder stands this far above the next
UNSAID_WORDS = 1  # topical words a field-asking question may hold beyond the field's
_DATE_TYPES = ("date",)
_NUMBER_TYPES = ("number", "integer", "money")


@dataclass(frozen=True)
class _Candidate:
    folder: FolderSpec
    field: FieldSpec
    own: dict[str, list[str]]  # phrases that name it: "own" and "inverse"
    verb_words: tuple[str, ...]  # the words of its verb and patterns
    strong: frozenset[str]  # its own phrases (name, verb, patterns, enum values)


def field_text(spec: FolderSpec, f: FieldSpec) -> list[str]:
    """A field's own words: its name, its verb, its verb's patterns (no name slot)."""
    texts = [f.name.replace("_", " ")]
    if f.verb:
        texts.append(f.verb.replace("_", " "))
        for verb in spec.link_verbs:
            if verb.verb == f.verb:
                texts += [p.text for p in verb.phrases if p.text]
    if f.description:
        texts.append(f.description)
    return texts


def candidates(folders: Sequence[FolderSpec], lex: Lexicon) -> list[_Candidate]:
    out = []
    for spec in folders:
        for f in spec.fields:
            texts = field_text(spec, f)
            core = [w for t in texts[: len(texts) - bool(f.description)] for w in tokens(t)]
            meanings = meanings_of(core, lex)
            strong = texts[: len(texts) - bool(f.description)] + list(f.values)
            own = strong + [w for m in meanings for w in m.words]
            inverse = [w for m in meanings for w in m.inverse]
            verb_words = tuple(tokens(" ".join(texts[1 : len(texts) - bool(f.description)])))
            out.append(
                _Candidate(spec, f, {"own": own, "inverse": inverse}, verb_words, frozenset(strong))
            )
    return out


def fits(f: FieldSpec, wants: Wants, schema: Schema | None) -> bool:
    """Whether a field can hold the answer a question wants."""
    if wants is Wants.WHEN:
        return f.type in _DATE_TYPES
    if wants in (Wants.AMOUNT, Wants.COUNT):
        return f.type in _NUMBER_TYPES
    if wants is Wants.WHO:
        if not f.is_link or f.folder is None or schema is None:
            return False
        target = next((s for s in schema.folders if s.name == f.folder), None)
        return target is not None and target.type == "person"
    return f.type not in _DATE_TYPES


def field_asked(
    question: Sequence[str],
    names: Sequence[range],
    wants: Wants,
    folders: Sequence[FolderSpec],
    schema: Schema | None,
    lex: Lexicon,
    embed: Embed | None = None,
    skip: Iterable[int] = (),
    profile: bool = False,
    aside: Iterable[int] = (),
) -> FieldAsked | None:
    """The field of ``folders`` (the subjects' first) the question's words ask about;
    ``names``: where the subjects' names stand among the words (never read as a field's
    words, and they say a link's direction); ``skip``: words of its time phrase;
    ``profile``: it asks who or what the subject is ("who's Alex Novak, and where does he
    work?"), so its "who" is the subject and asks no field by the answer's type. A field
    named while more than ``UNSAID_WORDS`` other topical words stay unexplained is not
    what the question asks ("which Globex customers asked for SMS notifications?");
    ``aside``: words the search read as a name though no subject's name says them
    ("Монгол хэлний" of a page the entity index resolved), never unexplained."""
    named = {i for span in names for i in span}
    framed = _framed(question, folders, lex) | set(skip)
    untopical = set(aside)
    best: tuple[tuple[int, int, int, int], FieldAsked] | None = None
    linking = _linking(folders[0], wants, schema) if folders and names else []
    for rank, cand in enumerate(candidates([*folders, *linking], lex)):
        taken = set(named)
        # one stop word alone names no field ("for", a project's customer verb); a phrase
        # of them does ("was at": attended)
        hits = [h for h in find(question, cand.own, taken) if not _a_stop_word(h.phrase)]
        across = cand.folder in linking and cand.field.folder == folders[0].name
        if across:  # another folder's link to the subject: named by its own verb only
            hits = [h for h in hits if _verb_said(h.phrase, cand)]
        if not hits:
            continue
        said = {i for h in hits for i in range(h.start, h.end)}
        unsaid = [
            w
            for i, w in enumerate(question)
            if i not in named | framed | said | untopical and w not in STOPWORDS and not w.isdigit()
        ]
        if len(unsaid) > UNSAID_WORDS:
            continue  # the field is a word of the question, not what it asks about
        fit = int(fits(cand.field, wants, schema))
        strong = int(any(h.phrase in cand.strong for h in hits))
        score = (fit, strong, sum(h.end - h.start for h in hits), -rank)
        inward = across or _inward(cand, hits, names, question)
        asked = FieldAsked(cand.folder.name, cand.field.name, inward, "words")
        if best is None or score > best[0]:
            best = (score, asked)
    typed = [f for f in folders[0].fields if fits(f, wants, schema)] if folders else []
    if best is not None and (best[0][0] or best[0][1] or wants is Wants.WHAT or len(typed) != 1):
        # a field the answer's type fits, or one its own words name whatever the type
        # ("when did Globex become a customer": the day its status changed)
        return best[1]
    rest = [
        w
        for i, w in enumerate(question)
        if i not in named | framed and w not in STOPWORDS and not w.isdigit()
    ]
    if (
        not profile
        and wants not in (Wants.WHAT, Wants.COUNT)  # "how many" names what it counts
        and len(typed) == 1
        and 0 < len(rest) <= UNSAID_WORDS + 1
    ):
        # the answer's type alone: the one field of that type the subject's folder has
        # ("who is Bataa?" asks nothing beyond its subject, "when did they get the
        # tracking link?" something else: no field)
        return FieldAsked(folders[0].name, typed[0].name, False, "type")
    if embed is not None and folders:
        return _nearest(question, named, framed, set(skip), wants, folders[0], schema, embed)
    return None


def _linking(subject: FolderSpec, wants: Wants, schema: Schema | None) -> list[FolderSpec]:
    """For a question asking who, the folders of people with a link to the subject's
    folder ("who works at Globex?": people, by their company): its pages are the
    answer, read from the link's other end."""
    if wants is not Wants.WHO or schema is None:
        return []
    return [
        spec
        for spec in schema.folders
        if spec.name != subject.name
        and spec.type == "person"
        and any(f.is_link and f.folder == subject.name for f in spec.fields)
    ]


def _verb_said(phrase: str, cand: _Candidate) -> bool:
    """Every word of the phrase is a word of the field's verb or its patterns."""
    return bool(cand.verb_words) and all(
        any(same(w, v) for v in cand.verb_words) for w in tokens(phrase)
    )


def _a_stop_word(phrase: str) -> bool:
    said = tokens(phrase)
    return len(said) == 1 and said[0] in STOPWORDS


def _framed(question: Sequence[str], folders: Sequence[FolderSpec], lex: Lexicon) -> set[int]:
    """Where the question's frame stands: its frame, answer, kind and order words, and
    the candidate folders' own names ("meeting", "project")."""
    folder_words = [w for spec in folders for w in (spec.name, spec.type)]
    phrases = {
        "frame": [*lex.frame, *lex.current, *folder_words],
        **{f"answer-{k}": v for k, v in lex.answer.items()},
        **{f"kind-{k}": v for k, v in lex.kinds.items()},
        **{f"order-{k}": v for k, v in lex.order.items()},
    }
    return {i for m in find(question, phrases) for i in range(m.start, m.end)}


def _inward(
    cand: _Candidate, hits: Sequence[Match], names: Sequence[range], question: Sequence[str]
) -> bool:
    """A link to the subject's own folder read from its other end (module docstring)."""
    if cand.field.folder != cand.folder.name or not names:
        return False
    at = min(span.start for span in names)
    for hit in hits:
        phrase = tokens(hit.phrase)
        inverse = hit.phrase in cand.own["inverse"] and hit.phrase not in cand.own["own"]
        verb = bool(cand.verb_words) and all(
            any(same(w, v) for v in cand.verb_words) for w in phrase
        )
        if inverse:
            return at < hit.start
        if verb and at >= hit.end:
            return True
    return _dative_name(question, names)


def _dative_name(question: Sequence[str], names: Sequence[range]) -> bool:
    """A Mongolian name in the dative ("Алекс Кимд хэн тайлагнадаг"): the link's target."""
    last = max(span.stop for span in names) - 1
    word = question[last] if 0 <= last < len(question) else ""
    return len(word) > 3 and word[-1] in "дт" and not word.isascii()


def _nearest(
    question: Sequence[str],
    named: set[int],
    framed: set[int],
    when: set[int],
    wants: Wants,
    spec: FolderSpec,
    schema: Schema | None,
    embed: Embed,
) -> FieldAsked | None:
    """The field whose own text is nearest the question's other words (not its names nor
    its time phrase), when it stands clearly above the next one. A question left with no
    topical word asks none ("what happened with Initech at the end of June?"), nor does one
    with more topical words than a field-asking question holds beyond the field's own
    (``UNSAID_WORDS``, and two for the field: "what drop in status calls did the pilot
    achieve?" asks about the calls, not the status)."""
    fields = [f for f in spec.fields if fits(f, wants, schema)]
    kept = [i for i in range(len(question)) if i not in named | when]
    topical = [question[i] for i in kept if i not in framed and question[i] not in STOPWORDS]
    rest = " ".join(question[i] for i in kept)
    if len(fields) < 2 or not topical or len(topical) > UNSAID_WORDS + 2:
        return None  # a field is a word or two, or the question asks about more than one
    query, vectors = embed(rest, ["; ".join(field_text(spec, f)) for f in fields])
    scores = [float(np.dot(query, v)) for v in vectors]
    order = sorted(range(len(fields)), key=lambda i: -scores[i])
    if scores[order[0]] - scores[order[1]] < EMBED_MARGIN:
        return None
    return FieldAsked(spec.name, fields[order[0]].name, False, "embedder")


def section_asked(
    question: Sequence[str], names: Sequence[range], sections: Sequence[str], lex: Lexicon
) -> str | None:
    """The section of the subject's page the question's words name ("what was decided"
    ~ Decisions, "юу шийдсэн" ~ Шийдвэрүүд), through the lexicon's meanings."""
    named = {i for span in names for i in span}
    best: tuple[int, str] | None = None
    for section in sections:
        own = tokens(section)
        phrases = [section, *(w for m in meanings_of(own, lex) for w in m.words)]
        hits = find(question, {"own": phrases}, set(named))
        size = sum(h.end - h.start for h in hits)
        if size and (best is None or size > best[0]):
            best = (size, section)
    return best[1] if best else None
