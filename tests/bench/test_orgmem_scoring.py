"""The pure scoring of bench/eval_orgmem.py: key facts of a gold answer, and hit/cover."""

from __future__ import annotations

from bench.eval_orgmem import artefact_date, without_metadata
from bench.orgmem_scoring import (
    Fact,
    cover_at,
    dates_in,
    facts_found,
    hit_at,
    key_facts,
    numbers_in,
)

PEOPLE = frozenset({"Arjun Mehta", "Maya Patel", "Omar Farah", "Omar Khaled"})


def test_a_date_is_read_in_every_usual_spelling() -> None:
    text = "on 20 August 2022, August 20th, 2022, Aug. 20, 2022, 2022/08/20 and 20/08/2022"
    assert dates_in(text) == {"2022-08-20"}
    assert dates_in("2022\u201108\u201115 with non-breaking hyphens") == {"2022-08-15"}


def test_an_impossible_date_is_no_date() -> None:
    assert dates_in("2022-02-30 and 31 June 2021") == set()


def test_numbers_keep_their_unit_and_read_separators_and_scales() -> None:
    assert numbers_in("a 90-day policy replaced 180 days") == {"90 day", "180 day"}
    assert numbers_in("$2 M seed") == numbers_in("$2M") == numbers_in("$2,000,000") == {"2000000 $"}
    assert numbers_in("1,200 shipments, 12% churn") == {"1200", "12 %"}
    assert numbers_in("a 2-hour outage") == numbers_in("2 hours") == {"2 hour"}


def test_ids_clock_times_list_numbers_and_dates_are_not_numbers() -> None:
    text = "1. slack_thread by P-0035 [09:00:12] ART-EV-2022-008-002 on 2022-06-15 or 5 May 2021"
    assert numbers_in(text) == set()


def test_key_facts_skip_judge_notes_and_take_names_dates_and_numbers() -> None:
    gold = {
        "current_value": "Arjun Mehta and Omar Farah replaced the 90-day policy.",
        "change_date": "2022-08-20",
        "scope_note": "Maya Patel on 2022-05-01 also counts.",
        "testimony_attribution": [{"slot_id": "ART-EV-2021-001-001"}],
    }
    assert key_facts(gold, PEOPLE) == (
        Fact("date", "2022-08-20"),
        Fact("name", "Arjun Mehta"),
        Fact("name", "Omar Farah"),
        Fact("number", "90 day"),
    )


def test_an_answer_states_the_facts_it_spells_differently() -> None:
    facts = key_facts({"a": "Omar Farah decided on 2022-08-20 to keep 90 days."}, PEOPLE)
    answer = "On 20 August 2022 OMAR FARAH chose a 90-day limit; Omar Khaled agreed."
    assert facts_found(facts, answer, PEOPLE) == list(facts)
    assert facts_found(facts, "Omar decided in August 2022 to keep 90 logs.", PEOPLE) == []


def test_hit_and_cover_count_distinct_notes_in_order() -> None:
    ranked = ["a", "a", "b", "c", "d"]
    assert hit_at(ranked, {"d"}, 4)
    assert not hit_at(ranked, {"d"}, 3)
    assert cover_at(ranked, {"b", "d", "z"}, 3) == 1 / 3
    assert cover_at(ranked, {"b", "d"}, 10) == 1.0
    assert cover_at(ranked, set(), 10) == 0.0


def test_artefacts_are_dated_as_the_data_says() -> None:
    assert artefact_date("2021-04-15", "<!-- 2020-01 -->") == "2021-04-15"
    assert artefact_date(None, "<!-- customer 2022-Q3 -->\nheld on 2022\u201108\u201115") == (
        "2022-07-01"
    )
    assert artefact_date(None, "<!-- slack 2020-09 -->\n[2020-09-02 09:12] hi") == "2020-09-02"
    assert artefact_date(None, "<!-- slack 2020-09 -->\nnothing else") == "2020-09-01"
    assert artefact_date(None, "x" * 300 + "2020-09-02") is None


def test_the_metadata_comment_is_removed() -> None:
    raw = "<!-- artefact_metadata\nslot_id: A\ntestimony_type: direct\n-->\n\n2021-04-15\n\nText"
    assert without_metadata(raw) == "2021-04-15\n\nText"
