"""Every kind of original, dropped in (or imported, for a Slack export), converted, dated,
attributed, ingested by the rules extractor (no model) and answered by the read agent
with a citation of the original file."""

from __future__ import annotations

import datetime as dt
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from ingest_agent.agent import IngestAgent
from ingest_agent.memory import Memory
from memserver.cli import main
from memserver.clients.mcp import open_http
from memserver.kb.manifest import Manifest
from read_agent.agent import Answer, ReadAgent
from tests.fixtures.server import EXAMPLE_KB
from tests.ingest_agent.conftest import IngestServer, serve_kb
from tests.ingest_agent.test_agent_e2e import by_title, pages
from tests.memserver.convert.originals import (
    MSG,
    SRT,
    VTT,
    budget_thread,
    slack_export,
    write_docx,
    write_eml,
    write_epub,
    write_pdf,
    write_pptx,
    write_xlsx,
    zip_folder,
)

NOW = dt.datetime.fromisoformat("2026-11-20T12:00:00+08:00")
ORIGINALS = {  # path under source/: the title of its note
    "meetings/2026-09-22-globex-sync.vtt": "Globex sync",
    "meetings/kestrel-kickoff.srt": "Kestrel kickoff",
    "docs/handbook.docx": "Falcon warehouse handbook",
    "docs/osprey.pdf": "Osprey integration report",
    "docs/heron.pptx": "Heron pricing review",
    "docs/kite-costs.xlsx": "Kite fleet costs",
    "docs/kite-manual.epub": "Kite driver manual",
    "mail/plover.eml": "Plover budget",
    "mail/outer.msg": "outer subject",
    "slack/ops/2026-10-20.md": "#ops — 2026-10-20",
    "slack/ops/2026-10-21.md": "#ops — 2026-10-21",
}


def build_kb(root: Path) -> Path:
    kb = root / "kb"
    source = kb / "source"
    for folder in ("meetings", "docs", "mail"):
        (source / folder).mkdir(parents=True)
    shutil.copy(EXAMPLE_KB / "schema.yaml", kb / "schema.yaml")
    (source / "meetings/2026-09-22-globex-sync.vtt").write_text(VTT, encoding="utf-8")
    srt = "1\n00:00:00,500 --> 00:00:01,000\nRecorded 2026-11-01.\n\n" + SRT
    (source / "meetings/kestrel-kickoff.srt").write_text(srt, encoding="utf-8")
    write_docx(source / "docs/handbook.docx")
    write_pdf(source / "docs/osprey.pdf")
    write_pptx(source / "docs/heron.pptx")
    write_xlsx(source / "docs/kite-costs.xlsx")
    write_epub(source / "docs/kite-manual.epub")
    write_eml(source / "mail/plover.eml", budget_thread()[0])
    shutil.copy(MSG, source / "mail/outer.msg")
    export = zip_folder(slack_export(root / "acme"), root / "acme.zip")
    assert main(["--kb", str(kb), "import", "slack", str(export)]) == 0
    return kb


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory, pg_url: str) -> Iterator[IngestServer]:
    with serve_kb(build_kb(tmp_path_factory.mktemp("originals")), pg_url) as server:

        async def run() -> None:
            async with open_http(server.url, server.write_token, timeout=120) as session:
                memory = Memory(session)
                await IngestAgent(memory, await memory.start()).run()

        anyio.run(run)
        yield server


def ask(server: IngestServer, question: str) -> Answer:
    tokens = server.server.tokens
    assert tokens is not None
    secret = tokens.create(f"read-{uuid.uuid4().hex[:8]}", "*").secret

    async def run() -> Answer:
        async with open_http(server.url, secret, timeout=60) as memory:
            with anyio.fail_after(120):
                return await ReadAgent(memory, None).ask(question, now=NOW)

    return anyio.run(run)


