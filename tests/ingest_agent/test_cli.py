"""The ingest-agent command: failures, budget, dry run, one file, watch and a killed run."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from ingest_agent.cli import main
from memserver.errors import UserError
from memserver.kb.manifest import Manifest
from memserver.terminal.program import parse_interval
from tests.fixtures.llm_server import LLMServer, Stall
from tests.ingest_agent.conftest import Ingest, IngestServer
from tests.ingest_agent.scripted import ScriptedModel
from tests.ingest_agent.test_agent_e2e import (
    assert_meetings_and_attendee_timelines,
    assert_no_duplicate_entries,
    pages,
)

REPO = Path(__file__).resolve().parents[2]
WAIT = 120.0  # seconds: the bound of every wait on a subprocess


def statuses(server: IngestServer) -> dict[str, str]:
    return {e.path: e.status.value for e in Manifest(server.paths).entries()}


def meeting(name: str, day: int) -> str:
    return json.dumps(
        {
            "pages": [
                {
                    "folder": "meetings",
                    "title": f"Sync {name}",
                    "fields": {"date": f"2026-09-0{day}", "attendees": ["Alice Chen"]},
                }
            ]
        }
    )


def test_watch_interval_is_read_with_its_unit_and_range() -> None:
    assert parse_interval("60s") == 60
    assert parse_interval("5m") == 300
    assert parse_interval("1h") == 3600
    assert parse_interval("500ms") == 0.5
    assert parse_interval("2") == 2
    for bad in ("soon", "0s", "48h"):
        with pytest.raises(UserError):
            parse_interval(bad)


def test_a_timed_out_model_leaves_its_note_to_the_rules_and_unknown_folders_are_dropped(
    small_server: IngestServer, ingest: Ingest, llm_server: LLMServer, tmp_path: Path
) -> None:
    model = ScriptedModel(llm_server)
    model.overrides = {
        "a.md": meeting("a", 1),
        "b.md": json.dumps({"pages": [{"folder": "invoices", "title": "INV-1"}]}),
        "c.md": lambda body: Stall(3.0, then=meeting("c", 3)),
        "d.md": meeting("d", 4),
    }
    config = tmp_path / "config.yaml"
    config.write_text(
        f"llm:\n  base_url: {llm_server.base_url}\n  model: {llm_server.model}\n  timeout: 0.5\n",
        encoding="utf-8",
    )
    status, summary = ingest(small_server, "--config", str(config))
    assert status == 0
    outcome = {s["path"]: s for s in summary["sources"]}
    assert [outcome[p]["status"] for p in ["a.md", "b.md", "c.md", "d.md"]] == ["ingested"] * 4
    # a page in a folder the schema lacks is dropped and counted, not a failed note
    assert outcome["b.md"]["dropped_count"] == 1 and "invoices" in outcome["b.md"]["dropped"][0]
    # past its deadline (0.5 s, retries included) the model is given up on for that note:
    # the rules extractor reads it and the ledger says why
    assert outcome["c.md"]["extractor"] == "rules"
    assert outcome["c.md"]["degraded"] == ["llm_timeout"]
    assert model.sources.count("b.md") == 1 and model.sources.count("c.md") == 1
    manifest = {e.path: e for e in Manifest(small_server.paths).entries()}
    assert manifest["b.md"].status.value == "ingested" and manifest["b.md"].dropped_count == 1
    assert "invoices" in manifest["b.md"].dropped[0]
    assert manifest["c.md"].status.value == "ingested"
    assert (manifest["c.md"].extractor, manifest["c.md"].degraded) == ("rules", ("llm_timeout",))
    assert manifest["d.md"].pages == ("people/alice-chen", "meetings/2026-09-04-sync-d")
    assert set(pages(small_server)) == {
        "people/alice-chen",
        "meetings/2026-09-01-sync-a",
        "meetings/2026-09-03-sync-c",
        "meetings/2026-09-04-sync-d",
    }


def test_the_budget_stops_the_run_before_spending(
    small_server: IngestServer, ingest: Ingest, llm_server: LLMServer
) -> None:
    ScriptedModel(llm_server)
    status, summary = ingest(small_server, "--budget", "50", llm=llm_server)
    assert status == 3
    assert "budget" in summary["stopped"]
    assert llm_server.requests == []
    assert set(statuses(small_server).values()) == {"pending"}


@pytest.fixture
def as_text(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., tuple[int, str]]:
    """``as_text(server, *args)``: the CLI without ``--json`` and without a model; its
    exit status and stdout."""

    def run(server: IngestServer, *args: str) -> tuple[int, str]:
        monkeypatch.setenv("MEMORY_TOKEN", server.write_token)
        monkeypatch.delenv("LLM_BASE_URL", raising=False)
        capsys.readouterr()
        status = main(["--url", server.url, *args])
        return status, capsys.readouterr().out

    return run


def test_dry_run_prints_pages_and_writes_nothing(
    small_server: IngestServer, as_text: Callable[..., tuple[int, str]]
) -> None:
    status, out = as_text(small_server, "--dry-run")
    assert status == 0
    assert "=== meetings/2026-09-01-sync-a\n---\ntitle: Sync a" in out
    assert out.count("=== people/alice-chen") == 4  # the same page, growing per source
    assert "4 ingested" not in out and "0 ingested" in out
    assert not list(small_server.paths.knowledge.rglob("*.md"))
    assert set(statuses(small_server).values()) == {"pending"}


def test_each_note_gets_its_line_as_it_finishes_then_the_totals(
    small_server: IngestServer, as_text: Callable[..., tuple[int, str]]
) -> None:
    status, out = as_text(small_server)
    assert status == 0
    lines = out.splitlines()
    notes = [line.split() for line in lines[:-1]]
    assert [(n[0], n[1], n[2]) for n in notes] == [
        ("ingested", f"{i}/4", f"{name}.md") for i, name in enumerate("abcd", start=1)
    ]
    assert notes and all(n[3] == "->" and n[5] == "page(s)" for n in notes)
    assert lines[-1].startswith("4 ingested, 0 failed") and "[rules]" in lines[-1]


def test_the_totals_name_each_note_that_could_not_be_taken_and_why(
    small_server: IngestServer, as_text: Callable[..., tuple[int, str]]
) -> None:
    (small_server.paths.source / "plans").mkdir()
    (small_server.paths.source / "plans" / "handbook.docx").write_bytes(b"PK\x03\x04 cut")
    status, out = as_text(small_server)
    last = out.splitlines()[-1]
    assert status == 1  # a failed note is a failed run
    assert last.startswith("4 ingested, 1 failed (plans/handbook.docx (handbook.docx is not")
    assert "not a valid zip archive" in last


def test_the_observer_hears_of_each_note_before_the_next_starts(
    small_server: IngestServer,
) -> None:
    import anyio

    from ingest_agent.agent import IngestAgent
    from ingest_agent.memory import Memory
    from ingest_agent.records import SourceOutcome
    from memserver.clients.mcp import open_http

    heard: list[tuple[str, str]] = []

    class Recorder:
        def started(self, total: int) -> None:
            heard.append(("started", str(total)))

        def reading(self, path: str) -> None:
            heard.append(("reading", path))

        def finished(self, outcome: SourceOutcome) -> None:
            heard.append((outcome.status, outcome.path))

    async def run() -> None:
        async with open_http(small_server.url, small_server.write_token) as client:
            memory = Memory(client)
            schema = await memory.start()
            await IngestAgent(memory, schema).run(observer=Recorder())

    anyio.run(run)
    expected: list[tuple[str, str]] = [("started", "4")]
    for name in "abcd":
        expected += [("reading", f"{name}.md"), ("ingested", f"{name}.md")]
    assert heard == expected


def test_file_ingests_one_source_only(small_server: IngestServer, ingest: Ingest) -> None:
    status, summary = ingest(small_server, "--file", "source/b.md")
    assert status == 0
    assert [s["path"] for s in summary["sources"]] == ["b.md"]
    ledger = statuses(small_server)
    assert ledger["b.md"] == "ingested"
    assert all(ledger.get(p, "pending") == "pending" for p in ("a.md", "c.md", "d.md"))


# -- subprocesses -------------------------------------------------------------------------


def agent_env(server: IngestServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "MEMORY_"))}
    env["MEMORY_TOKEN"] = server.write_token
    return env


def lines(stream: IO[str]) -> queue.Queue[str]:
    """The lines of a subprocess stream, read by a thread (so waits can be bounded)."""
    out: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:
            out.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return out


@pytest.fixture
def spawn() -> Iterator[Any]:
    procs: list[subprocess.Popen[str]] = []

    def start(server: IngestServer, *args: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ingest_agent.cli", "--url", server.url, *args],
            cwd=REPO,
            env=agent_env(server),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_watch_reingests_a_changed_file_and_ctrl_c_stops_cleanly(
    small_server: IngestServer, spawn: Any
) -> None:
    proc = spawn(small_server, "--watch", "0.2s", "--json")
    out = lines(proc.stdout)
    first = json.loads(out.get(timeout=WAIT))
    assert first["ingested"] == 4
    note = small_server.paths.source / "a.md"
    # Replaced in one step: written in place, a scan between the truncation and the write
    # would see an empty note (and ingest that first) while the agent polls every 0.2 s.
    changed = note.with_name(".a.md.tmp")
    changed.write_text(note.read_text(encoding="utf-8") + "\nA late addition.\n", encoding="utf-8")
    changed.replace(note)
    second = json.loads(out.get(timeout=WAIT))
    assert [(s["path"], s["status"]) for s in second["sources"]] == [("a.md", "ingested")]
    body = (small_server.paths.knowledge / "meetings" / "2026-09-01-sync-a.md").read_text()
    assert "A late addition." in body
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 130
    err = proc.stderr.read()
    assert "stopped" in err and "Traceback" not in err


def test_ctrl_c_during_a_slow_models_answer_stops_at_once_and_loses_nothing(
    small_server: IngestServer, llm_server: LLMServer, spawn: Any, tmp_path: Path
) -> None:
    """A local model can take minutes per answer: Ctrl-C must not wait for it (it waited
    up to llm.timeout, the model call's thread being joined before the process ended),
    and ``--json`` still says what was done."""
    model = ScriptedModel(llm_server)
    stall = lambda body: Stall(600.0, then=meeting("x", 9))  # noqa: E731
    model.overrides = {"a.md": meeting("a", 1), "b.md": stall, "c.md": stall, "d.md": stall}
    config = tmp_path / "config.yaml"
    config.write_text(
        f"llm:\n  base_url: {llm_server.base_url}\n  model: {llm_server.model}\n  timeout: 600\n",
        encoding="utf-8",
    )
    proc = spawn(small_server, "--config", str(config), "--json")
    deadline = time.monotonic() + WAIT
    pause = threading.Event()
    while len(model.sources) < 2:  # the first note done, the model thinking about the next
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the agent never asked about a second note"
        pause.wait(0.02)  # polls the scripted server's log; bounded by the deadline
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=WAIT) == 130  # well before the model's 600 s
    err = proc.stderr.read()
    assert "stopped" in err and "Traceback" not in err
    done = json.loads(proc.stdout.read())
    assert done["stopped"].startswith("interrupted by a signal")
    assert [(s["path"], s["status"]) for s in done["sources"]] == [("a.md", "ingested")]
    # nothing half-done: the note the model was reading is still to do
    assert statuses(small_server) == {
        "a.md": "ingested",
        "b.md": "pending",
        "c.md": "pending",
        "d.md": "pending",
    }


def test_a_killed_run_is_finished_by_the_next_without_duplicates(
    fresh_server: IngestServer, ingest: Ingest, spawn: Any
) -> None:
    proc = spawn(fresh_server, "--json")
    deadline = time.monotonic() + WAIT
    pause = threading.Event()
    while "ingested" not in statuses(fresh_server).values():
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "no source was ingested in time"
        pause.wait(0.02)  # polls the manifest the server writes; bounded by the deadline
    proc.kill()
    proc.wait(timeout=10)
    done = list(statuses(fresh_server).values()).count("ingested")
    assert 1 <= done < 28
    status, summary = ingest(fresh_server)
    assert status == 0 and summary["failed"] == 0
    assert summary["ingested"] == 28 - done
    assert set(statuses(fresh_server).values()) == {"ingested"}
    all_pages = pages(fresh_server)
    assert_meetings_and_attendee_timelines(all_pages)
    assert_no_duplicate_entries(all_pages)
    for entry in Manifest(fresh_server.paths).entries():
        assert set(entry.pages) <= set(all_pages), entry.path


def test_a_read_only_token_is_refused_in_one_line(
    small_server: IngestServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from memserver.server.tokens import TokenStore

    reader = TokenStore(small_server.kb().db).create("reader-only", "*").secret
    monkeypatch.setenv("MEMORY_TOKEN", reader)
    assert main(["--url", small_server.url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ingest-agent: error:") and "--write" in err
    assert "Traceback" not in err
    monkeypatch.setenv("MEMORY_TOKEN", "ms_not-a-token")
    assert main(["--url", small_server.url]) == 2
    assert "refused the token" in capsys.readouterr().err


def test_a_server_that_cannot_be_reached_is_one_line_a_try_then_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The issue's case: the server died under a pass and the agent ended in a 368-line
    exception group. Each try is one line; after the last, one line and exit status 1."""
    from ingest_agent import cli

    monkeypatch.setattr(cli, "PASS_BACKOFF", 0.01)
    monkeypatch.setenv("MEMORY_TOKEN", "ms_any")
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        assert main(["--url", url, "--rules"]) == 1
    tries = [r.getMessage() for r in caplog.records if r.name == "ingest_agent"]
    assert len(tries) == cli.PASS_ATTEMPTS - 1
    assert tries and all("the memory server is unavailable (ConnectError" in t for t in tries)
    assert tries and all("\n" not in t for t in tries)
    assert not any(r.exc_info for r in caplog.records)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"ingest-agent: cannot reach the memory server at {url} after 5")
