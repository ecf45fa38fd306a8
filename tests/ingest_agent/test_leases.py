"""A lease left by an agent that died on this host does not hold its note back; a lease of
a live agent (or one on another host) does."""

from __future__ import annotations

import socket
import subprocess
import sys

from memserver.kb.manifest import Manifest
from memserver.store.leases import SourceLeases
from tests.ingest_agent.conftest import Ingest, IngestServer


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(timeout=60)
    return child.pid


def here(pid: int) -> str:
    return f"ingest-agent@{socket.gethostname()}:{pid}"


def test_a_lease_of_an_agent_killed_on_this_host_is_taken_over(
    small_server: IngestServer, ingest: Ingest
) -> None:
    leases = SourceLeases(small_server.kb().db)
    assert leases.claim("a.md", here(dead_pid())) != ""
    assert leases.claim("b.md", "ingest-agent@another-host:4242") == (
        "ingest-agent@another-host:4242"
    )
    alive = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        assert leases.claim("c.md", here(alive.pid)) == here(alive.pid)
        status, summary = ingest(small_server)
    finally:
        alive.communicate(timeout=60)  # its stdin closes: it ends
    assert status == 0 and summary["failed"] == 0, summary
    done = {e.path: e.status.value for e in Manifest(small_server.paths).entries()}
    assert done == {"a.md": "ingested", "b.md": "pending", "c.md": "pending", "d.md": "ingested"}
    assert set(leases.held()) == {"b.md", "c.md"}
