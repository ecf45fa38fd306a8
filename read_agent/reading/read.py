"""The one reading of a question (see the package docstring)."""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from memserver.kb.abbreviations import with_words
from memserver.kb.schema import FolderSpec, Schema
from memserver.kb.translit import same_name_across_scripts, transliterate
from memserver.kb.words import STOPWORDS, mn_stems
from memserver.timeparse.parse import UserError, find_windows
from read_agent.reading.fields import Embed, field_asked, section_asked
from read_agent.reading.lexicon import (
    Lexicon,
    Match,
    Meaning,
    expanded,
    find,
    lexicon,
    meanings_of,
    same,
    says,
    tokens,
)
from read_agent.reading.model import Kind, Reading, Subject, Wants

BEFORE_CHANGE = "before-change"
_WANTS = (Wants.WHEN, Wants.WHO, Wants.AMOUNT, Wants.COUNT, Wants.WHERE)  # the first found decides
FOCUS_WORDS = 3  # a kind asked for is named in at most this many words
# Kinds of question that say what form the answer takes (the records that support it,
# "direct testimony or an inference"), never what it is about: no note says "testimony"
# of its topic. (Not whether the sources agree: with its words left out, a rewording
# of such a question answered fewer of its facts.)
FORM_KINDS = (Kind.EVIDENCE,)


@dataclass(frozen=True)
class Context:
    """What the reading draws on besides the question's words: the schema, the pages the
    search found by their names (``subjects``, with every name of each), the search's
    reading of time and topic (``kb_query``'s ``time`` and ``intent``), the
    conversation's earlier subjects, and an embedder for what the words leave open."""

    schema: Schema | None = None
    subjects: Sequence[Subject] = ()
    names: Mapping[str, Sequence[str]] | None = None  # subject id -> its names
    time: Mapping[str, Any] | None = None
    intent: Mapping[str, Any] | None = None
    earlier: Sequence[Subject] = ()
    embed: Embed | None = None
    # the folders of pages a name of the question may be, when the index could not tell
    # which ("Alex": Alex Kim or Alex Novak, both people)
    unclear: Sequence[str] = ()