def test_every_original_is_ingested_by_the_rules_with_its_date(ingested: IngestServer) -> None:
    entries = {e.path: e for e in Manifest(ingested.paths).entries()}
    assert {p: (e.status.value, e.extractor) for p, e in entries.items()} == dict.fromkeys(
        ORIGINALS, ("ingested", "rules")
    )
    assert {p: e.doc_date.isoformat() for p, e in entries.items()} == {
        "meetings/2026-09-22-globex-sync.vtt": "2026-09-22",
        "meetings/kestrel-kickoff.srt": "2026-11-01",
        "docs/handbook.docx": "2026-08-03",
        "docs/osprey.pdf": "2026-10-12",
        "docs/heron.pptx": "2026-09-30",
        "docs/kite-costs.xlsx": "2026-09-15",
        "docs/kite-manual.epub": "2026-06-15",
        "mail/plover.eml": "2026-10-14",
        "mail/outer.msg": "2016-11-15",
        "slack/ops/2026-10-20.md": "2026-10-20",
        "slack/ops/2026-10-21.md": "2026-10-21",
    }
    written = {
        p.relative_to(ingested.paths.source).as_posix() for p in ingested.paths.source.rglob("*.*")
    }
    assert written == set(ORIGINALS)  # nothing converted was written beside an original


def test_speakers_senders_and_posters_are_people_with_the_original_as_source(
    ingested: IngestServer,
) -> None:
    people = by_title(pages(ingested), "people")
    sources = {name: set(people[name].sources) for name in people}
    assert "meetings/2026-09-22-globex-sync.vtt" in sources.get("Bob Martinez", set()), sources
    assert "meetings/kestrel-kickoff.srt" in sources.get("Tom Becker", set()), sources
    assert "mail/plover.eml" in sources.get("Maria Lopez", set()), sources
    assert "mail/outer.msg" in sources.get("outer@foo.bar", set()), sources  # its recipient
    assert "slack/ops/2026-10-20.md" in sources.get("Priya Shah", set()), sources
    meetings = by_title(pages(ingested), "meetings")
    # a transcript records a meeting; an e-mail or a chat records none (its people wrote)
    assert set(meetings) == {"Globex sync", "Kestrel kickoff"}
    assert set(meetings["Globex sync"].fields["attendees"]) == {"Alice Chen", "Bob Martinez"}
    ledger = {e.path: e.reasons for e in Manifest(ingested.paths).entries()}
    assert ledger["mail/outer.msg"][0].startswith("no page of its own: genre email")
    assert ledger["meetings/kestrel-kickoff.srt"][0].startswith("meetings: genre transcript")


@pytest.mark.parametrize(
    ("question", "words", "original"),
    [
        ("When does the Pueblo warehouse go live?", "October 5", "meetings/2026-09-22-globex-sync.vtt"),
        ("Who owns the Kestrel rollout checklist?", "Tom Becker", "meetings/kestrel-kickoff.srt"),
        ("When do forklift drivers renew their Falcon safety badge?", "March", "docs/handbook.docx"),
        ("At how many trucks did the Osprey integration pass its load test?", "900", "docs/osprey.pdf"),
        ("What is the new Heron per-seat price?", "$14", "docs/heron.pptx"),
        ("What budget does the Plover project need?", "48,000", "mail/plover.eml"),
        ("How much do the Kite van leases cost?", "36000", "docs/kite-costs.xlsx"),
        ("By when do Kite drivers return the van keys?", "19:00", "docs/kite-manual.epub"),
        # a message without sender whose whole body is two words: its note is cited
        ("What is the outer subject email?", "outer subject", "mail/outer.msg"),
        ("When does the Magpie depot move to Denver?", "November 9", "slack/ops/2026-10-20.md"),
    ],
)  # fmt: skip
def test_the_read_agent_answers_from_each_original_and_cites_it(
    ingested: IngestServer, question: str, words: str, original: str
) -> None:
    answer = ask(ingested, question)
    assert words in answer.text, answer.text
    assert original in cited_originals(ingested, answer), answer.text


def cited_originals(server: IngestServer, answer: Answer) -> set[str]:
    """The source files an answer cites: outright (``source/<path>``; a markdown note's
    id is its path without ``.md``) or as the ``sources`` of a page it cites."""
    found: set[str] = set()
    for citation in answer.citations:
        if citation.id.startswith("source/"):
            path = citation.id.removeprefix("source/")
            found.add(path if (server.kb_dir / citation.id).is_file() else f"{path}.md")
        else:
            found.update(
                s.removeprefix("source/") for s in server.kb().get_page(citation.id).page.sources
            )
    return found
