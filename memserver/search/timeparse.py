"""Deterministic time parsing for questions: a date window, an ordering, a recency flag.

``parse_time("latest meeting with Alice last week", now=...)`` returns a
:class:`TimeQuery` with the half-open window ``[start, end)`` in the KB's timezone, the
ordering (``"newest"`` / ``"oldest"``), whether the question asks for soft recency
("recently", "currently"), and the question with those phrases removed. No LLM: every
phrase comes from the vocabulary tables (English in :mod:`memserver.search.timeparse_en`,
Mongolian in :mod:`memserver.search.timeparse_mn`), and ``dateparser`` is asked only about candidate
phrases that already look like a date (digits with separators, or a month name).

How a question is read:

1. *Date expressions* (``_POINTS``) each denote a span: a day, week, month, quarter,
   year, or the instant ``now``. Each has a level: ``BARE`` may stand alone
   ("yesterday", "2026-09-15"), ``PREP`` needs a preposition ("in March", "on Monday",
   "in 2025"), ``ANCHOR`` only ends a range ("to now").
2. *Window rules* (``_WINDOWS``) are tried in order; the first that matches and yields a
   valid window wins: ranges ("from X to Y"), "since X", "before/after/until X",
   "N days ago", rolling "last N days", then a preposition + expression, then a bare one.
3. *Markers* (``_MARKERS``) find orderings and soft-recency words in what is left.
   "last" followed by a period ("last week", "last 10 days") is a window; any other
   "last" ("last meeting") is an ordering.

Relative dates resolve against the explicit ``now`` (default: the current time), seen
in the KB timezone: at 23:00 UTC it is already tomorrow in Asia/Ulaanbaatar. A bare
weekday ("on Sunday", "Ням гарагт") is the latest past one, or the coming one when the
verb speaks of the future (:func:`verb_tense`). :func:`find_windows` reads every date
expression of a text (the dates a note mentions, against the note's own date).
"""

from __future__ import annotations

import calendar
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memserver.errors import UserError
from memserver.search import timeparse_en as en
from memserver.search import timeparse_mn as mn

NEWEST = "newest"  # latest: the newest on or before now
OLDEST = "oldest"
NEXT = "next"  # next / upcoming / дараагийн: the first after now


def order_bounds(order: str | None, today: date) -> tuple[date | None, date | None]:
    """``(after, through)``: the dates an ordering may lead with. Latest is the newest on
    or before today (a planned meeting is not the latest); next is the first after it."""
    if order == NEWEST:
        return None, today
    if order == NEXT:
        return today, None
    return None, None


# Open ends of "before X" / "after X"; a day inside the range of datetime so that
# converting to any other timezone cannot overflow.
OPEN_START = date(1, 1, 2)
OPEN_END = date(9999, 12, 30)
# The reference times (``now``) taken: windows around them stay inside the calendar.
NOW_RANGE = (date(1000, 1, 1), date(8999, 12, 31))


@dataclass(frozen=True)
class Window:
    """A half-open interval ``[start, end)`` of tz-aware datetimes in the KB timezone."""

    start: datetime
    end: datetime

    def contains(self, when: datetime | date) -> bool:
        """Whether ``when`` falls inside; a plain date means its midnight in this timezone."""
        if not isinstance(when, datetime):
            when = datetime.combine(when, time(), tzinfo=self.start.tzinfo)
        elif when.tzinfo is None:
            when = when.replace(tzinfo=self.start.tzinfo)
        return self.start <= when < self.end

    @property
    def open_start(self) -> bool:
        """True for "before X": the window has no lower bound."""
        return self.start.date() <= OPEN_START

    @property
    def open_end(self) -> bool:
        """True for "after X": the window has no upper bound."""
        return self.end.date() >= OPEN_END

    def as_dict(self) -> dict[str, str]:
        return {"start": self.start.isoformat(), "end": self.end.isoformat()}


