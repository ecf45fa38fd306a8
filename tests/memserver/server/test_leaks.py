"""The leaks a scoped token could still read: what the caller said is never redacted (so
its echo tells nothing), and no other way of writing a hidden page's id or title, nor a
note's path, reaches a token that may not see them.

A ``people,meetings`` token reads a person's page that names a hidden decision in every
remaining form: a percent-encoded console URL, a backslash path, a full-width slash, the
slug alone, and the title it had before it was renamed (as a wiki link and as a plain
mention, now and in the page's history).
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any
from urllib.parse import quote

import pytest

from memserver.clients.mcp import MemoryClient
from memserver.server.source_names import label
from tests.fixtures.server import RunningServer, run_session

NOTE = "decisions/2026-11-03-harbor-lease-{tag}.md"


@pytest.fixture(scope="module")
def hidden(mcp_server: RunningServer) -> dict[str, str]:
    _, admin = mcp_server.token("*", write=True, name="admin")
    tag = uuid.uuid4().hex[:8]
    old_title = f"Lease the Harbor warehouse {tag}"
    new_title = f"Harbor depot contract {tag}"
    note = NOTE.format(tag=tag)
    slug = f"2026-11-18-лизинг-харбор-{tag}"  # a Cyrillic slug: percent-encoded in URLs

    async def seed(memory: MemoryClient) -> dict[str, str]:
        decision = await memory.call(
            "kb_put_page",
            {
                "id": f"decisions/{slug}",
                "page": {
                    "title": old_title,
                    "fields": {"date": "2026-11-18", "status": "accepted"},
                    "sections": {"Decision": "Lease it."},
                    "sources": [note],
                },
            },
        )
        did = decision["id"]
        person = await memory.call(
            "kb_put_page",
            {
                "folder": "people",
                "page": {
                    "title": f"Quinn Harbor {tag}",
                    "sources": [note],
                    "sections": {
                        "Summary": f"Pushed for [[{old_title}]] in {did}.",
                        "Role": f"Still talks about {old_title} every week.",
                    },
                    "timeline": [
                        {"date": "2026-11-18", "text": "Argued for the lease.", "source": note}
                    ],
                    "open_questions": [
                        f"Console: /ui/page/decisions/{quote(slug)}",
                        f"Windows: knowledge\\decisions\\{slug}.md",
                        f"Full width: decisions／{slug}",
                        f"Slug alone: {slug}",
                    ],
                },
            },
        )
        writer = await memory.call(
            "kb_put_page",
            {
                "folder": "people",
                "page": {
                    "title": f"Robin Harbor {tag}",
                    "sources": [note],
                    "sections": {"Summary": f"Pushed for [[{old_title}]].", "Role": "Ops."},
                    "timeline": [
                        {"date": "2026-11-18", "text": "Argued for the lease.", "source": note}
                    ],
                },
            },
        )
        # renamed: the old title stays in the person's text and its history
        view = await memory.call("kb_get_page", {"id": did})
        page = {k: view[k] for k in ("fields", "sections", "sources")}
        await memory.call(
            "kb_put_page",
            {"id": did, "page": {**page, "title": new_title}, "base_version": view["version"]},
        )
        return {
            "decision": did,
            "slug": slug,
            "old": old_title,
            "new": new_title,
            "person": person["id"],
            "writer": writer["id"],
            "note": note,
            "tag": tag,
        }

    return dict(run_session(mcp_server, admin, seed))


def leaks(text: str, hidden: dict[str, str]) -> list[str]:
    forms = [hidden["decision"], hidden["slug"], quote(hidden["slug"]), hidden["old"]]
    forms += [hidden["new"], "harbor-lease"]
    return [f for f in forms if re.search(re.escape(f), text, re.IGNORECASE)]


def test_no_form_of_a_hidden_page_reaches_a_scoped_token_now_or_in_history(
    mcp_server: RunningServer, hidden: dict[str, str]
) -> None:
    _, secret = mcp_server.token("people,meetings", name="reader")

    async def body(memory: MemoryClient) -> list[Any]:
        page = await memory.call("kb_get_page", {"id": hidden["person"]})
        history = await memory.call("kb_history", {"id": hidden["person"], "version": 1})
        found = await memory.call("kb_query", {"question": f"Quinn Harbor {hidden['tag']}"})
        return [page, history, found]

    page, history, found = run_session(mcp_server, secret, body)
    assert hidden["person"] in json.dumps(found)  # the query found the page it checks
    for result in (page, history, found):
        assert leaks(json.dumps(result, ensure_ascii=False), hidden) == []
    assert page["sections"]["Role"] == "Still talks about [redacted] every week."
    assert [q.split(":")[0] for q in page["open_questions"]] == [
        "Console",
        "Windows",
        "Full width",
        "Slug alone",
    ]


def test_the_callers_own_words_come_back_as_written_whether_the_page_exists_or_not(
    mcp_server: RunningServer, hidden: dict[str, str]
) -> None:
    """The echo of a question is no oracle: naming a hidden page and naming no page
    come back alike."""
    _, secret = mcp_server.token("people,meetings", name="asker")
    missing = f"Lease the Harbor silo {hidden['tag']}"

    async def body(memory: MemoryClient) -> dict[str, list[str]]:
        echoes: dict[str, list[str]] = {}
        for name in (hidden["old"], hidden["new"], missing):
            said = f"[[{name}]]"
            brief = await memory.call("kb_brief", {"question": said})
            query = await memory.call("kb_query", {"question": said})
            resolve = await memory.call("kb_resolve", {"name": name})
            texts = [brief["question"], brief["text"].splitlines()[0], query["question"]]
            echoes[name] = [t.replace(name, "NAME") for t in (*texts, resolve["name"])]
        return echoes

    echoes = run_session(mcp_server, secret, body)
    assert echoes[hidden["old"]] == echoes[missing] == echoes[hidden["new"]]
    assert echoes[missing] == ["[[NAME]]", "Brief: [[NAME]]", "[[NAME]]", "NAME"]


def test_a_note_path_is_a_label_for_a_token_that_may_not_read_notes(
    mcp_server: RunningServer, hidden: dict[str, str]
) -> None:
    _, reader = mcp_server.token("people,meetings", name="no-notes")
    _, with_notes = mcp_server.token("people,meetings,source", name="notes")
    get = {"id": hidden["person"]}
    page = run_session(mcp_server, reader, lambda m: m.call("kb_get_page", get))
    shown = label(hidden["note"])
    assert page["sources"] == [shown] and page["timeline"][0]["source"] == shown
    assert "harbor-lease" not in json.dumps(page)
    full = run_session(mcp_server, with_notes, lambda m: m.call("kb_get_page", get))
    assert full["sources"] == [hidden["note"]]


def test_a_writer_that_was_shown_labels_keeps_the_notes_paths(
    mcp_server: RunningServer, hidden: dict[str, str]
) -> None:
    _, writer = mcp_server.token("people", write=True, name="labelled-writer")

    async def body(memory: MemoryClient) -> dict[str, Any]:
        view: dict[str, Any] = await memory.call("kb_get_page", {"id": hidden["writer"]})
        page = {k: view[k] for k in ("title", "fields", "sections", "sources", "timeline")}
        page["sections"] = {**view["sections"], "Role": "Ops and security."}
        await memory.call(
            "kb_put_page",
            {"id": hidden["writer"], "page": page, "base_version": view["version"]},
        )
        return view

    shown = run_session(mcp_server, writer, body)
    assert shown["sources"] == [label(hidden["note"])]  # it was shown the label
    stored = mcp_server.kb().get_page(hidden["writer"]).page
    assert stored.sources == (hidden["note"],)  # and the path is kept
    assert stored.timeline[0].source == hidden["note"]
    assert stored.sections["Role"] == "Ops and security."
    assert hidden["old"] in stored.sections["Summary"]  # what it could not see is kept
