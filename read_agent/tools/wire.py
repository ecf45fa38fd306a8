"""The memory server's tool results as the read agent reads them: ``kb_query``
(:class:`Found`), ``kb_brief`` (:class:`Brief`) and ``kb_get_page`` (:class:`Page`),
typed, and parsed once, where the tool answered
(:class:`read_agent.extractive.page_reader.PageReader`).

The wire form is JSON (``memserver.server.brief``, ``memserver.server.tools.page_views``);
what is malformed in it (a subject that is not an object, a field map that is not a map,
a list that is a string, a missing title) is read as absent, empty or as a one-item list
here, so no answer path checks a type again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

BRIEF_TOOL = "kb_brief"
N = TypeVar("N", int, float)


@dataclass(frozen=True)
class Change:
    """A value of a subject that changed after the day asked about."""

    field: str
    to: Any  # the new value (text, a list, or None when removed)
    date: str | None
    source: str | None = None  # the note that said it

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Change:
        return cls(
            str(raw.get("field") or ""),
            raw.get("to"),
            _text(raw.get("date")),
            _text(raw.get("source")),
        )


@dataclass(frozen=True)
class Earlier:
    """A value a subject held before: from when, until when, what replaced it, why."""

    field: str
    value: Any
    valid_from: str | None
    valid_to: str | None
    replaced_by: Any = None
    reason: str | None = None

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Earlier:
        return cls(
            str(raw.get("field") or ""),
            raw.get("value"),
            _text(raw.get("valid_from")),
            _text(raw.get("valid_to")),
            raw.get("replaced_by"),
            _text(raw.get("reason")),
        )


@dataclass(frozen=True)
class Subject:
    """A page the brief is about: its values now (or on the day asked), its status and
    deciders, the decisions it replaced or that replaced it, and its history."""

    id: str
    title: str
    folder: str = ""
    date: str | None = None
    status: str | None = None
    deciders: tuple[str, ...] = ()
    current: Mapping[str, Any] = field(default_factory=dict)
    supersedes: tuple[str, ...] = ()
    superseded_by: tuple[str, ...] = ()
    earlier: tuple[Earlier, ...] = ()
    changed_since: tuple[Change, ...] = ()

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Subject:
        current = raw.get("current")
        return cls(
            str(raw.get("id")),
            str(raw.get("title") or ""),
            str(raw.get("folder") or ""),
            _text(raw.get("date")),
            _text(raw.get("status")),
            tuple(str(d) for d in listed(raw.get("deciders"))),
            dict(current) if isinstance(current, Mapping) else {},
            tuple(str(x) for x in listed(raw.get("supersedes"))),
            tuple(str(x) for x in listed(raw.get("superseded_by"))),
            tuple(Earlier.parse(e) for e in _objects(raw.get("earlier"))),
            tuple(Change.parse(c) for c in _objects(raw.get("changed_since"))),
        )


@dataclass(frozen=True)
class Quote:
    """A note's own sentence the brief cites (``label`` direct) or the memory's reading."""

    text: str
    date: str | None
    page: str | None
    source: str | None
    author: str
    label: str

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Quote:
        return cls(
            str(raw.get("text") or ""),
            _text(raw.get("date")),
            _text(raw.get("page")),
            _text(raw.get("source")),
            str(raw.get("author") or ""),
            str(raw.get("label") or ""),
        )


@dataclass(frozen=True)
class Side:
    value: Any
    source: str | None


@dataclass(frozen=True)
class Conflict:
    """Two or more sources giving a field different values, still open."""

    field: str
    sides: tuple[Side, ...]
    date: str | None  # the sources' day
    recorded: str | None  # when the memory saw it
    page: str | None

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Conflict:
        sides = tuple(
            Side(x.get("value"), _text(x.get("source"))) for x in _objects(raw.get("sides"))
        )
        return cls(
            str(raw.get("field") or ""),
            sides,
            _text(raw.get("date")),
            _text(raw.get("recorded")),
            _text(raw.get("page")),
        )


@dataclass(frozen=True)
class Brief:
    """``kb_brief``'s answer: its subjects in the order it ranks them, its evidence and
    the open conflicts."""

    subjects: tuple[Subject, ...] = ()
    evidence: tuple[Quote, ...] = ()
    conflicts: tuple[Conflict, ...] = ()

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None) -> Brief:
        raw = raw or {}
        return cls(
            tuple(Subject.parse(s) for s in _objects(raw.get("subjects"))),
            tuple(Quote.parse(e) for e in _objects(raw.get("evidence"))),
            tuple(Conflict.parse(c) for c in _objects(raw.get("conflicts"))),
        )


def listed(value: Any) -> list[Any]:
    """A wire value that should be a list: a list as it is, one value as a list of one,
    nothing as an empty list."""
    if value is None or value == "":
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def _objects(value: Any) -> Iterable[Mapping[str, Any]]:
    return (x for x in listed(value) if isinstance(x, Mapping))


def _number(value: Any, kind: Callable[[Any], N]) -> N:
    """A wire number as ``kind`` (``int``, ``float``); what is none, or no number, is 0."""
    try:
        return kind(value or 0)
    except (TypeError, ValueError):
        return kind(0)


def _texts(raw: Mapping[str, Any], *keys: str) -> tuple[str, ...]:
    """The wire values of ``keys`` as text, "" for each one absent."""
    return tuple(str(raw.get(key) or "") for key in keys)


def _text(value: Any) -> str | None:
    return str(value) if value else None


@dataclass(frozen=True)
class TimelineEntry:
    """One dated line of a page's timeline: the day, what happened, the note that said it."""

    date: str | None
    text: str
    source: str | None = None

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> TimelineEntry:
        return cls(_text(raw.get("date")), str(raw.get("text") or ""), _text(raw.get("source")))