def read(question: str, context: Context | None = None, lex: Lexicon | None = None) -> Reading:
    """What ``question`` asks (see :class:`read_agent.reading.model.Reading`)."""
    ctx = context or Context()
    lex = lex or lexicon()
    q = expanded(tokens(question), lex)
    time = ctx.time or {}
    intent = ctx.intent or {}
    called = {s.id: (ctx.names or {}).get(s.id, (s.title,)) for s in ctx.subjects}
    spans = name_spans(q, [n for s in ctx.subjects for n in called[s.id]])
    # a subject said only inside a longer subject's name ("the Globex rollout": the
    # project, not Globex) is not asked about
    inside = {s.id for s in ctx.subjects if _only_inside(name_spans(q, called[s.id]), spans)}
    ctx = replace(ctx, subjects=[s for s in ctx.subjects if s.id not in inside])
    ours = _ours_at(q, ctx.schema, lex, spans)
    named = {i for span in spans for i in span} | ours
    kinds = _kinds(q, lex, spans)
    window = time.get("window") if isinstance(time.get("window"), Mapping) else None
    # a change asked of what held on one date; a decision's date is when it was made
    since_day = bool(time.get("point")) and Kind.CHANGE in kinds and Kind.DECISION not in kinds
    as_of = _as_of(q, lex, window, since_day)
    if as_of is not None and not as_of.startswith(BEFORE_CHANGE):
        kinds |= {Kind.AS_OF}
    wants = _wants(q, lex)
    if wants in (Wants.AMOUNT, Wants.COUNT) and _asks_unsaid(q, lex):
        wants = Wants.WHAT  # "why did they ask for per-shipment pricing?": a cause, no figure
    typed, typed_at = _typed_alone(q, question, lex)
    if wants is Wants.WHAT and typed is not None:
        wants = typed
    folders = _folders(ctx, intent)
    when_said = _time_phrases(time, question)
    said_when = _phrase_at(q, when_said) | typed_at
    as_names = _read_as_names(q, question, intent, lex)
    field = (
        field_asked(
            q,
            spans,
            wants,
            folders,
            ctx.schema,
            lex,
            ctx.embed,
            said_when,
            Kind.PROFILE in kinds,
            as_names,
        )
        if folders
        else None
    )
    subject_folders = [f for f in folders if f.name in {s.folder for s in ctx.subjects}]
    if _fields_of_parts(
        question, subject_folders, [n for s in ctx.subjects for n in called[s.id]], ctx.schema, lex
    ):
        # "which company employs Alex Novak, and in what role?": each part a field of the
        # page, the page's fields answer (its profile), not one of them
        kinds |= {Kind.PROFILE}
        field = None
    section = next(
        (found for f in subject_folders if (found := section_asked(q, spans, f.sections, lex))),
        None,
    )
    terms = _terms(q, named | said_when, intent, lex, as_of is not None)
    kind_words = {q[i] for i in _folder_words(q, ctx.schema, lex)}
    of_person = _of_person(terms, _person(ctx), lex)  # "paid" of a person: a salary, asked
    senses = _senses(q, terms, lex, wants) + of_person
    return Reading(
        question=question,
        wants=wants,
        terms=terms,
        senses=senses,
        ours=bool(ours) or (not ctx.subjects and says(q, lex.ours.get("own", ()), exact=True)),
        whole=_whole(terms, senses, lex),
        valued=_valued(q, ctx, lex, wants, window is not None, named, terms),
        which=_which(q, ctx.schema, lex),
        focus=_focus(q, terms, named | said_when | _folder_words(q, ctx.schema, lex), lex)
        + _asked(terms, lex)
        + tuple(t for t, _ in of_person),
        unsaid=_asked_unsaid(q, terms, lex),
        parts=_parts(question, terms, lex),
        topic=tuple(t for t in terms if not any(same(t, w) for w in kind_words)),
        kinds=frozenset(kinds),
        subjects=tuple(ctx.subjects),
        field=field,
        section=section,
        identifiers=tuple(
            str(i)
            for i in intent.get("identifiers") or ()
            if not any(str(i).lower() in p.lower() for p in when_said)  # "mid-2024"
        ),
        folders=tuple(str(f) for f in intent.get("folders") or ()),
        meant=_meant(q, ctx.schema, lex),
        relation=str(intent["relation"]) if intent.get("relation") else None,
        order=str(time["order"]) if time.get("order") else _order(q, time, lex),
        window=window,
        soft=bool(time.get("soft_recency")),
        tense=_tense(q, lex),
        as_of=as_of,
        current=says(q, lex.current),
        claim=_claim(question, q, lex) if Kind.EVIDENCE in kinds else None,
        earlier=tuple(ctx.earlier),
    )


def name_spans(question: Sequence[str], names: Sequence[str]) -> list[range]:
    """Where the names stand among the question's words (any ending, either script),
    longest name first, no word in two names. A name of several words said in another
    order stands where its words do with nothing but stop words between them ("the review
    of the Globex pilot": the page "Globex pilot review")."""
    taken: set[int] = set()
    spans: list[range] = []
    for name in sorted({n for n in names if n}, key=lambda n: -len(tokens(n))):
        parts = tokens(name)
        found = False
        for start in range(len(question) - len(parts) + 1):
            span = range(start, start + len(parts))
            if (
                parts
                and not (set(span) & taken)
                and all(_same_name(question[i], p) for i, p in zip(span, parts, strict=True))
            ):
                taken.update(span)
                spans.append(span)
                found = True
        if not found and len(parts) > 1 and (loose := _reordered(question, parts, taken)):
            taken.update(loose)
            spans.append(loose)
    return spans


def _reordered(question: Sequence[str], parts: Sequence[str], taken: set[int]) -> range | None:
    """The shortest stretch of free words holding each of a name's ``parts`` once and
    else only stop words, at most twice the name's length."""
    for size in range(len(parts), 2 * len(parts) + 1):
        for start in range(len(question) - size + 1):
            span = range(start, start + size)
            if set(span) & taken:
                continue
            left = list(parts)
            for i in span:
                part = next((p for p in left if _same_name(question[i], p)), None)
                if part is not None:
                    left.remove(part)
                elif question[i] not in STOPWORDS:
                    break
            else:
                if not left:
                    return span
    return None


