"""Deterministic time parsing for questions: a date window, an ordering, a recency flag.

``parse_time("latest meeting with Alice last week", now=...)`` returns a
:class:`TimeQuery` with the half-open window ``[start, end)`` in the KB's timezone, the
ordering (``"newest"`` / ``"oldest"``), whether the question asks for soft recency
("recently", "currently"), and the question with those phrases removed. No LLM: every
phrase comes from the vocabulary tables (English in :mod:`memserver.timeparse.en`,
Mongolian in :mod:`memserver.timeparse.mn`), and ``dateparser`` is asked only about candidate
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
weekday ("on Sunday", "Ням гарагт"), a month or a day without its year ("in July",
"December 3") is the latest one, or the coming one when the text speaks of the future
(:func:`verb_tense`: "will", "need", "let's", "by the end of", "due"). :func:`find_windows` reads every date
expression of a text (the dates a note mentions, against the note's own date).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from memserver.errors import UserError
from memserver.timeparse import en as en
from memserver.timeparse import mn as mn
from memserver.timeparse.window import (
    NEWEST,
    NEXT,
    NOW_RANGE,
    OLDEST,
    OPEN_END,
    OPEN_START,
    Ctx,
    TimeQuery,
    Window,
    day_window,
    month_window,
    period,
    reference_time,
    shift,
    weekday_window,
    zone,
)


def _unit(word: str) -> str:
    text = " ".join(word.lower().split())
    for prefix, unit in (*en.UNIT_PREFIXES, *mn.UNIT_PREFIXES):
        if text.startswith(prefix):
            return unit
    raise ValueError(f"not a time unit: {word!r}")


def _number(word: str) -> int:
    text = " ".join(word.lower().split())
    return int(text) if text.isdigit() else en.NUMBERS.get(text) or mn.NUMBERS[text]


def _relation(word: str) -> int:
    return en.RELATIONS.get(
        " ".join(word.lower().split()), mn.PERIOD_RELATIONS.get(word.lower(), 0)
    )


# --- date expressions ----------------------------------------------------------------------

BARE, PREP, ANCHOR = 0, 1, 2
_Handler = Callable[[re.Match[str], Ctx], "Window | None"]


def _g(m: re.Match[str], name: str) -> str | None:
    return m.groupdict().get(name)


def _int(m: re.Match[str], name: str) -> int | None:
    value = _g(m, name)
    return int(value) if value is not None else None


def _en_month(m: re.Match[str]) -> int:
    return en.MONTHS[(_g(m, "mon") or "").lower()]


def _dateparser(m: re.Match[str], c: Ctx) -> Window | None:
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
    return period(c, data.period or "day", data.date_obj.date())


def _relative_day(offset: int) -> _Handler:
    return lambda m, c: period(c, "day", c.today + timedelta(days=offset))


def _relative_year(offset: int) -> _Handler:
    return lambda m, c: period(c, "year", shift(c.today, "year", offset))


def _calendar_period(m: re.Match[str], c: Ctx) -> Window:
    unit = _unit(_g(m, "unit") or "")
    return period(c, unit, shift(c.today, unit, _relation(_g(m, "rel") or "")))


def _quarter(m: re.Match[str], c: Ctx) -> Window:
    quarter = _int(m, "q") or 1
    year = _int(m, "y")
    if year is None:
        current = (c.today.month - 1) // 3 + 1
        year = c.today.year if quarter <= current else c.today.year - 1
    return period(c, "quarter", date(year, 3 * quarter - 2, 1))


def _en_weekday(m: re.Match[str], c: Ctx) -> Window:
    rel = _g(m, "rel")
    return weekday_window(
        c, en.WEEKDAYS[(_g(m, "wd") or "").lower()], _relation(rel) if rel else c.direction
    )


def _mn_weekday(m: re.Match[str], c: Ctx) -> Window:
    rel = _g(m, "rel")
    return weekday_window(
        c, mn.WEEKDAYS[(_g(m, "wd") or "").lower()], _relation(rel) if rel else c.direction
    )


def _mn_month(m: re.Match[str]) -> int:
    return mn.month_number(_g(m, "mnum"), _g(m, "mword")) or 0


def _mn_relative_month_day(m: re.Match[str], c: Ctx) -> Window | None:
    month = shift(c.today.replace(day=1), "month", _relation(_g(m, "rel") or ""))
    return day_window(c, _int(m, "day") or 0, month.month, month.year)


@dataclass(frozen=True)
class _Point:
    pattern: str
    level: int
    handler: _Handler


_DATES: tuple[_Point, ...] = (
    # Order matters: a regex alternation takes the first alternative that fits, so the
    # longer forms ("September 15, 2026") come before their prefixes ("September").
    _Point(
        r"(?<![\w-])(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?!\d|-\d)",
        BARE,
        lambda m, c: day_window(c, _int(m, "d") or 0, _int(m, "m") or 0, _int(m, "y")),
    ),
    _Point(en.NUMERIC_DATE, BARE, _dateparser),
    _Point(
        r"(?<![\w-])(?P<y>\d{4})-(?P<m>\d{1,2})(?!\d|-\d)",
        BARE,
        lambda m, c: month_window(c, _int(m, "m") or 0, _int(m, "y")),
    ),
    _Point(
        rf"\b{en.MONTH}\s+(?P<d>\d{{1,2}}){en.ORD}(?!\d)(?:,?\s+(?P<y>\d{{4}})(?!\d))?",
        BARE,
        lambda m, c: day_window(c, _int(m, "d") or 0, _en_month(m), _int(m, "y")),
    ),
    _Point(
        rf"(?:\bthe\s+)?\b(?P<d>\d{{1,2}}){en.ORD}\s+(?:of\s+)?{en.MONTH}(?:,?\s+(?P<y>\d{{4}})(?!\d))?",
        BARE,
        lambda m, c: day_window(c, _int(m, "d") or 0, _en_month(m), _int(m, "y")),
    ),
    _Point(
        rf"(?:\bthe\s+)?\b{en.ORDINAL_DAY}\s+of\s+{en.MONTH}(?:,?\s+(?P<y>\d{{4}})(?!\d))?",
        BARE,
        lambda m, c: day_window(
            c, en.ORDINAL_DAYS[(_g(m, "dw") or "").lower()], _en_month(m), _int(m, "y")
        ),
    ),
    _Point(
        rf"\b{en.MONTH},?\s+(?P<y>\d{{4}})(?!\d)",
        BARE,
        lambda m, c: month_window(c, _en_month(m), _int(m, "y")),
    ),
    _Point(rf"\b{en.MONTH}", PREP, lambda m, c: month_window(c, _en_month(m), None)),
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
    # "Wednesday's pricing review" names its day without a preposition.
    _Point(rf"\b{en.WEEKDAY}(?=['’]s\b)", BARE, _en_weekday),
    _Point(
        r"(?<![\w.-])(?P<y>(?:19|20)\d{2})(?![\w-])",
        PREP,
        lambda m, c: period(c, "year", date(_int(m, "y") or 1, 1, 1)),
    ),
    _Point(r"\b(?:now|the\s+present|present)\b", ANCHOR, lambda m, c: Window(c.now, c.now)),
    # Mongolian (no prepositions: the suffix is part of the expression).
    _Point(
        rf"{mn.YEAR_PREFIX}(?<!\d){mn.MONTH}{mn.DAY}",
        BARE,
        lambda m, c: day_window(c, _int(m, "day") or 0, _mn_month(m), _int(m, "year")),
    ),
    _Point(
        rf"{mn.YEAR_PREFIX}(?<!\d){mn.MONTH}",
        BARE,
        lambda m, c: month_window(c, _mn_month(m), _int(m, "year")),
    ),
    _Point(mn.YEAR, BARE, lambda m, c: period(c, "year", date(_int(m, "year") or 1, 1, 1))),
    *(_Point(p, BARE, _relative_day(n)) for p, n in mn.RELATIVE_DAYS),
    *(_Point(p, BARE, _relative_year(n)) for p, n in mn.YEAR_WORDS),
    _Point(mn.RELATIVE_MONTH_DAY, BARE, _mn_relative_month_day),
    _Point(mn.PERIOD, BARE, _calendar_period),
    _Point(mn.WEEKDAY, BARE, _mn_weekday),
    _Point(mn.NOW, ANCHOR, lambda m, c: Window(c.now, c.now)),
)


def _part_of(m: re.Match[str], c: Ctx) -> Window | None:
    """A part of a period by whole days: "early 2022" its first third, "the second half
    of October 2026" its last half, "2026 оны 11-р сарын дундуур" its middle third."""
    whole = _point(m["whole"], c)
    english = _g(m, "part")
    part = en.PARTS.get(" ".join(english.lower().split())) if english else None
    part = part or mn.part_of(_g(m, "mpart") or "")
    if whole is None or part is None:
        return None
    which, of = part
    first, end = whole.start.date(), whole.end.date()
    days = (end - first).days
    return c.days(
        first + timedelta(days=days * which // of),
        first + timedelta(days=days * (which + 1) // of),
    )


# A period a part is taken of: a date expression said with or without a preposition
# ("early October 2026", "mid-2024": a year after a hyphen too). A Mongolian part is
# said after its period, read by a window rule (only in a text that holds its word).
_WHOLE = "|".join(
    [r"(?:19|20)\d{2}(?![\w-])"]
    + [re.sub(r"\(\?P<\w+>", "(?:", p.pattern) for p in _DATES if p.level <= PREP]
)
_POINTS: tuple[_Point, ...] = (
    _Point(rf"{en.PART}(?:\s+|\s*-\s*)(?P<whole>{_WHOLE})", BARE, _part_of),
    *_DATES,
)


@functools.cache
def _re(source: str) -> re.Pattern[str]:
    """Compiled on first use: the big date alternations take ~0.2 s to compile."""
    return re.compile(source, re.IGNORECASE)


def _date_alternation(level: int) -> str:
    """All date expressions up to ``level`` as one regex, with their groups anonymised."""
    parts = (re.sub(r"\(\?P<\w+>", "(?:", p.pattern) for p in _POINTS if p.level <= level)
    return "(?:" + "|".join(parts) + ")"


def _point(text: str, c: Ctx) -> Window | None:
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
_NEXT_TO = rf"\b(?:the\s+)?(?:{en.NUM}\s+)?(?P<unit>days?|weeks?|months?|years?)"
_SFX = mn.SFX


def _between(m: re.Match[str], c: Ctx) -> Window | None:
    a, b = _point(m["a"], c), _point(m["b"], c)
    if a is None or b is None or b.end <= a.start:
        return None
    return Window(a.start, b.end)


def _since(m: re.Match[str], c: Ctx) -> Window | None:
    a = _point(m["a"], c)
    return Window(a.start, max(c.now, a.end)) if a is not None else None


def _until(m: re.Match[str], c: Ctx) -> Window | None:
    a = _point(m["a"], c)
    return Window(c.at(OPEN_START), a.end) if a is not None else None


def _before(m: re.Match[str], c: Ctx) -> Window | None:
    a = _point(m["a"], c)
    return Window(c.at(OPEN_START), a.start) if a is not None else None


def _after(m: re.Match[str], c: Ctx) -> Window | None:
    a = _point(m["a"], c)
    return Window(a.end, c.at(OPEN_END)) if a is not None else None


def _span_beside(direction: int) -> _Handler:
    """What "the week before X" (``direction`` -1) or "two months after X" (1) reads:
    that many units next to X, not everything before or after it."""

    def build(m: re.Match[str], c: Ctx) -> Window | None:
        a = _point(m["a"], c)
        if a is None:
            return None
        unit, count = _unit(m["unit"]), _number(m["n"]) if _g(m, "n") else 1
        if direction < 0:
            return Window(c.at(shift(a.start.date(), unit, -count)), a.start)
        return Window(a.end, c.at(shift(a.end.date(), unit, count)))

    return build


def _ago(m: re.Match[str], c: Ctx) -> Window:
    """The whole period (e.g. week) that held the day N units back: "2 weeks ago"."""
    unit = _unit(m["unit"])
    return period(c, unit, shift(c.today, unit, -_number(m["n"])))


def _rolling(m: re.Match[str], c: Ctx) -> Window | None:
    """From midnight N units back until now: "last 10 days", "past week"."""
    n = _g(m, "n")
    if n is None and not (_g(m, "the") or (_g(m, "kw") or "").lower() == "past"):
        return None  # "last week" is the calendar week (a date expression), not 7 days
    count, unit = _number(n) if n else 1, _unit(m["unit"])
    if unit == "hour":
        return Window(c.now - timedelta(hours=count), c.now)
    return Window(c.at(shift(c.today, unit, -count)), c.now)


def _itself(m: re.Match[str], c: Ctx) -> Window | None:
    return _point(m["a"] or m["b"], c)


@dataclass(frozen=True)
class _Rule:
    pattern: str
    build: Callable[[re.Match[str], Ctx], Window | None]
    # A part of ``pattern`` every match holds (the Mongolian word after a date): a text
    # without it is not scanned with the whole pattern, whose date alternation tried at
    # every position was most of reading a note's dates (bench/history/embed-floor.md).
    needs: str | None = None


# One rule, so the leftmost wins: "on 2026-09-15", but "the 3rd of March" over "of March".
# A Mongolian case ending on a date is part of it ("2026-10-07-нд": on 2026-10-07). The
# last rule: a window it reads is one date expression itself, and said with a
# preposition or a case ending it is the text's time (TimeQuery.point), not a date that
# names something ("the May 2021 outage").
_POINT_RULE = _Rule(
    rf"(?:\b(?:on|in|at|during|for|within|throughout|of)\s+(?P<a>{_PREP})|(?P<b>{_BARE}))"
    rf"(?:(?P<case>-?[{mn.LETTERS}]+){mn.END}|['’]s\b)?",
    _itself,
)

# "2026 оны 10-р сарын эхээр": a part said after its period, with a case ending: the
# text's time, as a date said with one (TimeQuery.point).
_MN_PART_RULE = _Rule(rf"(?P<whole>{_ANY}){_SFX}\s+{mn.PART}", _part_of, mn.PART)

_WINDOWS: tuple[_Rule, ...] = (
    _Rule(
        rf"\b(?:from|between)\s+(?P<a>{_ANY})\s+(?:to|and|until|till|through|thru|-)\s+(?P<b>{_ANY}){_POSS}",
        _between,
    ),
    _Rule(rf"(?P<a>{_ANY}){_SFX}\s+(?P<b>{_ANY}){_SFX}\s+{mn.UNTIL}", _between, mn.UNTIL),
    # "as of X" asks what held at X: everything up to X's end, not since it.
    _Rule(rf"\b(?:as\s+(?:of|at))\s+(?P<a>{_ANY}){_POSS}", _until),
    _Rule(rf"(?P<a>{_ANY}){_SFX}\s+байдлаар", _until, "байдлаар"),
    _MN_PART_RULE,
    _Rule(rf"\b(?:since|from|starting(?:\s+from)?)\s+(?P<a>{_ANY}){_POSS}", _since),
    _Rule(rf"(?P<a>{_ANY}){_SFX}\s+{mn.SINCE}", _since, mn.SINCE),
    _Rule(rf"\b(?:until|till|up\s+to|through)\s+(?P<a>{_ANY}){_POSS}", _until),
    _Rule(rf"(?P<a>{_ANY}){_SFX}\s+{mn.UNTIL}", _until, mn.UNTIL),
    # Before "before X": "the week before X" is that week, not all that came before X.
    _Rule(rf"{_NEXT_TO}\s+(?:before|prior\s+to)\s+(?P<a>{_ANY}){_POSS}", _span_beside(-1)),
    _Rule(rf"{_NEXT_TO}\s+(?:after|later\s+than)\s+(?P<a>{_ANY}){_POSS}", _span_beside(1)),
    _Rule(rf"(?<!day\s)\b(?:before|prior\s+to|earlier\s+than)\s+(?P<a>{_ANY}){_POSS}", _before),
    _Rule(rf"(?<!day\s)\b(?:after|later\s+than)\s+(?P<a>{_ANY}){_POSS}", _after),
    _Rule(rf"\b{en.NUM}\s+{en.UNITS}\s+ago\b", _ago),
    _Rule(mn.AGO, _ago),
    # Before the Mongolian "X-ээс өмнө" (before X) so that "3 хоногийн өмнө" stays "ago".
    _Rule(rf"(?P<a>{_ANY}){_SFX}\s+{mn.BEFORE}", _before, mn.BEFORE),
    _Rule(rf"(?P<a>{_ANY}){_SFX}\s+{mn.AFTER}", _after, mn.AFTER),
    _Rule(
        rf"\b(?:(?:in|over|during|within|for)\s+)?(?P<the>the\s+|this\s+)?(?P<kw>last|past|previous)"
        rf"\s+(?:{en.NUM}\s+)?{en.UNITS}",
        _rolling,
    ),
    _Rule(mn.LAST_N, _rolling),
    _POINT_RULE,
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
    # not "API-first" or "first-class": a kind, not an order
    (OLDEST, r"(?<![\w-])(?:the\s+)?(?:very\s+)?(?:first|earliest|oldest)\b(?!-)"),
    (OLDEST, mn.OLDEST),
    # after the windows: "next week" is a window, "next meeting" an ordering
    (NEXT, r"\b(?:the\s+)?(?:next|upcoming|forthcoming|soonest)\b(?!\s+steps?\b)"),
    (NEXT, mn.NEXT),
)


# --- entry point -------------------------------------------------------------------------------


def verb_tense(text: str) -> int:
    """-1 when ``text`` speaks of the past ("what did we do on Sunday", "юу болсон бэ"),
    1 when of the future ("what is she doing on Sunday", "хэзээ уулзах вэ"), 0 when it
    does not say or says both."""
    past = any(_re(p).search(text) for p in (en.PAST, mn.PAST))
    future = any(_re(p).search(text) for p in (en.FUTURE, mn.FUTURE))
    return -1 if past and not future else 1 if future and not past else 0


def _context(text: str, now: datetime | None, zone_info: ZoneInfo) -> Ctx:
    """A date ``text`` leaves open (a bare weekday, a month or a day without its year)
    reads by the tense of ``text``: the latest one unless it speaks of the future."""
    direction = 1 if verb_tense(text) > 0 else -1
    return Ctx(reference_time(now, zone_info), zone_info, direction)


# Exported text writes dates with typographic hyphens ("2023\u201110\u201112": U+2011,
# the non-breaking one, is common). One character for one, so match positions hold.
_HYPHENS = str.maketrans({"\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-"})


def plain_hyphens(text: str) -> str:
    """``text`` with the Unicode hyphens and dashes a date may be written with (U+2010
    to U+2013) as ASCII ``-``; the same length, so positions in it are positions in ``text``."""
    return text.translate(_HYPHENS)


def find_windows(
    text: str, now: datetime | None = None, tz: str | ZoneInfo = "UTC", limit: int = 8
) -> list[tuple[Window, str]]:
    """Every date expression of ``text`` read as a window relative to ``now``, with its
    phrase, in the order the window rules find them (at most ``limit``): the dates a
    note mentions, read against the note's own date."""
    text = plain_hyphens(text)
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


# Every window rule holds a date expression (``_ANY`` or part of it) or a unit of time:
# text with neither matches no rule, and one search says so (most sentences of a note).
_MAY_HOLD_A_WINDOW = "|".join(
    re.sub(r"\(\?P<\w+>", "(?:", part) for part in (_ANY, en.UNITS, mn.AGO, mn.LAST_N)
)


def _find_window(text: str, c: Ctx) -> tuple[Window, re.Match[str]] | None:
    if _re(_MAY_HOLD_A_WINDOW).search(text) is None:
        return None
    for rule in _WINDOWS:
        if rule.needs is not None and _re(rule.needs).search(text) is None:
            continue
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
    text = plain_hyphens(text)
    zone_info = zone(tz)
    c = _context(text, now, zone_info)

    window, phrase, rest, point = None, None, text, False
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
        # said as the time of the text: with a preposition or a Mongolian case ending
        point = m.re.pattern == _MN_PART_RULE.pattern or (
            m.re.pattern == _POINT_RULE.pattern and bool(_g(m, "a") or _g(m, "case"))
        )

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
        point=point,
    )
