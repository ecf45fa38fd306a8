"""Out-of-scope pages named in prose, and out-of-scope folders named in errors, over MCP.

A person's timeline names a decision the way the ingest agent writes it; a token for
``people,meetings`` must read neither the decision's id nor its title, a writer with
that scope must not lose the reference by writing the page back, and no error a scoped
token gets names a folder it cannot see.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from memserver.clients.mcp import MemoryClient, result_text
from memserver.errors import ToolCallError
from memserver.kb.schema import load_schema, schema_from_view
from tests.fixtures.server import RunningServer, run_session

run = run_session


@pytest.fixture
def mentioned(mcp_server: RunningServer) -> dict[str, str]:
    """A decision, and a person whose prose names it in every form pages use."""
    _, admin = mcp_server.token("*", write=True, name="admin")
    tag = uuid.uuid4().hex[:8]
    decision_title = f"Per-seat pricing {tag}"

    async def seed(memory: MemoryClient) -> dict[str, str]:
        decision = await memory.call(
            "kb_put_page",
            {
                "folder": "decisions",
                "page": {
                    "title": decision_title,
                    "fields": {"date": "2026-07-15", "status": "accepted"},
                    "sections": {"Decision": "Priced per seat."},
                },
            },
        )
        did = decision["id"]
        person = await memory.call(
            "kb_put_page",
            {
                "folder": "people",
                "page": {
                    "title": f"Pat Pricer {tag}",
                    "fields": {"role": "Analyst"},
                    "sections": {"Summary": f"Worked on [{decision_title}]({did}), see [[{did}]]."},
                    "timeline": [
                        {
                            "date": "2026-07-15",
                            "text": f"Decision “{decision_title}” ({did})",
                            "source": "decisions/pricing.md",
                        }
                    ],
                },
            },
        )
        return {"decision": did, "title": decision_title, "person": person["id"], "tag": tag}

    return dict(run(mcp_server, admin, seed))


@pytest.mark.parametrize("write", [False, True])
def test_a_scoped_token_reads_no_out_of_scope_id_or_title_in_prose(
    mcp_server: RunningServer, mentioned: dict[str, str], write: bool
) -> None:
    _, secret = mcp_server.token("people,meetings", write=write)

    async def body(memory: MemoryClient) -> tuple[list[str], str, str]:
        page = await memory.call("kb_get_page", {"id": mentioned["person"]})
        found = await memory.call("kb_query", {"question": f"Pat Pricer {mentioned['tag']}"})
        history = await memory.call("kb_history", {"id": mentioned["person"], "version": 1})
        timeline = await memory.call("kb_timeline", {"page": mentioned["person"]})
        texts = [str(page), str(found), str(history), str(timeline)]
        return texts, page["timeline"][0]["text"], page["sections"]["Summary"]

    texts, entry, summary = run(mcp_server, secret, body)
    for text in texts:
        assert mentioned["decision"] not in text and mentioned["title"] not in text
    assert entry == "Decision [redacted]"
    assert summary == "Worked on [redacted], see ."  # link words that are the title go too


def test_a_full_token_still_reads_the_references(
    mcp_server: RunningServer, mentioned: dict[str, str]
) -> None:
    _, secret = mcp_server.token("*")
    page = run(mcp_server, secret, lambda m: m.call("kb_get_page", {"id": mentioned["person"]}))
    assert mentioned["decision"] in page["timeline"][0]["text"]
    assert mentioned["title"] in page["sections"]["Summary"]


def test_a_scoped_writer_keeps_references_it_cannot_see_and_cannot_drop_them(
    mcp_server: RunningServer, mentioned: dict[str, str]
) -> None:
    _, secret = mcp_server.token("people,meetings", write=True)
    person = mentioned["person"]

    async def body(memory: MemoryClient) -> str:
        page = await memory.call("kb_get_page", {"id": person})
        update = {
            "title": page["title"],
            "fields": page["fields"],
            "sections": {"Summary": page["sections"]["Summary"] + "\n\nNow leads pricing."},
            "timeline": [
                *page["timeline"],
                {"date": "2026-08-01", "text": "Promoted.", "source": "hr.md"},
            ],
        }
        written = await memory.call(
            "kb_put_page", {"id": person, "page": update, "base_version": page["version"]}
        )
        dropped = {**update, "timeline": update["timeline"][1:]}  # the redacted line left out
        with pytest.raises(ToolCallError) as refused:
            await memory.call(
                "kb_put_page", {"id": person, "page": dropped, "base_version": written["version"]}
            )
        return refused.value.server_message

    message = run(mcp_server, secret, body)
    stored = mcp_server.kb().get_page(person).page
    texts = [e.text for e in stored.timeline]
    assert f"Decision “{mentioned['title']}” ({mentioned['decision']})" in texts
    assert "Promoted." in texts
    assert stored.sections["Summary"].startswith(f"Worked on [{mentioned['title']}]")
    assert stored.sections["Summary"].endswith("Now leads pricing.")
    assert "would lose what you cannot see: timeline entry of 2026-07-15" in message
    assert mentioned["decision"] not in message and "decisions" not in message


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"page": {"title": "Sneaky", "type": "decision"}}, "none of your folders holds pages"),
        ({"page": {"title": "Sneaky", "type": "nonsense"}}, "people (person), meetings (meeting)"),
    ],
)
def test_errors_to_a_scoped_token_name_only_its_folders(
    mcp_server: RunningServer, args: dict[str, Any], expected: str
) -> None:
    _, secret = mcp_server.token("people,meetings", write=True)

    async def body(memory: MemoryClient) -> str:
        with pytest.raises(ToolCallError) as caught:
            await memory.call("kb_put_page", args)
        return caught.value.server_message

    message = run(mcp_server, secret, body)
    assert expected in message
    for other in ("decisions", "companies", "projects", "company", "project"):
        assert other not in message, message
    said = {"folder": "decisions", "page": {"title": "Sneaky"}}  # its own words are echoed
    echoed = run(mcp_server, secret, lambda m: m.call_result("kb_put_page", said))
    assert echoed.is_error and "decisions" in result_text(echoed)
    assert "companies" not in result_text(echoed)


def test_a_scoped_schema_names_only_its_folders_and_reads_back_as_a_schema(
    mcp_server: RunningServer,
) -> None:
    """``kb_schema`` for ``people,meetings`` leaves out the link fields and link verbs
    that lead elsewhere, so it names no other folder, and the agents can read it."""
    _, secret = mcp_server.token("people,meetings")
    view = run(mcp_server, secret, lambda m: m.call("kb_schema"))
    text = json.dumps(view)
    for other in ('"decisions"', '"companies"', '"projects"'):
        assert other not in text, other
    schema = schema_from_view(view)
    assert [f.name for f in schema.folders] == ["people", "meetings"]
    full = load_schema(mcp_server.kb_dir)
    kept = {f.name for f in schema.folder("meetings").fields}
    assert kept < {f.name for f in full.folder("meetings").fields}  # the company link went
