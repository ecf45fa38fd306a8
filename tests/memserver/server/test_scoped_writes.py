"""What a token cannot see is never lost by its write, and what it reads stays valid.

One page in each folder of the example schema, each naming the others in every way
pages do (link fields, source paths, prose links, timeline lines, open questions). For
every scope over those folders, a writer reads each page it may, changes one sentence
and writes it back (as structured data and as markdown, by turns): the stored page is
the page before with that one sentence changed, every hidden value still there.
"""

from __future__ import annotations

import itertools
import uuid
from typing import Any

import pytest

from memserver.clients.mcp import MemoryClient
from memserver.errors import ToolCallError
from memserver.kb.page import parse_page
from memserver.server.source_names import label
from tests.fixtures.server import RunningServer, run_session

run = run_session
FOLDERS = ("people", "companies", "meetings", "decisions", "projects")


def _pages(tag: str) -> dict[str, dict[str, Any]]:
    """One page per folder; ids are what the folders' slug templates make of them."""
    titles = {
        "people": f"Pat Pricer {tag}",
        "companies": f"Globex Works {tag}",
        "meetings": f"Pricing sync {tag}",
        "decisions": f"Per-seat pricing {tag}",
        "projects": f"Usage metering {tag}",
    }
    ids = {
        "people": f"people/pat-pricer-{tag}",
        "companies": f"companies/globex-works-{tag}",
        "meetings": f"meetings/2026-07-01-pricing-sync-{tag}",
        "decisions": f"decisions/2026-07-15-per-seat-pricing-{tag}",
        "projects": f"projects/usage-metering-{tag}",
    }
    fields: dict[str, dict[str, Any]] = {
        "people": {"role": "Analyst", "company": titles["companies"]},
        "companies": {"status": "customer", "account_owner": titles["people"]},
        "meetings": {
            "date": "2026-07-01",
            "attendees": [titles["people"]],
            "company": titles["companies"],
            "project": titles["projects"],
        },
        "decisions": {
            "date": "2026-07-15",
            "status": "accepted",
            "decided_by": [titles["people"]],
            "project": titles["projects"],
            "company": titles["companies"],
        },
        "projects": {"status": "active", "owner": titles["people"], "team": [titles["people"]]},
    }
    first = {
        "people": "Summary",
        "companies": "Summary",
        "meetings": "Summary",
        "decisions": "Context",
        "projects": "Summary",
    }
    pages = {}
    for n, folder in enumerate(FOLDERS):
        a, b, c, d = (FOLDERS[(n + k) % len(FOLDERS)] for k in (1, 2, 3, 4))
        page: dict[str, Any] = {
            "title": titles[folder],
            "fields": fields[folder],
            "sources": ["notes/a.md", f"{ids[a]}.md", "notes/b.md"],
            "sections": {
                first[folder]: (
                    f"Plain sentence {tag} stays.\n\n"
                    f"See “{titles[a]}” ({ids[a]}), [the notes]({ids[b]}), [[{titles[c]}]] "
                    f"and **{ids[d]}** for more. The {titles[b]} matter too."
                )
            },
            "open_questions": [f"Is “{titles[c]}” ({ids[c]}) still current?"],
        }
        if folder != "meetings":
            page["timeline"] = [
                {
                    "date": "2026-07-10",
                    "text": f"Named in “{titles[d]}” ({ids[d]})",
                    "source": f"{ids[a]}.md",
                },
                {"date": "2026-07-11", "text": "Nothing hidden here.", "source": "notes/a.md"},
            ]
        pages[folder] = {"id": ids[folder], "page": page}
    return pages


@pytest.fixture(scope="module")
def linked(mcp_server: RunningServer) -> dict[str, str]:
    """folder -> id of five pages that name each other every way; plus ``tag``."""
    _, admin = mcp_server.token("*", write=True, name="admin")
    tag = uuid.uuid4().hex[:8]
    pages = _pages(tag)

    async def seed(memory: MemoryClient) -> None:
        for spec in pages.values():
            written = await memory.call("kb_put_page", spec)
            assert written["id"] == spec["id"]

    run(mcp_server, admin, seed)
    return {**{folder: spec["id"] for folder, spec in pages.items()}, "tag": tag}


