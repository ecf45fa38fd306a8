"""docker-compose.yml as written: its services run as host processes (no Docker here,
see tests/deploy/compose_host.py) come up, ingest the example and answer with a citation
through the read agent's key; and what the file promises (healthchecks, no root, no
install at start, laya only under its profile) holds."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from memserver.kb.layout import KBPaths
from memserver.kb.manifest import Manifest, Status
from tests.deploy.compose_host import REPO, HostStack, commands, load_compose

COMPOSE = REPO / "docker-compose.yml"
INGEST_DEADLINE = 420.0  # seconds for the 28 example notes on a loaded 2-core machine
# The offline config (hash embedder): the stack's own knob, MEMORY_CONFIG.
VARIABLES = {"MEMORY_CONFIG": "/app/config.dev.yaml"}
LONG_RUNNING = ("postgres", "memserver", "ingest-agent", "read-agent", "laya")


def test_every_long_running_service_has_a_healthcheck_and_init_runs_once() -> None:
    services = load_compose(COMPOSE)["services"]
    assert sorted(services) == sorted((*LONG_RUNNING, "init"))
    missing = [n for n in LONG_RUNNING if not (services[n].get("healthcheck") or {}).get("test")]
    assert missing == []
    assert services["init"]["restart"] == "no" and "healthcheck" not in services["init"]
    for name in ("memserver", "ingest-agent", "read-agent"):
        assert "init" in services[name]["depends_on"] or "memserver" in services[name]["depends_on"]


def test_nothing_runs_as_root_or_installs_at_start() -> None:
    services = load_compose(COMPOSE)["services"]
    built = [n for n, s in services.items() if s.get("build")]
    assert sorted(built) == ["ingest-agent", "init", "laya", "memserver", "read-agent"]
    assert [n for n in built if n != "laya" and services[n].get("user") != "10001:10001"] == []
    for dockerfile in ("Dockerfile", "Dockerfile.laya"):
        lines = (REPO / dockerfile).read_text(encoding="utf-8").splitlines()
        users = [line.split()[1] for line in lines if line.startswith("USER ")]
        assert users == ["app"], dockerfile  # the last USER is the one that runs
    assert [c for c in commands(load_compose(COMPOSE)) if "pip install" in c] == []
    laya = services["laya"]
    assert laya["profiles"] == ["laya"] and re.search(
        r"==\d", (REPO / "Dockerfile.laya").read_text()
    )
    assert services["memserver"]["environment"]["LAYA_BASE_URL"] == "${LAYA_BASE_URL:-}"


@pytest.fixture
def stack(tmp_path: Path, database_url: str) -> Iterator[HostStack]:
    running = HostStack(COMPOSE, database_url, tmp_path, VARIABLES)
    try:
        yield running
    finally:
        running.down()


def example_untouched() -> tuple[bool, ...]:
    root = REPO / "example_kb"
    return tuple((root / name).exists() for name in ("knowledge", "manifest.json", ".memserver"))


def wait_ingested(kb: KBPaths, expected: int) -> dict[str, Status]:
    deadline = time.monotonic() + INGEST_DEADLINE
    seen: dict[str, Status] = {}
    while time.monotonic() < deadline:
        if kb.manifest.is_file():
            seen = {e.path: e.status for e in Manifest(kb).entries()}
            if len(seen) == expected and set(seen.values()) <= {Status.INGESTED, Status.FAILED}:
                return seen
        time.sleep(1.0)  # polling the ledger the agent writes, bounded by the deadline
    raise AssertionError(f"not every note ingested in {INGEST_DEADLINE}s: {seen}")


def test_the_stack_comes_up_as_written_ingests_the_example_and_answers_with_a_key(
    stack: HostStack,
) -> None:
    before = example_untouched()
    stack.up()
    for name in ("memserver", "ingest-agent", "read-agent"):
        stack.wait_healthy(name)

    kb = KBPaths.of(stack.volume("kb"))
    secrets = stack.volume("secrets")
    assert (kb.schema).is_file()  # seeded from example_kb on first start
    notes = sorted(p for p in (REPO / "example_kb" / "source").rglob("*.md"))
    statuses = wait_ingested(kb, len(notes))
    assert set(statuses.values()) == {Status.INGESTED}
    assert sorted(kb.knowledge.rglob("*.md"))  # pages were written into the volume
    assert example_untouched() == before  # never into the repository's example

    key = (secrets / "read-agent.key").read_text(encoding="utf-8").strip()
    assert oct((secrets / "read-agent.key").stat().st_mode & 0o777) == "0o600"
    agent = stack.url("read-agent", "8788")
    question = {"question": "When was per-seat pricing for Acme Track decided?"}
    refused = httpx2.post(f"{agent}/ask", json=question, timeout=60)
    assert refused.status_code == 401
    asked = httpx2.post(
        f"{agent}/ask", json=question, headers={"Authorization": f"Bearer {key}"}, timeout=120
    )
    assert asked.status_code == 200, asked.text
    answer = asked.json()["answer"]
    assert re.search(r"\[[a-z]+/[a-z0-9-]+\]", answer) and "2026-07" in answer, answer

    # The next `docker compose up` runs init again: the same secrets, still accepted.
    saved = {p.name: p.read_text() for p in secrets.iterdir()}
    again = stack.run_once("init")
    assert again.returncode == 0, again.stderr
    assert {p.name: p.read_text() for p in secrets.iterdir()} == saved
    assert stack.healthy("ingest-agent") and stack.healthy("read-agent")
