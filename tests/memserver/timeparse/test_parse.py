"""timeparse: every row of the seed's time table, in English and Mongolian, at fixed `now`s."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memserver.cli import main
from memserver.errors import UserError
from memserver.timeparse.now import parse_now
from memserver.timeparse.parse import find_windows, parse_time, verb_tense
from memserver.timeparse.window import NEWEST, NEXT, OLDEST, TimeQuery, Window

TZ = ZoneInfo("Asia/Ulaanbaatar")
WED = datetime(2026, 9, 16, 10, 0, tzinfo=TZ)  # a Wednesday
MON = datetime(2026, 9, 14, 10, 0, tzinfo=TZ)  # a Monday
NEW_YEAR = datetime(2026, 1, 3, 10, 0, tzinfo=TZ)  # a Saturday; its ISO week began 2025-12-29
JAN_1 = datetime(2026, 1, 1, 9, 0, tzinfo=TZ)
OPEN = "open"  # an open end of "before X" / "after X"
NOW = "now"  # the window ends at the reference time


@dataclass(frozen=True)
class Row:
    text: str
    start: str | None  # "YYYY-MM-DD" (local midnight), NOW, OPEN, or None for no window
    end: str | None
    query: str = ""
    order: str | None = None
    soft: bool = False
    now: datetime = WED


def _at(value: str, now: datetime, *, end: bool) -> datetime:
    if value == NOW:
        return now
    if value == OPEN:
        return datetime(9999, 12, 30, tzinfo=TZ) if end else datetime(1, 1, 2, tzinfo=TZ)
    return datetime.combine(date.fromisoformat(value), datetime.min.time(), tzinfo=TZ)


ENGLISH = [
    # Windows: calendar periods.
    Row("what happened last week", "2026-09-07", "2026-09-14", "what happened"),
    Row("this week", "2026-09-14", "2026-09-21"),
    Row("last month", "2026-08-01", "2026-09-01"),
    Row("this month", "2026-09-01", "2026-10-01"),
    Row("last year", "2025-01-01", "2026-01-01"),
    Row("this year", "2026-01-01", "2027-01-01"),
    Row("last weekend", "2026-09-12", "2026-09-14"),
    Row("Q2", "2026-04-01", "2026-07-01"),
    Row("Q4", "2025-10-01", "2026-01-01"),  # a future quarter means last year's
    # Windows: one day.
    Row("meetings on 2026-09-15", "2026-09-15", "2026-09-16", "meetings"),
    Row("on 15 September 2026", "2026-09-15", "2026-09-16"),
    Row("on September 15", "2026-09-15", "2026-09-16"),
    Row("on September 20", "2025-09-20", "2025-09-21"),  # in the future this year
    Row("notes from the 3rd of March", "2026-03-03", NOW, "notes"),
    Row("notes from the third of March", "2026-03-03", NOW, "notes"),  # a day as a word
    Row("on the fifth of September", "2026-09-05", "2026-09-06"),
    Row("since the Twenty-First of August 2025", "2025-08-21", NOW),
    Row("the first meeting of September", "2026-09-01", "2026-10-01", "meeting", "oldest"),
    Row("on February 29", "2024-02-29", "2024-03-01"),  # latest leap year
    Row("on Monday", "2026-09-14", "2026-09-15"),
    Row("standup on Wednesday", "2026-09-09", "2026-09-10", "standup"),  # today is Wed: not today
    Row("last Friday", "2026-09-11", "2026-09-12"),
    Row("yesterday", "2026-09-15", "2026-09-16"),
    Row("yesterday's meeting notes", "2026-09-15", "2026-09-16", "meeting notes"),
    Row("today", "2026-09-16", "2026-09-17"),
    Row("the day before yesterday", "2026-09-14", "2026-09-15"),
    Row("what happened the day before today", "2026-09-15", "2026-09-16", "what happened"),
    Row("the day after 2026-09-10", "2026-09-11", "2026-09-12"),
    Row("two days before 2026-09-10", "2026-09-08", "2026-09-10"),
    Row("15/09/2026", "2026-09-15", "2026-09-16"),  # dateparser fallback
    # Windows: a part of a period (thirds and halves, by whole days).
    Row("what did we sign in early 2022", "2022-01-01", "2022-05-02", "what did we sign"),
    Row("worth by mid-2024", "2024-05-02", "2024-09-01", "worth by"),
    Row("in late 2023", "2023-09-01", "2024-01-01"),
    Row("meetings in early October 2026", "2026-10-01", "2026-10-11", "meetings"),
    Row("decided in mid-July 2025", "2025-07-11", "2025-07-21", "decided"),
    Row("at the end of June 2026", "2026-06-21", "2026-07-01"),
    Row("in the first half of October 2025", "2025-10-01", "2025-10-16"),
    Row("the second half of 2025", "2025-07-02", "2026-01-01"),
    Row("since mid-2025", "2025-05-02", NOW),
    Row("as of the end of 2025", OPEN, "2026-01-01"),
    # "by the end of" names a deadline: the whole coming month, as before
    Row(
        "we need a price list by the end of August",
        "2027-08-01",
        "2027-09-01",
        "we need a price list by the end",
    ),
    Row("invoice 2026.09.15", "2026-09-15", "2026-09-16", "invoice"),
    Row("15-Sep-2026", "2026-09-15", "2026-09-16"),
    # Windows: months and years (a future month means last year's).
    Row("in March", "2026-03-01", "2026-04-01"),
    Row("in October", "2025-10-01", "2025-11-01"),
    Row("in September", "2026-09-01", "2026-10-01"),
    Row("in 2025", "2025-01-01", "2026-01-01"),
    Row("2026-09", "2026-09-01", "2026-10-01"),
    Row("what happened in September 2025?", "2025-09-01", "2025-10-01", "what happened?"),
    # Windows: relative.
    Row("last 10 days", "2026-09-06", NOW),
    Row("past 3 weeks", "2026-08-26", NOW),
    Row("in the past week", "2026-09-09", NOW),
    Row("decisions in the last two months", "2026-07-16", NOW, "decisions"),
    Row("2 weeks ago", "2026-08-31", "2026-09-07"),
    Row("3 days ago", "2026-09-13", "2026-09-14"),
    Row("a month ago", "2026-08-01", "2026-09-01"),
    # Windows: open and closed ranges.
    Row("since 2026-09-01", "2026-09-01", NOW),
    # "as of X" asks what held at X: everything up to its end
    Row("what was our pricing as of 2026-08-01", OPEN, "2026-08-02", "what was our pricing"),
    Row("pricing as at 2026‑08‑01", OPEN, "2026-08-02", "pricing"),
    Row("2026 оны 8-р сарын байдлаар үнэ", OPEN, "2026-09-01", "үнэ"),
    Row("signed on 2026–08–01", "2026-08-01", "2026-08-02", "signed"),
    Row("changes since last week", "2026-09-07", NOW, "changes"),
    Row("from 2026-09-01 to 2026-09-10", "2026-09-01", "2026-09-11"),
    Row("between March and May", "2026-03-01", "2026-06-01"),
    Row("from September 1 to now", "2026-09-01", NOW),
    Row("before 2026-09-01", OPEN, "2026-09-01"),
    Row("after 2026-09-01", "2026-09-02", OPEN),
    # a span next to a date is that span, not all before or after it
    Row("the week before 2026-09-10", "2026-09-03", "2026-09-10"),
    Row(
        "what did she do the week before August 3, 2026",
        "2026-07-27",
        "2026-08-03",
        "what did she do",
    ),
    Row("two weeks before 2026-09-10", "2026-08-27", "2026-09-10"),
    Row("a month after 2026-03-01", "2026-03-02", "2026-04-02"),
    Row("until September 10", OPEN, "2026-09-11"),
    # Ordering.
    Row("latest meeting with Alice", None, None, "meeting with Alice", NEWEST),
    Row("most recent invoice from Globex", None, None, "invoice from Globex", NEWEST),
    Row("newest policy", None, None, "policy", NEWEST),
    Row("last meeting with Bob", None, None, "meeting with Bob", NEWEST),
    Row("next meeting with Bob", None, None, "meeting with Bob", NEXT),
    Row("upcoming meetings", None, None, "meetings", NEXT),
    Row("next week", "2026-09-21", "2026-09-28"),  # a period after "next" is a window
    Row("next steps for Globex", None, None, "next steps for Globex"),
    Row("last 3 meetings", None, None, "3 meetings", NEWEST),
    Row("first decision about pricing", None, None, "decision about pricing", OLDEST),
    Row("earliest invoice", None, None, "invoice", OLDEST),
    Row("the oldest contract", None, None, "contract", OLDEST),
    Row("the shift to API-first", None, None, "the shift to API-first"),  # a kind, no order
    Row("a first-class client", None, None, "a first-class client"),
    Row("latest meeting last week", "2026-09-07", "2026-09-14", "meeting", NEWEST),
    # Soft recency.
    Row("recently", None, None, "", soft=True),
    Row("what's new?", None, None, "", soft=True),
    Row("what did Alice work on recently", None, None, "what did Alice work on", soft=True),
    Row("who is currently the CTO", None, None, "who is the CTO", soft=True),
    Row("current pricing", None, None, "pricing", soft=True),
    Row("who is the CTO now", None, None, "who is the CTO", soft=True),
    # No time at all: identifiers and words that look like dates are left alone.
    Row("who reports to Alice", None, None, "who reports to Alice"),
    Row("INV-2026-044 status", None, None, "INV-2026-044 status"),
    Row("May I see the notes", None, None, "May I see the notes"),
    Row("3/4 of the team", None, None, "3/4 of the team"),
]

MONGOLIAN = [
    # A part of a period, after it.
    Row("2026 оны 8-р сарын эхээр юу болсон бэ", "2026-08-01", "2026-08-11", "юу болсон бэ"),
    Row("2025 оны 11-р сарын дундуур", "2025-11-11", "2025-11-21"),
    Row("2025 оны сүүлээр", "2025-09-01", "2026-01-01"),
    Row("2025 оны эхний хагаст", "2025-01-01", "2025-07-02"),
    # "эхэлсэн" (began) after a month is no part of it
    Row("2026 оны 8-р сард эхэлсэн", "2026-08-01", "2026-09-01", "эхэлсэн"),
    Row("дараагийн уулзалт", None, None, "уулзалт", NEXT),
    Row("өчигдөр", "2026-09-15", "2026-09-16"),
    Row("өчигдрийн уулзалт", "2026-09-15", "2026-09-16", "уулзалт"),
    Row("өнөөдөр", "2026-09-16", "2026-09-17"),
    Row("уржигдар", "2026-09-14", "2026-09-15"),
    Row("өнгөрсөн долоо хоног", "2026-09-07", "2026-09-14"),
    Row("өмнөх долоо хоногт", "2026-09-07", "2026-09-14"),  # the previous week
    Row("өмнөх сард", "2026-08-01", "2026-09-01"),
    Row("өнгөрсөн 7 хоногт", "2026-09-07", "2026-09-14"),  # "7 хоног" is a week too
    Row("энэ долоо хоногт", "2026-09-14", "2026-09-21"),
    Row("өнгөрсөн сар", "2026-08-01", "2026-09-01"),
    Row("энэ сар", "2026-09-01", "2026-10-01"),
    Row("өнгөрсөн жил", "2025-01-01", "2026-01-01"),
    Row("2025 онд", "2025-01-01", "2026-01-01"),
    Row("сүүлийн 10 хоног", "2026-09-06", NOW),
    Row("сүүлийн 2 долоо хоногийн мэдээ", "2026-09-02", NOW, "мэдээ"),
    Row("сүүлийн арав хоногийн уулзалтууд", "2026-09-06", NOW, "уулзалтууд"),  # a count in words
    Row("сүүлийн гурван долоо хоног", "2026-08-26", NOW),
    Row("хоёр хоногийн өмнө", "2026-09-14", "2026-09-15"),
    Row("3 хоногийн өмнө", "2026-09-13", "2026-09-14"),
    Row("2 долоо хоногийн өмнө", "2026-08-31", "2026-09-07"),
    Row("3-р сард", "2026-03-01", "2026-04-01"),
    Row("нэгдүгээр сар", "2026-01-01", "2026-02-01"),
    Row("арван хоёрдугаар сар", "2025-12-01", "2026-01-01"),  # future month: last year
    Row("2026 оны 9-р сарын 15", "2026-09-15", "2026-09-16"),
    Row("9-р сарын 15-нд болсон уулзалт", "2026-09-15", "2026-09-16", "болсон уулзалт"),
    # a case ending on an ISO date is the date's, not a word of the rest
    Row("2026-09-07-нд ямар уулзалт болсон", "2026-09-07", "2026-09-08", "ямар уулзалт болсон"),
    Row("2026-09-07-ны уулзалт", "2026-09-07", "2026-09-08", "уулзалт"),
    Row("2026-09-01-ээс хойш", "2026-09-01", NOW),
    Row("9-р сарын 1-ээс хойш", "2026-09-01", NOW),
    Row("9-р сараас одоог хүртэл", "2026-09-01", NOW),
    Row("өнгөрсөн Даваа гарагт", "2026-09-14", "2026-09-15"),
    Row("2026-09-01-ээс 2026-09-10 хүртэл", "2026-09-01", "2026-09-11"),
    Row("2026-09-01-ээс өмнө", OPEN, "2026-09-01"),
    Row("2026-09-01-ний дараа", "2026-09-02", OPEN),
    Row("өчигдрөөс хойш", "2026-09-15", NOW),
    Row("энэ сарын 15", "2026-09-15", "2026-09-16"),
    Row("өнгөрсөн сарын 3-нд болсон", "2026-08-03", "2026-08-04", "болсон"),
    Row("энэ сарын тайлан", "2026-09-01", "2026-10-01", "тайлан"),
    Row("ирэх долоо хоног", "2026-09-21", "2026-09-28"),
    Row("сүүлийн уулзалт", None, None, "уулзалт", NEWEST),
    Row("Алистай хийсэн хамгийн сүүлийн уулзалт", None, None, "Алистай хийсэн уулзалт", NEWEST),
    Row("анхны шийдвэр", None, None, "шийдвэр", OLDEST),
    Row("хамгийн анхны шийдвэр", None, None, "шийдвэр", OLDEST),
    Row("саяхан юу болсон", None, None, "юу болсон", soft=True),
    Row("одоо хэн CTO вэ", None, None, "хэн CTO вэ", soft=True),
    Row("сүүлийн үед юу болж байна", None, None, "юу болж байна", soft=True),
    Row("Баасан хэлсэн", None, None, "Баасан хэлсэн"),  # a name, not Friday
    Row("анхаарал", None, None, "анхаарал"),  # starts like "анх" (first)
]

BOUNDARIES = [
    Row("last month", "2025-12-01", "2026-01-01", now=NEW_YEAR),
    Row("in December", "2025-12-01", "2026-01-01", now=NEW_YEAR),
    Row("in January", "2026-01-01", "2026-02-01", now=NEW_YEAR),
    Row("last week", "2025-12-22", "2025-12-29", now=NEW_YEAR),
    Row("this week", "2025-12-29", "2026-01-05", now=NEW_YEAR),
    Row("last year", "2025-01-01", "2026-01-01", now=NEW_YEAR),
    Row("2 weeks ago", "2025-12-15", "2025-12-22", now=NEW_YEAR),
    Row("3 days ago", "2025-12-31", "2026-01-01", now=NEW_YEAR),
    Row("on December 31", "2025-12-31", "2026-01-01", now=NEW_YEAR),
    Row("last 10 days", "2025-12-24", NOW, now=NEW_YEAR),
    Row("өнгөрсөн сар", "2025-12-01", "2026-01-01", now=NEW_YEAR),
    Row("өнгөрсөн долоо хоног", "2025-12-22", "2025-12-29", now=NEW_YEAR),
    Row("өчигдөр", "2026-01-02", "2026-01-03", now=NEW_YEAR),
    Row("yesterday", "2025-12-31", "2026-01-01", now=JAN_1),
    Row("on Monday", "2026-09-07", "2026-09-08", now=MON),  # today is Monday: the one before
    Row("on September 15", "2025-09-15", "2025-09-16", now=MON),  # tomorrow: last year's
]


@pytest.mark.parametrize("row", ENGLISH + MONGOLIAN + BOUNDARIES, ids=lambda r: r.text)
def test_table_row(row: Row) -> None:
    parsed = parse_time(row.text, now=row.now, tz=TZ)
    if row.start is None or row.end is None:
        assert parsed.window is None
    else:
        expected = Window(_at(row.start, row.now, end=False), _at(row.end, row.now, end=True))
        assert parsed.window == expected
    assert (parsed.order, parsed.soft_recency, parsed.query) == (row.order, row.soft, row.query)


def test_a_rule_is_skipped_only_when_the_word_every_match_holds_is_missing() -> None:
    """A window rule with ``needs`` is not scanned in a text without that part: sound only
    if every match of the rule holds it (so the tables above read as before)."""
    from memserver.timeparse.parse import _WINDOWS, _re

    gated = [rule for rule in _WINDOWS if rule.needs is not None]
    assert len(gated) >= 6  # the Mongolian rules that end with a word after the date
    matched = 0
    for row in ENGLISH + MONGOLIAN + BOUNDARIES:
        for rule in gated:
            for m in _re(rule.pattern).finditer(row.text):
                matched += 1
                assert rule.needs is not None and _re(rule.needs).search(m.group(0))
    assert matched >= 6


def test_phrase_is_the_text_read_as_the_window() -> None:
    parsed = parse_time("latest meeting with Alice last week", now=WED, tz=TZ)
    assert parsed.phrase == "last week"
    assert parse_time("meeting with Alice", now=WED, tz=TZ).phrase is None


def test_today_follows_the_kb_timezone_not_utc() -> None:
    late_utc = datetime(2026, 9, 15, 20, 0, tzinfo=UTC)  # 04:00 on the 16th in Ulaanbaatar
    here = parse_time("yesterday", now=late_utc, tz="Asia/Ulaanbaatar").window
    there = parse_time("yesterday", now=late_utc, tz="UTC").window
    assert here == Window(datetime(2026, 9, 15, tzinfo=TZ), datetime(2026, 9, 16, tzinfo=TZ))
    assert there == Window(datetime(2026, 9, 14, tzinfo=UTC), datetime(2026, 9, 15, tzinfo=UTC))
    assert here is not None and here.start.tzinfo == TZ


def test_naive_now_is_read_in_the_kb_timezone() -> None:
    parsed = parse_time("since yesterday", now=datetime(2026, 9, 16, 10, 0), tz=TZ)
    assert parsed.window == Window(datetime(2026, 9, 15, tzinfo=TZ), WED)


def test_a_day_across_a_dst_change_is_23_hours() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    window = parse_time("yesterday", now=datetime(2026, 3, 30, 12, tzinfo=berlin), tz=berlin).window
    assert window is not None
    assert window.end.timestamp() - window.start.timestamp() == timedelta(hours=23).total_seconds()


def test_now_defaults_to_the_current_time() -> None:
    window = parse_time("today", tz=TZ).window
    assert window is not None and window.contains(datetime.now(TZ))


def test_impossible_dates_are_not_windows() -> None:
    assert parse_time("on 2026-02-30", now=WED, tz=TZ).window is None
    assert parse_time("2026-13", now=WED, tz=TZ).window is None


def test_window_contains_is_half_open_and_reads_dates_in_its_timezone() -> None:
    window = parse_time("on 2026-09-15", now=WED, tz=TZ).window
    assert window is not None
    assert window.contains(date(2026, 9, 15))
    assert not window.contains(date(2026, 9, 16))
    assert not window.contains(datetime(2026, 9, 14, 15, 0, tzinfo=UTC))  # 23:00 on the 14th
    assert window.contains(datetime(2026, 9, 14, 17, 0, tzinfo=UTC))  # 01:00 on the 15th
    assert not window.open_start and not window.open_end


def test_open_ends_are_flagged() -> None:
    before = parse_time("before 2026-09-01", now=WED, tz=TZ).window
    after = parse_time("after 2026-09-01", now=WED, tz=TZ).window
    assert before is not None and before.open_start and not before.open_end
    assert after is not None and after.open_end and not after.open_start


def test_unknown_timezone_is_a_user_error() -> None:
    with pytest.raises(UserError, match="unknown timezone 'Mars/Olympus'"):
        parse_time("today", now=WED, tz="Mars/Olympus")


def test_as_dict_is_json_ready() -> None:
    parsed = parse_time("latest meeting with Alice last week", now=WED, tz=TZ)
    assert parsed.as_dict() == {
        "window": {"start": "2026-09-07T00:00:00+08:00", "end": "2026-09-14T00:00:00+08:00"},
        "order": "newest",
        "soft_recency": False,
        "query": "meeting with Alice",
        "phrase": "last week",
        "point": False,
    }
    assert isinstance(parsed, TimeQuery)


def test_a_window_is_a_point_when_one_date_is_said_as_the_time() -> None:
    assert parse_time("what did we have on 2026-09-01", now=WED, tz=TZ).point
    assert parse_time("meetings in August", now=WED, tz=TZ).point
    assert not parse_time("what changed since 2026-09-01", now=WED, tz=TZ).point
    assert not parse_time("as of 2026-09-01", now=WED, tz=TZ).point
    assert not parse_time("in the last 10 days", now=WED, tz=TZ).point
    assert parse_time("2026-09-01-нд юу байсан", now=WED, tz=TZ).point  # a case ending
    # a part of a period said as the time: with "at", or a Mongolian part after it
    assert parse_time("what happened at the end of June 2026", now=WED, tz=TZ).point
    assert parse_time("2026 оны 8-р сарын эхээр юу болсон", now=WED, tz=TZ).point
    assert not parse_time("what changed since mid-2025", now=WED, tz=TZ).point
    # a date that names something is not the question's time
    assert not parse_time("what caused the August 2026 outage", now=WED, tz=TZ).point


# --- CLI -----------------------------------------------------------------------------------


def _run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main(list(argv)) == 0
    out: dict[str, object] = json.loads(capsys.readouterr().out)
    return out


def test_cli_json_prints_one_object(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = _run_json(
        capsys,
        *("--kb", str(tmp_path), "timeparse", "--now", "2026-09-16T10:00:00+08:00"),
        *("--tz", "Asia/Ulaanbaatar", "--json", "latest", "meeting", "with", "Alice", "last week"),
    )
    assert out == {
        "text": "latest meeting with Alice last week",
        "timezone": "Asia/Ulaanbaatar",
        "now": "2026-09-16T10:00:00+08:00",
        "window": {"start": "2026-09-07T00:00:00+08:00", "end": "2026-09-14T00:00:00+08:00"},
        "order": "newest",
        "soft_recency": False,
        "query": "meeting with Alice",
        "phrase": "last week",
        "point": False,
    }


@pytest.mark.parametrize(
    ("schema", "yesterday", "timezone", "window"),
    [
        (
            "timezone: Asia/Ulaanbaatar\nrules: r\nfolders:\n"
            "  - name: people\n    type: person\n    description: People.\n",
            "өчигдөр",
            "Asia/Ulaanbaatar",
            {"start": "2026-09-15T00:00:00+08:00", "end": "2026-09-16T00:00:00+08:00"},
        ),
        (
            None,
            "yesterday",
            "UTC",
            {"start": "2026-09-14T00:00:00+00:00", "end": "2026-09-15T00:00:00+00:00"},
        ),
    ],
    ids=["from_the_kb_schema", "utc_without_a_schema"],
)
def test_cli_takes_the_timezone_from_the_kb_schema_else_utc(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    schema: str | None,
    yesterday: str,
    timezone: str,
    window: dict[str, str],
) -> None:
    if schema is not None:
        (tmp_path / "schema.yaml").write_text(schema, encoding="utf-8")
    argv = ("--kb", str(tmp_path), "timeparse", "--json", "--now", "2026-09-15T20:00:00Z")
    out = _run_json(capsys, *argv, yesterday)
    assert out["timezone"] == timezone
    assert out["window"] == window


def test_cli_human_output_names_window_and_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ("--kb", str(tmp_path), "timeparse", "--now", "2026-09-16", "first", "decision")
    assert main(list(argv)) == 0
    out = capsys.readouterr().out
    assert "window   none" in out
    assert "order    oldest" in out
    assert "'decision'" in out


def test_cli_bad_now_exits_2_with_a_hint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["--kb", str(tmp_path), "timeparse", "--now", "next tuesday", "x"]) == 2
    assert "is not an ISO date or date-time" in capsys.readouterr().err


def test_cli_warns_and_uses_utc_when_the_kb_schema_is_invalid(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "schema.yaml").write_text("timezone: Asia/Ulaanbaatar\n", encoding="utf-8")
    argv = ["--kb", str(tmp_path), "timeparse", "--json", "--now", "2026-09-15T20:00:00Z", "today"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["timezone"] == "UTC"
    assert "not a valid KB schema" in captured.err and "--tz" in captured.err


@pytest.mark.parametrize(
    ("text", "start"),
    [
        # WED is Wednesday 2026-09-16: a past verb reads the latest Sunday before now ...
        ("What did Andrew do on Sunday?", "2026-09-13"),
        ("Where did they go hiking on Sunday?", "2026-09-13"),
        ("Ням гарагт юу болсон бэ?", "2026-09-13"),
        ("Баасан гарагт хэнтэй уулзсан бэ?", "2026-09-11"),
        # ... a future one the coming Sunday; neither says, the latest past one.
        ("What type of date is Andrew going on Sunday?", "2026-09-20"),
        ("Who will he meet on Friday?", "2026-09-18"),
        ("Ням гарагт хэнтэй уулзах вэ?", "2026-09-20"),
        ("meetings on Monday", "2026-09-14"),
        # An explicit relation wins over the tense.
        ("What did we plan for next Sunday?", "2026-09-20"),
    ],
)
def test_a_bare_weekday_reads_by_the_tense_of_the_question(text: str, start: str) -> None:
    window = parse_time(text, now=WED, tz=TZ).window
    assert window is not None
    assert (window.start.date().isoformat(), (window.end - window.start).days) == (start, 1)


def test_verb_tense_in_both_languages() -> None:
    assert verb_tense("When did Caroline give a speech?") == -1
    assert verb_tense("She painted a sunrise") == -1
    assert verb_tense("What is she going to do?") == 1
    assert verb_tense("I'll call him") == 1
    assert verb_tense("What do Melanie's kids like?") == 0
    assert verb_tense("We need more speed") == 0  # not "-ed" forms
    assert verb_tense("Хэнтэй уулзсан бэ?") == -1
    assert verb_tense("Хэзээ ирэх вэ?") == 1


@pytest.mark.parametrize(
    ("text", "first", "end"),
    [
        # A note of Friday 2026-06-26: a need or a deadline speaks of the coming July ...
        ("so we need a price list by the end of July at the latest.", "2026-07-01", "2026-08-01"),
        ("Үнийн жагсаалт 7 сарын эцэс гэхэд хэрэгтэй.", "2026-07-01", "2026-08-01"),
        ("The renewal is due on March 3.", "2027-03-03", "2027-03-04"),
        # ... a past verb, or "due to" (a cause, not a deadline), of the latest one.
        ("The change was due to privacy concerns raised in July.", "2025-07-01", "2025-08-01"),
        ("What happened in July?", "2025-07-01", "2025-08-01"),
        ("We met on March 3.", "2026-03-03", "2026-03-04"),
    ],
)
def test_a_month_or_day_without_its_year_reads_by_the_tense_of_the_text(
    text: str, first: str, end: str
) -> None:
    noon = datetime(2026, 6, 26, 12, tzinfo=UTC)
    windows = find_windows(text, now=noon)
    assert [(w.start.date().isoformat(), w.end.date().isoformat()) for w, _ in windows] == [
        (first, end)
    ]


def test_a_suggestion_for_a_bare_weekday_is_the_coming_one() -> None:
    # Thursday 2026-10-01: "let's keep that for Wednesday's review" is 2026-10-07.
    noon = datetime(2026, 10, 1, 12, tzinfo=UTC)
    found = find_windows("Let's keep that for Wednesday's pricing review.", now=noon)
    assert [w.start.date().isoformat() for w, _ in found] == ["2026-10-07"]
    assert verb_tense("The customer's needs changed.") == -1  # a noun, not a need to act


@pytest.mark.parametrize("hyphen", ["\u2010", "\u2011", "\u2012", "\u2013"])
def test_a_date_written_with_a_unicode_hyphen_is_a_day_not_a_year(hyphen: str) -> None:
    text = f"Approved on 2023{hyphen}10{hyphen}12 by the board."
    noon = datetime(2026, 6, 26, 12, tzinfo=UTC)
    assert [(w.start.date().isoformat(), p) for w, p in find_windows(text, now=noon)] == [
        ("2023-10-12", "on 2023-10-12")
    ]
    window = parse_time(f"what was decided on 2023{hyphen}10{hyphen}12?", now=noon).window
    assert window is not None
    assert (window.start.date().isoformat(), (window.end - window.start).days) == ("2023-10-12", 1)


def test_find_windows_reads_every_date_of_a_text() -> None:
    noon = datetime(2023, 5, 8, 12, 0, tzinfo=UTC)  # a Monday
    found = find_windows("In March 2021 we moved, and yesterday we went back.", now=noon)
    assert [(w.start.date(), w.end.date(), p) for w, p in found] == [
        (date(2021, 3, 1), date(2021, 4, 1), "In March 2021"),
        (date(2023, 5, 7), date(2023, 5, 8), "yesterday"),
    ]
    assert find_windows("Nothing dated here.", now=noon) == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("  ", None),
        ("2026-09-20", datetime(2026, 9, 20)),
        ("2026-09-20T15:00:00Z", datetime(2026, 9, 20, 15, tzinfo=UTC)),
    ],
)
def test_parse_now_reads_iso_dates_and_blank_as_the_real_clock(
    value: str | None, expected: datetime | None
) -> None:
    assert parse_now(value) == expected


@pytest.mark.parametrize("value", ["next tuesday", "2026-13-01", 20260920])
def test_parse_now_refuses_anything_else_naming_the_argument(value: object) -> None:
    with pytest.raises(UserError) as caught:
        parse_now(value, "as_of")
    assert str(caught.value).startswith("as_of ")
    assert "2026-09-20T15:00:00+08:00" in caught.value.hint
