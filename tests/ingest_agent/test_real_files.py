"""Real files dropped into the example: a PDF, a deck, an e-mail, a meeting transcript and a
Slack export (``real_files.py``, made by the real tools), read by the rules extractor.
Newer facts win with their date and source, a one-holder role newly held ends the
earlier holder's claim, a meeting knows its company, an e-mail is no meeting, the only
open conflict is settled by the later e-mail, and no format's noise reaches a page."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from ingest_agent.agent import IngestAgent
from ingest_agent.memory import Memory
from memserver.clients.mcp import open_http
from memserver.kb.manifest import Manifest
from memserver.kb.page import Page
from read_agent.agent import Answer, ReadAgent
from read_agent.reading.conversation import Turn
from tests.fixtures.server import copy_example_kb
from tests.ingest_agent.conftest import IngestServer, serve_kb
from tests.ingest_agent.real_files import NOW, drop_all
from tests.ingest_agent.test_agent_e2e import pages

ORIGINALS = {
    "pdf": "docs/board-update.pdf",
    "pptx": "docs/sales-plan-2027.pptx",
    "eml": "mail/initech-renewal.eml",
    "vtt": "meetings/2026-12-02-globex-go-live-retro.vtt",
    "slack": "slack/acme-deals.zip",
}
RETRO = "meetings/2026-12-02-globex-go-live-retro"


@pytest.fixture(scope="module")
def dropped(tmp_path_factory: pytest.TempPathFactory, pg_url: str) -> Iterator[IngestServer]:
    root = tmp_path_factory.mktemp("real-files")
    kb = copy_example_kb(root / "kb")
    # The team trusts its own documents and mail: their changes are written at once
    # (from a folder below trusted they wait for a person: tests/memserver/kb/test_trust*).
    schema = kb / "schema.yaml"
    text = schema.read_text(encoding="utf-8")
    assert "\n  sources:\n" in text
    schema.write_text(
        text.replace("\n  sources:\n", "\n  sources:\n    docs: trusted\n    mail: trusted\n", 1),
        encoding="utf-8",
    )
    drop_all(kb / "source", root)
    with serve_kb(kb, pg_url) as server:

        async def run() -> None:
            async with open_http(server.url, server.write_token, timeout=120) as session:
                memory = Memory(session)
                await IngestAgent(memory, await memory.start()).run()

        anyio.run(run)
        yield server


@pytest.fixture(scope="module")
def written(dropped: IngestServer) -> dict[str, Page]:
    return pages(dropped)


def ask(server: IngestServer, *questions: str) -> Answer:
    """The answer to the last question, the ones before asked first in the same talk."""
    tokens = server.server.tokens
    assert tokens is not None
    secret = tokens.create(f"read-{uuid.uuid4().hex[:8]}", "*").secret

    async def run() -> Answer:
        async with open_http(server.url, secret, timeout=60) as memory:
            agent = ReadAgent(memory, None)
            history: list[Turn] = []
            with anyio.fail_after(120):
                for question in questions:
                    answer = await agent.ask(question, now=NOW, history=history)
                    history.append(Turn(question, answer.text))
            return answer

    return anyio.run(run)


def rows(server: IngestServer, page_id: str | None = None) -> list[tuple[Any, ...]]:
    """(page, field, old, new, new source, status, note) of the conflicts table."""
    with server.kb().db.connection() as conn:
        found = conn.execute(
            "SELECT page_id, field, old_value, new_value, new_source, status, note"
            " FROM conflicts WHERE %(id)s::text IS NULL OR page_id = %(id)s ORDER BY id",
            {"id": page_id},
        ).fetchall()
    return [tuple(r) for r in found]


def test_every_file_is_converted_and_ingested_by_the_rules(dropped: IngestServer) -> None:
    entries = {e.path: e for e in Manifest(dropped.paths).entries()}
    for path in ORIGINALS.values():
        assert (entries[path].status.value, entries[path].extractor) == ("ingested", "rules")


def test_the_pdf_gives_sofia_rossi_her_new_role_and_manager_dated_and_sourced(
    dropped: IngestServer, written: dict[str, Page]
) -> None:
    sofia = written["people/sofia-rossi"]
    assert sofia.fields["role"] == "Engineering Lead"
    assert sofia.fields["reports_to"] == "Maria Lopez"  # was Tom Becker
    change = [e for e in sofia.timeline if e.text.startswith("reports_to changed from")]
    assert [(str(e.date), e.source) for e in change] == [("2026-12-01", ORIGINALS["pdf"])]
    stored = dropped.kb().get_page("people/sofia-rossi").page  # what kb_get_page reads
    assert stored.fields["reports_to"] == "Maria Lopez"
    superseded = [r for r in rows(dropped, "people/sofia-rossi") if r[1] == "reports_to"]
    assert [(r[2], r[3], r[4], r[5]) for r in superseded] == [
        ("Tom Becker", "Maria Lopez", ORIGINALS["pdf"], "superseded")
    ]
    assert "Maria Lopez" in ask(dropped, "Who does Sofia Rossi report to?").text


def test_a_new_hire_in_the_pdf_gets_her_manager_and_role(
    dropped: IngestServer, written: dict[str, Page]
) -> None:
    nadia = written["people/nadia-petrova"]
    assert nadia.fields["reports_to"] == "Sofia Rossi"
    assert nadia.fields["role"] == "Backend Engineer"
    assert "Sofia Rossi" in ask(dropped, "Who does Nadia Petrova report to?").text


def test_the_retro_knows_its_company_and_is_the_latest_meeting_with_globex(
    dropped: IngestServer, written: dict[str, Page]
) -> None:
    retro = written[RETRO]
    assert retro.title == "Globex go-live retro"
    assert retro.fields["company"] == "Globex"
    assert set(retro.fields["attendees"]) == {
        "Bob Martinez", "Marcus Hale", "Priya Shah", "Alex Kim",
    }  # fmt: skip
    ledger = {e.path: e.reasons for e in Manifest(dropped.paths).entries()}
    assert any(
        r.startswith("company Globex: named in its title") and "Bob Martinez" in r
        for r in ledger[ORIGINALS["vtt"]]
    ), ledger[ORIGINALS["vtt"]]
    latest = ask(dropped, "When was the latest meeting with Globex?")
    assert latest.text.splitlines()[0].startswith("Latest meeting: 2026-12-02"), latest.text
    assert RETRO in {c.id for c in latest.citations}
    for question in (
        "Who was at the Globex go-live retro?",
        "Who was at the Globex go live retro?",
    ):
        answer = ask(dropped, question)
        assert RETRO in answer.text and "Marcus Hale" in answer.text, answer.text


def test_the_new_coo_ends_the_earlier_holders_claim_and_nothing_else(
    dropped: IngestServer, written: dict[str, Page]
) -> None:
    marcus, karen = written["people/marcus-hale"], written["people/karen-lee"]
    assert (marcus.fields["role"], marcus.fields["company"]) == ("COO", "Globex")
    assert "role" not in karen.fields and karen.fields["company"] == "Globex"
    ended = [e for e in karen.timeline if e.text.startswith("role “COO” ended")]
    assert [(str(e.date), e.source) for e in ended] == [("2026-12-02", ORIGINALS["vtt"])]
    assert len(karen.timeline) > len(ended) and not karen.open_questions
    assert [(r[1], r[2], r[3], r[5]) for r in rows(dropped, "people/karen-lee")] == [
        ("role", "COO", None, "superseded")
    ]
    answer = ask(dropped, "What does Karen Lee do?")
    assert "role: COO" not in answer.text.splitlines()[0] and "ended" in answer.text


def test_the_email_is_no_meeting_and_its_evidence_answers(
    dropped: IngestServer, written: dict[str, Page]
) -> None:
    meetings = {pid for pid in written if pid.startswith("meetings/")}
    assert not {
        pid for pid in meetings if pid.startswith(("meetings/2026-12-03", "meetings/2026-12-04"))
    }
    assert not any(ORIGINALS["eml"] in written[pid].sources for pid in meetings)
    ledger = {e.path: e.reasons for e in Manifest(dropped.paths).entries()}
    assert ledger[ORIGINALS["eml"]][0].startswith("no page of its own: genre email")
    assert ledger[ORIGINALS["slack"]][0].startswith("no page of its own: genre chat")
    answer = ask(dropped, "Did Initech sign?")
    assert "Initech signed the renewal" in answer.text, answer.text
    assert ORIGINALS["eml"] in answer.text
    assert ORIGINALS["eml"] in written["companies/initech"].sources


def test_the_open_initech_conflict_is_settled_by_the_later_email(
    dropped: IngestServer, written: dict[str, Page]
) -> None:
    initech = written["companies/initech"]
    assert initech.fields["contract_value"] == 108000 and not initech.open_questions
    found = rows(dropped, "companies/initech")
    contract = [r for r in found if r[1] == "contract_value"]
    assert [r[5] for r in contract] == ["resolved", "resolved"]  # the conflict and its settling
    assert f"[settled by {ORIGINALS['eml']}: 108000]" in contract[0][6]
    assert contract[1][2:5] == (120000, 108000, ORIGINALS["eml"])
    answer = ask(dropped, "What is Initech's contract value?")
    assert "108" in answer.text.splitlines()[0] and "disagree" not in answer.text, answer.text


def test_review_holds_no_open_conflict_and_answers_see_none(dropped: IngestServer) -> None:
    assert [r for r in rows(dropped) if r[5] == "unresolved"] == []
    for questions in (
        ("What is the price per tracked shipment?",),
        ("What is the price per tracked shipment?", "And Nomin Trade?"),
        ("What is the 2027 list price?",),
    ):
        answer = ask(dropped, *questions)
        assert "disagree" not in answer.text, (questions, answer.text)


def test_no_format_noise_reaches_a_page_and_titles_say_what_was_decided(
    dropped: IngestServer, written: dict[str, Page]
) -> None:
    new = set(ORIGINALS.values())
    for pid, page in written.items():
        if new & set(page.sources):  # a page a converted file wrote to
            text = (dropped.paths.knowledge / f"{pid}.md").read_text(encoding="utf-8")
            assert "<!--" not in text, pid
            assert not [e for e in page.timeline if "  " in e.text or "<!--" in e.text], pid
    decisions = {p.title for pid, p in written.items() if pid.startswith("decisions/2026-1")}
    assert "Territory: Batbayar Dorj owns every account in Mongolia from 2027-01-01" in decisions
    assert "Pricing: the 2027 list price stays at $0.45 per tracked shipment" in decisions
    discount = [t for t in decisions if "850₮" in t]
    assert discount == [
        "Номин Трейд: 850₮ discount for the first three months of the contract that started "
        "2026-12-01"
    ]
    assert not [t for t in decisions if t[:1].isdigit() or "Slide" in t or ")" in t[:12]]
    deck = next(p for p in written.values() if p.title.startswith("Territory:"))
    assert set(deck.fields["decided_by"]) == {"Alex Kim", "Maria Lopez"}


def test_a_message_is_dated_when_it_was_said(written: dict[str, Page]) -> None:
    timeline = written["companies/номин-трейд"].timeline
    said = [e for e in timeline if e.source == ORIGINALS["slack"] and "850₮" in e.text]
    assert [str(e.date) for e in said] == ["2026-12-04", "2026-12-04"]  # not 2026-12-01
    assert "the contract that started 2026-12-01" in said[0].text


def test_a_second_run_changes_nothing(dropped: IngestServer) -> None:
    before = {f: f.read_bytes() for f in dropped.paths.knowledge.rglob("*.md")}

    async def run() -> int:
        async with open_http(dropped.url, dropped.write_token, timeout=120) as session:
            memory = Memory(session)
            summary = await IngestAgent(memory, await memory.start()).run()
            return len(summary.sources)

    assert anyio.run(run) == 0
    assert {f: f.read_bytes() for f in dropped.paths.knowledge.rglob("*.md")} == before
