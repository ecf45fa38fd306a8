"""Two memory servers over one PostgreSQL and one knowledge folder: writers on both at
once lose no update, every acknowledged write is on disk and in the index (and found
through the other server at once), no page file is ever half-written; two ingest
agents never ingest the same note at once and together ingest every note once."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from memserver.clients.mcp import MemoryClient, open_http
from memserver.errors import ToolCallError, ToolErrorKind
from memserver.kb.layout import KBPaths
from memserver.kb.manifest import Manifest, Status
from memserver.kb.page import parse_page
from tests.deploy.two_servers import Servers, two_servers

WRITERS_PER_SERVER = 3
ROUNDS = 6
PAGES_PER_WRITER = 4
DEADLINE = 300.0  # seconds for each concurrent phase
SHARED = "people/shared-writer"


@pytest.fixture
def servers(tmp_path: Path, database_url: str) -> Iterator[Servers]:
    with two_servers(tmp_path, database_url) as running:
        yield running


def person(title: str, role: str) -> dict[str, Any]:
    return {"title": title, "fields": {"role": role}, "sections": {"Summary": f"{title}: {role}."}}


async def put(memory: MemoryClient, page: dict[str, Any], base: int | None) -> dict[str, Any]:
    args: dict[str, Any] = {"folder": "people", "page": page}
    if base is not None:
        args["base_version"] = base
    return await memory.call("kb_put_page", args)


class FileWatcher:
    """Reads every page file over and over while the writers run: each must parse."""

    def __init__(self, knowledge: Path) -> None:
        self.knowledge = knowledge
        self.stop = threading.Event()
        self.reads = 0
        self.broken: list[str] = []
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.stop.is_set():
            for file in self.knowledge.rglob("*.md"):
                try:
                    text = file.read_text(encoding="utf-8")
                except FileNotFoundError:
                    continue
                try:
                    parse_page(text, source=str(file))
                except Exception as exc:  # a half-written file would not parse
                    self.broken.append(f"{file}: {exc}")
                self.reads += 1

    def __enter__(self) -> FileWatcher:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=30)


def test_writers_on_two_servers_lose_nothing_and_see_each_other_at_once(
    servers: Servers,
) -> None:
    kb = KBPaths.of(servers.kb)
    acked: list[int] = []  # versions of the shared page the writers were told they wrote
    conflicts: list[str] = []
    own: dict[str, tuple[int, str]] = {}  # page id -> (version, the other server's URL)

    async def same_page(url: str, name: str) -> None:
        async with open_http(url, servers.writer) as memory:
            for n in range(ROUNDS):
                version = (await memory.call("kb_get_page", {"id": SHARED}))["version"]
                try:
                    done = await put(memory, person("Shared Writer", f"{name} round {n}"), version)
                except ToolCallError as exc:
                    assert exc.kind is ToolErrorKind.CONFLICT, exc  # the loser is told
                    conflicts.append(name)
                else:
                    acked.append(done["version"])

    async def own_pages(url: str, other: str, name: str) -> None:
        async with (
            open_http(url, servers.writer) as memory,
            open_http(other, servers.writer) as there,
        ):
            for n in range(PAGES_PER_WRITER):
                title = f"Quillon {name} Number {n}"
                done = await put(memory, person(title, f"zyzzyva{name}x{n}"), None)
                own[done["id"]] = (done["version"], other)
                found = await there.call("kb_query", {"question": f"zyzzyva{name}x{n}"})
                assert done["id"] in json.dumps(found), f"{done['id']} not found through {other}"

    async def main() -> None:
        first, second = servers.urls
        async with open_http(first, servers.writer) as memory:
            created = await put(memory, person("Shared Writer", "start"), None)
        assert created["version"] == 1
        # A stale write is refused whichever server takes it.
        async with open_http(first, servers.writer) as a, open_http(second, servers.writer) as b:
            await put(b, person("Shared Writer", "from b"), 1)
            with pytest.raises(ToolCallError) as refused:
                await put(a, person("Shared Writer", "from a, stale"), 1)
            assert refused.value.kind is ToolErrorKind.CONFLICT
        acked.append(2)
        with anyio.fail_after(DEADLINE):
            async with anyio.create_task_group() as group:
                for i in range(WRITERS_PER_SERVER):
                    for url, other, side in ((first, second, "a"), (second, first, "b")):
                        group.start_soon(same_page, url, f"{side}{i}")
                        group.start_soon(own_pages, url, other, f"{side}{i}")

    with FileWatcher(kb.knowledge) as watcher:
        anyio.run(main)
    assert watcher.reads > 0 and watcher.broken == []

    # No lost update: every acknowledged write is its own version, one after another.
    assert sorted(acked) == list(range(2, 2 + len(acked)))
    history = subprocess.run(servers.command("history", SHARED, "--json"), env=servers.env,
                             capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    assert sorted(v["version"] for v in json.loads(history.stdout)["versions"]) == sorted(
        [1, *acked]
    )
    total = WRITERS_PER_SERVER * 2 * ROUNDS
    assert len(acked) - 1 + len(conflicts) == total  # each attempt: written, or told why not

    # Every acknowledged page is on disk, whole, and in the index at that version.
    assert len(own) == WRITERS_PER_SERVER * 2 * PAGES_PER_WRITER

    async def check_index() -> None:
        async with open_http(servers.urls[1], servers.writer) as memory:
            for page_id, (version, _) in sorted(own.items()):
                stored = await memory.call("kb_get_page", {"id": page_id})
                assert stored["version"] == version
                folder, slug = page_id.split("/")
                on_disk = parse_page(kb.page_path(folder, slug).read_text(encoding="utf-8"))
                assert on_disk.title == stored["title"]
            shared = await memory.call("kb_get_page", {"id": SHARED})
            assert shared["version"] == max(acked)
            text = kb.page_path("people", "shared-writer").read_text(encoding="utf-8")
            assert parse_page(text).fields["role"] == shared["fields"]["role"]

    anyio.run(check_index)


def test_two_ingest_agents_ingest_every_note_once_and_never_the_same_at_once(
    servers: Servers,
) -> None:
    def agent(url: str) -> subprocess.Popen[str]:
        env = {**servers.env, "MEMORY_TOKEN": servers.writer}
        return subprocess.Popen(
            [sys.executable, "-m", "ingest_agent.cli", "--config", str(servers.config),
             "--url", url, "--json"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    agents = [agent(url) for url in servers.urls]
    results = [a.communicate(timeout=DEADLINE) for a in agents]
    for process, (_, err) in zip(agents, results, strict=True):
        assert process.returncode == 0, err
    summaries = [json.loads(out) for out, _ in results]
    by_agent = [
        {s["path"] for s in summary["sources"] if s["status"] == "ingested"}
        for summary in summaries
    ]
    notes = {e.path for e in Manifest(KBPaths.of(servers.kb)).entries()}
    assert len(notes) == 28
    assert by_agent[0] | by_agent[1] == notes  # together: every note
    assert by_agent[0] & by_agent[1] == set()  # never one note twice
    assert [s["failed"] for s in summaries] == [0, 0]
    statuses = {e.status for e in Manifest(KBPaths.of(servers.kb)).entries()}
    assert statuses == {Status.INGESTED}
