"""Decisions read by the rules extractor: which words make a decision, who decided, the
alternatives and the reason, and the earlier decision a note says it reverses; facts a
note states for a field in prose. English and Mongolian, reworded."""

from __future__ import annotations

import datetime as dt

from ingest_agent.extract import decision_words as words
from ingest_agent.extract.fact_statements import field_labels, is_change
from ingest_agent.extract.rules import RulesExtractor
from ingest_agent.records import Extraction, Source
from memserver.kb.page import Page
from memserver.kb.schema import load_schema
from tests.fixtures.kb import EXAMPLE_KB

SCHEMA = load_schema(EXAMPLE_KB / "schema.yaml")
RULES = RulesExtractor(SCHEMA)
KNOWN: dict[str, tuple[str, str]] = {
    "initech": ("companies", "Initech"),
    "globex": ("companies", "Globex"),
    "номин трейд": ("companies", "Номин Трейд"),
    "maria lopez": ("people", "Maria Lopez"),
    "alex kim": ("people", "Alex Kim"),
    "tom becker": ("people", "Tom Becker"),
    "priya shah": ("people", "Priya Shah"),
    "usage metering": ("projects", "Usage Metering"),
}


def extract(path: str, day: dt.date, text: str) -> Extraction:
    return RULES.extract(Source(path, text, "0" * 64, day), (), KNOWN)


def decisions(path: str, day: dt.date, text: str) -> dict[str, Page]:
    """The decision pages the rules extractor drafts from one note, by title."""
    return {d.title: d.page for d in extract(path, day, text).drafts if d.folder == "decisions"}


def test_who_decided_the_options_weighed_and_the_reason_are_read_from_the_words() -> None:
    assert words.deciders("Decided by Maria Lopez, Alex Kim and Tom Becker; Alice agreed.") == [
        "Maria Lopez",
        "Alex Kim",
        "Tom Becker",
    ]
    assert words.deciders("Approved by Priya Shah & Tom Becker on 2026-10-01.") == [
        "Priya Shah",
        "Tom Becker",
    ]
    assert words.deciders("Maria Lopez approved the plan.") == ["Maria Lopez"]
    assert words.deciders("We all liked it.") == []
    assert words.alternatives("We compared per-seat, per-truck and per-shipment models.") == [
        "per-seat",
        "per-truck",
        "per-shipment",
    ]
    assert words.alternatives("Stripe rather than Paddle, since it has usage export.") == ["Paddle"]
    assert words.rationale("We move to weekly billing because customers asked twice.") == (
        "customers asked twice"
    )
    assert words.rationale("Driven by the hosting cost of small fleets; see below.") == (
        "hosting cost of small fleets"
    )
    assert words.rationale("We move to weekly billing.") is None


def test_a_reversal_is_read_from_its_words_and_a_mention_or_a_doubt_is_not_one() -> None:
    said = words.reversal(
        "Usage-based pricing replaces per-seat pricing (this reverses the 2026-07-15 decision "
        '"Per-seat pricing for Acme Track")'
    )
    assert said is not None and said.status == "reversed"
    assert said.quoted == "Per-seat pricing for Acme Track"
    replacing = words.reversal("We're replacing monthly invoices with weekly invoices.")
    assert replacing is not None and replacing.words == "monthly invoices"
    refined = words.reversal("This supersedes the onboarding checklist decision of 2026-05-02.")
    assert refined is not None and refined.status == "superseded"
    mongolian = words.reversal("Нэг хэрэглэгчийн үнийн шийдвэрийг цуцалж, хүргэлтээр тооцно.")
    assert mongolian is not None and mongolian.status == "reversed"
    assert "хэрэглэгчийн" in mongolian.words
    for doubt in (
        "We did not reverse the per-seat pricing decision.",
        "We considered reversing the per-seat decision but kept it.",
        "As decided on 2026-07-15, the Globex quote uses per-seat pricing.",
    ):
        assert words.reversal(doubt) is None, doubt


