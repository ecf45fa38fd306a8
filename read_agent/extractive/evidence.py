"""Evidence sentences: the pieces of pages an extractive answer quotes, one date each.

From a page as ``kb_get_page`` returns it:

- each **field** with a value is one line ("Bob Martinez — reports to: Dana Whitfield"),
  dated by the timeline entry that recorded its last change, if any;
- each **section** is cut into list items and sentences; a bold line or heading inside a
  section ("**Decisions**", "**Шийдвэрүүд**") is the heading of what follows; on a page
  of a dated folder (a meeting) every piece carries the page's date;
- each **timeline** entry is one line with its own date;
- each **open question** is one line.

From a ``kb_query`` result not read in full: its snippet and its matched timeline lines.
:func:`score` says how well a piece answers the question's terms.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from memserver.kb.abbreviations import spoken
from memserver.kb.field_change import read_change, show
from memserver.kb.words import words
from read_agent.extractive.line import DIRECT, INFERRED, Line
from read_agent.extractive.question import Reading, matched
from read_agent.tools.wire import Hit, Page

SOURCE_FOLDER = "source/"  # a note's id is its path under source/
ITEM_CHARS = 300  # a list item up to this long stays whole, else its sentences
MAX_TEXT = 400
# A page's rank adds 0.3 / (1 + rank) to its pieces' scores (a tie-breaker); a raw note's
# sentence gets 2.0 / (1 + rank): single sentences of a conversation hold few of the
# question's words, and without it a sentence of the fifth note holding one word more
# led over the first note's, which kb_query ranked by the whole note. On LoCoMo's 715
# questions (bench/RESULTS.md) the first citation is an evidence session for 0.706 of
# answers at 0.3, 0.724 at 1.0, 0.761 at 2.0, 0.758 at 3.0.
SOURCE_RANK_BONUS = 2.0
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"“*(\[]?[A-ZА-ЯЁӨҮ0-9])")
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+(.+?)|\*\*([^*]+)\*\*:?)\s*$")
_LABEL = re.compile(r"^\s*[^\s:*#|][^:|]*:\s*$")  # "Action plan:" alone on its line
LABEL_WORDS = 4  # a longer line ending in a colon introduces what follows, not a label
_MARKUP = re.compile(r"\*\*|__|`")
_ISO = re.compile(r"(?<![\d-])\d{4}-\d{2}-\d{2}(?!\d)")
_DATED_LINE = re.compile(r"^(\d{4}-\d{2}-\d{2}): (.+)$")
# The entries the ingest agent writes to link an event to its entities ("Attended
# meeting “X” (meetings/...)"): bookkeeping, the event itself is the evidence.
_LINK_ENTRY = re.compile(r"^(?:Attended \w+|\w+) “[^”]*”(?: \([^)]*\))?$")
_MAIL_HEADER = re.compile(r"^\s*(?:from|to|cc|bcc|date|sent|subject|reply-to)\s*:\s", re.IGNORECASE)


@dataclass(frozen=True)
class Evidence:
    """One quotable piece of a page, with the date of what it reports and its page."""

    text: str
    page: str  # the page id it is cited as
    title: str
    date: str | None
    kind: str  # field | section | timeline | open_question | snippet | source
    heading: str = ""
    rank: int = 0  # the page's rank among the search results
    field: str | None = None
    matches: str = ""  # what is compared with the question, when not the whole text
    said: str | None = None  # the note's date, when ``date`` is the day it speaks of
    speaker: str = ""  # who says it, in a conversation note
    origin: str = ""  # the note that states it (direct evidence), if known
    author: str = ""  # who wrote or said it, when the note says

    @property
    def direct(self) -> bool:
        """Stated by a note (quoted from it), not inferred by the memory."""
        return bool(self.origin) or self.kind == "source"

    def line(self, tag: str = "") -> Line:
        """The piece as an answer's line: dated, labelled and cited (``tag`` before it)."""
        return Line(
            self.text,
            self.date,
            (self.page,),
            DIRECT if self.direct else INFERRED,
            self.origin if self.origin != self.page else "",
            self.author if self.direct else "",
            self.said,
            tag,
        )


@dataclass(frozen=True)
class Change:
    """A field change recorded on a timeline: ``role changed from “A” to “B”``."""

    field: str
    old: str
    new: str
    date: str | None