@dataclass(frozen=True)
class TimeQuery:
    """What a question says about time.

    ``query`` is the question without the time phrase, ordering and recency words
    (whitespace collapsed); ``phrase`` is the text read as the window (None without one).
    """

    window: Window | None
    order: str | None
    soft_recency: bool
    query: str
    phrase: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "window": self.window.as_dict() if self.window else None,
            "order": self.order,
            "soft_recency": self.soft_recency,
            "query": self.query,
            "phrase": self.phrase,
        }


@dataclass(frozen=True)
class _Ctx:
    now: datetime  # in the KB timezone
    tz: ZoneInfo
    weekday: int = -1  # a bare weekday ("on Sunday"): -1 the latest past one, 1 the coming one

    @property
    def today(self) -> date:
        return self.now.date()

    def at(self, day: date) -> datetime:
        return datetime.combine(day, time(), tzinfo=self.tz)

    def days(self, first: date, end: date) -> Window:
        return Window(self.at(first), self.at(end))


# --- calendar arithmetic ----------------------------------------------------------------


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _shift(day: date, unit: str, n: int) -> date:
    """``day`` moved by ``n`` units (months clamp to the month's last day)."""
    if unit in ("day", "hour"):
        return day + timedelta(days=n)
    if unit in ("week", "weekend"):
        return day + timedelta(weeks=n)
    if unit == "quarter":
        return _add_months(day, 3 * n)
    if unit == "year":
        return _add_months(day, 12 * n)
    return _add_months(day, n)


