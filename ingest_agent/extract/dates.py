"""The days a note's sentence names, and the one day a timeline entry gets.

A note is read at its own date (the *note date*: when it was written or said), never
at the run date. Two rules:

- **A month and day without a year** ("December 3", "3 Dec", "12 сарын 3") is the
  occurrence nearest the note date: "a health inspection on December 3" in a note of
  2026-11-17 is 2026-12-03, not 2025-12-03.
- **The entry's date** is the note date, unless the sentence says when the event it
  reports happened: a day on or before the note date that is not a deadline ("by",
  "due", "until"; Mongolian "дотор", "хүртэл", "гэхэд"), not an end of a range ("from
  X to Y") and not a reference to another event ("the 2026-10-07 review", "the
  decision of 2026-07-15"). "Promoted to VP, effective 2026-09-21" in a note of
  2026-09-23 is dated 2026-09-21; "send the contract by 2026-11-16" in a note of
  2026-11-12 is dated 2026-11-12 (it was said then; the due day stays in the text).
  Two different such days in one sentence say no single event date: the note date.

Relative days ("yesterday", "өчигдөр", "on Monday") are read by the search's time
parser against the note date.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from memserver.kb.page import as_date
from memserver.timeparse import en as en
from memserver.timeparse import mn as mn
from memserver.timeparse.mentions import AS_OF
from memserver.timeparse.parse import parse_time, plain_hyphens

_MN = mn.LETTERS
_ISO = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?!\d)")
_EN_MONTH = "|".join(sorted(en.MONTHS, key=len, reverse=True))
_EN_MONTH_DAY = re.compile(
    rf"\b(?P<mon>{_EN_MONTH})\b\.?\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?![\d:])"
    rf"(?:,?\s+(?P<year>\d{{4}}))?",
    re.IGNORECASE,
)
_EN_DAY_MONTH = re.compile(
    rf"(?<![\d.:])(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>{_EN_MONTH})\b\.?"
    rf"(?:,?\s+(?P<year>\d{{4}}))?",
    re.IGNORECASE,
)
_MN_MONTH_DAY = re.compile(rf"{mn.YEAR_PREFIX}{mn.MONTH}{mn.DAY}", re.IGNORECASE)

# Before a day (English) or after it (Mongolian postpositions): a deadline, not an event.
_DEADLINE_BEFORE = re.compile(
    r"(?:\bby|\bdue(?:\s+on)?|\buntil|\btill|\bbefore|\bdeadline:?|\btarget(?:ed)?(?:\s+date)?:?"
    r"|\bno\s+later\s+than|\bexpected(?:\s+on)?|\bscheduled\s+for|\bplanned\s+for|→)"
    r"\s*(?:on\s+)?(?:the\s+)?$",
    re.IGNORECASE,
)
_DEADLINE_AFTER = re.compile(
    rf"^(?:-?[{_MN}]+)?\s*(?:дотор|хүртэл|гэхэд|болтол)(?![{_MN}])", re.IGNORECASE
)
# "the 2026-10-07 review", "the decision of 2026-07-15": a day that names another event.
_REFERENCE_BEFORE = re.compile(r"(?:\bthe|(?<!\bas )\bof)\s+$", re.IGNORECASE)  # not "as of"
# The first end of a range: "2026-09-14 to 2026-10-14", "2026-10-12-оос 2026-11-13".
_RANGE_AFTER = re.compile(
    r"^(?:-?(?:оос|аас|ээс|өөс|нээс|наас))?\s*(?:to|until|through|–|—|-)?\s*$", re.IGNORECASE
)
_RANGE_BEFORE = re.compile(r"\bbetween\s+$", re.IGNORECASE)
_SENTENCES = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class DayMention:
    """A day a sentence names, where, and what the words around it make of it."""

    day: dt.date
    start: int
    end: int
    deadline: bool = False
    reference: bool = False
    in_range: bool = False

    def is_event_day(self, note_date: dt.date) -> bool:
        """Whether this can be the day the sentence's event happened."""
        return (
            self.day <= note_date and not self.deadline and not self.reference and not self.in_range
        )


