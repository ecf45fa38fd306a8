"""The trust issue's attacks for ``bench_hostile`` (issue 30, items 2, 5, 6, 7 and 8).

Each returns one line saying what happened, so the report shows whether it was answered
correctly: a scoped writer keeps what it cannot see, no form of an out-of-scope id or
title reaches a scoped reader, refusals are audit rows, the console limits sign-ins and
sessions per token, a symlink loop read by 40 racing calls is a clear error, and a
1.9 MB note does not hold up ``source_pending``.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

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


async def _sign_in(client: httpx2.AsyncClient, secret: str) -> httpx2.Response:
    form = await client.get("/ui/login")
    nonce = re.search(r'name="csrf" value="([^"]+)"', form.text)
    return await client.post(
        "/ui/login", data={"csrf": nonce.group(1) if nonce else "", "token": secret}
    )


def run_leak_attacks(url: str, kb: Path, writer: str, timeout: float, timed: Timed) -> None:
    """Issue 44, item 3: the leaks that remained, each read by a ``people,meetings`` token."""
    from urllib.parse import quote

    from memserver.server.source_names import label

    tag = uuid.uuid4().hex[:6]
    command = _cli(kb)
    reader = create_token(command, f"bench-leaks-{tag}", "people,meetings")
    old, new = f"Lease the Harbor warehouse {tag}", f"Harbor depot contract {tag}"
    missing = f"Lease the Harbor silo {tag}"
    slug = f"2026-11-18-лизинг-харбор-{tag}"
    note = f"decisions/2026-11-03-harbor-lease-{tag}.md"

    async def session(secret: str, body: Callable[[MemoryClient], Awaitable[Any]]) -> Any:
        async with open_http(f"{url}/mcp", secret, timeout=timeout) as memory:
            return await body(memory)

    async def seed(memory: MemoryClient) -> str:
        did = f"decisions/{slug}"
        await memory.call(
            "kb_put_page",
            {
                "id": did,
                "page": {
                    "title": old,
                    "fields": {"date": "2026-11-18", "status": "accepted"},
                    "sources": [note],
                },
            },
        )
        person = await memory.call(
            "kb_put_page",
            {
                "folder": "people",
                "page": {
                    "title": f"Quinn Harbor {tag}",
                    "sources": [note],
                    "sections": {
                        "Summary": f"Pushed for [[{old}]] in {did}.",
                        "Role": f"Still talks about {old} every week.",
                    },
                    "timeline": [{"date": "2026-11-18", "text": "Argued.", "source": note}],
                    "open_questions": [
                        f"Console: /ui/page/decisions/{quote(slug)}",
                        f"Windows: knowledge\\decisions\\{slug}.md",
                        f"Full width: decisions／{slug}",
                        f"Slug alone: {slug}",
                    ],
                },
            },
        )
        view = await memory.call("kb_get_page", {"id": did})
        page = {k: view[k] for k in ("fields", "sections", "sources")}
        await memory.call(
            "kb_put_page",
            {"id": did, "page": {**page, "title": new}, "base_version": view["version"]},
        )
        return str(person["id"])

    person = anyio.run(session, writer, seed)
    forms = {
        "id": f"decisions/{slug}",
        "slug": slug,
        "percent-encoded slug": quote(slug),
        "old title": old,
        "new title": new,
        "note path": "harbor-lease",
    }

    async def echoes(memory: MemoryClient) -> str:
        said: dict[str, list[str]] = {}
        for name in (old, new, missing):
            brief = await memory.call("kb_brief", {"question": f"[[{name}]]"})
            query = await memory.call("kb_query", {"question": f"[[{name}]]"})
            resolve = await memory.call("kb_resolve", {"name": name})
            texts = [brief["question"], brief["text"].splitlines()[0], query["question"]]
            said[name] = [t.replace(name, "NAME") for t in (*texts, resolve["name"])]
        same = said[old] == said[new] == said[missing]
        return (
            f"{'ok' if same else 'FAILED'}: kb_brief, kb_query, kb_resolve echo a hidden "
            f"page's title and a missing one {'alike' if same else 'DIFFERENTLY'}: {said[old]}"
        )

    timed(3, "44: existence oracle (kb_query/brief/resolve)", lambda: session(reader, echoes))

    async def searched_for() -> str:
        shown = []
        async with httpx2.AsyncClient(base_url=url, timeout=30) as client:
            signed = await _sign_in(client, reader)
            for name in (old, missing):
                page = await client.get("/ui/", params={"q": f"[[{name}]]"})
                found = re.search(r"searched for “([^”]*)”", page.text)
                shown.append(html.unescape(found.group(1)).replace(name, "NAME") if found else None)
        same = shown[0] == shown[1] is not None
        return (
            f"{'ok' if same else 'FAILED'}: sign-in HTTP {signed.status_code}; the console "
            f"searched for {shown[0]!r} and {shown[1]!r}"
        )

    timed(3, "44: existence oracle (console searched for)", searched_for)

    async def read_forms(memory: MemoryClient) -> str:
        page = await memory.call("kb_get_page", {"id": person})
        history = await memory.call("kb_history", {"id": person, "version": 1})
        found = await memory.call("kb_query", {"question": f"Quinn Harbor {tag}"})
        text = json.dumps([page, history, found], ensure_ascii=False)
        leaks = [name for name, form in forms.items() if re.search(re.escape(form), text, re.I)]
        labelled = page["sources"] == [label(note)]
        return (
            f"{'FAILED: LEAKED ' + str(leaks) if leaks else 'ok: none'} of "
            f"{len(forms)} forms (percent-encoded URL, backslash, full-width ／, slug alone, "
            f"renamed title now and in history, note path) in kb_get_page, kb_history, "
            f"kb_query; sources shown as {page['sources']} ({'labels' if labelled else 'PATHS'})"
        )

    timed(3, "44: hidden page forms, note paths", lambda: session(reader, read_forms))


__all__ = ["run_leak_attacks", "run_trust_attacks"]
