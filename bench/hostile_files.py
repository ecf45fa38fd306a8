"""The files of the limits issue (44, item 4) for ``bench_hostile``: each dropped into the
live server's ``source/``, then one ``source_pending`` (a scan). One line each: the
ledger entry the file got, how long the scan took, and the converter's peak memory
(the worker processes under the server, sampled every 20 ms). Then twenty of them at
once (when the first and the last entry appeared) and the names no tool takes (a
newline, an escape character, a symlinked folder).

At the issue's sizes: a 150,000-cell workbook of one shared 2,000-character string,
PDFs whose streams unpack to 300 MiB through Flate, ``[/ASCIIHexDecode /FlateDecode]``,
a stream marked as an image and LZW, a 200,000-page PDF, 10 MB of nested ``<div>``, a
Slack export of 19,990 days.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import psutil

from memserver.clients.mcp import MemoryClient, open_http
from tests.fixtures import hostile_files as hostile

Timed = Callable[[int, str, Callable[[], Awaitable[str]]], None]
ITEM = 44
MIB = 1024 * 1024
FOLDER = "hostile44"


def issue_files() -> dict[str, bytes]:
    """The issue's files, by the name each is dropped in as."""
    return {
        "shared-string.xlsx": hostile.shared_string_xlsx(150_000),
        "flate-bomb.pdf": hostile.flate_bomb(300 * MIB),
        "hex-flate-chain.pdf": hostile.hex_flate_bomb(300 * MIB),
        "marked-as-image.pdf": hostile.image_marked_bomb(300 * MIB),
        "lzw-bomb.pdf": hostile.lzw_bomb(300 * MIB),
        "200000-pages.pdf": hostile.pdf_of_pages(200_000),
        "nested-divs.html": hostile.nested_html(2_000_000),
        "slack-19990-days.zip": hostile.slack_days(19_990),
    }


class ConverterMemory:
    """The largest resident memory of any process under the server while it runs
    (the converter workers; sampled in a thread)."""

    def __init__(self, server_pid: int) -> None:
        self.server = psutil.Process(server_pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            try:
                children = self.server.children(recursive=True)
            except psutil.Error:
                continue
            for child in children:
                try:
                    if "memserver.convert.worker" in " ".join(child.cmdline()):
                        self.peak = max(self.peak, int(child.memory_info().rss))
                except psutil.Error:
                    continue

    def __enter__(self) -> ConverterMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def _entries(kb: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads((kb / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    sources = data.get("sources") if isinstance(data, dict) else None
    return sources if isinstance(sources, dict) else {}


def _shown(entry: dict[str, object] | None) -> str:
    if entry is None:
        return "NO LEDGER ENTRY"
    error = " ".join(str(entry.get("error") or "").split()[:16])
    return f"{entry.get('status')}: {error}" if error else str(entry.get("status"))


def run_file_attacks(
    url: str, kb: Path, writer: str, timeout: float, timed: Timed, server_pid: int
) -> None:
    folder = kb / "source" / FOLDER
    folder.mkdir(parents=True, exist_ok=True)

    async def scan(memory: MemoryClient) -> None:
        await memory.call("source_pending", {"limit": 1})

    async def session(body: Callable[[MemoryClient], Awaitable[str]]) -> str:
        async with open_http(f"{url}/mcp", writer, timeout=timeout) as memory:
            return await body(memory)

    for name, data in issue_files().items():
        (folder / name).write_bytes(data)

        async def one(memory: MemoryClient, name: str = name, size: int = len(data)) -> str:
            with ConverterMemory(server_pid) as converter:
                await scan(memory)
            entry = _entries(kb).get(f"{FOLDER}/{name}")
            return f"{_shown(entry)} [{size / MIB:.1f} MB file; converter peak {converter.peak / MIB:.0f} MB]"

        timed(ITEM, f"§4 {name}: scan", lambda one=one: session(one))  # type: ignore[misc]

    # twenty at once: each entry as its file is done
    many = kb / "source" / f"{FOLDER}-twenty"
    many.mkdir(exist_ok=True)
    for n in range(20):
        make = (hostile.flate_bomb, hostile.hex_flate_bomb, hostile.lzw_bomb)[n % 3]
        (many / f"bomb-{n:02d}.pdf").write_bytes(make((40 + n) * MIB))

    async def twenty(memory: MemoryClient) -> str:
        started = time.perf_counter()
        seen: dict[str, float] = {}

        async def watch() -> None:
            while len(seen) < 20:
                for path in _entries(kb):
                    if path.startswith(f"{FOLDER}-twenty/") and path not in seen:
                        seen[path] = time.perf_counter() - started
                await anyio.sleep(0.05)

        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            await scan(memory)
            with anyio.move_on_after(5):
                while len(seen) < 20:
                    await anyio.sleep(0.05)
            group.cancel_scope.cancel()
        failed = sum(
            1
            for p, e in _entries(kb).items()
            if p.startswith(f"{FOLDER}-twenty/") and e.get("status") == "failed"
        )
        times = sorted(seen.values())
        first = f"{times[0]:.1f}" if times else "-"
        last = f"{times[-1]:.1f}" if times else "-"
        return (
            f"{len(seen)}/20 entries ({failed} failed); first after {first} s, last after {last} s"
        )

    timed(ITEM, "§4 twenty bombs dropped at once: scan", lambda: session(twenty))

    # names no tool takes, and a symlinked folder
    names = ("line\nbreak.md", "escape\x1b[31mred.md")
    for name in names:
        (folder / name).write_text("hostile name", encoding="utf-8")
    outside = kb.parent / "outside-source"
    outside.mkdir(exist_ok=True)
    (outside / "note.md").write_text("outside", encoding="utf-8")
    (folder / "linked").symlink_to(outside, target_is_directory=True)

    async def named(memory: MemoryClient) -> str:
        await scan(memory)
        shown = {
            p: e
            for p, e in _entries(kb).items()
            if p
            in (f"{FOLDER}/line\\nbreak.md", f"{FOLDER}/escape\\x1b[31mred.md", f"{FOLDER}/linked")
        }
        printable = all(p.isprintable() for p in shown)
        statuses = sorted({str(e.get("status")) for e in shown.values()})
        pending = await memory.call("source_pending", {"limit": 200})
        raw = [s for s in pending.get("sources") or () if not str(s.get("path", "")).isprintable()]
        return (
            f"{len(shown)}/3 entries {statuses}, names printable: {printable}; "
            f"pending with a raw control character: {len(raw)}"
        )

    timed(ITEM, "§4 newline, ESC, symlinked folder: scan", lambda: session(named))
    shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(many, ignore_errors=True)
    shutil.rmtree(outside, ignore_errors=True)
    os.sync()
