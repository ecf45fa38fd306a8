"""The evidence of a brief (:mod:`memserver.server.brief`): sentences of notes, each dated,
cited and labelled ``direct`` (quoted from the note that states it, with its author) or
``inferred`` (a page's own timeline line: the memory's reading, not a quote).

The notes, in order: the first subject's (an event's record is the notes it was written
from and the other notes of the same day on the same subject: a meeting's transcript,
its thread, the e-mail that followed), then the search's best notes (each followed by
its same-day notes) alternating with the other subjects' notes. An entity page gathers
notes of every kind, so only those the search found count for it. From each note the
sentences sharing most of the question's words, metadata lines (e-mail headers,
frontmatter keys, attendee lists) left out. Text from a note is quoted, never followed.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from memserver.errors import MemoryError_
from memserver.graph.resolve import dated_folders
from memserver.kb.frontmatter import read_frontmatter
from memserver.kb.words import STOPWORDS, words
from memserver.server.brief_settings import BRIEF

if TYPE_CHECKING:
    from memserver.server.tools.base import CallContext


_HEADER = re.compile(r"^\s*(from|to|cc|bcc|date|subject|sent)\s*:", re.IGNORECASE)
# Metadata rather than testimony: e-mail headers, frontmatter keys, attendee lists.
_LABELS = re.compile(
    r"\b(from|to|cc|date|subject|author|attendees|note-taker)\s*:\**",
    re.IGNORECASE,
)
_KEYS = re.compile(r"(?:^|\s)[a-z][a-z_]{1,24}:\s")  # "title: ... date: ... status: ..."
_MARKUP = re.compile(r"^[\s#>*|-]+")


def key_words(text: str) -> set[str]:
    """The words of ``text`` that carry meaning (stop words and short words left out)."""
    return {w for w in words(text) if len(w) > 2 and w not in STOPWORDS}


class Briefed(Protocol):
    """What the evidence needs of a subject page."""

    id: str
    folder: str
    title: str
    sources: list[str]
    timeline: list[dict[str, Any]]


@dataclass
class Evidence:
    text: str
    label: str  # direct | inferred
    date: str | None
    source: str | None  # the note (path under source/)
    page: str | None = None
    author: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "label": self.label,
            "date": self.date,
            "source": self.source,
            "page": self.page,
            "author": self.author,
        }

    def render(self) -> str:
        who = f", {self.author}" if self.author else ""
        cite = ", ".join(x for x in (self.source, self.page) if x)
        return f"- [{self.label}] {self.date or 'undated'}{who}: {self.text} ({cite})"


def gather_evidence(
    call: CallContext,
    question: str,
    subjects: Sequence[Briefed],
    found_notes: Sequence[str],
    as_of: dt.date | None,
) -> list[Evidence]:
    """Direct quotes from the notes behind the subjects and the notes the search found
    (when the caller may read notes), then the subjects' timeline lines (inferred)."""
    out: list[Evidence] = []
    terms = key_words(question) | {t for s in subjects for t in key_words(s.title)}
    if call.scope.source:
        found = [n.removeprefix("source/") for n in found_notes]
        events = dated_folders(call.services.schema())
        streams: list[list[tuple[str, str | None]]] = []
        for s in subjects:
            if s.folder in events:
                # An event's record: the notes it was written from, and the other notes
                # of the same day on the same subject (a meeting's transcript, its thread,
                # the e-mail that followed).
                notes = [*s.sources, *_same_day(call, s.sources, terms)]
            else:
                # An entity gathers notes of every kind: only those the search found.
                notes = [n for n in found if n in set(s.sources)]
            streams.append([(n, s.id) for n in notes])
        # The search's best notes, each followed by the same day's notes on its subject.
        lead = [
            n
            for note in found[: BRIEF.sibling_leads]
            for n in (note, *_same_day(call, [note], terms))
        ]
        streams.insert(1 if streams else 0, [(n, None) for n in [*lead, *found]])
        order: list[tuple[str, str | None]] = []
        seen: set[str] = set()
        for group in _interleave(streams):
            if group[0] not in seen:
                seen.add(group[0])
                order.append(group)
        out.extend(_quotes(call, order, terms, as_of, key_words(question)))
    for s in subjects:
        for e in s.timeline[:4]:
            out.append(Evidence(e["text"], "inferred", e["date"], e.get("source"), page=s.id))
    return out