def _period(c: _Ctx, unit: str, day: date) -> Window:
    """The calendar period (ISO week, month, ...) that contains ``day``."""
    if unit in ("day", "hour"):
        return c.days(day, day + timedelta(days=1))
    if unit in ("week", "weekend"):
        monday = day - timedelta(days=day.weekday())
        first = monday + timedelta(days=5) if unit == "weekend" else monday
        return c.days(first, monday + timedelta(days=7))
    if unit == "month":
        first = day.replace(day=1)
        return c.days(first, _add_months(first, 1))
    if unit == "quarter":
        first = date(day.year, 3 * ((day.month - 1) // 3) + 1, 1)
        return c.days(first, _add_months(first, 3))
    return c.days(date(day.year, 1, 1), date(day.year + 1, 1, 1))


def _month_window(c: _Ctx, month: int, year: int | None) -> Window | None:
    """A month; without a year, the latest one not in the future."""
    if not 1 <= month <= 12:
        return None
    if year is None:
        year = c.today.year if month <= c.today.month else c.today.year - 1
    return _period(c, "month", date(year, month, 1))


def _day_window(c: _Ctx, day: int, month: int, year: int | None) -> Window | None:
    """A day; without a year, this year's unless that is in the future, then last year's."""
    if year is not None:
        try:
            return _period(c, "day", date(year, month, day))
        except ValueError:
            return None
    for back in range(9):  # 29 February: go back to the latest leap year
        try:
            found = date(c.today.year - back, month, day)
        except ValueError:
            continue
        if found <= c.today:
            return _period(c, "day", found)
    return None


def _weekday(c: _Ctx, weekday: int, relation: int) -> Window:
    """-1: the latest past one (never today); 0: the one in this ISO week; 1: the next."""
    today = c.today
    if relation < 0:
        back = (today.weekday() - weekday) % 7 or 7
        return _period(c, "day", today - timedelta(days=back))
    if relation > 0:
        ahead = (weekday - today.weekday()) % 7 or 7
        return _period(c, "day", today + timedelta(days=ahead))
    return _period(c, "day", today + timedelta(days=weekday - today.weekday()))


def _unit(word: str) -> str:
    text = " ".join(word.lower().split())
    for prefix, unit in (*en.UNIT_PREFIXES, *mn.UNIT_PREFIXES):
        if text.startswith(prefix):
            return unit
    raise ValueError(f"not a time unit: {word!r}")


def _number(word: str) -> int:
    text = " ".join(word.lower().split())
    return int(text) if text.isdigit() else en.NUMBERS[text]


def _relation(word: str) -> int:
    return en.RELATIONS.get(
        " ".join(word.lower().split()), mn.PERIOD_RELATIONS.get(word.lower(), 0)
    )


# --- date expressions ----------------------------------------------------------------------

BARE, PREP, ANCHOR = 0, 1, 2
_Handler = Callable[[re.Match[str], _Ctx], "Window | None"]


def _g(m: re.Match[str], name: str) -> str | None:
    return m.groupdict().get(name)


def _int(m: re.Match[str], name: str) -> int | None:
    value = _g(m, name)
    return int(value) if value is not None else None


def _en_month(m: re.Match[str]) -> int:
    return en.MONTHS[(_g(m, "mon") or "").lower()]


def _dateparser(m: re.Match[str], c: _Ctx) -> Window | None:
    """Other absolute forms ("15/09/2026", "2026.09.15", "15-Sep-2026") via dateparser."""
    from dateparser.date import DateDataParser  # slow import, needed only here

    settings = {
        "RELATIVE_BASE": c.now.replace(tzinfo=None),
        "PREFER_DATES_FROM": "past",
        "TIMEZONE": c.tz.key,
        "RETURN_AS_TIMEZONE_AWARE": False,
        "STRICT_PARSING": True,
    }
    data = DateDataParser(languages=["en"], settings=settings).get_date_data(m.group(0))
    if data.date_obj is None:
        return None
    return _period(c, data.period or "day", data.date_obj.date())


def _relative_day(offset: int) -> _Handler:
    return lambda m, c: _period(c, "day", c.today + timedelta(days=offset))


def _relative_year(offset: int) -> _Handler:
    return lambda m, c: _period(c, "year", _shift(c.today, "year", offset))


def _calendar_period(m: re.Match[str], c: _Ctx) -> Window:
    unit = _unit(_g(m, "unit") or "")
    return _period(c, unit, _shift(c.today, unit, _relation(_g(m, "rel") or "")))


def _quarter(m: re.Match[str], c: _Ctx) -> Window:
    quarter = _int(m, "q") or 1
    year = _int(m, "y")
    if year is None:
        current = (c.today.month - 1) // 3 + 1
        year = c.today.year if quarter <= current else c.today.year - 1
    return _period(c, "quarter", date(year, 3 * quarter - 2, 1))


def _en_weekday(m: re.Match[str], c: _Ctx) -> Window:
    rel = _g(m, "rel")
    return _weekday(
        c, en.WEEKDAYS[(_g(m, "wd") or "").lower()], _relation(rel) if rel else c.weekday
    )


def _mn_weekday(m: re.Match[str], c: _Ctx) -> Window:
    rel = _g(m, "rel")
    return _weekday(
        c, mn.WEEKDAYS[(_g(m, "wd") or "").lower()], _relation(rel) if rel else c.weekday
    )


def _mn_month(m: re.Match[str]) -> int:
    return mn.month_number(_g(m, "mnum"), _g(m, "mword")) or 0


def _mn_relative_month_day(m: re.Match[str], c: _Ctx) -> Window | None:
    month = _shift(c.today.replace(day=1), "month", _relation(_g(m, "rel") or ""))
    return _day_window(c, _int(m, "day") or 0, month.month, month.year)


@dataclass(frozen=True)
class _Point:
    pattern: str
    level: int
    handler: _Handler


_POINTS: tuple[_Point, ...] = (
    # Order matters: a regex alternation takes the first alternative that fits, so the
    # longer forms ("September 15, 2026") come before their prefixes ("September").
    _Point(
        r"(?<![\w-])(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?!\d|-\d)",
        BARE,
        lambda m, c: _day_window(c, _int(m, "d") or 0, _int(m, "m") or 0, _int(m, "y")),
    ),
    _Point(en.NUMERIC_DATE, BARE, _dateparser),
    _Point(
        r"(?<![\w-])(?P<y>\d{4})-(?P<m>\d{1,2})(?!\d|-\d)",
        BARE,
        lambda m, c: _month_window(c, _int(m, "m") or 0, _int(m, "y")),
    ),
    _Point(
        rf"\b{en.MONTH}\s+(?P<d>\d{{1,2}}){en.ORD}(?!\d)(?:,?\s+(?P<y>\d{{4}})(?!\d))?",
        BARE,
        lambda m, c: _day_window(c, _int(m, "d") or 0, _en_month(m), _int(m, "y")),
    ),
    _Point(
        rf"(?:\bthe\s+)?\b(?P<d>\d{{1,2}}){en.ORD}\s+(?:of\s+)?{en.MONTH}(?:,?\s+(?P<y>\d{{4}})(?!\d))?",
        BARE,
        lambda m, c: _day_window(c, _int(m, "d") or 0, _en_month(m), _int(m, "y")),
    ),
    _Point(
        rf"\b{en.MONTH},?\s+(?P<y>\d{{4}})(?!\d)",
        BARE,
        lambda m, c: _month_window(c, _en_month(m), _int(m, "y")),
    ),
    _Point(rf"\b{en.MONTH}", PREP, lambda m, c: _month_window(c, _en_month(m), None)),
    _Point(r"\bq(?P<q>[1-4])(?:\s+(?P<y>\d{4}))?(?![\w-])", BARE, _quarter),
    _Point(r"(?<![\w-])(?P<y>\d{4})\s*-?\s*q(?P<q>[1-4])\b", BARE, _quarter),
    *(_Point(rf"\b(?:{p})\b", BARE, _relative_day(n)) for p, n in en.RELATIVE_DAYS),
    _Point(rf"\b{en.REL}\s+(?P<unit>week|weekend|month|quarter|year)\b", BARE, _calendar_period),
    _Point(
        rf"\b(?P<rel>last|this\s+past|previous|next|this\s+coming)\s+{en.WEEKDAY}",
        BARE,
        _en_weekday,
    ),
    _Point(rf"\b{en.WEEKDAY}", PREP, _en_weekday),
    _Point(
        r"(?<![\w.-])(?P<y>(?:19|20)\d{2})(?![\w-])",
        PREP,
        lambda m, c: _period(c, "year", date(_int(m, "y") or 1, 1, 1)),
    ),
    _Point(r"\b(?:now|the\s+present|present)\b", ANCHOR, lambda m, c: Window(c.now, c.now)),
    # Mongolian (no prepositions: the suffix is part of the expression).
    _Point(
        rf"{mn.YEAR_PREFIX}(?<!\d){mn.MONTH}{mn.DAY}",
        BARE,
        lambda m, c: _day_window(c, _int(m, "day") or 0, _mn_month(m), _int(m, "year")),
    ),
    _Point(
        rf"{mn.YEAR_PREFIX}(?<!\d){mn.MONTH}",
        BARE,
        lambda m, c: _month_window(c, _mn_month(m), _int(m, "year")),
    ),
    _Point(mn.YEAR, BARE, lambda m, c: _period(c, "year", date(_int(m, "year") or 1, 1, 1))),
    *(_Point(p, BARE, _relative_day(n)) for p, n in mn.RELATIVE_DAYS),
    *(_Point(p, BARE, _relative_year(n)) for p, n in mn.YEAR_WORDS),
    _Point(mn.RELATIVE_MONTH_DAY, BARE, _mn_relative_month_day),
    _Point(mn.PERIOD, BARE, _calendar_period),
    _Point(mn.WEEKDAY, BARE, _mn_weekday),
    _Point(mn.NOW, ANCHOR, lambda m, c: Window(c.now, c.now)),
)


@functools.cache
def _re(source: str) -> re.Pattern[str]:
    """Compiled on first use: the big date alternations take ~0.2 s to compile."""
    return re.compile(source, re.IGNORECASE)


def _date_alternation(level: int) -> str:
    """All date expressions up to ``level`` as one regex, with their groups anonymised."""
    parts = (re.sub(r"\(\?P<\w+>", "(?:", p.pattern) for p in _POINTS if p.level <= level)
    return "(?:" + "|".join(parts) + ")"


def _point(text: str, c: _Ctx) -> Window | None:
    """The span of one date expression (the whole of ``text``), or None."""
    for point in _POINTS:
        m = _re(point.pattern).fullmatch(text.strip())
        if m is not None:
            window = point.handler(m, c)
            if window is not None:
                return window
    return None


# --- window rules ------------------------------------------------------------------------------

_ANY = _date_alternation(ANCHOR)
_PREP = _date_alternation(PREP)
_BARE = _date_alternation(BARE)
_POSS = r"(?:['’]s\b)?"
_SFX = mn.SFX


def _between(m: re.Match[str], c: _Ctx) -> Window | None:
    a, b = _point(m["a"], c), _point(m["b"], c)
    if a is None or b is None or b.end <= a.start:
        return None
    return Window(a.start, b.end)


def _since(m: re.Match[str], c: _Ctx) -> Window | None:
    a = _point(m["a"], c)
    return Window(a.start, max(c.now, a.end)) if a is not None else None


def _until(m: re.Match[str], c: _Ctx) -> Window | None:
    a = _point(m["a"], c)
    return Window(c.at(OPEN_START), a.end) if a is not None else None


def _before(m: re.Match[str], c: _Ctx) -> Window | None:
    a = _point(m["a"], c)
    return Window(c.at(OPEN_START), a.start) if a is not None else None


def _after(m: re.Match[str], c: _Ctx) -> Window | None:
    a = _point(m["a"], c)
    return Window(a.end, c.at(OPEN_END)) if a is not None else None


def _ago(m: re.Match[str], c: _Ctx) -> Window:
    """The whole period (e.g. week) that held the day N units back: "2 weeks ago"."""
    unit = _unit(m["unit"])
    return _period(c, unit, _shift(c.today, unit, -_number(m["n"])))


def _rolling(m: re.Match[str], c: _Ctx) -> Window | None:
    """From midnight N units back until now: "last 10 days", "past week"."""
    n = _g(m, "n")
    if n is None and not (_g(m, "the") or (_g(m, "kw") or "").lower() == "past"):
        return None  # "last week" is the calendar week (a date expression), not 7 days
    count, unit = _number(n) if n else 1, _unit(m["unit"])
    if unit == "hour":
        return Window(c.now - timedelta(hours=count), c.now)
    return Window(c.at(_shift(c.today, unit, -count)), c.now)


def _itself(m: re.Match[str], c: _Ctx) -> Window | None:
    return _point(m["a"] or m["b"], c)


@dataclass(frozen=True)
class _Rule:
    pattern: str
    build: Callable[[re.Match[str], _Ctx], Window | None]


_WINDOWS: tuple[_Rule, ...] = (
    _Rule(
        rf"\b(?:from|between)\s+(?P<a>{_ANY})\s+(?:to|and|until|till|through|thru|-)\s+(?P<b>{_ANY}){_POSS}",
        _between,
    ),
    _Rule(rf"(?P<a>{_ANY}){_SFX}\s+(?P<b>{_ANY}){_SFX}\s+{mn.UNTIL}", _between),
    _Rule(rf"\b(?:since|from|starting(?:\s+from)?|as\s+of)\s+(?P<a>{_ANY}){_POSS}", _since),
    _Rule(rf"(?P<a>{_ANY}){_SFX}\s+{mn.SINCE}", _since),
    _Rule(rf"\b(?:until|till|up\s+to|through)\s+(?P<a>{_ANY}){_POSS}", _until),
    _Rule(rf"(?P<a>{_ANY}){_SFX}\s+{mn.UNTIL}", _until),
    _Rule(rf"(?<!day\s)\b(?:before|prior\s+to|earlier\s+than)\s+(?P<a>{_ANY}){_POSS}", _before),
    _Rule(rf"(?<!day\s)\b(?:after|later\s+than)\s+(?P<a>{_ANY}){_POSS}", _after),
    _Rule(rf"\b{en.NUM}\s+{en.UNITS}\s+ago\b", _ago),
    _Rule(mn.AGO, _ago),
    # Before the Mongolian "X-ээс өмнө" (before X) so that "3 хоногийн өмнө" stays "ago".
    _Rule(rf"(?P<a>{_ANY}){_SFX}\s+{mn.BEFORE}", _before),
    _Rule(rf"(?P<a>{_ANY}){_SFX}\s+{mn.AFTER}", _after),
    _Rule(
        rf"\b(?:(?:in|over|during|within|for)\s+)?(?P<the>the\s+|this\s+)?(?P<kw>last|past|previous)"
        rf"\s+(?:{en.NUM}\s+)?{en.UNITS}",
        _rolling,
    ),
    _Rule(mn.LAST_N, _rolling),
    # One rule, so the leftmost wins: "on 2026-09-15", but "the 3rd of March" over "of March".
    _Rule(
        rf"(?:\b(?:on|in|during|for|within|throughout|of)\s+(?P<a>{_PREP})|(?P<b>{_BARE})){_POSS}",
        _itself,
    ),
)


# --- ordering and soft recency ------------------------------------------------------------------

_SOFT = "soft"
# "last" before a period is a window ("last week", "last 3 days"), else an ordering.
_PERIOD_AFTER_LAST = (
    rf"(?!\s+(?:{en.NUM.replace('(?P<n>', '(?:')}\s+)?"
    rf"(?:week|month|quarter|year|day|hour|night\b|{'|'.join(en.WEEKDAYS)}))"
)
_MARKERS: tuple[tuple[str, str], ...] = (
    (_SOFT, mn.LATELY),  # "сүүлийн үед" (lately) before "сүүлийн" (latest)
    (NEWEST, r"\b(?:the\s+)?most\s+recent(?:ly)?\b"),  # before "recent"
    (
        _SOFT,
        r"\b(?:recently|recent|lately|nowadays|these\s+days|currently|current|right\s+now"
        r"|now|at\s+the\s+moment|what['’]?s\s+new|what\s+is\s+new|anything\s+new)\b",
    ),
    (_SOFT, mn.SOFT),
    (NEWEST, rf"\b(?:the\s+)?(?:very\s+)?(?:latest|newest|last{_PERIOD_AFTER_LAST})\b"),
    (NEWEST, mn.NEWEST),
    (OLDEST, r"\b(?:the\s+)?(?:very\s+)?(?:first|earliest|oldest)\b"),
    (OLDEST, mn.OLDEST),
    # after the windows: "next week" is a window, "next meeting" an ordering
    (NEXT, r"\b(?:the\s+)?(?:next|upcoming|forthcoming|soonest)\b(?!\s+steps?\b)"),
    (NEXT, mn.NEXT),
)


# --- entry point -------------------------------------------------------------------------------


def zone(tz: str | ZoneInfo) -> ZoneInfo:
    """A ZoneInfo from an IANA name, or a UserError naming the bad zone."""
    if isinstance(tz, ZoneInfo):
        return tz
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise UserError(
            f"unknown timezone {tz!r}", "use an IANA name such as UTC or Asia/Ulaanbaatar"
        ) from exc


def reference_time(now: datetime | None, tz: str | ZoneInfo) -> datetime:
    """``now`` in ``tz`` (a naive value is taken to be in ``tz``); the current time if None.

    UserError for a ``now`` outside ``NOW_RANGE`` (windows around it must stay dates).
    """
    zone_info = zone(tz)
    if now is None:
        return datetime.now(zone_info)
    if not NOW_RANGE[0] <= now.date() <= NOW_RANGE[1]:
        raise UserError(
            f"now={now.isoformat()} is outside the reference times this server takes",
            f"give now between {NOW_RANGE[0]} and {NOW_RANGE[1]}",
        )
    return now.replace(tzinfo=zone_info) if now.tzinfo is None else now.astimezone(zone_info)


def verb_tense(text: str) -> int:
    """-1 when ``text`` speaks of the past ("what did we do on Sunday", "юу болсон бэ"),
    1 when of the future ("what is she doing on Sunday", "хэзээ уулзах вэ"), 0 when it
    does not say or says both."""
    past = any(_re(p).search(text) for p in (en.PAST, mn.PAST))
    future = any(_re(p).search(text) for p in (en.FUTURE, mn.FUTURE))
    return -1 if past and not future else 1 if future and not past else 0


def _context(text: str, now: datetime | None, zone_info: ZoneInfo) -> _Ctx:
    """A bare weekday reads by the tense of ``text``: the latest past one unless the
    verb speaks of the future."""
    weekday = 1 if verb_tense(text) > 0 else -1
    return _Ctx(reference_time(now, zone_info), zone_info, weekday)


def find_windows(
    text: str, now: datetime | None = None, tz: str | ZoneInfo = "UTC", limit: int = 8
) -> list[tuple[Window, str]]:
    """Every date expression of ``text`` read as a window relative to ``now``, with its
    phrase, in the order the window rules find them (at most ``limit``): the dates a
    note mentions, read against the note's own date."""
    zone_info = zone(tz)
    c = _context(text, now, zone_info)
    out: list[tuple[Window, str]] = []
    rest = text
    while len(out) < limit:
        found = _find_window(rest, c)
        if found is None:
            break
        window, m = found
        out.append((window, " ".join(m.group(0).split())))
        rest = _blank(rest, [m.span()])
    return out


def _find_window(text: str, c: _Ctx) -> tuple[Window, re.Match[str]] | None:
    for rule in _WINDOWS:
        for m in _re(rule.pattern).finditer(text):
            window = rule.build(m, c)
            if window is not None and window.start <= window.end:
                return window, m
    return None


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """Spaces over ``spans``; keeping the length keeps later match positions comparable."""
    for start, end in spans:
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _clean(text: str) -> str:
    text = re.sub(r"\s+([?!.,;:])", r"\1", " ".join(text.split()))
    text = text.strip(" ,;:-")
    return text if any(ch.isalnum() for ch in text) else ""


def parse_time(text: str, now: datetime | None = None, tz: str | ZoneInfo = "UTC") -> TimeQuery:
    """Read the window, ordering and recency of ``text`` relative to ``now``.

    ``now`` defaults to the current time; a naive ``now`` is taken to be in ``tz``, an
    aware one is converted to it. Windows are half-open ``[start, end)`` in ``tz``.
    """
    zone_info = zone(tz)
    c = _context(text, now, zone_info)

    window, phrase, rest = None, None, text
    try:
        found = _find_window(text, c)
    except (OverflowError, ValueError) as exc:  # a window at year 1 or 9999 leaves the calendar
        raise UserError(
            f"the time window in {text[:80]!r} reaches outside the calendar ({exc})",
            f"write dates between {NOW_RANGE[0]} and {NOW_RANGE[1]}",
        ) from None
    if found is not None:
        window, m = found
        phrase = " ".join(m.group(0).split())
        rest = _blank(text, [m.span()])

    order: tuple[int, str] | None = None
    soft = False
    for kind, pattern in _MARKERS:
        spans = [m.span() for m in _re(pattern).finditer(rest)]
        if not spans:
            continue
        if kind == _SOFT:
            soft = True
        elif order is None or spans[0][0] < order[0]:
            order = (spans[0][0], kind)
        rest = _blank(rest, spans)
    return TimeQuery(
        window=window,
        order=order[1] if order else None,
        soft_recency=soft,
        query=_clean(rest),
        phrase=phrase,
    )