def changes(page: Page) -> dict[str, Change]:
    """The newest recorded change of each field of a page."""
    out: dict[str, Change] = {}
    for entry in page.timeline:
        found = read_change(entry.text)
        if found is not None and found.field not in out:
            out[found.field] = Change(found.field, found.old, found.new, _day(entry.date))
    return out


def label(field: str) -> str:
    return field.replace("_", " ")


def from_page(
    page: Page, rank: int, dated: bool, skip_fields: Sequence[str] = ()
) -> list[Evidence]:
    """Every piece of one page (``dated``: the page is an event on its date)."""
    pid, title = page.id, page.title
    day = _day(page.effective_date) if dated else None
    out: list[Evidence] = []
    recorded = changes(page)
    for name, value in page.fields.items():
        if name in skip_fields or value in (None, "", []) or (dated and name == "date"):
            continue  # an event's date is on every one of its lines already
        change = recorded.get(name)
        own = f"{label(name)}: {show(value)}"
        when = change.date if change else day
        out.append(
            Evidence(
                f"{title} — {own}", pid, title, when, "field", rank=rank, field=name, matches=own
            )
        )
    # A page written from one note quotes it; a page merged from several infers.
    sources = page.sources
    only = f"{SOURCE_FOLDER}{sources[0]}" if len(sources) == 1 else ""
    for section, body in page.sections.items():
        for heading, piece in pieces(body):
            # On a page that is not an event, a sentence naming one day is about that day.
            when = day if dated else _only_day(piece)
            out.append(
                Evidence(
                    piece,
                    pid,
                    title,
                    when,
                    "section",
                    f"{section} {heading}".strip(),
                    rank,
                    origin=only,
                )
            )
    for entry in page.timeline:
        text = clean(entry.text)
        if text and not _LINK_ENTRY.match(text):
            origin = f"{SOURCE_FOLDER}{entry.source}" if entry.source else ""
            out.append(
                Evidence(text, pid, title, _day(entry.date), "timeline", rank=rank, origin=origin)
            )
    for question in page.open_questions:
        out.append(Evidence(clean(question), pid, title, None, "open_question", rank=rank))
    return out


def from_result(
    result: Hit, rank: int, dated: bool, field_names: Sequence[str] = ()
) -> list[Evidence]:
    """The pieces a search result shows without reading the page: snippet (without the
    ``field: value`` lines the index puts in a page's first chunk), timeline lines."""
    pid, title = result.id, result.title
    day = _day(result.date) if dated else None
    out = []
    snippet = result.snippet
    first, newline, rest = snippet.partition("\n")
    if newline and title and first.startswith(title):
        snippet = rest  # the "<title> — <section>" line the index puts first
    fields = tuple(f"{name}: " for name in (*field_names, "aliases"))
    kept = "\n".join(line for line in snippet.splitlines() if not line.startswith(fields))
    for _, piece in pieces(kept):
        dated_line = _DATED_LINE.match(piece)  # a timeline line of the chunk
        if dated_line is not None:
            if not _LINK_ENTRY.match(dated_line[2]):
                text = clean(dated_line[2])
                out.append(Evidence(text, pid, title, dated_line[1], "timeline", rank=rank))
        else:
            out.append(Evidence(piece, pid, title, day, "snippet", rank=rank))
    for line in result.timeline:
        if line.text:
            text = clean(line.text)
            if not _LINK_ENTRY.match(text):
                day = _day(line.date)
                out.append(Evidence(text, pid, title, day, "timeline", rank=rank))
    return out


def pieces(body: str) -> Iterator[tuple[str, str]]:
    """(heading, piece) for every list item and sentence of a section's markdown. A short
    line ending in a colon ("Action plan:", "Шийдвэрүүд:") heads the list that follows
    it, as a markdown heading heads its section: the items are what it names."""
    heading = ""
    label = ""  # a label line's words, for the lines after it up to a blank line
    fed = 0  # the lines read under the label
    block: list[str] = []

    def flush() -> Iterator[tuple[str, str]]:
        text = clean(" ".join(block), limit=None)  # each sentence is capped, not the whole
        block.clear()
        if not text:
            return
        under = f"{heading} {label}".strip()
        if len(text) <= ITEM_CHARS:
            yield under, text
        else:
            for sentence in sentences(text):
                yield under, sentence[:MAX_TEXT]

    for line in body.splitlines():
        if _MAIL_HEADER.match(line):
            continue  # "From: ... To: ... Subject: ...": who wrote to whom, not evidence
        found = _HEADING.match(line)
        if found:
            yield from flush()
            heading, label = clean(found.group(1) or found.group(2) or ""), ""
            continue
        if not line.strip():
            yield from flush()
            label = label if fed == 0 else ""  # what the label heads ends at a blank line
            continue
        if _LABEL.match(line) and len(words(line)) <= LABEL_WORDS:
            yield from flush()
            label, fed = clean(line.strip().rstrip(":")), 0
            continue
        if _ITEM.match(line):
            yield from flush()
            line = _ITEM.sub("", line)
        fed += 1
        block.append(line.strip())
    yield from flush()


