"""Evidence from a raw source note (a ``source/...`` result of ``kb_query``): its snippet
cut into sentences, each dated by the day it speaks of.

A note is dated (its frontmatter ``date:``), and what it says is often dated against
that day: "we visited the Pueblo warehouse yesterday" in a note of 2026-09-23 happened
on 2026-09-22. The dates a sentence mentions are read the way the index reads them for its
windows (:func:`memserver.timeparse.mentions.mention_reader`, against the note's date
in the knowledge base's time zone); a sentence that mentions one day, month, year or
span other than the note's own day is dated by it, with the note's date kept as when it
was said::

    - 2026-09-22 (said on 2026-09-23) · Priya: we visited the Pueblo warehouse yesterday ... [source/slack/deals/2026-09-23.md]

Any other sentence carries the note's date. In a conversation (``Speaker: text``, or any
turn shape the index knows: ``**Speaker** 16:02``, a WhatsApp export's stamps;
:func:`memserver.kb.chunks.turn_opening`) a sentence keeps the name of whoever says it
("Priya: the tablets arrived ..."); the name is the piece's heading (it counts for the
question's words as a heading does) and what is compared with the question is the
sentence itself without the names of those who speak in the notes
(:func:`unaddressed`): "Thanks, Priya, great news!" is no evidence about Priya, and a
sentence is none because of who said it
(:func:`evidence.score`).

An e-mail's header lines (``From:``, ``To:``, ``Date:``, ``Subject:``, ...) are no
evidence: its ``From:`` names who says the body that follows, as a turn's speaker does,
and the other lines are left out (:func:`email_turns`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Sequence
from typing import Any

from memserver.kb.chunks import BOLD_TURN_AHEAD, GAP, turn_opening
from memserver.timeparse.mentions import MentionReader
from read_agent.extractive.evidence import MAX_TEXT, Evidence, clean, sentences
from read_agent.reading.lexicon import is_label
from read_agent.tools.raw_notes import SOURCE_PREFIX
from read_agent.tools.wire import Hit

SOURCE = "source"  # the kind of a piece of a raw note
_FRONTMATTER = re.compile(r"^---\s.*?\s---\s*", re.DOTALL)
_HEADER = re.compile(
    r"^\s*(?P<name>from|to|cc|bcc|date|sent|subject|reply-to)\s*:\s*(?P<value>.*?)\s*$",
    re.IGNORECASE,
)
_ADDRESS = re.compile(r"\s*<[^>]*>\s*")
_AUTHOR = re.compile(
    r"^(?:author|by|from|written_by):\s*(?P<name>.+?)\s*$", re.MULTILINE | re.IGNORECASE
)


def email_turns(snippet: str) -> list[str]:
    """``snippet`` cut into its e-mails, each header block made its body's speaker:
    ``From: Luis Hernandez <luis@x>`` and the lines after it up to the body become
    ``Luis Hernandez:`` before the body's first line. Text with fewer than two header
    lines is one part, as it is (a meeting note's lone ``Date:`` line is no e-mail)."""
    lines = snippet.splitlines()
    if sum(1 for line in lines if _HEADER.match(line)) < 2:
        return [snippet]
    parts: list[list[str]] = [[]]
    speaker: str | None = None
    for line in lines:
        header = _HEADER.match(line)
        if header is not None:
            if header["name"].lower() == "from":
                speaker = _sender(header["value"])
            continue
        if speaker is not None and line.strip():
            parts.append([f"{speaker}: {line.strip()}"])
            speaker = None
        elif line.strip().strip("-_=* "):  # a rule between e-mails says nothing
            parts[-1].append(line)
    return ["\n".join(part) for part in parts if part]


def _sender(value: str) -> str:
    """``Luis Hernandez <luis@x>`` -> ``Luis Hernandez``; a bare address stays itself."""
    name = _ADDRESS.sub(" ", value).strip().strip('"').strip()
    return name or value.strip("<> ")


def is_source(result: Hit) -> bool:
    return result.id.startswith(SOURCE_PREFIX)


def from_source(result: Hit, rank: int, mentions: MentionReader) -> list[Evidence]:
    """The sentences of a source result's snippet, each dated (see the module docstring)."""
    pid, title = result.id, result.title
    day = _date(result.date)
    raw = result.snippet.strip()
    front = _FRONTMATTER.match(raw)
    writer = _AUTHOR.search(front.group(0)) if front is not None else None
    author = writer["name"].strip().strip("\"'") if writer is not None else ""
    turns: list[tuple[str, list[str]]] = []
    # Each stretch of the note the snippet shows (the search joins them with GAP) starts
    # anew: its first sentence is not the turn before the gap's.
    for stretch in _FRONTMATTER.sub("", raw).split(GAP):
        turns += _turns(stretch)
    out: list[Evidence] = []
    for speaker, said in turns:
        for i, sentence in enumerate(said):
            text = f"{speaker}: {sentence}" if speaker else sentence
            context = " ".join(said[:i] + said[i + 1 :])
            when, noted = (None, None) if day is None else spoken_of(sentence, day, mentions)
            out.append(
                Evidence(
                    text[:MAX_TEXT],
                    pid,
                    title,
                    when,
                    SOURCE,
                    f"{speaker} {context}".strip(),
                    rank,
                    matches=sentence,
                    said=noted,
                    speaker=speaker,
                    author=speaker or author,
                )
            )
    return out


def _turns(snippet: str) -> list[tuple[str, list[str]]]:
    """(speaker, sentences) of one stretch of a note; "" when it starts inside a turn."""
    turns: list[tuple[str, list[str]]] = []
    parts = [part for mail in email_turns(snippet) for part in BOLD_TURN_AHEAD.split(mail)]
    if len(parts) > 1 and parts[0].lstrip().startswith("#"):
        parts = parts[1:]  # the note's title heading before its first turn
    for raw in (s for part in parts for s in sentences(part)):
        found = turn_opening(raw)  # "Priya: ...", "**Priya Shah** 16:24 ...", ...
        if found is not None and is_label(found[0]):
            found = None  # "Why: ...", "Decision: ...": a line's label, nobody's words
        sentence = clean(found[1] if found is not None else raw)
        if not sentence:
            continue
        if found is not None:
            turns.append((found[0], [sentence]))
        elif turns:
            turns[-1][1].append(sentence)
        else:  # the snippet starts inside a turn: no speaker to give
            turns.append(("", [sentence]))
    return turns


def unaddressed(pieces: Sequence[Evidence]) -> list[Evidence]:
    """``pieces`` with the names of the notes' speakers out of what a source sentence and
    the rest of its turn are compared with: in a conversation a name is mostly whom a
    sentence is said to."""
    speakers = {p.speaker for p in pieces if p.kind == SOURCE and p.speaker}
    if not speakers:
        return list(pieces)
    names = re.compile(
        r"\b(?:" + "|".join(re.escape(n) for n in sorted(speakers, key=len, reverse=True)) + r")\b"
    )

    def blank(text: str) -> str:
        return " ".join(names.sub(" ", text).split())

    return [
        dataclasses.replace(
            p,
            matches=blank(p.matches),
            heading=f"{p.speaker} {blank(p.heading[len(p.speaker) :])}".strip(),
        )
        if p.kind == SOURCE
        else p
        for p in pieces
    ]


def spoken_of(sentence: str, day: dt.date, mentions: MentionReader) -> tuple[str, str | None]:
    """(the date a sentence of a note dated ``day`` speaks of, the note's date when that
    is another date, else None)."""
    spans = set(mentions(sentence, day)) - {(day, day + dt.timedelta(days=1))}
    if len(spans) != 1:
        return day.isoformat(), None
    start, end = spans.pop()
    return shown_span(start, end), day.isoformat()


def shown_span(start: dt.date, end: dt.date) -> str:
    """``[start, end)`` as a day, a month, a year, or ``first to last`` day."""
    last = end - dt.timedelta(days=1)
    if last == start:
        return start.isoformat()
    if (
        start.day == 1
        and end.day == 1
        and (end.year * 12 + end.month) - (start.year * 12 + start.month) == 1
    ):
        return start.strftime("%Y-%m")
    if (start.month, start.day, end.month, end.day) == (1, 1, 1, 1) and end.year == start.year + 1:
        return str(start.year)
    return f"{start.isoformat()} to {last.isoformat()}"


def _date(value: Any) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None