@dataclass(frozen=True)
class Hit:
    """One result of ``kb_query`` (a page, or a raw note ``source/...``), or a page the
    entity index resolved a name of the question to (``resolved``: that name), or a page
    the answer read (its id and folder)."""

    id: str
    title: str = ""
    folder: str = ""
    date: str | None = None
    score: float = 0.0
    snippet: str = ""
    ranks: Mapping[str, Any] = field(default_factory=dict)  # the arms that found it: rank
    labels: tuple[str, ...] = ()
    timeline: tuple[TimelineEntry, ...] = ()  # the page's dated lines the search matched
    resolved: str | None = None

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Hit:
        ranks = raw.get("ranks")
        return cls(
            str(raw.get("id") or ""),
            str(raw.get("title") or ""),
            str(raw.get("folder") or ""),
            _text(raw.get("date")),
            _number(raw.get("score"), float),
            str(raw.get("snippet") or ""),
            dict(ranks) if isinstance(ranks, Mapping) else {},
            tuple(str(x) for x in listed(raw.get("labels"))),
            tuple(TimelineEntry.parse(e) for e in _objects(raw.get("timeline"))),
            _text(raw.get("resolved")),
        )


@dataclass(frozen=True)
class Found:
    """``kb_query``'s answer: its results in order, the degraded reasons, how far ingest
    is (``ingest``: "12/28 notes ingested" while it runs) and how the search read the
    question (``time``: its window; ``intent``: terms, identifiers, folders, relation)."""

    results: tuple[Hit, ...] = ()
    degraded: tuple[str, ...] = ()
    ingest: str | None = None
    time: Mapping[str, Any] = field(default_factory=dict)
    intent: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None) -> Found:
        raw = raw or {}
        ingest = raw.get("ingest")
        summary = ingest.get("summary") if isinstance(ingest, Mapping) else None
        time, intent = raw.get("time"), raw.get("intent")
        return cls(
            tuple(Hit.parse(r) for r in _objects(raw.get("results"))),
            tuple(str(d) for d in listed(raw.get("degraded"))),
            summary if isinstance(summary, str) and summary else None,
            dict(time) if isinstance(time, Mapping) else {},
            dict(intent) if isinstance(intent, Mapping) else {},
        )


@dataclass(frozen=True)
class AsOf:
    """What ``kb_get_page(as_of=DAY)`` adds to a page: the day, whether anything of the
    page was known then (``None``: the page has no value history yet), each field's value
    then with when it held, what changed after the day, and today's values."""

    date: str | None
    known: bool | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)  # field -> its value then, and when
    changed_since: tuple[Change, ...] = ()
    current_fields: Mapping[str, Any] = field(default_factory=dict)
    note: str | None = None

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> AsOf:
        known, fields, current = raw.get("known"), raw.get("fields"), raw.get("current_fields")
        return cls(
            _text(raw.get("date")),
            known if isinstance(known, bool) else None,
            dict(fields) if isinstance(fields, Mapping) else {},
            tuple(Change.parse(c) for c in _objects(raw.get("changed_since"))),
            dict(current) if isinstance(current, Mapping) else {},
            _text(raw.get("note")),
        )


