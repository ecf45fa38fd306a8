"""Chunks of a page for the index (its fields and sections packed together, long sections
in overlapping windows, each timeline entry alone) and the content hash of a page file."""

from __future__ import annotations

import datetime
import hashlib
import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from memserver.kb.page_model import OPEN_QUESTIONS, TIMELINE, Page


@dataclass(frozen=True)
class Chunk:
    """A piece of a page for the index; ``text`` starts with ``"<title> — <section>\\n"``."""

    section: str
    text: str
    ordinal: int
    date: datetime.date | None = None


FIELDS_SECTION = "Fields"
# How chunk_page cuts pages. Change it with the cutting: reindex re-chunks every page of
# an index built with another format (their files have not changed, their chunks have).
CHUNK_FORMAT = "2:packed-300"
# Raw sources are cut into sentences: conversation notes hold one fact in a sentence
# among many alike, and a small embedding model reads a window of several sentences as
# their average, so the one that answers drowns (measured: bench/eval_search.py, a
# paraphrased fact in an 80-word window ranked by e5-small like a random note). A
# sentence shorter than SOURCE_MIN_WORDS joins the next (headings, dates, "Thanks."); a
# longer run than SOURCE_MAX_WORDS with no sentence end (a table, a list on one line)
# is cut into overlapping windows of that size.
SOURCE_MIN_WORDS = 6
SOURCE_MAX_WORDS = 60
SOURCE_OVERLAP = 10
# A sentence of a conversation is also embedded in its context, with the sentences around
# it (source_context). A turn leans on the ones around it ("I wanted to tell you about my
# school event." / "I talked about my journey ..."), and a small model reads one such
# sentence alone too thinly; the source vector arm takes the
# better of the sentence's cosine and its context's (memserver.search.source_arms).
# Only conversations (is_conversation): in notes of self-contained statements grouped by
# topic, a sentence's neighbours lift the notes that merely share its topic above the one
# that says what was asked (bench/RESULTS.md, LoCoMo, context vectors).
# A context is shared: the sentences are cut into runs of 2 * SOURCE_CONTEXT + 1, and a
# run's text is the context of each of its sentences, one vector a run instead of one a
# sentence. The contexts were 2/3 of a conversation's embedding (three sentences each);
# shared, a third of that, and LoCoMo's session recall held (bench/RESULTS.md, "Embedding
# floor").
SOURCE_CONTEXT = 1
# Between two stretches of one note in a search result's snippet: the sentence that
# matched with its neighbours, then others further on (memserver.search.note_lines).
GAP = "\n…\n"
# Change the version with _SENTENCE_BREAK, source_context or is_conversation: reindex
# re-cuts every source of an index cut another way. 3: conversations carry contexts;
# 4: chat exports and transcripts with times, markdown or WhatsApp turns are conversations;
# -group: a context is the run of sentences its sentence is in, shared.
SOURCE_FORMAT = (
    f"{CHUNK_FORMAT}/source-sentences-4-{SOURCE_MIN_WORDS}-{SOURCE_MAX_WORDS}"
    f"/conversation-context-{SOURCE_CONTEXT}-group"
)
# A line opening a turn, in the shapes chat exports and transcripts write:
#   Priya: text                         a transcript, a chat log
#   **Priya Shah** 16:02                    a Slack-style export (the text on the next line)
#   **Priya:** text, **Priya**: text  a markdown transcript
#   Priya (16:02): text                  a transcript with times
#   [16:02] Priya: text, 16:02 Priya: text, 2026-09-23 16:02 Priya: text
#   23/09/2026, 16:02 - Priya: text      a WhatsApp export ([23/09/2026, 16:02:15] too)
#   > Priya: text                        a quoted transcript
# The speaker is one to three words, the first capitalised (checked in is_conversation).
# Not a list item ("- Priya Shah: ticket for the export bug"): a meeting's action items
# name an owner per line, and a meeting note is no conversation.
_CLOCK = r"\d{1,2}:\d{2}(?::\d{2})?(?:[ \t]?[AaPp][Mm])?"
_DAY = r"\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}"
_SPEAKER = r"[^\W\d_][\w.'’-]*(?:[ \t][^\W\d_][\w.'’-]*){0,2}"
_BOLD_HEAD = rf"\*\*(?P<bold>[^*\n]{{1,40}})\*\*[ \t]+{_CLOCK}\b"
# Where a chat export's turn head ("**Priya Shah** 16:24") starts, even inside a line: a
# snippet joins a turn's text and the next head on one line.
BOLD_TURN_AHEAD = re.compile(rf"(?=\*\*[^*\n]{{1,40}}\*\*[ \t]+{_CLOCK}\b)")
_TURN = re.compile(
    rf"""^[ \t]*(?:>[ \t]*)?                          # a quote
    (?:\[?(?:{_DAY},?[ \t]+)?{_CLOCK}\]?[ \t]*(?:-[ \t]*)?)?  # a time stamp first
    (?:{_BOLD_HEAD}                                  # **Speaker** 16:02
    |(?P<star>\*\*)?(?P<name>{_SPEAKER})
     (?:[ \t]*[(\[]{_CLOCK}[)\]])?                 # Speaker (16:02)
     (?(star)(?::\*\*|\*\*:)|:)[ \t]+\S)           # the colon, inside or after **
    """,
    re.MULTILINE | re.VERBOSE,
)
# A sentence ends at . ! ? (or their full-width forms) before a space, at a blank line,
# and before a list item (- * + • ‣ ◦ – or 1. 1)) or heading line.
_SENTENCE_BREAK = re.compile(
    r"(?<=[.!?。！？])\s+|(?<=[。！？])|\n\s*\n|\n(?=[ \t]*(?:[-*+•‣◦–]|\d+[.)]|#{1,6})\s)"
)


