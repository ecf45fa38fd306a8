"""Time as the search reads it: a window ``[start, end)`` in the KB's timezone, what a
question says about time (:class:`TimeQuery`), orderings, and the calendar arithmetic
the question grammar (:mod:`memserver.timeparse.parse`) builds its windows with."""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memserver.errors import UserError

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
    (whitespace collapsed); ``phrase`` is the text read as the window (None without one);
    ``point``: the window is one date expression said as the text's time, with a
    preposition or a Mongolian case ending ("on 2026-09-01", "in July", "2026-10-07-нд"),
    not a span from, to, before or after one ("since July", "the last 10 days") nor a
    date that names something ("the May 2026 pilot").
    """

    window: Window | None
    order: str | None
    soft_recency: bool
    query: str
    phrase: str | None
    point: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "window": self.window.as_dict() if self.window else None,
            "order": self.order,
            "soft_recency": self.soft_recency,
            "query": self.query,
            "phrase": self.phrase,
            "point": self.point,
        }


@dataclass(frozen=True)
class Ctx:
    now: datetime  # in the KB timezone
    tz: ZoneInfo
    # A date the text leaves open (a bare weekday, a month or a month and day without a
    # year): -1 the latest one not in the future, 1 the coming one (the text speaks of
    # the future: "we need a price list by the end of July", "let's keep that for Wednesday").
    direction: int = -1

    @property
    def today(self) -> date:
        return self.now.date()

    def at(self, day: date) -> datetime:
        return datetime.combine(day, time(), tzinfo=self.tz)

    def days(self, first: date, end: date) -> Window:
        return Window(self.at(first), self.at(end))


# --- calendar arithmetic ----------------------------------------------------------------


def add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def shift(day: date, unit: str, n: int) -> date:
    """``day`` moved by ``n`` units (months clamp to the month's last day)."""
    if unit in ("day", "hour"):
        return day + timedelta(days=n)
    if unit in ("week", "weekend"):
        return day + timedelta(weeks=n)
    if unit == "quarter":
        return add_months(day, 3 * n)
    if unit == "year":
        return add_months(day, 12 * n)
    return add_months(day, n)


def period(c: Ctx, unit: str, day: date) -> Window:
    """The calendar period (ISO week, month, ...) that contains ``day``."""
    if unit in ("day", "hour"):
        return c.days(day, day + timedelta(days=1))
    if unit in ("week", "weekend"):
        monday = day - timedelta(days=day.weekday())
        first = monday + timedelta(days=5) if unit == "weekend" else monday
        return c.days(first, monday + timedelta(days=7))
    if unit == "month":
        first = day.replace(day=1)
        return c.days(first, add_months(first, 1))
    if unit == "quarter":
        first = date(day.year, 3 * ((day.month - 1) // 3) + 1, 1)
        return c.days(first, add_months(first, 3))
    return c.days(date(day.year, 1, 1), date(day.year + 1, 1, 1))


def month_window(c: Ctx, month: int, year: int | None) -> Window | None:
    """A month; without a year, the latest one not in the future, or with ``c.direction``
    1 the coming one (this month counts as coming)."""
    if not 1 <= month <= 12:
        return None
    if year is None and c.direction > 0:
        year = c.today.year if month >= c.today.month else c.today.year + 1
    elif year is None:
        year = c.today.year if month <= c.today.month else c.today.year - 1
    return period(c, "month", date(year, month, 1))


def day_window(c: Ctx, day: int, month: int, year: int | None) -> Window | None:
    """A day; without a year, this year's unless that is in the future, then last year's;
    with ``c.direction`` 1, this year's unless that is past, then next year's."""
    if year is not None:
        try:
            return period(c, "day", date(year, month, day))
        except ValueError:
            return None
    step = 1 if c.direction > 0 else -1
    for n in range(9):  # 29 February: go on to the nearest leap year
        try:
            found = date(c.today.year + step * n, month, day)
        except ValueError:
            continue
        if (found >= c.today) if step > 0 else (found <= c.today):
            return period(c, "day", found)
    return None


def weekday_window(c: Ctx, weekday: int, relation: int) -> Window:
    """-1: the latest past one (never today); 0: the one in this ISO week; 1: the next."""
    today = c.today
    if relation < 0:
        back = (today.weekday() - weekday) % 7 or 7
        return period(c, "day", today - timedelta(days=back))
    if relation > 0:
        ahead = (weekday - today.weekday()) % 7 or 7
        return period(c, "day", today + timedelta(days=ahead))
    return period(c, "day", today + timedelta(days=weekday - today.weekday()))


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