def sentences(text: str) -> list[str]:
    """The sentences of a text, in order."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def score(piece: Evidence, reading: Reading) -> tuple[float, float]:
    """(score, coverage): how many of the question's terms the piece holds (its own
    words count fully, its heading's at 0.7; identifiers count three times; the words
    naming the kind of thing asked for, ``reading.focus``, twice), with a
    small bonus for a better-ranked page (a larger one for a raw note's sentence,
    SOURCE_RANK_BONUS). A sentence of a raw note must hold one of
    them itself: its heading is who said it and the rest of the turn."""
    terms = list(reading.terms)
    idents = [i.lower() for i in reading.identifiers]
    text = (piece.matches if piece.kind == "source" else piece.matches or piece.text).lower()
    own = own_terms(piece, reading)
    # what it is said under: its heading, and its page's title when its own words hold
    # most of the terms (every sentence of "Pricing review" is not about price)
    titled = 2 * len(own) > len(terms)
    context = [*words(piece.heading), *(words(piece.title) if titled else ())]
    head = matched(terms, context, reading.sense_of) - own
    hits = sum(3.0 for i in idents if i in text)
    focus = own & set(reading.focus)
    total = len(terms) + len(reading.focus) + 3.0 * len(idents)
    if total == 0 or (piece.kind == "source" and not own and not hits):
        return 0.0, 0.0  # who said it, or what else they said, is not this sentence
    # a meaning asked without its words ("why": a cause) adds to the score, not the
    # coverage: the sentence must still hold the words asked
    unsaid = matched(reading.unsaid, [*words(text), *words(piece.heading)]) if own else set()
    value = len(own) + len(focus) + 0.7 * len(head) + hits + len(unsaid)
    coverage = (len(own) + len(focus) + len(head) + hits) / total
    bonus = SOURCE_RANK_BONUS if piece.kind == "source" else 0.3
    return value + bonus / (1 + piece.rank), coverage


def names_focus(piece: Evidence, reading: Reading) -> bool:
    """The piece's own words name the kind of thing the question asks for (every word
    of ``reading.focus``: "30 warehouse tablets" for "which tablets did the pilot include"), and another
    word asked if the question has one: the kind alone may be said of anything."""
    if not reading.focus:  # most questions name no kind: no words to match
        return False
    own, focus = own_terms(piece, reading), set(reading.focus)
    return focus <= own and (bool(own - focus) or set(reading.terms) <= focus)


def own_terms(piece: Evidence, reading: Reading) -> set[str]:
    """The question's terms the piece's own words hold (a field line: its label and
    value, not the page title before them; a value's abbreviation says its phrase's own
    words too, :func:`memserver.kb.abbreviations.spoken`: "role: CTO" says "technology")."""
    body = piece.matches if piece.kind == "source" else piece.matches or piece.text
    said = spoken(words(body)) if piece.kind == "field" else words(body)
    return matched(reading.terms, said, reading.sense_of)


def days_said(text: str) -> set[str]:
    """The days a text writes out (YYYY-MM-DD)."""
    return set(_ISO.findall(text))


def _only_day(text: str) -> str | None:
    days = days_said(text)
    return days.pop() if len(days) == 1 else None


def _day(value: Any) -> str | None:
    return str(value)[:10] if isinstance(value, str) and value else None


def clean(text: str, limit: int | None = MAX_TEXT) -> str:
    """A piece's text: no markup, no trailing ``[source: ...]``, one line, capped at
    ``limit`` (None: a paragraph, cut into sentences after)."""
    text = _MARKUP.sub("", text)
    text = re.sub(r"\s*\[source: [^\]]*\]\s*$", "", text)
    return " ".join(text.split())[:limit]
