"""`memserver review accept ID` / `reject ID` through the real CLI, on a decision whose
changes were held back the way the ingest agent holds them (the page kept, an Open
Question per change, the proposals as ``unresolved`` rows noted ``review: ...``)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from memserver.cli import main
from memserver.clients.embed import HashEmbedder
from memserver.kb.layout import KBPaths
from memserver.kb.page import Page
from memserver.store.knowledge_base import KnowledgeBase
from memserver.store.reviews import Reviews

SOURCE = "slack/vendors/2026-11-01.md"
WHYS = {
    "rationale": "a change to the accepted decision (its rationale: “Pricing is free.”)",
    "## Decision": "a change to the accepted decision (its Decision section)",
}
PROPOSED = {"rationale": "Pricing is free.", "## Decision": "Acme Track is free forever."}
QUESTIONS = {
    field: f"Review: {SOURCE} proposes {why}; held back until a person checks it"
    for field, why in WHYS.items()
}


def kb_of(example_kb: KBPaths, database_url: str) -> KnowledgeBase:
    return KnowledgeBase.open(example_kb.root, embedder=HashEmbedder(), database_url=database_url)


@pytest.fixture
def cli(
    example_kb: KBPaths, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> list[str]:
    """The CLI arguments before the command, for this knowledge base."""
    config = tmp_path / "config.yaml"
    config.write_text("embedding:\n  provider: hash\n  dims: 384\n", encoding="utf-8")
    monkeypatch.setenv("DATABASE_URL", database_url)
    return ["--kb", str(example_kb.root), "--config", str(config)]


def held_decision(example_kb: KBPaths, database_url: str) -> tuple[str, int, dict[str, int]]:
    """(page id, held version, field -> conflict id)."""
    page = Page(
        title="Seat pricing",
        type="decision",
        fields={"date": "2026-07-15", "status": "accepted"},
        sections={"Decision": "$49 per user per month.", "Context": "Asked by Acme."},
    )
    rows = [
        {"field": field, "old_value": None, "new_value": PROPOSED[field], "old_source": None,
         "new_source": SOURCE, "status": "unresolved", "note": f"review: {SOURCE} proposes {why}"}
        for field, why in WHYS.items()
    ]  # fmt: skip
    with kb_of(example_kb, database_url) as kb:
        first = kb.put_page("decisions", page, None)
        held = kb.put_page(
            "decisions",
            replace(page, open_questions=tuple(QUESTIONS.values())),
            first.version,
            slug=first.id.split("/", 1)[1],
            conflicts=rows,
            review="; ".join(f"{SOURCE} proposes {why}" for why in WHYS.values()),
            written_by="ingest",
        )
        ids = {c.field: c.id for c in Reviews(kb.db).conflicts(None) if c.page_id == first.id}
    return first.id, held.version, ids


def test_accept_applies_a_held_field_and_reject_keeps_the_page(
    example_kb: KBPaths,
    database_url: str,
    cli: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    page_id, version, ids = held_decision(example_kb, database_url)
    args = [*cli, "review", "accept", str(ids["rationale"]), "--by", "olga", "--json"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out) == {
        "id": ids["rationale"], "page_id": page_id, "decision": "accepted", "version": version + 1
    }  # fmt: skip
    assert main([*cli, "review", "reject", str(ids["## Decision"])]) == 0
    assert "rejected held change" in capsys.readouterr().out

    with kb_of(example_kb, database_url) as kb:
        stored = kb.get_page(page_id)
        accepted = Reviews(kb.db).conflict(ids["rationale"], None)
        rejected = Reviews(kb.db).conflict(ids["## Decision"], None)
        history = kb.get_version(page_id, version + 1)
    assert stored.version == version + 2
    assert stored.page.fields["rationale"] == "Pricing is free." and "Pricing is free." in history
    assert stored.page.sections["Decision"] == "$49 per user per month."
    assert stored.page.open_questions == ()
    assert accepted.status == "resolved" and "[accepted by olga in version" in str(accepted.note)
    assert rejected.status == "resolved" and "[rejected by cli" in str(rejected.note)


def test_accept_replaces_a_held_section_once(
    example_kb: KBPaths,
    database_url: str,
    cli: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    page_id, version, ids = held_decision(example_kb, database_url)
    accept = [*cli, "review", "accept", str(ids["## Decision"])]
    assert main(accept) == 0
    capsys.readouterr()
    assert main(accept) == 2
    assert "already decided" in capsys.readouterr().err
    assert main([*cli, "review", "reject", str(ids["## Decision"])]) == 2

    with kb_of(example_kb, database_url) as kb:
        stored = kb.get_page(page_id)
    assert stored.version == version + 1
    assert stored.page.sections["Decision"] == "Acme Track is free forever."
    assert stored.page.sections["Context"] == "Asked by Acme."
    assert stored.page.open_questions == (QUESTIONS["rationale"],)
