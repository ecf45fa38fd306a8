"""The trust issue's attacks for ``bench_hostile`` (issue 30, items 2, 5, 6, 7 and 8).

Each returns one line saying what happened, so the report shows whether it was answered
correctly: a scoped writer keeps what it cannot see, no form of an out-of-scope id or
title reaches a scoped reader, refusals are audit rows, the console limits sign-ins and
sessions per token, a symlink loop read by 40 racing calls is a clear error, and a
1.9 MB note does not hold up ``source_pending``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import httpx2

from bench.common import create_token
from memserver.clients.mcp import MemoryClient, open_http

Timed = Callable[[int, str, Callable[[], Awaitable[str]]], None]

FORMS = (
    "`{id}`",
    "**{id}**",
    "_{id}_",
    "{id}#context",
    "{id}?v=1",
    "../{id}.md",
    "knowledge/{id}.md",
    "/ui/page/{id}",
    "{id}—see there",
    "{Id}",
    "[[{title}]]",
    "“{title}” ({id})",
)


def _cli(kb: Path) -> list[str]:
    config = kb.parent / "config.yaml"
    return [sys.executable, "-m", "memserver.cli", "--kb", str(kb), "--config", str(config)]


def run_trust_attacks(url: str, kb: Path, writer: str, timeout: float, timed: Timed) -> None:
    tag = uuid.uuid4().hex[:6]
    command = _cli(kb)
    decider = create_token(command, f"bench-decider-{tag}", "decisions", write=True)
    people_reader = create_token(command, f"bench-people-{tag}", "people,meetings")

    async def session(secret: str, body: Callable[[MemoryClient], Awaitable[str]]) -> str:
        async with open_http(f"{url}/mcp", secret, timeout=timeout) as memory:
            return await body(memory)

    title = f"Hostile pricing {tag}"

    async def seed(memory: MemoryClient) -> str:
        decision = await memory.call(
            "kb_put_page",
            {
                "folder": "decisions",
                "page": {
                    "title": title,
                    "fields": {"date": "2026-07-15", "status": "accepted", "decided_by": ["Bob"]},
                    "sources": ["notes/a.md", "people/bob-martinez.md", "notes/b.md"],
                    "sections": {"Decision": "Priced per seat.", "Context": "Asked by Bob."},
                },
            },
        )
        did = decision["id"]
        values = {"id": did, "Id": did.capitalize(), "title": title}
        await memory.call(
            "kb_put_page",
            {
                "folder": "people",
                "page": {
                    "title": f"Hostile named {tag}",
                    "open_questions": [f.format(**values) for f in FORMS],
                },
            },
        )
        return str(did)

    did = anyio.run(session, writer, seed)

    # 2: a scoped writer reads, changes one sentence, writes back
    async def scoped_write(memory: MemoryClient) -> str:
        view = await memory.call("kb_get_page", {"id": did})
        page = {k: view[k] for k in ("title", "fields", "sources", "timeline", "open_questions")}
        page["sections"] = {**view["sections"], "Decision": "Priced per seat, yearly."}
        await memory.call("kb_put_page", {"id": did, "page": page, "base_version": view["version"]})
        return f"writer saw decided_by: {'decided_by' in view['fields']}"

    async def check_kept(memory: MemoryClient) -> str:
        page = await memory.call("kb_get_page", {"id": did})
        kept = page["fields"].get("decided_by") == ["Bob"] and len(page["sources"]) == 3
        return f"decided_by and the people source {'kept' if kept else 'LOST'}"

    async def item2() -> str:
        saw = await session(decider, scoped_write)
        return f"ok: {saw}; {await session(writer, check_kept)}"

    timed(2, "scoped writer edits a decision (decided_by)", item2)

    # 6: every form of an out-of-scope id or title
    async def read_forms(memory: MemoryClient) -> str:
        found = await memory.call("kb_query", {"question": f"Hostile named {tag}"})
        text = json.dumps(found, ensure_ascii=False)
        leaks = [w for w in (did, did.split("/")[1], title) if re.search(re.escape(w), text, re.I)]
        return f"{len(FORMS)} forms read: {'LEAKED ' + str(leaks) if leaks else 'no id or title'}"

    timed(6, f"{len(FORMS)} forms of a hidden id/title", lambda: session(people_reader, read_forms))

    # 7: refusals are audit rows
    async def refusals() -> str:
        since = dt.datetime.now(dt.UTC).isoformat()
        wrong = f"ms_bench-wrong-{tag}"
        async with httpx2.AsyncClient(base_url=url, timeout=30) as client:
            codes = [
                (await client.post("/mcp", content=b"{}", headers=h)).status_code
                for h in ({}, {"Authorization": f"Bearer {wrong}"}, {"Host": "evil.example"})
            ]
        out = subprocess.run(
            [*command, "audit", "--since", since, "--json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        entries = json.loads(out)["entries"]
        rows = [r for r in entries if str(r["outcome"]).startswith("refused:")]
        secret_kept = wrong in out
        return f"HTTP {codes}; {len(rows)} refusal rows; secret in log: {secret_kept}"

    timed(7, "no token, wrong token, foreign Host: rows", refusals)

    # 5: the console's sign-in limit and per-token session cap
    async def console() -> str:
        async def sign_in(client: httpx2.AsyncClient, secret: str) -> httpx2.Response:
            form = await client.get("/ui/login")
            nonce = re.search(r'name="csrf" value="([^"]+)"', form.text)
            data = {"csrf": nonce.group(1) if nonce else "", "token": secret}
            return await client.post("/ui/login", data=data)

        async with httpx2.AsyncClient(base_url=url, timeout=30) as admin:
            first = await sign_in(admin, writer)
            reader = create_token(command, f"bench-console-{tag}", "people")
            for _ in range(100):
                async with httpx2.AsyncClient(base_url=url, timeout=30) as other:
                    await sign_in(other, reader)
            still = (await admin.get("/ui/")).status_code
            codes: dict[int, int] = {}
            async with httpx2.AsyncClient(base_url=url, timeout=30) as guesser:
                for n in range(40):
                    code = (await sign_in(guesser, f"ms_guess{n}-{tag}")).status_code
                    codes[code] = codes.get(code, 0) + 1
                right = await sign_in(guesser, writer)
        shown = ", ".join(f"{n}x {c}" for c, n in sorted(codes.items()))
        return (
            f"admin {first.status_code}, still signed in after 100 reader sign-ins: HTTP {still}; "
            f"40 wrong: {shown}; then the right one: {right.status_code} "
            f"Retry-After {right.headers.get('retry-after')}"
        )

    timed(5, "console: 100 sign-ins, 40 wrong tokens", console)

    # 8: racing reads of a symlink loop; a 1.9 MB note and source_pending
    loops = kb / "source" / f"loops-{tag}"
    loops.mkdir(parents=True)
    os.symlink("b.md", loops / "a.md")
    os.symlink("a.md", loops / "b.md")

    async def racing(memory: MemoryClient) -> str:
        texts: list[str] = []

        async def read() -> None:
            result = await memory.call_result("source_read", {"path": f"loops-{tag}/a.md"})
            texts.append(result.content[0].text if result.content else "")  # type: ignore[union-attr]

        async with anyio.create_task_group() as group:
            for _ in range(40):
                group.start_soon(read)
        generic = sum("Error executing tool" in t for t in texts)
        return f"{len(texts)} answers, {generic} generic; e.g. {texts[0][:70]!r}"

    timed(8, "40 racing source_read of a symlink loop", lambda: session(writer, racing))
    (loops / "a.md").unlink()
    (loops / "b.md").unlink()
    loops.rmdir()
    big = kb / "source" / f"big-{tag}.md"
    big.write_text(
        " ".join(f"Shipment {n} left the depot on time." for n in range(52_000)), "utf-8"
    )

    async def pending(memory: MemoryClient) -> str:
        listed = await memory.call("source_pending", {"limit": 5})
        return f"ok: indexing in the background: {listed['indexing']}"

    timed(
        8,
        f"{big.stat().st_size / 1e6:.1f} MB note: source_pending",
        lambda: session(writer, pending),
    )
    big.unlink()


__all__ = ["run_trust_attacks"]