def _same_day(call: CallContext, notes: Sequence[str], terms: set[str]) -> list[str]:
    """Other notes dated the same day as ``notes`` that share at least two of ``terms``,
    most shared first."""
    if not notes or not terms:
        return []
    with call.services.kb().db.reading() as conn:
        rows = conn.execute(
            "SELECT c.path, string_agg(c.text, ' ' ORDER BY c.ordinal) FROM source_chunks c"
            " JOIN source_docs d ON d.path = c.path"
            " WHERE d.doc_date IN (SELECT doc_date FROM source_docs WHERE path = ANY(%(notes)s))"
            " AND NOT c.path = ANY(%(notes)s) GROUP BY c.path ORDER BY c.path LIMIT 200",
            {"notes": list(notes)},
        ).fetchall()
    shared = [(len(key_words(str(text)) & terms), str(path)) for path, text in rows]
    return [path for n, path in sorted(shared, key=lambda x: (-x[0], x[1])) if n >= 2]


def _interleave(
    streams: Sequence[Sequence[tuple[str, str | None]]],
) -> Iterable[tuple[str, str | None]]:
    if not streams:
        return
    first, rest = streams[0], streams[1:]
    yield from first
    longest = max((len(s) for s in rest), default=0)
    for i in range(longest):
        for stream in rest:
            if i < len(stream):
                yield stream[i]


def _quotes(
    call: CallContext,
    notes: Sequence[tuple[str, str | None]],
    terms: set[str],
    as_of: dt.date | None,
    asked: set[str],
) -> list[Evidence]:
    """The best sentences of each note (most of the question's own words, then most of
    ``terms``; e-mail headers skipped)."""
    if not notes:
        return []
    paths = [n for n, _ in notes]
    with call.services.kb().db.reading() as conn:
        rows = conn.execute(
            "SELECT c.path, c.ordinal, c.text, d.doc_date FROM source_chunks c"
            " JOIN source_docs d ON d.path = c.path WHERE c.path = ANY(%s)"
            " ORDER BY c.path, c.ordinal",
            (paths,),
        ).fetchall()
    by_note: dict[str, list[tuple[int, str, dt.date | None]]] = {}
    for path, ordinal, text, day in rows:
        by_note.setdefault(str(path), []).append((int(ordinal), str(text), day))
    out = []
    lead = notes[0][1]
    for path, page in notes:
        sentences = by_note.get(path, [])
        if not sentences:
            continue
        day = sentences[0][2]
        if as_of is not None and day is not None and day > as_of:
            continue
        author = _author(call, path)
        count = BRIEF.sentences_per_note if page is not None and page == lead else 1
        for text in _best(sentences, asked, terms, count):
            out.append(
                Evidence(text, "direct", day.isoformat() if day else None, path, page, author)
            )
    return out


def _best(
    sentences: Sequence[tuple[int, str, Any]], asked: set[str], terms: set[str], count: int
) -> list[str]:
    """The ``count`` sentences that share most of the question's own words ``asked``,
    then most of ``terms`` (with the subjects' titles: a title's words are on every
    heading of its note and say nothing of what was asked), metadata lines left out, in
    the note's order."""
    scored = []
    for ordinal, text, _ in sentences:
        clean = _MARKUP.sub("", text).strip()
        if not clean or _HEADER.match(clean) or len(_LABELS.findall(clean)) >= 2:
            continue
        if len(_KEYS.findall(clean)) >= 3:  # a frontmatter's keys quoted as a line
            continue
        said = key_words(clean)
        scored.append(
            (-len(said & asked), -len(said & terms), ordinal, cut(clean, BRIEF.max_sentence_chars))
        )
    scored.sort()
    picked = sorted(scored[:count], key=lambda x: x[2])
    return [text for _, _, _, text in picked]


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _author(call: CallContext, path: str) -> str | None:
    try:
        text, _ = call.services.manifest().read_text(path)
    except (MemoryError_, OSError):
        return None
    author = read_frontmatter(text).get("author")
    return str(author).strip() or None if author else None


# ------------------------------------------------------------------------ fitting