def name_candidates(question: str, lex: Lexicon | None = None) -> list[str]:
    """The stretches of ``question`` that may name a page, for the entity index to
    resolve: each run of capitalised words, then that run with the words after it up to
    a word of the question's frame ("Монгол хэлний хувилбарыг хэн ..." -> "Монгол", then
    "Монгол хэлний хувилбарыг"); none of the lexicon's own words alone."""
    lex = lex or lexicon()
    found = re.findall(r"[^\s?!.,;:()\"“”]+", question)
    out: list[str] = []
    i = 0
    while i < len(found):
        word = found[i]
        if not word[:1].isupper() or says(tokens(word), [*lex.frame, *STOPWORDS]):
            i += 1
            continue
        j = i + 1
        while j < len(found) and found[j][:1].isupper():
            j += 1
        k = j
        while k < len(found) and k - j < 3 and not says(tokens(found[k]), [*lex.frame, *STOPWORDS]):
            k += 1
        for end in dict.fromkeys((j, k)):
            name = re.sub(r"['’]s$", "", " ".join(found[i:end])).strip("'’-")
            if name and name not in out:
                out.append(name)
        i = j
    return out


def _same_name(word: str, part: str) -> bool:
    """A word of the question is a word of a name: the same, with a case ending ("кимд"),
    or the name in the other script."""
    if word == part or part in mn_stems(word) or same_name_across_scripts(word, part):
        return True
    for stem in (word, *mn_stems(word)):  # "мартинезийн": "мартинез", "martinez"
        latin = transliterate(stem)
        if latin is not None and (latin.casefold() == part or same_name_across_scripts(stem, part)):
            return True
    return len(part) >= 4 and same(word, part)


def _time_phrases(time: Mapping[str, Any], question: str) -> list[str]:
    """The search's time phrase ("on October 7", "yesterday") and every other one the
    question holds ("in early 2022, and by mid-2024": both say when, neither is what is
    asked about)."""
    said = [str(time.get("phrase") or "")]
    # a date past the calendar is no time phrase: its words stay
    with contextlib.suppress(UserError, ValueError, OverflowError):
        said += [phrase for _, phrase in find_windows(question)]
    return [p for p in said if p]


def _phrase_at(q: Sequence[str], phrases: Sequence[str]) -> set[int]:
    """Where the words of the phrases stand."""
    out: set[int] = set()
    for phrase in (tokens(p) for p in phrases):
        out |= {
            i
            for start in range(len(q) - len(phrase) + 1)
            if phrase and list(q[start : start + len(phrase)]) == phrase
            for i in range(start, start + len(phrase))
        }
    return out


def _focus(q: Sequence[str], terms: Sequence[str], skip: set[int], lex: Lexicon) -> tuple[str, ...]:
    """The kind of thing the question asks for, when it names one: its topical words
    between a word that asks for a thing by its kind and the word that closes the kind's
    name, at most FOCUS_WORDS words on ("what monthly minimum did Globex agree": monthly,
    minimum; "Номин Трейд хэдэн ачааны машинтай вэ": ачааны, машинтай). None when nothing
    closes it that near ("what broke the export": asked by what it did), nor a word of a
    name, a folder, an order or a kind of question ("which decisions did we make")."""
    ask, close = lex.focus.get("ask", ()), lex.focus.get("close", ())
    asked = find(q, {"ask": ask})
    if not asked:
        return ()
    start = asked[0].end
    end = next(
        (i for i in range(start, min(len(q), start + FOCUS_WORDS + 1)) if says([q[i]], close)),
        None,
    )
    if end is None:
        return ()
    told = {
        i
        for m in find(q, {**lex.kinds, **lex.order, "frame": lex.frame})
        for i in range(m.start, m.end)
    }
    words = [q[i] for i in range(start, end) if i not in skip | told]
    return tuple(dict.fromkeys(t for t in terms if any(same(t, w) for w in words)))


