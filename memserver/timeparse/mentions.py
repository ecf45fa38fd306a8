"""The dates a sentence mentions, read against its note's date: what the index stores
for a raw source's sentences (``source_mentions``, for windows that match a note by what
it speaks of) and what an answer quoting a note's sentence dates it by.

:func:`mention_reader` gives the :data:`MentionReader` the
index uses: a sentence read with :func:`memserver.timeparse.parse.find_windows` against
noon of the note's date (a bare weekday by the sentence's tense); a window open at one
end, or longer than MENTION_MAX_DAYS, is no mention. It needs no database.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from zoneinfo import ZoneInfo

from memserver.timeparse.parse import find_windows
from memserver.timeparse.window import zone

# (sentence, the note's date) -> the [start, end) date spans the sentence mentions.
MentionReader = Callable[[str, dt.date], Sequence[tuple[dt.date, dt.date]]]

MENTION_MAX_DAYS = 366
# Cheap test before the date grammar runs on a sentence: a digit, a month or weekday
# name, or a word of relative time (English, Mongolian).
_HINT = re.compile(
    r"\d|yesterday|today|tonight|tomorrow|week|month|year|ago|last|next|day|"
    r"jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|"
    r"mon|tue|wed|thu|fri|sat|sun|"
    r"өчигд|уржигд|өнөөд|маргааш|хоног|сар|жил|гараг|гариг|ноднин|өмнө",
    re.IGNORECASE,
)


# "as of X" reads as everything up to X's end (what held at X); in a note it names X.
AS_OF = re.compile(r"as\s+(?:of|at)\b", re.IGNORECASE)


def mention_reader(tz: str | ZoneInfo) -> MentionReader:
    """Reads the dates a sentence mentions, against its note's date, in ``tz``."""
    zone_info = zone(tz)

    def read(sentence: str, day: dt.date) -> list[tuple[dt.date, dt.date]]:
        if not _HINT.search(sentence):
            return []
        noon = dt.datetime.combine(day, dt.time(12), tzinfo=zone_info)
        out = []
        for window, phrase in find_windows(sentence, now=noon, tz=zone_info):
            as_of = window.open_start and AS_OF.match(phrase) is not None
            if (window.open_start and not as_of) or window.open_end:
                continue
            start, end = window.start.date(), window.end.date()
            if window.end.time() != dt.time():
                end += dt.timedelta(days=1)
            if as_of:  # "as of today" in a note: the day it names, not all before it
                start = end - dt.timedelta(days=1)
            if start < end and (end - start).days <= MENTION_MAX_DAYS:
                out.append((start, end))
        return out

    return read
