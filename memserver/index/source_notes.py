"""Raw sources as whole notes (migration 006): the words of each note for the note-level
keyword arm, and the dates its sentences mention.

A note is scored by its sentences elsewhere (``source_chunks``); a note that answers with
several moderately matching turns loses there to one sentence of another note, so the
search also ranks whole notes by BM25 (``memserver.search.source_notes``). A note's words
are those of its title, its date written out ("2023-05-08 8 May 2023 Monday": questions
name days that way) and its text, speakers' names included; ``\\w+`` runs, case-folded.

The dates a sentence mentions ("yesterday", "in 2021", "on Sunday") are read by a
:data:`MentionReader` against the note's own date, so a note written in 2023 that tells
what happened in 2021 is found by a question about 2021. The reader is passed in by the
caller (the date grammar lives in ``memserver.timeparse.parse``, above this package);
without one a note has no mentions, and ``note_key`` says so, so that a later run with a
reader reads it again.
"""

from __future__ import annotations

import collections
import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memserver.timeparse.mentions import MentionReader

NOTE_FORMAT = "4"  # 2: words lightly stemmed; 3: irregular pasts too; 4: "the week before X"
_WORD = re.compile(r"\w+")


def words_of(text: str) -> list[str]:
    """The ``\\w+`` runs of a text, case-folded."""
    return _WORD.findall(text.casefold())


# Common irregular pasts, so "When did she give a talk" meets "I gave a talk".
_IRREGULAR = {
    "went": "go", "gone": "go", "gave": "give", "given": "give", "took": "take",
    "taken": "take", "saw": "see", "seen": "see", "made": "make", "bought": "buy",
    "got": "get", "met": "meet", "ran": "run", "wrote": "write", "written": "write",
    "ate": "eat", "drove": "drive", "found": "find", "told": "tell", "felt": "feel",
    "left": "leave", "won": "win", "began": "begin", "begun": "begin", "brought": "bring",
    "thought": "think", "kept": "keep", "lost": "lose", "sold": "sell", "spent": "spend",
    "paid": "pay", "built": "build", "taught": "teach", "caught": "catch", "flew": "fly",
    "swam": "swim", "sang": "sing", "wore": "wear", "chose": "choose", "became": "become",
    "held": "hold", "heard": "hear", "sent": "send", "grew": "grow", "knew": "know",
    "drew": "draw", "fell": "fall", "broke": "break", "spoke": "speak", "threw": "throw",
}  # fmt: skip


def light_stem(word: str) -> str:
    """An English word without its plural, past or "-ing" ending and a final "e"
    ("paintings", "painted" -> "paint"; "hiking", "hikes" -> "hik"), so a question and a
    note that inflect a word differently still share it. Other words are left as they are
    (Mongolian stems are matched as prefixes at query time)."""
    word = _IRREGULAR.get(word, word)
    if len(word) <= 3 or not (word.isascii() and word.isalpha()):
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("es") and len(word) >= 5:
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ing") and len(word) >= 6:
        word = word[:-3]
    elif word.endswith("ed") and not word.endswith("eed") and len(word) >= 5:
        word = word[:-2]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]  # "running" -> "runn" -> "run"
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def note_words(text: str) -> list[str]:
    """The words of a note as the note arm compares them (:func:`light_stem`)."""
    return [light_stem(w) for w in words_of(text)]


def dated_text(day: dt.date) -> str:
    """A date as a note's words hold it: ISO, day month year, weekday."""
    return f"{day.isoformat()} {day.day} {day:%B} {day.year} {day:%A}"


def note_key(day: dt.date | None, with_mentions: bool) -> str:
    """What a note's rows were computed from: the format, its date, whether mentions were read."""
    return f"{NOTE_FORMAT}:{day}:{'m' if with_mentions else '-'}"


@dataclass(frozen=True)
class NoteRows:
    path: str
    key: str
    words: int
    terms: collections.Counter[str]
    mentions: tuple[tuple[int, dt.date, dt.date], ...]  # (sentence ordinal, start, end)


def note_rows(
    path: str,
    title: str,
    text: str,
    units: Sequence[str],
    day: dt.date | None,
    mentions: MentionReader | None,
) -> NoteRows:
    """The note-level rows of one source: its words and the dates its sentences ``units``
    mention (read against ``day``)."""
    words = note_words("\n".join([title, dated_text(day) if day else "", text]))
    found: list[tuple[int, dt.date, dt.date]] = []
    if mentions is not None and day is not None:
        itself = (day, day + dt.timedelta(days=1))  # its date (frontmatter, "today")
        for ordinal, unit in enumerate(units):
            found.extend((ordinal, *span) for span in mentions(unit, day) if span != itself)
    return NoteRows(
        path,
        note_key(day, mentions is not None),
        len(words),
        collections.Counter(words),
        tuple(dict.fromkeys(found)),
    )


def write_note_rows(cur: Any, rows: Sequence[NoteRows]) -> None:
    """Replace the note-level rows of these sources (their ``source_docs`` rows exist)."""
    if not rows:
        return
    paths = [r.path for r in rows]
    cur.execute("DELETE FROM source_terms WHERE path = ANY(%s)", (paths,))
    cur.execute("DELETE FROM source_mentions WHERE path = ANY(%s)", (paths,))
    with cur.copy("COPY source_terms (term, path, tf) FROM STDIN") as copy:
        for r in rows:
            for term, tf in r.terms.items():
                copy.write_row((term, r.path, tf))
    with cur.copy("COPY source_mentions (path, ordinal, start_date, end_date) FROM STDIN") as copy:
        for r in rows:
            for ordinal, start, end in r.mentions:
                copy.write_row((r.path, ordinal, start, end))
    cur.executemany(
        "UPDATE source_docs SET words = %s, note_key = %s WHERE path = %s",
        [(r.words, r.key, r.path) for r in rows],
    )