def test_a_decisions_section_gives_one_page_per_bold_item_with_its_deciders() -> None:
    note = (
        "---\ntitle: Billing sync\ndate: 2026-11-03\nkind: internal\n---\n\n# Billing sync\n\n"
        "## Discussion\nWe looked at invoices.\n\n## Decisions\n"
        "- **Weekly invoices for small fleets** instead of monthly invoices, because cash "
        "flow matters.\n"
        "- Applies from 2026-12-01.\n"
        "- **Usage Metering ships the export first**.\n"
        "- Decided by Maria Lopez and Tom Becker; Priya agreed.\n"
    )
    found = decisions("meetings/billing-sync.md", dt.date(2026, 11, 3), note)
    assert set(found) == {
        "Weekly invoices for small fleets",
        "Usage Metering ships the export first",
    }
    weekly = found["Weekly invoices for small fleets"]
    assert weekly.fields["date"] == weekly.fields["decided_on"] == "2026-11-03"
    assert weekly.fields["status"] == "accepted"
    assert weekly.fields["decided_by"] == ("Maria Lopez", "Tom Becker")
    assert weekly.fields["alternatives"] == ("monthly invoices",)
    assert weekly.fields["rationale"] == "cash flow matters"
    assert "Applies from 2026-12-01" in weekly.sections["Decision"]
    assert found["Usage Metering ships the export first"].fields["project"] == "Usage Metering"


def test_deciding_verbs_in_prose_make_decisions_and_other_sentences_do_not() -> None:
    note = (
        "# Weekly update\n\n"
        "At yesterday's call (2026-11-09) we agreed to move Globex to quarterly billing "
        "because their finance team asked for it.\n\n"
        "Joanna wants it approved on its own. We have not decided on the SLA yet.\n"
        "Ops reviewed the rota and nothing changed.\n"
    )
    found = decisions("updates/2026-11-10-update.md", dt.date(2026, 11, 10), note)
    assert list(found) == ["Move Globex to quarterly billing"]
    page = found["Move Globex to quarterly billing"]
    assert page.fields["date"] == "2026-11-09"  # the day the words say it was agreed
    assert page.fields["company"] == "Globex"
    assert page.fields["rationale"] == "their finance team asked for it"
    mongolian = "# Долоо хоногийн тойм\n\nНомин Трейдтэй сарын доод төлбөрийг хоёр сая болгохоор тохиролцов.\n"
    found = decisions("updates/2026-11-11-тойм.md", dt.date(2026, 11, 11), mongolian)
    [(title, page)] = found.items()
    assert "доод төлбөрийг" in title and page.fields["status"] == "accepted"


def test_a_reversing_decision_names_the_earlier_one_and_a_mention_does_not() -> None:
    reversing = (
        "---\ntitle: Pricing call\ndate: 2026-11-20\n---\n\n## Decisions\n"
        "- **Flat yearly fee for Initech**: this supersedes the per-seat pricing decision of "
        "2026-07-15.\n"
    )
    found = extract("meetings/2026-11-20-pricing-call.md", dt.date(2026, 11, 20), reversing)
    [ref] = found.reversals
    assert (ref.title, ref.on, ref.status) == (
        "Flat yearly fee for Initech",
        dt.date(2026, 7, 15),
        "superseded",
    )
    assert "per-seat pricing" in ref.words
    mention = reversing.replace("this supersedes", "this follows")
    assert extract("meetings/x.md", dt.date(2026, 11, 20), mention).reversals == ()


def test_a_field_is_named_by_its_own_words_or_its_description() -> None:
    companies = SCHEMA.folder("companies")
    labels = field_labels(companies.field("contract_value"), companies)  # type: ignore[arg-type]
    assert {"contract value", "annual contract value", "annual contract"} <= set(labels)
    for sentence, value in (
        ("Initech's annual contract is $96,000, signed in 2025.", 96000),
        ("For Initech the contract value stands at $120k per year.", 120000),
        ("Initech contract value: 110,000 USD.", 110000),
    ):
        found = extract("slack/s.md", dt.date(2026, 10, 20), sentence + "\n")
        [initech] = [d.page for d in found.drafts if d.title == "Initech"]
        assert initech.fields["contract_value"] == value, sentence
        assert ("companies", "initech", "contract_value") in found.plain_facts
    moved = extract(
        "slack/s.md", dt.date(2026, 10, 20), "Initech's contract value is now $99,000.\n"
    )
    assert ("companies", "initech", "contract_value") not in moved.plain_facts
    assert is_change("the due date moved to 2026-12-15") and not is_change("renewal is 2027-01-31")


