"""example_kb end to end: the agent's CLI against a real memory server over HTTP.

With the scripted model (tests/ingest_agent/data/extractions.yaml over the fake
OpenAI-compatible server) and with no model at all (the rules extractor). The facts
checked are the ones example_kb/EXPECTED.md lists.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from typing import Any

from ingest_agent.names import norm
from memserver.kb.manifest import Manifest
from memserver.kb.page import Page, parse_page, validate_page
from memserver.kb.schema import load_schema
from tests.fixtures.llm_server import LLMServer
from tests.ingest_agent.conftest import Ingest, IngestServer
from tests.ingest_agent.scripted import ScriptedModel

MEETINGS = {
    # slug -> (title, attendees) for the 15 meetings of EXPECTED.md section 1
    "2026-06-18-globex-intro-call": (
        "Globex intro call",
        {"Bob Martinez", "Alex Kim", "Alice Chen"},
    ),
    "2026-06-25-initech-quarterly-check-in-q2": (
        "Initech — quarterly check-in (Q2)",
        {"Joanna Price", "Alex Novak", "Priya Shah", "Alex Kim"},
    ),
    "2026-07-08-product-roadmap-review-q3": (
        "Product roadmap review (Q3)",
        {"Alice Chen", "Tom Becker", "Maria Lopez", "Sofia Rossi"},
    ),
    "2026-07-22-globex-demo": (
        "Globex demo",
        {"Bob Martinez", "Karen Lee", "Alex Kim", "Alice Chen", "Tom Becker"},
    ),
    "2026-08-12-номин-трейдтэй-хийсэн-анхны-уулзалт": (
        "Номин Трейдтэй хийсэн анхны уулзалт",
        {"Энхтуяа Ганбаатар", "Тэмүүлэн Бат", "Batbayar Dorj", "Alex Kim"},
    ),
    "2026-09-08-globex-pilot-kickoff": (
        "Globex pilot kickoff",
        {"Bob Martinez", "Priya Shah", "Tom Becker", "Alice Chen", "Alex Kim"},
    ),
    "2026-09-23-globex-pilot-weekly-check-in": (
        "Globex pilot weekly check-in",
        {"Bob Martinez", "Priya Shah", "Alex Kim"},
    ),
    "2026-09-29-1-1-maria-alex-kim": ("1:1 Maria / Alex Kim", {"Maria Lopez", "Alex Kim"}),
    "2026-10-05-номин-трейд-пилот-эхлүүлэх-уулзалт": (
        "Номин Трейд — пилот эхлүүлэх уулзалт",
        {"Энхтуяа Ганбаатар", "Тэмүүлэн Бат", "Batbayar Dorj"},
    ),
    "2026-10-07-pricing-review": (
        "Pricing review",
        {"Maria Lopez", "Alex Kim", "Alice Chen", "Tom Becker", "Priya Shah"},
    ),
    "2026-10-14-globex-pilot-review": (
        "Globex pilot review",
        {"Bob Martinez", "Dana Whitfield", "Alex Kim", "Priya Shah", "Tom Becker", "Alice Chen"},
    ),
    "2026-10-20-initech-renewal-call": (
        "Initech renewal call",
        {"Joanna Price", "Alex Novak", "Alex Kim"},
    ),
    "2026-11-05-product-roadmap-review-q1-2027": (
        "Product roadmap review (Q1 2027)",
        {"Alice Chen", "Tom Becker", "Maria Lopez", "Sofia Rossi", "Batbayar Dorj"},
    ),
    "2026-11-12-globex-integration-review": (
        "Globex integration review",
        {"Bob Martinez", "Priya Shah", "Tom Becker", "Sofia Rossi", "Alex Kim"},
    ),
    "2026-11-18-номин-трейдтэй-гэрээ-байгуулах-уулзалт": (
        "Номин Трейдтэй гэрээ байгуулах уулзалт",
        {"Энхтуяа Ганбаатар", "Тэмүүлэн Бат", "Batbayar Dorj", "Alex Kim"},
    ),
}
PEOPLE = {
    "Maria Lopez", "Tom Becker", "Alice Chen", "Alex Kim", "Priya Shah", "Sofia Rossi",
    "Batbayar Dorj", "Bob Martinez", "Karen Lee", "Dana Whitfield", "Joanna Price",
    "Alex Novak", "Энхтуяа Ганбаатар", "Тэмүүлэн Бат",
}  # fmt: skip
PRIVATE = ("142,000", "142000", "0.25%", "additional equity", "paternity")


def pages(server: IngestServer) -> dict[str, Page]:
    """Every page on disk by id, each checked against its folder."""
    schema = load_schema(server.paths.schema)
    out = {}
    for file in sorted(server.paths.knowledge.rglob("*.md")):
        folder = file.parent.name
        page = parse_page(file.read_text(encoding="utf-8"), str(file))
        assert validate_page(page, schema.folder(folder)) == [], file
        out[f"{folder}/{file.stem}"] = page
    return out


def by_title(all_pages: dict[str, Page], folder: str) -> dict[str, Page]:
    return {p.title: p for pid, p in all_pages.items() if pid.startswith(f"{folder}/")}


def conflicts(server: IngestServer) -> list[tuple[Any, ...]]:
    with server.kb().db.connection() as conn:
        rows = conn.execute(
            "SELECT page_id, field, old_value, new_value, old_source, new_source, status, note"
            " FROM conflicts ORDER BY id"
        ).fetchall()
    return [tuple(row) for row in rows]


def assert_no_duplicate_entries(all_pages: dict[str, Page]) -> None:
    for pid, page in all_pages.items():
        keys = Counter((e.date, e.source, norm(e.text)) for e in page.timeline)
        assert not [k for k, n in keys.items() if n > 1], pid


def assert_meetings_and_attendee_timelines(all_pages: dict[str, Page]) -> None:
    people = by_title(all_pages, "people")
    for slug, (title, attendees) in MEETINGS.items():
        meeting = all_pages[f"meetings/{slug}"]
        assert meeting.title == title
        assert set(meeting.fields["attendees"]) == attendees, slug
        day = dt.date.fromisoformat(slug[:10])
        for name in attendees:
            assert any(
                e.date == day and f"meetings/{slug}" in e.text for e in people[name].timeline
            ), (name, slug)
    assert len([p for p in all_pages if p.startswith("meetings/")]) == len(MEETINGS)
    globex = by_title(all_pages, "companies")["Globex"]  # ... and the company's page
    assert any(
        e.date == dt.date(2026, 11, 12)
        and "meetings/2026-11-12-globex-integration-review" in e.text
        for e in globex.timeline
    )
    assert "people/alex" not in all_pages and "people/bob" not in all_pages


def test_the_model_path_ingests_example_kb_by_the_merge_rules(
    fresh_server: IngestServer, ingest: Ingest, llm_server: LLMServer
) -> None:
    model = ScriptedModel(llm_server)
    status, summary = ingest(fresh_server, llm=llm_server)
    assert status == 0, summary
    assert (summary["ingested"], summary["failed"]) == (28, 0)
    assert summary["llm_calls"] >= 28 and summary["tokens"] > 0
    assert model.tasks["extract"] == 28
    all_pages = pages(fresh_server)
    assert_meetings_and_attendee_timelines(all_pages)
    people = by_title(all_pages, "people")
    assert set(people) == PEOPLE
    assert {"Bataa", "Батбаяр Дорж"} <= set(people["Batbayar Dorj"].aliases)
    assert "Алекс Ким" in people["Alex Kim"].aliases
    assert all_pages["meetings/2026-07-22-globex-demo"].fields["company"] == "Globex"

    # newer source wins: Bob's promotion, with the old claim kept as dated evidence
    bob = people["Bob Martinez"]
    assert (bob.fields["role"], bob.fields["reports_to"]) == ("VP of Operations", "Dana Whitfield")
    assert any(
        e.date == dt.date(2026, 9, 23) and "Director of Operations" in e.text for e in bob.timeline
    )
    assert any(e.date == dt.date(2026, 9, 21) for e in bob.timeline)

    # the reversal comes from a meeting note, not from a decision record: the model's
    # proposal waits for a person (review rows and open questions), nothing is lost
    july = all_pages["decisions/2026-07-15-per-seat-pricing-for-acme-track"]
    october = all_pages["decisions/2026-10-07-usage-based-pricing"]
    assert july.fields["status"] == "accepted"
    assert any(
        e.date == dt.date(2026, 10, 7) and "Usage-based pricing" in e.text for e in july.timeline
    )
    assert "$49 per user per month" in july.sections["Decision"]  # original text kept
    assert "supersedes" not in october.fields and october.fields["status"] == "proposed"
    review = "meetings/2026/2026-10-07-pricing-review.md proposes"
    assert any(
        q.startswith(f"Review: {review} that its status is now reversed")
        for q in july.open_questions
    )
    assert any(review in q and "supersedes" in q for q in october.open_questions)
    rows = conflicts(fresh_server)
    reviews = [r for r in rows if (r[7] or "").startswith("review:")]
    held = {(r[0], r[1], r[2], r[3]) for r in reviews}
    july_id = "decisions/2026-07-15-per-seat-pricing-for-acme-track"
    october_id = "decisions/2026-10-07-usage-based-pricing"
    assert held == {
        (july_id, "status", "accepted", "reversed"),
        (october_id, "supersedes", None, "Per-seat pricing for Acme Track"),
        (october_id, "status", "proposed", "accepted"),
    }
    assert {r[6] for r in reviews} == {"unresolved"}

    # the contradiction: same date, current value kept, unresolved and an open question
    initech = by_title(all_pages, "companies")["Initech"]
    assert initech.fields["contract_value"] == 120000
    assert initech.fields["renewal_date"] == "2027-01-31"
    [question] = initech.open_questions
    assert "120000" in question and "96000" in question
    assert "slack/sales/2026-10-20.md" in question
    assert "meetings/2026/2026-10-20-initech-renewal-prep.md" in question
    unresolved = [r for r in rows if r[6] == "unresolved" and not (r[7] or "").startswith("review")]
    assert [(r[0], r[1], r[2], r[3]) for r in unresolved] == [
        ("companies/initech", "contract_value", 120000, 96000)
    ]
    # other newer-source updates
    companies = by_title(all_pages, "companies")
    assert companies["Globex"].fields["status"] == "customer"
    assert companies["Номин Трейд"].fields["status"] == "customer"
    assert initech.fields["account_owner"] == "Alex Kim"
    localization = by_title(all_pages, "projects")["Mongolian Localization"]
    assert localization.fields["due_date"] == "2026-12-15"
    assert any("2026-11-30" in e.text for e in localization.timeline)
    # a relative date resolved against the source's date (slack 2026-11-19: "yesterday")
    assert any(
        e.date == dt.date(2026, 11, 18) and e.source == "slack/deals/2026-11-19.md"
        for e in companies["Номин Трейд"].timeline
    )
    # the private span reached neither the model nor a page
    sent = json.dumps(llm_server.requests, ensure_ascii=False)
    stored = "\n".join(
        f.read_text(encoding="utf-8") for f in fresh_server.paths.knowledge.rglob("*.md")
    )
    for secret in PRIVATE:
        assert secret not in sent and secret not in stored, secret
    assert_no_duplicate_entries(all_pages)
    entries = Manifest(fresh_server.paths).entries()
    assert {e.status.value for e in entries} == {"ingested"}
    assert {e.extractor for e in entries} == {"llm"}
    assert entries and all(f"{p}" in all_pages for e in entries for p in e.pages)

    # a second run changes nothing
    before = {f: f.read_bytes() for f in fresh_server.paths.knowledge.rglob("*.md")}
    requests = len(llm_server.requests)
    status, again = ingest(fresh_server, llm=llm_server)
    assert status == 0 and again["sources"] == []
    assert len(llm_server.requests) == requests
    assert {f: f.read_bytes() for f in fresh_server.paths.knowledge.rglob("*.md")} == before
    # ... and ingesting an already ingested source again writes nothing either
    status, forced = ingest(
        fresh_server, "--file", "meetings/2026/2026-10-07-pricing-review.md", llm=llm_server
    )
    assert status == 0 and forced["sources"][0]["changed"] == []
    assert {f: f.read_bytes() for f in fresh_server.paths.knowledge.rglob("*.md")} == before

    # an edited source is re-ingested: its page follows the edit, nothing duplicates
    path = "meetings/2026/2026-06-18-globex-intro-call.md"
    edited = fresh_server.paths.source / path
    edited.write_text(edited.read_text(encoding="utf-8") + "\nBob asked for a follow-up.\n")
    answer = json.loads(json.dumps(model.answers[path]))
    answer["pages"][0]["sections"]["Summary"] += " Bob asked for a follow-up."
    model.overrides[path] = json.dumps(answer)
    status, third = ingest(fresh_server, llm=llm_server)
    assert status == 0
    assert [(s["path"], s["status"]) for s in third["sources"]] == [(path, "ingested")]
    after = pages(fresh_server)
    assert "follow-up" in after["meetings/2026-06-18-globex-intro-call"].sections["Summary"]
    changed = {pid for pid in after if after[pid] != all_pages[pid]}
    assert changed == {"meetings/2026-06-18-globex-intro-call"}
    assert_no_duplicate_entries(after)


def test_the_rules_extractor_ingests_example_kb_without_a_model(
    fresh_server: IngestServer, ingest: Ingest
) -> None:
    status, summary = ingest(fresh_server)
    assert status == 0, summary
    assert (summary["ingested"], summary["failed"], summary["llm_calls"]) == (28, 0, 0)
    assert {s["extractor"] for s in summary["sources"]} == {"rules"}
    all_pages = pages(fresh_server)
    assert_meetings_and_attendee_timelines(all_pages)
    assert_no_duplicate_entries(all_pages)
    people = by_title(all_pages, "people")
    assert set(people) <= PEOPLE and PEOPLE - set(people) <= set()
    assert "Bataa" in people["Batbayar Dorj"].aliases
    assert set(by_title(all_pages, "projects")) == {
        "Globex ETA Rollout",
        "Usage Metering",
        "Mongolian Localization",
    }
    july_id = "decisions/2026-07-15-per-seat-pricing-for-acme-track"
    july = all_pages[july_id]
    assert july.fields["decided_by"] == ("Maria Lopez", "Alex Kim", "Alice Chen")
    assert july.fields["alternatives"] == ("per-truck", "per-shipment")
    assert "Stripe supports seat-based billing" in july.fields["rationale"]
    assert all_pages["projects/usage-metering"].fields["owner"] == "Tom Becker"
    # the pricing review's decision, read from its Decisions section, reverses July's
    usage_id = "decisions/2026-10-07-usage-based-pricing-replaces-per-seat-pricing"
    usage = all_pages[usage_id]
    assert usage.fields["decided_by"] == ("Maria Lopez", "Alex Kim", "Tom Becker")
    assert (usage.fields["status"], usage.fields["supersedes"]) == ("accepted", july_id)
    assert "slack/general/2026-10-08.md" in usage.sources  # its announcement: the same page
    assert (july.fields["status"], july.fields["superseded_by"]) == ("reversed", usage_id)
    assert "$49 per user per month" in july.sections["Decision"]  # original text kept
    assert any(
        e.date == dt.date(2026, 10, 7)
        and usage_id in e.text
        and e.source == "meetings/2026/2026-10-07-pricing-review.md"
        for e in july.timeline
    )
    # the real disagreement: $120,000 in the renewal call, $96,000 in #sales the same day
    initech = by_title(all_pages, "companies")["Initech"]
    [question] = initech.open_questions
    assert "120000" in question and "96000" in question
    assert "slack/sales/2026-10-20.md" in question
    assert "meetings/2026/2026-10-20-initech-renewal-prep.md" in question
    open_rows = [r for r in conflicts(fresh_server) if r[6] == "unresolved"]
    assert [(r[0], r[1], r[2], r[3]) for r in open_rows] == [
        ("companies/initech", "contract_value", 120000, 96000)
    ]
    entries = Manifest(fresh_server.paths).entries()
    assert {e.status.value for e in entries} == {"ingested"}
    assert {e.extractor for e in entries} == {"rules"}