def _toggle(text: str, tag: str) -> str:
    plain, edited = f"Plain sentence {tag} stays.", f"Edited sentence {tag} stays."
    return text.replace(plain, edited) if plain in text else text.replace(edited, plain)


def _stored(mcp_server: RunningServer, page_id: str) -> dict[str, Any]:
    return mcp_server.kb().get_page(page_id).page.to_dict()


async def _edit_one_sentence(
    memory: MemoryClient, page_id: str, tag: str, as_markdown: bool
) -> dict[str, Any]:
    view = await memory.call("kb_get_page", {"id": page_id})
    if as_markdown:
        return await memory.call(
            "kb_put_page",
            {
                "id": page_id,
                "markdown": _toggle(view["markdown"], tag),
                "base_version": view["version"],
            },
        )
    page = {
        key: view[key]
        for key in ("title", "fields", "aliases", "sources", "timeline", "open_questions")
    }
    page["sections"] = {h: _toggle(b, tag) for h, b in view["sections"].items()}
    return await memory.call(
        "kb_put_page", {"id": page_id, "page": page, "base_version": view["version"]}
    )


def test_every_scope_keeps_every_hidden_value(
    mcp_server: RunningServer, linked: dict[str, str]
) -> None:
    tag = linked["tag"]
    scopes = [
        combo for size in range(1, len(FOLDERS)) for combo in itertools.combinations(FOLDERS, size)
    ]
    for n, scope in enumerate(scopes):
        _, secret = mcp_server.token(",".join(scope), write=True, name="writer")
        before = {folder: _stored(mcp_server, linked[folder]) for folder in scope}

        async def body(memory: MemoryClient, scope: tuple[str, ...] = scope, n: int = n) -> None:
            for k, folder in enumerate(scope):  # markdown and structured data by turns
                await _edit_one_sentence(memory, linked[folder], tag, (n + k) % 2 == 1)

        run(mcp_server, secret, body)
        for folder in scope:
            was = before[folder]
            expected = {**was, "sections": {h: _toggle(b, tag) for h, b in was["sections"].items()}}
            assert _stored(mcp_server, linked[folder]) == expected, (scope, folder)


def test_a_decisions_writer_keeps_decided_by_it_was_not_shown(
    mcp_server: RunningServer, linked: dict[str, str]
) -> None:
    """The case the issue found: the writer never sees ``decided_by`` and keeps it."""
    _, secret = mcp_server.token("decisions", write=True, name="decider")
    decision = linked["decisions"]

    async def body(memory: MemoryClient) -> dict[str, Any]:
        await _edit_one_sentence(memory, decision, linked["tag"], as_markdown=False)
        return await memory.call("kb_get_page", {"id": decision})

    view = run(mcp_server, secret, body)
    assert "decided_by" not in view["fields"] and "decided_by" not in view["markdown"]
    stored = mcp_server.kb().get_page(decision).page
    assert stored.fields["decided_by"] == (f"Pat Pricer {linked['tag']}",)
    assert stored.fields["company"] == f"Globex Works {linked['tag']}"


def test_redacted_markdown_is_valid_and_its_sources_show_only_visible_paths(
    mcp_server: RunningServer, linked: dict[str, str]
) -> None:
    """``sources: [a, projects/x.md, b]`` once became ``[a, , b]`` for this scope."""
    _, secret = mcp_server.token("people,meetings", name="reader")
    person = linked["people"]  # its sources name the company page

    async def body(memory: MemoryClient) -> tuple[dict[str, Any], dict[str, Any]]:
        page = await memory.call("kb_get_page", {"id": person})
        old = await memory.call("kb_history", {"id": person, "version": 1})
        return page, old

    page, old = run(mcp_server, secret, body)
    # a token without the source folder reads each note's path as its label
    shown = [label("notes/a.md"), label("notes/b.md")]
    assert page["sources"] == shown
    for markdown in (page["markdown"], old["markdown"]):
        parsed = parse_page(markdown)
        assert parsed.sources == tuple(shown)
        assert linked["companies"] not in markdown and linked["decisions"] not in markdown
        assert "[redacted]" in markdown


