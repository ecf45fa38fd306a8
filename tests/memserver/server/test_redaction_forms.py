"""Every way an out-of-scope page can be named in prose is redacted, on every way out.

A person's page names a decision in each form authors and agents write; a
``people,meetings`` token reads none of them: not the id (in any letter case), not the
slug, not the title, through kb_get_page, kb_history and kb_query, nor in an error.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest

from memserver.clients.mcp import MemoryClient
from memserver.errors import ToolCallError
from tests.fixtures.server import RunningServer, run_session

run = run_session

FORMS = {
    "backticks": "In backticks `{id}` here.",
    "bold": "In bold **{id}** here.",
    "italics": "In italics _{id}_ and *{id}* here.",
    "anchor": "With an anchor {id}#context here.",
    "query": "With a query {id}?v=1 here.",
    "relative path": "As a relative path ../{id}.md and ./{id}.md here.",
    "knowledge path": "As knowledge/{id}.md here.",
    "console url": "As /ui/page/{id} and http://127.0.0.1:8000/ui/page/{id}?v=2 here.",
    "em dash": "Followed by an em dash {id}—see there.",
    "capitalised": "Capitalised {Id} and {ID} here.",
    "wiki title": "Through its title [[{title}]] here.",
    "markdown link to a path": "A link [the call](knowledge/{id}.md) here.",
}


@pytest.fixture(scope="module")
def named(mcp_server: RunningServer) -> dict[str, str]:
    _, admin = mcp_server.token("*", write=True, name="admin")
    tag = uuid.uuid4().hex[:8]
    title = f"Per-seat pricing {tag}"

    async def seed(memory: MemoryClient) -> dict[str, str]:
        decision = await memory.call(
            "kb_put_page",
            {
                "folder": "decisions",
                "page": {
                    "title": title,
                    "fields": {"date": "2026-07-15", "status": "accepted"},
                    "sections": {"Decision": "Priced per seat."},
                },
            },
        )
        did = decision["id"]
        values = {"id": did, "Id": did.capitalize(), "ID": did.upper(), "title": title}
        person = await memory.call(
            "kb_put_page",
            {
                "folder": "people",
                "page": {
                    "title": f"Robin Named {tag}",
                    "fields": {"role": "Analyst"},
                    "sections": {
                        "Summary": f"Decided in {did}.",
                        "Role": f"Works on {title.upper()} every day.",  # the title elsewhere
                    },
                    "open_questions": [form.format(**values) for form in FORMS.values()],
                },
            },
        )
        return {"decision": did, "title": title, "person": person["id"], "tag": tag}

    return dict(run(mcp_server, admin, seed))


def _leaks(text: str, named: dict[str, str]) -> list[str]:
    slug = named["decision"].split("/", 1)[1]
    return [
        what
        for what in (named["decision"], slug, named["title"])
        if re.search(re.escape(what), text, re.IGNORECASE)
    ]


def test_every_form_of_an_out_of_scope_reference_is_redacted(
    mcp_server: RunningServer, named: dict[str, str]
) -> None:
    _, secret = mcp_server.token("people,meetings", name="reader")

    async def body(memory: MemoryClient) -> list[Any]:
        page = await memory.call("kb_get_page", {"id": named["person"]})
        history = await memory.call("kb_history", {"id": named["person"], "version": 1})
        found = await memory.call("kb_query", {"question": f"Robin Named {named['tag']}"})
        return [page, history, found]

    page, history, found = run(mcp_server, secret, body)
    assert named["person"] in str(found)  # the query found the page it checks
    for name, question in zip(FORMS, page["open_questions"], strict=True):
        assert not _leaks(question, named), (name, question)
    assert page["sections"]["Summary"] == "Decided in ."
    assert page["sections"]["Role"] == "Works on [redacted] every day."
    for result in (page, history, found):
        assert not _leaks(str(result), named)
    assert "[[" not in page["open_questions"][list(FORMS).index("wiki title")]


def test_a_full_token_reads_every_form_as_written(
    mcp_server: RunningServer, named: dict[str, str]
) -> None:
    _, secret = mcp_server.token("*", name="full")
    page = run(mcp_server, secret, lambda m: m.call("kb_get_page", {"id": named["person"]}))
    for question in page["open_questions"]:
        assert _leaks(question, named), question
    assert page["sections"]["Role"] == f"Works on {named['title'].upper()} every day."


def test_an_error_echoes_the_callers_own_words_and_tells_nothing_more(
    mcp_server: RunningServer, named: dict[str, str]
) -> None:
    """Errors go through the same redaction, except for what the caller wrote itself:
    hiding that would tell it the page exists. An id that is a page and one that is not
    come back alike, and the refusal of a write that would drop a hidden reference
    quotes the text as the caller was shown it."""
    _, secret = mcp_server.token("people,meetings", write=True, name="writer")
    missing = f"decisions/2026-07-15-no-such-{named['tag']}"

    def bad(kind: str) -> dict[str, Any]:
        fields = {"date": "2026-07-01", "kind": f"as in {kind}"}
        return {"folder": "meetings", "page": {"title": "Sync", "fields": fields}}

    async def body(memory: MemoryClient) -> list[str]:
        messages = []
        for kind in (named["decision"], missing):
            with pytest.raises(ToolCallError) as refused:
                await memory.call("kb_put_page", bad(kind))
            messages.append(refused.value.server_message)
        page = await memory.call("kb_get_page", {"id": named["person"]})
        dropped = {"title": page["title"], "fields": page["fields"], "sections": page["sections"]}
        with pytest.raises(ToolCallError) as refused:
            await memory.call(
                "kb_put_page",
                {"id": named["person"], "page": dropped, "base_version": page["version"]},
            )
        return [*messages, refused.value.server_message]

    existing, absent, lost = run(mcp_server, secret, body)
    assert existing.replace(named["decision"], missing) == absent
    assert "would lose what you cannot see: open question" in lost
    assert not _leaks(lost, named), lost