def _ours_at(
    q: Sequence[str], schema: Schema | None, lex: Lexicon, spans: Sequence[range]
) -> set[int]:
    """Where the question names the team's own organisation: one of its names (the
    schema's ``organisation``) or an "own" word before a "whole" one ("our company",
    "манай компанийг"). Not the question's topic, as a subject's name is not."""
    taken = {i for span in spans for i in span}
    at: set[int] = set()
    if schema is not None and schema.organisation is not None:
        for span in name_spans(q, list(schema.organisation.names)):
            if not set(span) & taken:
                at.update(span)
    own, whole = lex.ours.get("own", ()), lex.ours.get("whole", ())
    for m in find(q, {"ours": [f"{o} {w}" for o in own for w in whole]}):
        at.update(range(m.start, m.end))
    return at


def _person(ctx: Context) -> bool:
    """The question is about a person: a subject, or a name the index could not tell
    apart, is of a folder of people."""
    if ctx.schema is None:
        return False
    people = {f.name for f in ctx.schema.folders if f.type == "person"}
    return any(s.folder in people for s in ctx.subjects) or bool(people & set(ctx.unclear))


def _of_person(
    terms: Sequence[str], person: bool, lex: Lexicon
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each term that says a meaning only when said of a person (``of_person``: "what is
    Alex paid?" asks a salary), with the meaning's words, in a question about one: not
    itself, which is a price's word too ("a paid pilot")."""
    if not person:
        return ()
    out = []
    for t in terms:
        for m in lex.meanings:
            if any(same(t, w) for w in m.of_person):
                out.append((t, tuple(w for w in m.words if " " not in w)))
    return tuple(out)


def _valued(
    q: Sequence[str],
    ctx: Context,
    lex: Lexicon,
    wants: Wants,
    window: bool,
    named: set[int],
    terms: Sequence[str],
) -> tuple[str, str, str] | None:
    """The folder, field and value of the pages the question asks for by a value of one
    of their fields ("which companies are customers?", "who are our customers?", "how
    many projects are active?"), when it names no page and no window: in the folder it
    names, else the one undated folder of those with that value ("customer" is also a
    meeting's kind; meetings are listed when named: "which meetings were with
    customers?"). Nothing else may be asked: every topical word is the value or a
    folder's word ("which customer pays 900₮?" asks one customer by a fact). None when
    it says no such value, or it stays open."""
    if ctx.schema is None or ctx.subjects or window or wants in (Wants.WHEN, Wants.AMOUNT):
        return None
    found = []
    for spec in ctx.schema.folders:
        for f in spec.fields:
            for v in f.values if f.type == "enum" else ():
                if any(not set(range(m.start, m.end)) & named for m in find(q, {v: [v]})):
                    found.append((spec, f.name, str(v)))
    said = set(_meant(q, ctx.schema, lex))
    chosen = [c for c in found if c[0].name in said] or [c for c in found if not c[0].date_field]
    if len(chosen) != 1:
        return None
    spec, field, value = chosen[0]
    kinds = [w for s in ctx.schema.folders for w in _folder_phrases(s, lex) if " " not in w]
    if any(not same(t, value) and not any(same(t, w) for w in kinds) for t in terms):
        return None
    return spec.name, field, value


def _whole(terms: Sequence[str], senses: Sequence[tuple[str, Sequence[str]]], lex: Lexicon) -> bool:
    """Who heads the subject as a whole is asked: every term is a word found by the
    holders of a role ("who leads Globex?", "who runs our company?"), so none names a
    part of it ("who leads sales?")."""
    by = dict(senses)
    return bool(terms) and all(set(lex.holders) & set(by.get(t, ())) for t in terms)


def _asked(terms: Sequence[str], lex: Lexicon) -> tuple[str, ...]:
    """The terms saying a meaning that is asked for when said ("broke" of "what broke
    the export?": a cause), the question's focus besides the kind it names."""
    return tuple(
        t
        for t in terms
        if any(m.asked and " " not in w and same(t, w) for m in lex.meanings for w in m.words)
    )


def _asks_unsaid(q: Sequence[str], lex: Lexicon) -> list[Meaning]:
    """The meanings a word of the question asks for without saying them ("why")."""
    return [m for m in lex.meanings if m.asked and m.words and says(q, m.asked_by)]


def _asked_unsaid(q: Sequence[str], terms: Sequence[str], lex: Lexicon) -> tuple[str, ...]:
    """A meaning asked for by a word that does not name it ("why did we drop per-seat
    pricing?": its cause), as its first word: a sentence saying any of its words
    ("because", "Root cause:", "шалтгаан") is preferred among those holding the words
    asked, none is required to. None when a term says it already."""
    return tuple(
        m.words[0]
        for m in _asks_unsaid(q, lex)
        if not any(same(t, w) for t in terms for w in m.words)
    )


def _parts(question: str, terms: Sequence[str], lex: Lexicon) -> tuple[tuple[str, ...], ...]:
    """The terms of each part of a question of several parts ("who is the technical lead
    now, since when, and what authority does the role carry?": technical, lead; authority,
    role, carry): the question is cut at its commas and joining words, and a stretch that
    holds no asking word belongs to the part before it. A part without terms of its own
    ("since when") asks about the others' subject; one part alone is no parts."""
    stretches = _stretches(question, lex)
    parts = [tuple(t for t in terms if any(same(t, w) for w in words)) for words in stretches]
    parts = [p for p in parts if p]
    return tuple(parts) if len(parts) > 1 else ()


def _fields_of_parts(
    question: str,
    folders: Sequence[FolderSpec],
    names: Sequence[str],
    schema: Schema | None,
    lex: Lexicon,
) -> bool:
    """Whether the question is of several parts each of which names, by its own words, a
    field of the subject's page, a different field each (no embedder's guess)."""
    stretches = _stretches(question, lex)
    if len(stretches) < 2 or not folders:
        return False
    asked = []
    for words in stretches:
        spans = name_spans(words, names)
        found = field_asked(words, spans, _wants(words, lex), folders[:1], schema, lex)
        if found is None or found.by != "words":
            return False
        asked.append(found.name)
    return len(set(asked)) == len(asked)


def _read_as_names(
    q: Sequence[str], question: str, intent: Mapping[str, Any], lex: Lexicon
) -> set[int]:
    """Where a stretch that may name a page (:func:`name_candidates`) holds words the
    search left out of its terms: it read them as a name ("Монгол хэлний локалчлал"
    -> "локалчлал")."""
    if not isinstance(intent.get("terms"), list):
        return set()
    terms = [str(t) for t in intent["terms"]]
    stretches = _phrase_at(q, name_candidates(question, lex))
    return {i for i in stretches if not any(same(q[i], t) for t in terms)}


def _pieces(question: str, lex: Lexicon) -> list[list[str]]:
    """The words of the question cut at its commas and joining words."""
    joins = "|".join(re.escape(w) for w in lex.parts.get("join", ()))
    cut = re.split(rf"[,;]|\s(?:{joins})\s" if joins else r"[,;]", question)
    return [words for words in (tokens(piece) for piece in cut) if words]


def _stretches(question: str, lex: Lexicon) -> list[list[str]]:
    """The words of each part of the question (:func:`_parts`)."""
    ask = lex.parts.get("ask", ())
    stretches: list[list[str]] = []
    for words in _pieces(question, lex):
        if stretches and not says(words, ask):
            stretches[-1] += words
        else:
            stretches.append(words)
    return stretches


def _typed_alone(q: Sequence[str], question: str, lex: Lexicon) -> tuple[Wants | None, set[int]]:
    """In a question of one piece (no comma nor joining word), the answer's type a word
    of ``answer_one_part`` says and where such words stand ("what was the start date
    ...": when; not "the policy, the date of the switch and the reason")."""
    if len(_pieces(question, lex)) > 1:
        return None, set()
    found = find(q, lex.answer_one_part)
    wants = next((w for w in _WANTS for m in found if m.key == w.value), None)
    return wants, {i for m in found for i in range(m.start, m.end)}


def _folder_phrases(spec: FolderSpec, lex: Lexicon) -> list[str]:
    """The words that mean a folder: its name, its type and their meanings' words."""
    own = tokens(spec.name) + tokens(spec.type)
    return [w for m in meanings_of(own, lex) for w in m.words] + [spec.name, spec.type]


def _kinds_named(q: Sequence[str], schema: Schema | None, lex: Lexicon) -> list[Match]:
    """Where the question's words name a kind of page, keyed by its folder: the folder
    ("meetings") or a value one of its fields takes ("customer": a company's status, a
    meeting's kind)."""
    if schema is None:
        return []
    phrases = {
        spec.name: _folder_phrases(spec, lex)
        + [str(v) for f in spec.fields if f.type == "enum" for v in f.values]
        for spec in schema.folders
    }
    return find(q, phrases)


def _folder_words(q: Sequence[str], schema: Schema | None, lex: Lexicon) -> set[int]:
    """Where the question's words name a kind of page (:func:`_kinds_named`)."""
    return {i for m in _kinds_named(q, schema, lex) for i in range(m.start, m.end)}


def _which(q: Sequence[str], schema: Schema | None, lex: Lexicon) -> str | None:
    """The folder of the page the question asks for by its kind: the kind named right
    after a word that asks for a thing by its kind ("which customer pays 900₮ per
    delivery?": companies), or None."""
    asked = find(q, {"ask": lex.focus.get("ask", ())})
    if not asked:
        return None
    return next((m.key for m in _kinds_named(q, schema, lex) if m.start == asked[0].end), None)


def _meant(q: Sequence[str], schema: Schema | None, lex: Lexicon) -> tuple[str, ...]:
    """The folders the question's words mean through the lexicon's meanings ("met",
    "уулзсан": the folder of meetings), beside those the search read by name; the one
    nearest the question's order word first ("when did we last meet, and what was
    decided": meetings before decisions)."""
    if schema is None:
        return ()
    orders = [m.start for m in find(q, lex.order)]
    at: dict[str, int] = {}
    for spec in schema.folders:
        found = find(q, {spec.name: _folder_phrases(spec, lex)})
        if found:  # nearest the order word first ("the last meeting": meetings)
            at[spec.name] = min(
                min((abs(m.start - o) for o in orders), default=m.start) for m in found
            )
    return tuple(sorted(at, key=lambda name: at[name]))


def _kinds(q: Sequence[str], lex: Lexicon, names: Sequence[range] = ()) -> set[Kind]:
    """The kinds the question's words say; a longer phrase of another key ("before the
    change": a day, not a change) takes its words first. A profile's words ask who or
    what a subject is only next to its name ("who is Bataa", "Батбаяр Дорж хэн бэ"; not
    "who is the logistics director at Nomin Trade"), and not when the name owns what
    follows it ("who is Globex's CEO": the CEO is asked)."""
    kinds = set()
    for m in find(q, lex.kinds):
        if m.key not in Kind._value2member_map_:
            continue
        if m.key == Kind.PROFILE and not any(_next_to(m, s, q, lex) for s in names):
            continue
        kinds.add(Kind(m.key))
    return kinds


def _only_inside(own: Sequence[range], spans: Sequence[range]) -> bool:
    """Each place a name stands lies within a longer name's."""
    return bool(own) and all(
        any(len(longer) > len(o) and set(o) <= set(longer) for longer in spans) for o in own
    )


def _next_to(phrase: Any, name: range, q: Sequence[str], lex: Lexicon) -> bool:
    """The phrase is right before the name, which owns nothing after it, or right after."""
    owner = name.stop < len(q) and q[name.stop] in lex.owner_mark
    return (phrase.end == name.start and not owner) or name.stop == phrase.start


def _wants(q: Sequence[str], lex: Lexicon) -> Wants:
    """The answer's type: a word of the question as written first, then with an ending
    ("хэдэн", how many, is not "хэдэнд", at what time, though one reads as the other
    with an ending); in each pass the first type of _WANTS found decides."""
    for exact in (True, False):
        for wants in _WANTS:
            if says(q, lex.answer.get(wants.value, ()), exact=exact):
                return wants
    return Wants.WHAT


def _order(q: Sequence[str], time: Mapping[str, Any], lex: Lexicon) -> str | None:
    """The order the lexicon's words ask ("originally": the oldest) where the search read
    none and no day or stretch of time either ("last" of "last week" is a window): the
    first order word not inside a longer phrase of a kind ("first learned")."""
    if time.get("window") or time.get("point"):
        return None
    taken = {i for m in find(q, lex.kinds) for i in range(m.start, m.end)}
    found = find(q, lex.order, taken)
    return found[0].key if found else None


def _tense(q: Sequence[str], lex: Lexicon) -> str | None:
    for tense in ("future", "past"):
        if says(q, lex.tense.get(tense, ())):
            return tense
        endings = lex.tense_endings.get(tense, ())
        if any(not w.isascii() and len(w) > 4 and w.endswith(endings) for w in q):
            return tense
    return None


def _folders(ctx: Context, intent: Mapping[str, Any]) -> list[FolderSpec]:
    """The subjects' folders, then those the question names."""
    if ctx.schema is None:
        return []
    by_name = {s.name: s for s in ctx.schema.folders}
    listed = [s.folder for s in ctx.subjects] + [str(f) for f in intent.get("folders") or ()]
    return [by_name[f] for f in dict.fromkeys(listed) if f in by_name]


def _senses(
    q: Sequence[str], terms: Sequence[str], lex: Lexicon, wants: Wants = Wants.WHAT
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each term said inside a meaning's phrase of several words whose word alone says
    another meaning ("charge" of "who is in charge of ...": alone, a price), with the
    words of the phrase's meaning and itself: the phrase says its meaning ("owns",
    "leads", "responsible"), not the word's other one. A word that says nothing else
    alone keeps its own sense ("contract" of "annual contract"), unless the phrase's
    meaning is one word wherever it is said ("kick" of "kick off": "start", "эхэлсэн").
    A question asking who (``wants``) finds a term of a meaning with ``holders`` by them
    too: "who runs procurement?" is answered by a role at the head of it ("Procurement
    Manager")."""
    phrases = {m.name: [w for w in m.words if " " in w] for m in lex.meanings}
    out: dict[str, tuple[str, ...]] = {}
    said_in: dict[str, set[str]] = {}  # term -> the meanings whose phrase says it
    for match in find(q, phrases):
        meaning = lex.meaning(match.key)
        if meaning is None:
            continue
        said = q[match.start : match.end]
        singles = [w for w in meaning.words if " " not in w]
        for term in terms:
            elsewhere = any(
                " " not in w and same(term, w)
                for other in lex.meanings
                if other.name != meaning.name
                for w in other.words
            )
            if any(same(term, w) for w in said):
                said_in.setdefault(term, set()).add(meaning.name)
                # a word of a phrase that is one word with its meaning's others ("kick"
                # of "kick off": "start", "эхэлсэн") is found by them too
                if elsewhere or (meaning.synonyms and term not in singles):
                    out[term] = tuple(dict.fromkeys([*out.get(term, ()), term, *singles]))
    if wants is Wants.WHO:
        for meaning in (m for m in lex.meanings if m.holders):
            singles = [w for w in meaning.words if " " not in w]
            holders = [*meaning.holders, *with_words(meaning.holders)]  # and "CTO"
            for term in terms:
                if meaning.name in said_in.get(term, ()) or any(same(term, w) for w in singles):
                    found_by = [*out.get(term, (term,)), *singles, *holders]
                    out[term] = tuple(dict.fromkeys(found_by))
    return tuple(out.items())


def _terms(
    q: Sequence[str], named: set[int], intent: Mapping[str, Any], lex: Lexicon, as_of: bool
) -> tuple[str, ...]:
    """The topical words: the search's terms (else the question's words) without the
    frame, a word asking who, when or where, the current state, nor a subject's name."""
    said = list(intent["terms"]) if isinstance(intent.get("terms"), list) else None
    frame_at = {
        i
        for m in find(
            q,
            {
                "frame": lex.frame,
                "current": lex.current,
                # a figure's words say a topic ("price", "үнэ"), the others do not, nor
                # a phrase asking for a figure ("how large")
                **{f"answer-{k}": v for k, v in lex.answer.items() if k != "amount"},
                "asks-amount": [p for p in lex.answer.get("amount", ()) if len(tokens(p)) > 1],
                **(
                    {k: lex.kinds.get(k, ()) for k in ("as_of", "before_change", "state")}
                    if as_of
                    else {}
                ),
                **{f"kind-{k.value}": lex.kinds.get(k.value, ()) for k in FORM_KINDS},
            },
        )
        for i in range(m.start, m.end)
    }
    topical = [w for i, w in enumerate(q) if i not in named and i not in frame_at]
    base = [str(t) for t in said] if said is not None else topical
    return tuple(
        dict.fromkeys(t for t in base if t not in STOPWORDS and any(same(t, w) for w in topical))
    )


def topical(text: str, lex: Lexicon | None = None, decisions: bool = True) -> set[str]:
    """The words of ``text`` that say a topic: no stop word, no word of the question's
    frame, its answer's type, an order, the current state, or a kind of question ("still
    current", "as of", "supporting records"); with ``decisions`` false, no word of a
    decision either ("what was decided" then names no topic)."""
    lex = lex or lexicon()
    q = tokens(text)
    framed = {
        i
        for m in find(
            q,
            {
                "frame": lex.frame,
                "current": lex.current,
                # a figure's words say a topic too ("the price then"), not the others
                **{f"answer-{k}": v for k, v in lex.answer.items() if k != "amount"},
                **{
                    f"kind-{k}": v for k, v in lex.kinds.items() if k != "decision" or not decisions
                },
                **{f"order-{k}": v for k, v in lex.order.items()},
            },
        )
        for i in range(m.start, m.end)
    }
    return {w for i, w in enumerate(q) if i not in framed and w not in STOPWORDS and len(w) > 2}


def _as_of(
    q: Sequence[str], lex: Lexicon, window: Mapping[str, Any] | None, since_day: bool = False
) -> str | None:
    """The day a question asks the state at (the last day of its window: "as of March
    2023" is 2023-03-31), BEFORE_CHANGE for "before the change", else None. ``since_day``:
    it asks what became since of what held on one date ("what prices did we have on
    2026-09-01, and what has changed since?": a change asked beside a date that is a
    day or period itself, not a span from or to one, and no decision the date could be
    the day of: "we decided on per-seat pricing in July; does it still hold?"), so it
    asks the state on that date."""
    if says(q, lex.kinds.get("before_change", ())):
        return BEFORE_CHANGE
    if window is None or not (
        since_day or says(q, lex.kinds.get("as_of", ())) or says(q, lex.kinds.get("state", ()))
    ):
        return None
    try:
        last = dt.date.fromisoformat(str(window.get("end") or "")[:10]) - dt.timedelta(days=1)
    except ValueError:
        return None
    return last.isoformat()


def _claim(question: str, q: Sequence[str], lex: Lexicon) -> str:
    """ "What supports X?": X, the question without its evidence and frame words, nor a
    clause left with stop words only ("..., saying for each whether it is direct
    testimony or an inference")."""
    frame = find(q, {"evidence": lex.kinds.get("evidence", ()), "frame": lex.frame})
    drop = {q[i] for m in frame for i in range(m.start, m.end)}
    kept: list[str] = []
    for clause in re.split(r"[,;]", question):
        said = [
            w for w in re.findall(r"[^\s?!.]+", clause) if tokens(w) and tokens(w)[0] not in drop
        ]
        if any(tokens(w)[0] not in STOPWORDS for w in said):
            kept += said
    while kept and tokens(kept[0])[0] in STOPWORDS:  # "the", "that": no part of the claim
        kept.pop(0)
    return " ".join(kept) or question


def section_of(question: str, sections: Sequence[str], lex: Lexicon | None = None) -> str | None:
    """The section of ``sections`` the question's words ask ("what was decided" ~
    Decisions), for a page the answer found rather than one the question named."""
    return section_asked(tokens(question), [], sections, lex or lexicon())