def _windows(body: str, max_words: int, overlap: int) -> list[str]:
    """Slices of ``body`` of at most ``max_words`` words, overlapping, formatting kept."""
    spans = [m.span() for m in re.finditer(r"\S+", body)]
    if not spans:
        return []
    step = max(1, max_words - max(0, min(overlap, max_words - 1)))
    out = []
    for start in range(0, len(spans), step):
        end = min(start + max_words, len(spans))
        out.append(body[spans[start][0] : spans[end - 1][1]])
        if end == len(spans):
            break
    return out


def source_units(
    text: str,
    min_words: int = SOURCE_MIN_WORDS,
    max_words: int = SOURCE_MAX_WORDS,
    overlap: int = SOURCE_OVERLAP,
) -> list[str]:
    """The sentences of a raw source, whitespace collapsed, in order: a piece of fewer
    than ``min_words`` words joins the next (the last joins the one before), a piece of
    more than ``max_words`` is cut into overlapping windows. Every word of ``text`` is
    in some unit."""
    units: list[str] = []
    pending = ""
    for piece in _SENTENCE_BREAK.split(text):
        words = piece.split()
        if not words:
            continue
        joined = f"{pending} {' '.join(words)}" if pending else " ".join(words)
        if len(joined.split()) < min_words:
            pending = joined
            continue
        pending = ""
        units.extend(_windows(joined, max_words, overlap))
    if pending:
        if units and len(units[-1].split()) + len(pending.split()) <= max_words:
            units[-1] = f"{units[-1]} {pending}"
        else:
            units.append(pending)
    return units


# A note's labels, not people: "Decision: ...", "Attendees: ...", "Хөтөлсөн: Алекс Ким".
LABELS = frozenset(
    {"decision", "decisions", "outcome", "reason", "summary", "agenda", "attendees",
     "participants", "action", "actions", "action items", "next steps", "note", "notes",
     "note-taker", "owner", "status", "context", "date", "subject", "update", "updates",
     "result", "results", "background", "question", "answer", "hosted by", "chair",
     "хөтөлсөн", "оролцогчид", "оролцсон", "огноо", "шийдвэр", "шийдвэрүүд", "тэмдэглэл",
     "товч", "дүгнэлт", "хэлэлцсэн", "дараагийн алхам"}
)  # fmt: skip


def turn_opening(text: str) -> tuple[str, str] | None:
    """(speaker, what they say) when ``text`` opens with a turn in one of the shapes of
    :data:`_TURN` ("**Priya Shah** 16:24 Two low-priority ones.", "08/05/2023, 13:56 -
    Priya: Hi!"), the speaker capitalised; else None."""
    found = _TURN.match(text)
    if found is None:
        return None
    speaker = (found.group("bold") or found.group("name") or "").strip()
    if not speaker[:1].isupper() or speaker.casefold() in LABELS:
        return None
    # The plain shapes' match ends on the first character of what is said.
    said = text[found.end() :] if found.group("bold") else text[found.end() - 1 :]
    return speaker, said.strip()


