"""Decisions, reversals and disagreements through a real memory server, without a model:
reworded notes in both languages, in either order of ingestion."""

from __future__ import annotations

import datetime as dt
from typing import Any

from memserver.kb.page import Page
from tests.ingest_agent.conftest import Ingest, IngestServer

RECORD = "decisions/2026-03-02-onboarding-calls.md"
MENTION = "meetings/2026-03-20-ops-sync.md"
REVIEW = "meetings/2026-04-10-ops-review.md"
OLD_ID = "decisions/2026-03-02-onboarding-calls-for-every-new-customer"
NEW_ID = "decisions/2026-04-10-onboarding-videos-for-small-customers"


def write(server: IngestServer, path: str, text: str) -> None:
    file = server.paths.source / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")


def page(server: IngestServer, page_id: str) -> Page:
    found: Page = server.kb().get_page(page_id).page
    return found


def run(ingest: Ingest, server: IngestServer, path: str) -> dict[str, Any]:
    status, summary = ingest(server, "--file", path)
    assert status == 0 and summary["ingested"] == 1, summary
    return summary


def conflicts(server: IngestServer, page_id: str) -> list[tuple[Any, ...]]:
    with server.kb().db.connection() as conn:
        rows = conn.execute(
            "SELECT field, old_value, new_value, old_source, new_source, status FROM conflicts"
            " WHERE page_id = %s ORDER BY id",
            (page_id,),
        ).fetchall()
    return [tuple(row) for row in rows]


def test_a_note_replacing_a_decision_reverses_it_and_a_mention_changes_nothing(
    small_server: IngestServer, ingest: Ingest
) -> None:
    write(
        small_server,
        RECORD,
        "---\ntitle: Onboarding calls for every new customer\ndate: 2026-03-02\n"
        "status: accepted\n---\n\n## Decision\nEvery new customer gets a one-hour onboarding "
        "call in the first week.\n\nDecided by Maria Lopez and Tom Becker, because churn "
        "was highest in the first month.\n",
    )
    write(
        small_server,
        MENTION,
        "---\ntitle: Ops sync\ndate: 2026-03-20\nattendees: [Tom Becker]\n---\n\n"
        "## Discussion\nAs decided on 2026-03-02, onboarding calls go on; nobody wants to "
        "reverse the onboarding calls decision yet.\n",
    )
    write(
        small_server,
        REVIEW,
        "---\ntitle: Ops review\ndate: 2026-04-10\nattendees: [Maria Lopez, Tom Becker]\n---\n\n"
        "## Decisions\n- **Onboarding videos for small customers**: we're replacing onboarding "
        "calls with recorded videos for customers under 10 seats, because calls took 40% of "
        "support time.\n- Decided by Maria Lopez.\n",
    )
    run(ingest, small_server, RECORD)
    old = page(small_server, OLD_ID)
    assert old.fields["decided_by"] == ("Maria Lopez", "Tom Becker")
    assert old.fields["rationale"] == "churn was highest in the first month"
    run(ingest, small_server, MENTION)
    assert page(small_server, OLD_ID).fields["status"] == "accepted"  # a mention only
    listed, _ = small_server.kb().list_pages(folder="decisions")
    assert [p.id for p in listed] == [OLD_ID]

    run(ingest, small_server, REVIEW)
    old, new = page(small_server, OLD_ID), page(small_server, NEW_ID)
    assert (new.fields["status"], new.fields["supersedes"]) == ("accepted", OLD_ID)
    assert new.fields["decided_by"] == ("Maria Lopez",)
    assert new.fields["rationale"] == "calls took 40% of support time"
    assert (old.fields["status"], old.fields["superseded_by"]) == ("reversed", NEW_ID)
    assert "one-hour onboarding call" in old.sections["Decision"]  # the original text stays
    [entry] = [e for e in old.timeline if e.source == REVIEW]
    assert entry.date == dt.date(2026, 4, 10)
    assert NEW_ID in entry.text and "40% of support time" in entry.text
    assert not old.open_questions and not new.open_questions
    # written at once, not held for a person
    assert not [c for c in conflicts(small_server, OLD_ID) if c[5] == "unresolved"]


