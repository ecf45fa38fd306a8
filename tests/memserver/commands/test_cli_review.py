"""`memserver review` through the real CLI: conflicts (sources disagree) apart from
updates (a newer fact replaced an older one, which is history)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memserver.cli import main
from memserver.clients.embed import HashEmbedder
from memserver.kb.layout import KBPaths
from memserver.kb.page import Page
from memserver.store.knowledge_base import KnowledgeBase


def test_review_json_says_which_rows_are_conflicts_and_which_updates(
    example_kb: KBPaths,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with KnowledgeBase.open(
        example_kb.root, embedder=HashEmbedder(), database_url=database_url
    ) as kb:
        kb.put_page(
            "companies",
            Page(title="Initech", type="company", fields={"status": "customer"}),
            None,
            conflicts=[
                {"field": "contract_value", "old_value": 96000, "new_value": 120000,
                 "old_source": "a.md", "new_source": "b.md", "status": "unresolved"},
                {"field": "status", "old_value": "prospect", "new_value": "customer",
                 "old_source": "a.md", "new_source": "c.md", "status": "superseded"},
            ],
        )  # fmt: skip
    config = tmp_path / "config.yaml"
    config.write_text("embedding:\n  provider: hash\n  dims: 384\n", encoding="utf-8")
    monkeypatch.setenv("DATABASE_URL", database_url)
    args = ["--kb", str(example_kb.root), "--config", str(config), "review"]
    assert main([*args, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    [conflict] = listed["conflicts"]
    assert conflict["kind"] == "conflict" and (conflict["old_value"], conflict["new_value"]) == (
        96000,
        120000,
    )
    assert (conflict["old_source"], conflict["new_source"]) == ("a.md", "b.md")
    [update] = listed["updates"]
    assert update["kind"] == "update" and update["field"] == "status"
    assert main(args) == 0
    shown = capsys.readouterr().out
    assert "1 open conflicts" in shown and "1 latest updates" in shown