def is_conversation(text: str) -> bool:
    """Whether a raw source is a conversation: three or more turns (lines opening with a
    speaker) by two or more speakers, one of them speaking twice. A note's labelled
    lines ("Attendees: ...", "Decision: ...") name each label once."""
    turns = Counter(
        label.strip()
        for m in _TURN.finditer(text)
        if (label := m.group("bold") or m.group("name")) and label.strip()[:1].isupper()
    )
    return len(turns) >= 2 and turns.total() >= 3 and max(turns.values()) >= 2


def source_contexts(text: str, units: Sequence[str]) -> list[str | None]:
    """The context embedded for each of a source's sentences (``units``, cut from
    ``text``): in a conversation the run of sentences it is in (source_context), else
    none."""
    if not is_conversation(text):
        return [None] * len(units)
    return [source_context(units, i) for i in range(len(units))]


def source_context(units: Sequence[str], i: int, width: int = SOURCE_CONTEXT) -> str:
    """The context of the source sentence ``units[i]``: the run of ``2 * width + 1``
    sentences it is in (runs cut from the note's start; the last may be shorter), joined
    by a space. Every sentence of a run has the same context, embedded once."""
    size = 2 * width + 1
    start = i - i % size
    return " ".join(units[start : start + size])


def _fields_text(page: Page) -> str:
    lines = []
    for key, value in page.fields.items():
        shown = ", ".join(map(str, value)) if isinstance(value, tuple) else str(value)
        lines.append(f"{key}: {shown}")
    if page.aliases:
        lines.append(f"aliases: {', '.join(page.aliases)}")
    return "\n".join(lines)


def drop_field_lines(text: str, names: Collection[str]) -> str:
    """``text`` (a chunk or snippet) without the ``name: value`` lines that
    :func:`chunk_page` writes for the fields ``names`` into its Fields chunk."""
    if not names:
        return text
    prefixes = tuple(f"{name}: " for name in names)
    return "\n".join(line for line in text.split("\n") if not line.startswith(prefixes))


def chunk_page(page: Page, max_words: int = 300, overlap: int = 50) -> list[Chunk]:
    """Chunks for the index, in this order:

    1. the fields, the sections and the open questions, packed in page order into chunks
       of up to ``max_words`` words (``"<title> — Summary, Decisions\n..."``, each section
       under its ``## heading`` when a chunk holds several parts); a part longer than
       that is cut into overlapping windows of its own (``"<title> — Summary\n..."``);
    2. each timeline entry alone, with its date (``"<title> — Timeline\n<date>: ..."``).

    A page's short sections thus make one chunk (one vector, one keyword document)
    rather than one each: a typical page of a few short sections and fields has one.
    """
    chunks: list[Chunk] = []

    def add(parts: list[tuple[str, str]], date: datetime.date | None = None) -> None:
        label = ", ".join(heading for heading, _ in parts)
        if len(parts) == 1:
            body = parts[0][1]
        else:
            body = "\n".join(
                text if heading == FIELDS_SECTION else f"## {heading}\n{text}"
                for heading, text in parts
            )
        chunks.append(Chunk(label, f"{page.title} — {label}\n{body}", len(chunks), date))

    parts = [(FIELDS_SECTION, _fields_text(page)), *page.sections.items()]
    if page.open_questions:
        parts.append((OPEN_QUESTIONS, "\n".join(f"- {q}" for q in page.open_questions)))
    pack: list[tuple[str, str]] = []
    size = 0
    for heading, body in parts:
        words = len(body.split())
        if not words:
            continue
        if pack and size + words > max_words:
            add(pack)
            pack, size = [], 0
        if words > max_words:
            for piece in _windows(body, max_words, overlap):
                add([(heading, piece)])
            continue
        pack.append((heading, body.strip()))
        size += words
    if pack:
        add(pack)
    for entry in page.timeline:
        source = f" [source: {entry.source}]" if entry.source else ""
        add([(TIMELINE, f"{entry.date.isoformat()}: {entry.text}{source}")], entry.date)
    return chunks


def content_hash(text: str) -> str:
    """SHA-256 (hex) of the text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
