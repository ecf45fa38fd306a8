"""config.example.yaml and config.dev.yaml, each started from a copy, and ``--config``
reaching the stdio memory server the agents start (one clear stop when it is set up wrong)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from memserver.clients.config import load_settings
from memserver.commands.serve import DEFAULT_ADDR
from memserver.kb.layout import KBPaths
from memserver.kb.manifest import Manifest, Status

REPO = Path(__file__).resolve().parents[1]
WAIT = 300.0  # seconds: the bound of each agent run (the local embedder on a loaded machine)
NOTE = "decisions/2026-07-15-pricing-per-seat.md"


def copy_config(name: str, tmp_path: Path) -> Path:
    target = tmp_path / "config" / "config.yaml"
    target.parent.mkdir(exist_ok=True)
    shutil.copyfile(REPO / name, target)
    return target


def small_kb(tmp_path: Path, notes: tuple[str, ...] = (NOTE,)) -> KBPaths:
    """The example's schema with a few of its notes."""
    kb = KBPaths.of(tmp_path / "kb")
    kb.source.mkdir(parents=True)
    shutil.copyfile(REPO / "example_kb" / "schema.yaml", kb.schema)
    for note in notes:
        (kb.source / note).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / "example_kb" / "source" / note, kb.source / note)
    return kb


def agent_env(database_url: str) -> dict[str, str]:
    """This environment without a model, a memory server or a config of its own."""
    dropped = ("LLM_", "MEMORY_", "EMBEDDING_", "READ_AGENT_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    return {**env, "DATABASE_URL": database_url}


def run(module: str, *argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )


def statuses(kb: KBPaths) -> dict[str, Status]:
    return {e.path: e.status for e in Manifest(kb).entries()}


def test_config_example_copied_as_is_points_at_the_server_and_runs_the_agent(
    tmp_path: Path, database_url: str
) -> None:
    config = copy_config("config.example.yaml", tmp_path)
    settings = load_settings(config, env={})
    assert settings.mcp.base_url == f"http://{DEFAULT_ADDR}/mcp"  # `memserver serve`'s
    assert settings.llm is None  # no paid model unless asked for
    assert settings.embedding.options["provider"] == "local"
    kb = small_kb(tmp_path)
    done = run("ingest_agent.cli", "--config", str(config), "--kb", str(kb.root), "--json",
               env=agent_env(database_url))  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["ingested"] == 1 and summary["failed"] == 0
    assert statuses(kb) == {NOTE: Status.INGESTED}


def test_config_dev_copied_as_is_ingests_and_answers_offline(
    tmp_path: Path, database_url: str
) -> None:
    config = copy_config("config.dev.yaml", tmp_path)
    assert load_settings(config, env={}).llm is None
    kb = small_kb(tmp_path)
    env = agent_env(database_url)
    done = run("ingest_agent.cli", "--config", str(config), "--kb", str(kb.root), env=env)
    assert done.returncode == 0, done.stderr
    assert "1 ingested, 0 failed" in done.stdout
    # The stdio server read the file: the index holds the hash embedder's vectors.
    stats = run("memserver.cli", "--kb", str(kb.root), "--config", str(config), "stats",
                "--json", env=env)  # fmt: skip
    assert json.loads(stats.stdout)["embedding"]["model"].startswith("hash")
    asked = run("read_agent.cli", "--config", str(config), "--kb", str(kb.root), "ask", "--json",
                "When was per-seat pricing decided for Acme Track?", env=env)  # fmt: skip
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)["answer"]
    assert "per-seat" in answer and "2026-07-" in answer, answer  # dated, from the note
    assert re.search(r"\[[a-z]+/[a-z0-9-]+\]", answer), answer  # and cited


def test_a_server_set_up_wrong_stops_the_run_with_one_message_and_fails_no_note(
    tmp_path: Path, database_url: str
) -> None:
    dev = copy_config("config.dev.yaml", tmp_path)
    kb = small_kb(tmp_path)
    env = agent_env(database_url)
    indexed = run("memserver.cli", "--kb", str(kb.root), "--config", str(dev), "reindex", env=env)
    assert indexed.returncode == 0, indexed.stderr  # the index now holds hash vectors
    notes = ("team/2026-06-03-team-changes.md", "updates/2026-06-26-weekly-update.md")
    for note in notes:
        (kb.source / note).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / "example_kb" / "source" / note, kb.source / note)
    local = tmp_path / "local.yaml"  # the local embedder: not what the index was built with
    local.write_text("embedding:\n  provider: local\n", encoding="utf-8")

    done = run("ingest_agent.cli", "--config", str(local), "--kb", str(kb.root), env=env)
    assert done.returncode == 2
    # One line from the agent (the stdio server's own log may warn before it).
    lines = [line for line in done.stderr.splitlines() if line.startswith("ingest-agent:")]
    assert len(lines) == 1, done.stderr
    assert "cannot ingest anything" in lines[0]
    assert "embedding model changed from hash:384" in lines[0]
    assert "memserver reindex --force" in lines[0] and "Traceback" not in done.stderr
    assert set(statuses(kb).values()) == {Status.PENDING}
    assert len(statuses(kb)) == 3  # nothing marked failed: the next run takes them all