def test_rewriting_what_was_redacted_is_refused_and_writes_nothing(
    mcp_server: RunningServer, linked: dict[str, str]
) -> None:
    _, secret = mcp_server.token("projects", write=True, name="rewriter")
    project = linked["projects"]
    before = mcp_server.kb().get_page(project)

    async def body(memory: MemoryClient) -> str:
        view = await memory.call("kb_get_page", {"id": project})
        sections = {h: b.replace("[redacted]", "someone") for h, b in view["sections"].items()}
        page = {**{k: view[k] for k in ("title", "fields", "sources")}, "sections": sections}
        with pytest.raises(ToolCallError) as refused:
            await memory.call(
                "kb_put_page", {"id": project, "page": page, "base_version": view["version"]}
            )
        return refused.value.server_message

    message = run(mcp_server, secret, body)
    assert "would lose what you cannot see" in message and "section 'Summary'" in message
    for folder in ("people", "companies", "meetings", "decisions"):
        assert linked[folder] not in message
    after = mcp_server.kb().get_page(project)
    assert after.version == before.version and after.page == before.page


def test_a_huge_rewrite_around_hidden_references_is_refused_within_the_call_bound(
    mcp_server: RunningServer, linked: dict[str, str]
) -> None:
    """Hostile input: 40,000 repetitive words instead of a section that holds hidden
    references. Only the changed middle is compared token by token, and not past
    ``DIFF_TOKENS``: the refusal comes within the session's bound (run_session: 60 s)."""
    _, secret = mcp_server.token("companies", write=True, name="flooder")
    company = linked["companies"]
    before = mcp_server.kb().get_page(company)

    async def body(memory: MemoryClient) -> str:
        view = await memory.call("kb_get_page", {"id": company})
        sections = {h: "a b " * 20_000 for h in view["sections"]}
        page = {**{k: view[k] for k in ("title", "fields", "sources")}, "sections": sections}
        with pytest.raises(ToolCallError) as refused:
            await memory.call(
                "kb_put_page", {"id": company, "page": page, "base_version": view["version"]}
            )
        return refused.value.server_message

    message = run(mcp_server, secret, body)
    assert "would lose what you cannot see: section 'Summary'" in message
    assert mcp_server.kb().get_page(company).version == before.version


def test_five_hidden_lines_that_read_the_same_survive_a_scoped_write(
    mcp_server: RunningServer, linked: dict[str, str]
) -> None:
    """The issue's case: a company's timeline names five decisions on one day from one
    note; a ``companies`` writer reads them as ``Decision [redacted 1]`` ... ``5``, changes
    one field, and all five originals are still there."""
    tag = uuid.uuid4().hex[:8]
    _, admin = mcp_server.token("*", write=True, name="admin")
    titles = [f"Choice {n} {tag}" for n in range(5)]
    company = f"companies/many-choices-{tag}"

    async def seed(memory: MemoryClient) -> None:
        lines = []
        for n, title in enumerate(titles):
            decision = {
                "title": title,
                "fields": {"date": f"2026-07-1{n}", "status": "accepted"},
                "sections": {"Decision": f"Chosen {n}."},
            }
            written = await memory.call("kb_put_page", {"folder": "decisions", "page": decision})
            lines.append(
                {
                    "date": "2026-11-03",
                    "text": f"Decision “{title}” ({written['id']})",
                    "source": "notes/sync.md",
                }
            )
        page: dict[str, Any] = {
            "title": f"Many Choices {tag}",
            "fields": {"status": "customer"},
            "sections": {"Summary": "A customer."},
            "timeline": lines,
        }
        assert (await memory.call("kb_put_page", {"folder": "companies", "page": page}))[
            "id"
        ] == company

    run(mcp_server, admin, seed)
    before = _stored(mcp_server, company)
    _, secret = mcp_server.token("companies", write=True, name="companies-writer")

    async def body(memory: MemoryClient) -> dict[str, Any]:
        view = await memory.call("kb_get_page", {"id": company})
        page = {k: view[k] for k in ("title", "fields", "sources", "sections", "timeline")}
        page["fields"] = {**page["fields"], "status": "churned"}
        await memory.call(
            "kb_put_page", {"id": company, "page": page, "base_version": view["version"]}
        )
        return view

    view = run(mcp_server, secret, body)
    assert sorted(e["text"] for e in view["timeline"]) == [
        f"Decision [redacted {n}]" for n in range(1, 6)
    ]
    assert _stored(mcp_server, company) == {
        **before,
        "fields": {**before["fields"], "status": "churned"},
    }