def test_a_customer_meetings_decision_says_whose_it_is() -> None:
    note = (
        "---\ntitle: Номин Трейдтэй гэрээний уулзалт\ndate: 2026-11-18\ncompany: Номин Трейд\n"
        "attendees: [Alex Kim]\n---\n\n## Шийдвэрүүд\n"
        "- **Үнэ: нэг хүргэлтэд 900 төгрөг.** Хэрэглэгчийн тоо хязгааргүй.\n"
        "- **Initech-ийн үнэ өөрчлөгдөхгүй.**\n"
    )
    found = decisions("meetings/2026-11-18-гэрээ.md", dt.date(2026, 11, 18), note)
    assert set(found) == {
        "Номин Трейд: Үнэ: нэг хүргэлтэд 900 төгрөг",
        "Initech-ийн үнэ өөрчлөгдөхгүй",
    }
    price = found["Номин Трейд: Үнэ: нэг хүргэлтэд 900 төгрөг"]
    assert price.fields["company"] == "Номин Трейд"
    assert price.sections["Context"] == (
        "Meeting “Номин Трейдтэй гэрээний уулзалт” with Номин Трейд, 2026-11-18."
    )
    assert found["Initech-ийн үнэ өөрчлөгдөхгүй"].fields["company"] == "Initech"


def test_who_now_owns_a_page_is_its_owner_field_as_a_change() -> None:
    for sentence, folder, title, field, person in (
        ("Alex Kim now owns the Initech account.", "companies", "Initech", "account_owner", "Alex Kim"),
        ("Since Monday Tom Becker took over Usage Metering.", "projects", "Usage Metering", "owner", "Tom Becker"),
        ("Priya Shah is now the owner of Globex.", "companies", "Globex", "account_owner", "Priya Shah"),
    ):  # fmt: skip
        found = extract("slack/o.md", dt.date(2026, 10, 1), sentence + "\n")
        [target] = [d.page for d in found.drafts if d.folder == folder and d.title == title]
        assert target.fields[field] == person, sentence
        assert (folder, title.lower(), field) not in found.plain_facts  # a change, not a claim
    nobody = extract("slack/o.md", dt.date(2026, 10, 1), "Alex Kim owns a bicycle.\n")
    assert not any("account_owner" in d.page.fields for d in nobody.drafts)


def test_the_writer_of_we_decided_is_a_decider_and_nobody_else_is_guessed() -> None:
    text = "Quick note: after the review we've decided to move Globex to weekly invoices.\n"
    signed = f"---\nauthor: Priya Shah\n---\n\n{text}"
    [page] = decisions("slack/w.md", dt.date(2026, 10, 2), signed).values()
    assert page.fields["decided_by"] == ("Priya Shah",)
    [unsigned] = decisions("slack/w.md", dt.date(2026, 10, 2), text).values()
    assert "decided_by" not in unsigned.fields
    told = "---\nauthor: Priya Shah\n---\n\nThe board decided to move Globex to weekly invoices.\n"
    [page] = decisions("slack/w.md", dt.date(2026, 10, 2), told).values()
    assert "decided_by" not in page.fields  # the writer reports it; "the board" decided


def test_agreeing_on_the_next_meeting_is_no_decision() -> None:
    note = (
        "# 1:1\n\n"
        "We agreed to put a pricing review on the agenda for next week (2026-10-07).\n"
        "We agreed to schedule a follow-up call with Initech on Friday.\n"
        "We decided to meet again after the pilot.\n"
        "We agreed to move Initech to annual invoicing.\n"
    )
    found = decisions("one-on-ones/2026-09-29-1on1.md", dt.date(2026, 9, 29), note)
    assert list(found) == ["Move Initech to annual invoicing"]
    mongolian = (
        "# Тойм\n\nДараагийн долоо хоногт Номин Трейдтэй уулзалт товлохоор тохиролцов.\n"
        "Пилотын дараа дахин уулзахаар шийдвэрлэв.\n"
    )
    assert decisions("updates/2026-10-01-тойм.md", dt.date(2026, 10, 1), mongolian) == {}


