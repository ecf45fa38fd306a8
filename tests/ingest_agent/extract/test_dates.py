"""The rules extractor's dates and fields: the nearest occurrence of a month and day, the
note's date for an entry unless the text says when the event happened, newest fact wins,
and nothing guessed. English and Mongolian, from example_kb notes and short notes."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from ingest_agent.extract.dates import day_mentions, entry_date, nearest
from ingest_agent.extract.rules import RulesExtractor
from ingest_agent.pages.merge import merge_page
from ingest_agent.records import Extraction, Source
from memserver.kb.page import Page
from memserver.kb.schema import load_schema
from tests.fixtures.kb import EXAMPLE_KB

SCHEMA = load_schema(EXAMPLE_KB)
RULES = RulesExtractor(SCHEMA)
TZ = SCHEMA.tz
INTRO = dt.date(2026, 6, 18)
PEOPLE = (
    "Maria Lopez", "Tom Becker", "Alice Chen", "Alex Kim", "Priya Shah", "Sofia Rossi",
    "Batbayar Dorj", "Bob Martinez", "Karen Lee", "Dana Whitfield", "Joanna Price",
    "Alex Novak",
)  # fmt: skip
KNOWN: dict[str, tuple[str, str]] = {
    **{p.lower(): ("people", p) for p in PEOPLE},
    "батбаяр дорж": ("people", "Batbayar Dorj"),
    "батбаяр": ("people", "Batbayar Dorj"),
    **{c.lower(): ("companies", c) for c in ("Globex", "Initech", "Номин Трейд")},
    **{p.lower(): ("projects", p) for p in ("Mongolian Localization", "Usage Metering")},
}


def extract(path: str, day: dt.date, text: str | None = None) -> Extraction:
    content = text if text is not None else (EXAMPLE_KB / "source" / path).read_text("utf-8")
    return RULES.extract(Source(path, content, "0" * 64, day), (), KNOWN)


def page(extraction: Extraction, folder: str, title: str) -> Page:
    return next(d.page for d in extraction.drafts if d.folder == folder and d.title == title)


def test_a_month_and_day_without_a_year_is_the_occurrence_nearest_the_note() -> None:
    note = dt.date(2026, 11, 17)
    for sentence in (
        "Asked to start with Houston because of a health inspection on December 3.",
        "Эрүүл ахуйн шалгалт 12 сарын 3-нд болно.",
        "Эрүүл ахуйн шалгалт арван хоёрдугаар сарын 3-нд болно.",
    ):
        assert [m.day for m in day_mentions(sentence, note, TZ)] == [dt.date(2026, 12, 3)]
        # said on the note's date; December 3 is a later day it mentions
        assert entry_date(sentence, note, TZ) == note
    assert nearest(1, 5, dt.date(2026, 12, 20)) == dt.date(2027, 1, 5)
    assert nearest(12, 28, dt.date(2027, 1, 4)) == dt.date(2026, 12, 28)
    extraction = extract(
        "slack/ops.md",
        note,
        "Globex asked to start with Houston because of a health inspection on December 3.\n",
    )
    globex = page(extraction, "companies", "Globex")
    assert [e.date for e in globex.timeline] == [note]


def test_the_entry_is_dated_when_the_event_happened_if_the_text_says_so() -> None:
    note = dt.date(2026, 9, 23)
    promoted = "Bob has been promoted to VP of Operations at Globex, effective 2026-09-21."
    assert entry_date(promoted, note, TZ) == dt.date(2026, 9, 21)
    # a deadline, a reference to another event, a range, a later day: the note's date
    for sentence in (
        "Alex Kim: send the contract for signature to Dana Whitfield by 2026-11-16.",
        "We reverse the per-seat pricing decision of 2026-07-15.",
        "Pilot fee for 2026-09-14 to 2026-09-20, net 30.",
        "Go-live for all eight warehouses on 2026-12-01.",
        "Батбаяр: орчуулгын алдааг 2026-10-09-ний дотор засуулах.",
        "Пилот 2026-10-12-оос 2026-11-13 хүртэл.",
    ):
        assert entry_date(sentence, dt.date(2026, 9, 30), TZ) == dt.date(2026, 9, 30), sentence
    assert entry_date("Пилот 2026-10-12-ны өдөр эхэлсэн.", dt.date(2026, 10, 23), TZ) == dt.date(
        2026, 10, 12
    )
    assert entry_date("INV-2026-041 went out on 2026-06-20, due 2026-07-20.", note, TZ) == dt.date(
        2026, 6, 20
    )
    assert entry_date("Nothing dated here.", note, TZ) is None


def test_a_weekday_in_a_suggestion_is_the_coming_one_and_unicode_hyphens_are_read() -> None:
    tz = ZoneInfo("UTC")
    # The finance thread of Thursday 2026-10-01 speaks of the review of Wednesday 2026-10-07.
    mentions = day_mentions(
        "Let's keep that for Wednesday's pricing review.", dt.date(2026, 10, 1), tz
    )
    assert [m.day for m in mentions] == [dt.date(2026, 10, 7)]
    assert entry_date("Signed on 2026\u201109\u201121.", dt.date(2026, 9, 23), tz) == dt.date(
        2026, 9, 21
    )


def test_action_items_date_people_pages_by_the_note_not_the_due_date() -> None:
    day = dt.date(2026, 11, 12)
    extraction = extract("meetings/2026/2026-11-12-globex-integration-review.md", day)
    alex = page(extraction, "people", "Alex Kim")
    assert alex.timeline and {e.date for e in alex.timeline} == {day}
    assert any("by 2026-11-16" in e.text for e in alex.timeline)
    mn = extract("meetings/2026/2026-10-05-nomin-trade-pilot-kickoff.md", dt.date(2026, 10, 5))
    batbayar = page(mn, "people", "Batbayar Dorj")
    assert [e.date for e in batbayar.timeline] == [dt.date(2026, 10, 5)]


def test_a_promotion_sets_role_and_manager_from_the_date_it_took_effect() -> None:
    extraction = extract("meetings/2026/2026-09-23-globex-update.md", dt.date(2026, 9, 23))
    bob = page(extraction, "people", "Bob Martinez")
    # "Bob has been promoted ... He now reports directly to Dana Whitfield": the short
    # name and the pronoun are Bob Martinez, the one person of the note called Bob
    assert bob.fields["role"] == "VP of Operations"
    assert bob.fields["reports_to"] == "Dana Whitfield"
    assert "Bob" in bob.aliases
    effective = extraction.dates_of("people", ["Bob Martinez"])
    assert effective == {"role": dt.date(2026, 9, 21), "reports_to": dt.date(2026, 9, 21)}
    assert [e.date for e in bob.timeline] == [dt.date(2026, 9, 21)]


def test_newest_fact_wins_and_its_change_is_dated() -> None:
    folder = SCHEMA.folder("people")
    older = extract("meetings/2026/2026-06-18-globex-intro-call.md", dt.date(2026, 6, 18))
    first = page(older, "people", "Bob Martinez")
    assert (first.fields["role"], first.fields["reports_to"]) == (
        "Director of Operations",
        "Karen Lee",
    )
    newer = extract("meetings/2026/2026-09-23-globex-update.md", dt.date(2026, 9, 23))
    stored = merge_page(
        None, first, folder, page_id="people/bob-martinez", source="a.md", source_date=INTRO
    ).page
    result = merge_page(
        stored,
        page(newer, "people", "Bob Martinez"),
        folder,
        page_id="people/bob-martinez",
        source="meetings/2026/2026-09-23-globex-update.md",
        source_date=dt.date(2026, 9, 23),
        other_sources={"a.md": INTRO},
        field_dates=newer.dates_of("people", ["Bob Martinez"]),
    )
    assert result.page.fields["reports_to"] == "Dana Whitfield"
    assert result.page.fields["role"] == "VP of Operations"
    changes = {e.text: e.date for e in result.page.timeline if "changed from" in e.text}
    assert changes == {
        "role changed from “Director of Operations” to “VP of Operations”": dt.date(2026, 9, 21),
        "reports_to changed from “Karen Lee” to “Dana Whitfield”": dt.date(2026, 9, 21),
    }
    assert {c.status for c in result.conflicts} == {"superseded"}


def test_a_moved_due_date_and_a_new_status_are_read_from_plain_statements() -> None:
    roadmap = extract("meetings/2026/2026-11-05-product-roadmap-review.md", dt.date(2026, 11, 5))
    project = page(roadmap, "projects", "Mongolian Localization")
    assert project.fields["due_date"] == "2026-12-15"
    intro = extract("meetings/2026/2026-06-18-globex-intro-call.md", INTRO)
    assert page(intro, "companies", "Globex").fields["status"] == "prospect"
    # before any Globex page exists: the meeting's company field names it
    path = "meetings/2026/2026-06-18-globex-intro-call.md"
    text = (EXAMPLE_KB / "source" / path).read_text("utf-8")
    first = RULES.extract(Source(path, text, "0" * 64, INTRO), (), {})
    assert page(first, "companies", "Globex").fields["status"] == "prospect"
    update = extract("updates/2026-08-28-weekly-update.md", dt.date(2026, 8, 28))
    globex = page(update, "companies", "Globex")
    assert globex.fields["status"] == "customer"
    # the bullet is one fact: signed on 2026-08-25, and now a customer
    assert update.dates_of("companies", ["Globex"]) == {"status": dt.date(2026, 8, 25)}
    contract = extract(
        "meetings/2026/2026-11-18-номин-трейд-гэрээний-уулзалт.md", dt.date(2026, 11, 18)
    )
    assert page(contract, "companies", "Номин Трейд").fields["status"] == "customer"


def test_values_it_cannot_read_with_confidence_are_left_out() -> None:
    day = dt.date(2026, 10, 20)
    renewal = extract("meetings/2026/2026-10-20-initech-renewal-prep.md", day)
    # "the current contract value is $120,000" names no page: the call's one company gets it
    assert page(renewal, "companies", "Initech").fields["contract_value"] == 120000
    # ... but a note linking to no company gives it to nobody
    loose = extract("slack/y.md", day, "Someone said the contract value is $50,000 per year.\n")
    assert not any("contract_value" in d.page.fields for d in loose.drafts)
    # "Alex" is two people here (Alex Kim, Alex Novak): never an alias, never a subject
    demo = extract("meetings/2026/2026-07-22-globex-demo.md", dt.date(2026, 7, 22))
    assert demo.drafts and all("Alex" not in d.page.aliases for d in demo.drafts)
    # "(Acme Logistics, Монгол дахь менежер)": an organisation, then a description
    kickoff = extract("meetings/2026/2026-10-05-nomin-trade-pilot-kickoff.md", day)
    assert "role" not in page(kickoff, "people", "Batbayar Dorj").fields
    odd = extract("slack/x.md", day, "Globex due date moves to soon.\nGlobex is now happy.\n")
    assert not any(d.page.fields for d in odd.drafts)  # no draft at all, or none with a field


def test_each_sentence_of_an_entry_reads_its_weekday_in_its_own_tense() -> None:
    tz = ZoneInfo("UTC")
    thread = (
        "👍 Let's keep that for Wednesday's pricing review. Alex, please also check whether "
        "Initech paid INV-2026-041 — Xero still shows it open."
    )
    # the coming Wednesday, after the note: no event day, the entry keeps the note's date
    assert [m.day for m in day_mentions(thread, dt.date(2026, 10, 1), tz)] == [dt.date(2026, 10, 7)]
    assert entry_date(thread, dt.date(2026, 10, 1), tz) == dt.date(2026, 10, 1)
    # in past-tense text of the following week: the Wednesday before the note
    for note, said in (
        (dt.date(2026, 10, 8), "At Wednesday's pricing review we decided to drop per-seat."),
        (dt.date(2026, 10, 10), "Wednesday’s pricing review moved us to usage-based pricing."),
        (dt.date(2026, 10, 9), "We went over the numbers at Wednesday's review."),
    ):
        assert entry_date(said, note, tz) == dt.date(2026, 10, 7), said


def test_dates_written_with_other_dashes_are_days() -> None:
    tz = ZoneInfo("UTC")
    note = dt.date(2026, 11, 1)
    for dash in ("\u2010", "\u2011", "\u2012", "\u2013"):
        said = f"The contract was signed on 2023{dash}10{dash}12 by both sides."
        assert entry_date(said, note, tz) == dt.date(2023, 10, 12), repr(dash)
    # a deadline in a note of June: the coming July, not the one before
    need = "We need a price list by the end of July at the latest."
    assert entry_date(need, dt.date(2026, 6, 26), tz) is None


def test_as_of_a_day_in_a_note_names_that_day() -> None:
    tz = ZoneInfo("UTC")
    said = "Webhook for SAP TM is in Globex's test environment as of today. Nice work Sofia."
    assert entry_date(said, dt.date(2026, 11, 19), tz) == dt.date(2026, 11, 19)
    assert entry_date("Live as of 2026-11-02, ahead of plan.", dt.date(2026, 11, 5), tz) == (
        dt.date(2026, 11, 2)
    )
