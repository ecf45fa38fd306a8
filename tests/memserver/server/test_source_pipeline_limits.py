"""The source pipeline under awkward notes: a path that cannot be followed is a clear
error for every racing reader, and a large note is indexed in the background."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio

from memserver.clients.mcp import MemoryClient, open_http, result_text
from tests.fixtures.own_database import OwnServer, serve_on_own_database

TIMEOUT = 180


def _run(own: OwnServer, secret: str, body: Any) -> Any:
    async def main() -> Any:
        with anyio.fail_after(TIMEOUT):
            async with open_http(f"{own.base_url}/mcp", secret) as memory:
                return await body(memory)

    return anyio.run(main)


def test_racing_reads_of_a_path_that_cannot_be_followed_get_a_clear_error(
    pg_scratch: Path,
) -> None:
    with serve_on_own_database(pg_scratch) as own:
        secret = own.tokens.create("reader", "*", write=True).secret
        loops = own.server.services.paths.source / "loops"
        loops.mkdir()
        os.symlink("b.md", loops / "a.md")
        os.symlink("a.md", loops / "b.md")

        async def body(memory: MemoryClient) -> list[Any]:
            results: list[Any] = []

            async def read() -> None:
                results.append(await memory.call_result("source_read", {"path": "loops/a.md"}))

            async with anyio.create_task_group() as group:
                for _ in range(40):
                    group.start_soon(read)
            return results

        results = _run(own, secret, body)
    assert len(results) == 40
    for result in results:
        text = result_text(result)
        assert result.is_error and "Error executing tool" not in text
        assert "loops/a.md" in text and "loop" in text.lower(), text
        assert result.structured_content["error"]["kind"] == "invalid"


def test_a_large_note_is_indexed_in_the_background(pg_scratch: Path) -> None:
    """Past the indexer's threshold (``BACKGROUND_BYTES``, 256 KB; lowered here to keep
    the test short: bench_hostile reads a 1.9 MB note)."""
    sentences = [f"Shipment {n} left the depot on time." for n in range(1_000)]
    sentences[432] = "The zebra-crate left Ulaanbaatar by the night train."
    with serve_on_own_database(pg_scratch) as own:
        secret = own.tokens.create("ingester", "*", write=True).secret
        own.server.services.sources.background_bytes = 16 * 1024
        note = own.server.services.paths.source / "big-2026-09-01.md"
        note.write_text(" ".join(sentences), "utf-8")
        assert note.stat().st_size > 16 * 1024

        async def listing(memory: MemoryClient) -> dict[str, Any]:
            return await memory.call("source_pending", {"limit": 1000})

        pending = _run(own, secret, listing)
        assert own.server.services.sources.wait(TIMEOUT)  # bounded; the index catches up

        async def search(memory: MemoryClient) -> tuple[dict[str, Any], dict[str, Any]]:
            found = await memory.call(
                "kb_query", {"question": "zebra-crate night train", "include_sources": True}
            )
            return found, await memory.call("source_pending", {"limit": 1000})

        found, again = _run(own, secret, search)
    assert pending["indexing"] is True
    assert "big-2026-09-01.md" in [s["path"] for s in pending["sources"]]
    assert "big-2026-09-01.md" in str(found)
    assert again["indexing"] is True  # still waiting to be ingested, so indexed aside again