@dataclass(frozen=True)
class Page:
    """``kb_get_page``'s answer: one page in full (``memserver.server.tools.page_views``
    ``PageView``). ``fields`` is the schema's open map of values; ``sections`` maps each
    heading to its markdown; ``as_of`` is there only when the page was asked as of a day."""

    id: str
    title: str = ""
    folder: str = ""
    slug: str = ""
    version: int = 0
    type: str = ""
    effective_date: str | None = None
    updated_at: str | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    sections: Mapping[str, str] = field(default_factory=dict)
    timeline: tuple[TimelineEntry, ...] = ()
    open_questions: tuple[str, ...] = ()
    markdown: str = ""
    as_of: AsOf | None = None

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None) -> Page:
        raw = raw or {}
        fields, sections, as_of = raw.get("fields"), raw.get("sections"), raw.get("as_of")
        return cls(
            str(raw.get("id") or ""),
            str(raw.get("title") or ""),
            str(raw.get("folder") or ""),
            str(raw.get("slug") or ""),
            _number(raw.get("version"), int),
            str(raw.get("type") or ""),
            _text(raw.get("effective_date")),
            _text(raw.get("updated_at")),
            dict(fields) if isinstance(fields, Mapping) else {},
            tuple(str(a) for a in listed(raw.get("aliases"))),
            tuple(str(s) for s in listed(raw.get("sources")) if s),
            {str(k): "" if v is None else str(v) for k, v in sections.items()}
            if isinstance(sections, Mapping)
            else {},
            tuple(TimelineEntry.parse(e) for e in _objects(raw.get("timeline"))),
            tuple(str(q) for q in listed(raw.get("open_questions"))),
            str(raw.get("markdown") or ""),
            AsOf.parse(as_of) if isinstance(as_of, Mapping) else None,
        )


@dataclass(frozen=True)
class Edge:
    """One edge of ``kb_neighbors``: a page linking to another by a verb, at a depth."""

    from_id: str
    from_title: str
    to_id: str
    verb: str
    depth: int = 1

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Edge:
        from_id, from_title, to_id, verb = _texts(raw, "from_id", "from_title", "to_id", "verb")
        return cls(from_id, from_title, to_id, verb, _number(raw.get("depth", 1), int))


def edges(raw: Mapping[str, Any] | None) -> tuple[Edge, ...]:
    """``kb_neighbors``'s edges (none when it gave none)."""
    return tuple(Edge.parse(e) for e in _objects((raw or {}).get("edges")))


@dataclass(frozen=True)
class Candidate:
    """A page ``kb_resolve`` offers for a name: how sure (``why``, ``score``)."""

    id: str
    title: str
    folder: str
    score: float
    why: str

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Candidate:
        id_, title, folder, why = _texts(raw, "id", "title", "folder", "why")
        return cls(id_, title, folder, _number(raw.get("score"), float), why)


@dataclass(frozen=True)
class Resolved:
    """``kb_resolve``'s answer: its candidates, best first, and whether the name is
    ambiguous."""

    candidates: tuple[Candidate, ...] = ()
    ambiguous: bool = False

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None) -> Resolved:
        raw = raw or {}
        found = tuple(Candidate.parse(c) for c in _objects(raw.get("candidates")))
        return cls(found, bool(raw.get("ambiguous")))


@dataclass(frozen=True)
class Listed:
    """A row of ``kb_list_pages``: a page's id, title and date."""

    id: str
    title: str
    effective_date: str | None

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Listed:
        id_, title = _texts(raw, "id", "title")
        return cls(id_, title, _text(raw.get("effective_date")))


def listed_pages(raw: Mapping[str, Any] | None) -> tuple[Listed, ...]:
    """``kb_list_pages``'s rows (none when it gave none)."""
    return tuple(Listed.parse(p) for p in _objects((raw or {}).get("pages")))


@dataclass(frozen=True)
class Event:
    """One event of ``kb_timeline``: a dated page (``kind`` page) or a dated line of a
    page's timeline (``kind`` timeline, with the note it came from)."""

    date: str
    id: str
    title: str
    folder: str
    text: str
    source: str | None
    kind: str

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Event:
        day, id_, title, folder, text = _texts(raw, "date", "id", "title", "folder", "text")
        return cls(
            day, id_, title, folder, text, _text(raw.get("source")), str(raw.get("kind") or "")
        )


def events(raw: Mapping[str, Any] | None) -> tuple[Event, ...]:
    """``kb_timeline``'s events (none when it gave none)."""
    return tuple(Event.parse(e) for e in _objects((raw or {}).get("events")))