def test_a_reversal_read_before_the_decision_it_reverses_is_linked_when_that_arrives(
    small_server: IngestServer, ingest: Ingest
) -> None:
    reversing = "meetings/2026-05-12-үнийн-хурал.md"
    older = "decisions/2026-02-01-тогтмол-төлбөр.md"
    write(
        small_server,
        reversing,
        "---\ntitle: Үнийн хурал\ndate: 2026-05-12\nattendees: [Maria Lopez]\n---\n\n"
        "## Шийдвэрүүд\n- **Хүргэлт бүрээр үнэ тооцно**: “Сар бүрийн тогтмол төлбөр” "
        "шийдвэрийг цуцалж, нэг хүргэлтэд 900 төгрөг авна.\n",
    )
    write(
        small_server,
        older,
        "---\ntitle: Сар бүрийн тогтмол төлбөр\ndate: 2026-02-01\nstatus: accepted\n---\n\n"
        "## Decision\nСар бүр 2,000,000 төгрөгийн тогтмол төлбөр.\n",
    )
    new_id = "decisions/2026-05-12-хүргэлт-бүрээр-үнэ-тооцно"
    old_id = "decisions/2026-02-01-сар-бүрийн-тогтмол-төлбөр"
    run(ingest, small_server, reversing)  # the earlier decision is not in memory yet
    waiting = page(small_server, new_id)
    assert "supersedes" not in waiting.fields
    assert any("Сар бүрийн тогтмол төлбөр" in q for q in waiting.open_questions)

    run(ingest, small_server, older)
    old, new = page(small_server, old_id), page(small_server, new_id)
    assert new.fields["supersedes"] == old_id and not new.open_questions
    assert (old.fields["status"], old.fields["superseded_by"]) == ("reversed", new_id)
    assert any(e.source == reversing and e.date == dt.date(2026, 5, 12) for e in old.timeline)
    assert "2,000,000" in old.sections["Decision"]


def test_plain_facts_that_disagree_are_an_open_conflict_and_a_stated_update_is_not(
    small_server: IngestServer, ingest: Ingest
) -> None:
    call, chat, update = (
        "meetings/2026-06-01-globex-call.md",
        "slack/sales/2026-06-03.md",
        "slack/sales/2026-06-30.md",
    )
    write(
        small_server,
        call,
        "---\ntitle: Globex call\ndate: 2026-06-01\ncompany: Globex\nattendees: [Alex Kim]\n"
        "---\n\nThe annual contract value is $80,000 for both warehouses.\n",
    )
    write(small_server, chat, "# sales\n\nFYI Globex's contract value stands at $75k.\n")
    write(small_server, update, "# sales\n\nGlobex contract value is now $78,000 after review.\n")
    for path in (call, chat):
        run(ingest, small_server, path)
    globex = page(small_server, "companies/globex")
    assert globex.fields["contract_value"] == 80000
    [question] = globex.open_questions
    assert "80000" in question and "75000" in question and chat in question and call in question
    rows = conflicts(small_server, "companies/globex")
    assert ("contract_value", 80000, 75000, call, chat, "unresolved") in rows

    run(ingest, small_server, update)  # weeks later, and it says "now": an update
    globex = page(small_server, "companies/globex")
    assert globex.fields["contract_value"] == 78000 and not globex.open_questions
    rows = conflicts(small_server, "companies/globex")
    assert rows[-1][:3] == ("contract_value", 80000, 78000) and rows[-1][5] == "resolved"
    # the open conflict is closed by the later source, and stays in history
    assert ("contract_value", 80000, 75000, call, chat, "resolved") in rows
    assert not [r for r in rows if r[5] == "unresolved"]