def nearest(month: int, day: int, note_date: dt.date) -> dt.date | None:
    """The date of ``month``/``day`` nearest ``note_date`` (the year before, of, or after)."""
    found = []
    for year in (note_date.year - 1, note_date.year, note_date.year + 1):
        try:
            found.append(dt.date(year, month, day))
        except ValueError:
            continue  # 29 February of a year that has none
    if not found:
        return None
    return min(found, key=lambda d: (abs((d - note_date).days), d))


def _explicit(sentence: str, note_date: dt.date) -> list[tuple[dt.date, int, int]]:
    spans: list[tuple[dt.date, int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for _, s, e in spans)

    for m in _ISO.finditer(sentence):
        day = as_date(m.group(0))
        if day is not None:
            spans.append((day, m.start(), m.end()))
    for pattern in (_EN_MONTH_DAY, _EN_DAY_MONTH):
        for m in pattern.finditer(sentence):
            if not free(m.start(), m.end()):
                continue
            month, number = en.MONTHS[m.group("mon").lower().rstrip(".")], int(m.group("day"))
            year = m.group("year")
            day = _make(int(year), month, number) if year else nearest(month, number, note_date)
            if day is not None:
                spans.append((day, m.start(), m.end()))
    for m in _MN_MONTH_DAY.finditer(sentence):
        if not free(m.start(), m.end()):
            continue
        mn_month = mn.month_number(m.group("mnum"), m.group("mword"))
        if mn_month is None:
            continue
        year, number = m.group("year"), int(m.group("day"))
        day = _make(int(year), mn_month, number) if year else nearest(mn_month, number, note_date)
        if day is not None:
            spans.append((day, m.start(), m.end()))
    return sorted(spans, key=lambda s: s[1])


def _make(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def day_mentions(sentence: str, note_date: dt.date, tz: ZoneInfo) -> list[DayMention]:
    """Every day ``sentence`` names: ISO dates, month-day phrases (English and
    Mongolian, the nearest occurrence without a year), else one relative day phrase."""
    sentence = plain_hyphens(sentence)
    spans = _explicit(sentence, note_date)
    if not spans:
        # Each sentence read in its own tense: "Let's keep that for Wednesday's review.
        # Alex, check whether Initech paid" looks ahead in the first, back in the second.
        noon = dt.datetime.combine(note_date, dt.time(12), tzinfo=tz)
        days = set()
        for part in _SENTENCES.split(sentence):
            read = parse_time(part, now=noon, tz=tz)
            window = read.window
            if window is None or window.open_end:
                continue
            first, last = window.start.date(), window.end.date()
            if window.open_start:  # "as of today": up to its end, the day itself
                if not AS_OF.match(read.phrase or ""):
                    continue
                first = last - dt.timedelta(days=1)
            if (last - first).days == 1:
                days.add(first)
        return [DayMention(days.pop(), 0, 0)] if len(days) == 1 else []
    out = []
    for i, (day, start, end) in enumerate(spans):
        before, after = sentence[max(0, start - 40) : start], sentence[end : end + 16]
        following = spans[i + 1] if i + 1 < len(spans) else None
        range_start = following is not None and bool(
            _RANGE_AFTER.match(sentence[end : following[1]])
        )
        previous = spans[i - 1] if i > 0 else None
        range_end = previous is not None and bool(_RANGE_AFTER.match(sentence[previous[2] : start]))
        out.append(
            DayMention(
                day,
                start,
                end,
                deadline=bool(_DEADLINE_BEFORE.search(before) or _DEADLINE_AFTER.match(after)),
                reference=bool(_REFERENCE_BEFORE.search(before)),
                in_range=range_start or range_end or bool(_RANGE_BEFORE.search(before)),
            )
        )
    return out


def entry_date(sentence: str, note_date: dt.date, tz: ZoneInfo) -> dt.date | None:
    """The date of a timeline entry for ``sentence`` (see the module docstring), or None
    when it names no day at all."""
    mentions = day_mentions(sentence, note_date, tz)
    if not mentions:
        return None
    events = {m.day for m in mentions if m.is_event_day(note_date)}
    return next(iter(events)) if len(events) == 1 else note_date