def test_a_decision_written_as_labelled_lines_is_one_decision_with_its_provenance() -> None:
    note = (
        "---\ntitle: Retention review\ndate: 2022-05-03\nauthor: Maria Lopez\n---\n\n"
        "Just a quick note on the change to our log retention.\n\n## Decision\n\n"
        "- **Date:** 2022-05-01 (mid-morning engineering-lead meeting)\n"
        "- **Participants:** Maria Lopez (P-0005) & Tom Becker (P-0001)\n"
        "- **Outcome:** Adopt new 90-day retention policy.\n"
        "- **Reason:** A privacy audit found risk in keeping logs beyond 90 days.\n"
        "- **Alternatives considered:** 120 days; keeping 180 days\n\n"
        "---\n\n| Date | Author |\n|---|---|\n| 2022-05-01 | Maria Lopez |\n\n"
        "## Implementation\n- Configure purging after 90 days.\n"
    )
    found = decisions("notes/retention.md", dt.date(2022, 5, 3), note)
    assert list(found) == ["Adopt new 90-day retention policy"]
    page = found["Adopt new 90-day retention policy"]
    assert page.fields["decided_on"] == page.fields["date"] == "2022-05-01"
    assert page.fields["decided_by"] == ("Maria Lopez", "Tom Becker")
    assert page.fields["rationale"] == "A privacy audit found risk in keeping logs beyond 90 days"
    assert page.fields["alternatives"] == ("120 days", "keeping 180 days")
    assert "Author" not in page.sections["Decision"]  # the table after the rule is not it
    plain = note.replace("**", "").replace("Outcome:", "Decision:")
    again = decisions("notes/retention.md", dt.date(2022, 5, 3), plain)
    assert list(again) == ["Adopt new 90-day retention policy"]
    assert again["Adopt new 90-day retention policy"].fields["decided_on"] == "2022-05-01"


def test_only_a_heading_that_says_decisions_opens_a_decisions_section() -> None:
    charter = (
        "---\ntitle: Charter\ndate: 2023-03-06\n---\n\n# Technical Decision-Making Charter\n\n"
        "## 2. Decision Authority Matrix\n- CEO (Maya Patel): escalations.\n- Owner: Daniel.\n"
    )
    assert decisions("notes/charter.md", dt.date(2023, 3, 6), charter) == {}
    sprint = (
        "---\ntitle: Sprint planning\ndate: 2022-10-01\n---\n\n## 5. Sprint Planning Decisions\n"
        "- **Static analysis before merge** for all new code.\n"
    )
    assert list(decisions("notes/sprint.md", dt.date(2022, 10, 1), sprint)) == [
        "Static analysis before merge"
    ]


def test_approved_as_an_adjective_an_approver_or_a_subject_line_is_no_decision() -> None:
    for sentence in (
        "Veto authority over technology choices that conflict with the approved tech stack.",
        "Approved by: Maya Patel, CEO.",
        "Subject: Final Architecture for Helix Fleet - Approved by Arjun",
    ):
        note = f"---\ntitle: Charter\ndate: 2023-03-06\n---\n\n{sentence}\n"
        assert decisions("notes/charter.md", dt.date(2023, 3, 6), note) == {}, sentence
    taken = "---\ntitle: Sync\ndate: 2023-03-06\n---\n\nWe approved the new tech stack for Fleet.\n"
    assert list(decisions("notes/sync.md", dt.date(2023, 3, 6), taken)) == [
        "New tech stack for Fleet"
    ]


def test_people_who_convened_to_decide_are_its_deciders() -> None:
    said = (
        "Maya Patel: Maya Patel, Luis Hernandez, and Arjun Mehta convened to decide that "
        "Helix would pivot from its spreadsheet model to an API-first architecture."
    )
    assert words.deciders(said) == ["Maya Patel", "Luis Hernandez", "Arjun Mehta"]
    note = f"---\ntitle: Pivot call\ndate: 2021-04-15\n---\n\n{said}\n"
    found = decisions("notes/pivot.md", dt.date(2021, 4, 15), note)
    assert list(found) == [
        "Helix would pivot from its spreadsheet model to an API-first architecture"
    ]
    page = next(iter(found.values()))
    assert page.fields["decided_by"] == ("Maya Patel", "Luis Hernandez", "Arjun Mehta")
