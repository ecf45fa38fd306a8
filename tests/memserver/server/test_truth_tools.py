"""What held when, over real Streamable HTTP: ``as_of`` on kb_get_page, kb_query,
kb_timeline and kb_latest, and kb_brief (current and prior values with dates and reasons,
deciders, the supersession chain, an open conflict, labelled evidence, token scope)."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from memserver.clients.mcp import MemoryClient, open_http
from memserver.errors import ToolCallError, ToolErrorKind
from memserver.kb.page import Page, TimelineEntry
from tests.fixtures.server import RunningServer

TIMEOUT = 60
NOW = "2026-11-20T12:00:00+08:00"
JULY = dt.date(2026, 7, 15)
OCTOBER = dt.date(2026, 10, 7)


def run(server: RunningServer, secret: str, body: Callable[[MemoryClient], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        with anyio.fail_after(TIMEOUT):
            async with open_http(server.url, secret) as memory:
                return await body(memory)

    return anyio.run(main)


def call(server: RunningServer, secret: str, tool: str, args: dict[str, Any]) -> Any:
    async def body(memory: MemoryClient) -> Any:
        return await memory.call(tool, args)

    return run(server, secret, body)


def note(day: dt.date, author: str, text: str) -> str:
    return f"---\ndate: {day.isoformat()}\nauthor: {author}\n---\n\n{text}\n"


@pytest.fixture(scope="module")
def story(mcp_server: RunningServer) -> dict[str, str]:
    """A decision taken in July from one note, reversed in October by another note (a
    second write of the page), the newer decision that replaced it, and an open
    disagreement on its contract value; the notes are in source/ and indexed."""
    tag = uuid.uuid4().hex[:6]
    kb = mcp_server.kb()
    first = f"truth-{tag}/2026-07-15-zephyr-pricing.md"
    second = f"truth-{tag}/2026-10-07-zephyr-pricing-review.md"
    folder = mcp_server.paths.source / f"truth-{tag}"
    folder.mkdir(parents=True)
    (mcp_server.paths.source / first).write_text(
        note(
            JULY,
            "Saraa Bat",
            f"We decided to charge Zephyr{tag} per seat because "
            "customers asked for predictable bills.",
        ),
        encoding="utf-8",
    )
    (mcp_server.paths.source / second).write_text(
        note(
            OCTOBER,
            "Bold Erdene",
            f"The pricing review reverses the Zephyr{tag} per seat "
            "decision: we charge per shipment now, due to low seat usage.",
        ),
        encoding="utf-8",
    )
    kb.index_sources(kb.manifest.scan().entries)
    person = kb.put_page(
        "people", Page(title=f"Saraa Bat {tag}", type="person", fields={"role": "CEO"}), None
    ).id
    title = f"Zephyr{tag} per seat pricing"
    old = Page(
        title=title,
        type="decision",
        fields={"date": "2026-07-15", "status": "accepted", "decided_by": [f"Saraa Bat {tag}"]},
        sources=(first,),
        sections={"Decision": f"Charge Zephyr{tag} per seat."},
        timeline=(TimelineEntry(JULY, "Decided per seat pricing.", first),),
    )
    put = kb.put_page("decisions", old, None)
    newer = kb.put_page(
        "decisions",
        Page(
            title=f"Zephyr{tag} per shipment pricing",
            type="decision",
            fields={"date": "2026-10-07", "status": "accepted", "supersedes": title},
            sources=(second,),
            sections={"Decision": f"Charge Zephyr{tag} per shipment."},
        ),
        None,
    )
    reversed_page = Page(
        title=title,
        type="decision",
        fields={**old.fields, "status": "reversed"},
        sources=(first, second),
        sections=old.sections,
        timeline=(
            TimelineEntry(OCTOBER, "Reversed by the pricing review: low seat usage.", second),
            *old.timeline,
        ),
    )
    kb.put_page(
        "decisions",
        reversed_page,
        put.version,
        conflicts=[
            {
                "field": "contract_value",
                "old_value": 96000,
                "new_value": 120000,
                "old_source": first,
                "new_source": second,
                "status": "unresolved",
            }
        ],
    )
    return {"tag": tag, "old": put.id, "new": newer.id, "person": person, "second": second}


def test_kb_get_page_as_of_gives_the_values_that_held_then(
    mcp_server: RunningServer, story: dict[str, str]
) -> None:
    _, secret = mcp_server.token("*")
    now = call(mcp_server, secret, "kb_get_page", {"id": story["old"]})
    assert now["fields"]["status"] == "reversed" and "as_of" not in now
    then = call(mcp_server, secret, "kb_get_page", {"id": story["old"], "as_of": "2026-08-01"})
    assert then["fields"]["status"] == "accepted"
    held = then["as_of"]["fields"]["status"]
    assert (held["valid_from"], held["valid_to"], held["recorded_at"]) == (
        "2026-07-15",
        "2026-10-07",
        "2026-07-15",
    )
    assert held["source"].endswith("2026-07-15-zephyr-pricing.md")
    assert then["as_of"]["current_fields"]["status"] == "reversed"
    change = [c for c in then["as_of"]["changed_since"] if c["field"] == "status"]
    assert change == [
        {
            "field": "status",
            "from": "accepted",
            "to": "reversed",
            "date": "2026-10-07",
            "recorded_at": "2026-10-07",
            "source": story["second"],
        }
    ]
    assert [e["date"] for e in then["timeline"]] == ["2026-07-15"]
    before = call(mcp_server, secret, "kb_get_page", {"id": story["old"], "as_of": "2026-07-01"})
    assert before["as_of"]["known"] is False and before["fields"] == {}


def test_a_bad_as_of_is_an_arguments_error_naming_the_form(
    mcp_server: RunningServer, story: dict[str, str]
) -> None:
    _, secret = mcp_server.token("*")

    async def body(memory: MemoryClient) -> list[ToolErrorKind]:
        kinds = []
        for tool, args in (
            ("kb_get_page", {"id": story["old"]}),
            ("kb_query", {"question": "pricing"}),
            ("kb_timeline", {"page": story["old"]}),
            ("kb_latest", {"folder": "decisions"}),
            ("kb_brief", {"question": "pricing"}),
        ):
            with pytest.raises(ToolCallError, match="YYYY-MM-DD") as refused:
                await memory.call(tool, {**args, "as_of": "last spring"})
            kinds.append(refused.value.kind)
        return kinds

    assert run(mcp_server, secret, body) == [ToolErrorKind.ARGUMENTS] * 5


def test_kb_timeline_as_of_stops_at_the_date(
    mcp_server: RunningServer, story: dict[str, str]
) -> None:
    _, secret = mcp_server.token("*")
    full = call(mcp_server, secret, "kb_timeline", {"page": story["old"], "now": NOW})
    assert [e["date"] for e in full["events"]] == ["2026-10-07", "2026-07-15"]
    then = call(mcp_server, secret, "kb_timeline", {"page": story["old"], "as_of": "2026-08-01"})
    assert [e["date"] for e in then["events"]] == ["2026-07-15"] and then["as_of"] == "2026-08-01"
    window = call(
        mcp_server,
        secret,
        "kb_timeline",
        {"window": "from 2026-06-01 to 2026-11-01", "as_of": "2026-09-30"},
    )
    assert window["events"] and max(e["date"] for e in window["events"]) <= "2026-09-30"


def test_kb_latest_and_kb_query_as_of_leave_out_what_came_later(
    mcp_server: RunningServer, story: dict[str, str]
) -> None:
    _, secret = mcp_server.token("*")
    about = f"Zephyr{story['tag']}"
    latest = call(mcp_server, secret, "kb_latest", {"folder": "decisions", "about": about,
                                                    "now": NOW})  # fmt: skip
    mine = (story["old"], story["new"])  # other tests' decisions share the server
    assert [r["id"] for r in latest["results"] if r["id"] in mine] == [story["new"], story["old"]]
    then = call(mcp_server, secret, "kb_latest", {"folder": "decisions", "about": about,
                                                  "now": NOW, "as_of": "2026-08-01"})  # fmt: skip
    assert [r["id"] for r in then["results"] if r["id"] in mine] == [story["old"]]
    assert then["results"] and all((r["date"] or "") <= "2026-08-01" for r in then["results"])
    question = f"what did we decide about {about} pricing?"
    found = call(mcp_server, secret, "kb_query", {"question": question, "now": NOW,
                                                  "include_sources": True})  # fmt: skip
    assert {story["new"], f"source/{story['second']}"} <= {r["id"] for r in found["results"]}
    assert found["results"] and all("as_of" not in r for r in found["results"])
    asked = {"question": question, "now": NOW, "include_sources": True, "as_of": "2026-08-01"}
    past = call(mcp_server, secret, "kb_query", asked)
    ids = {r["id"] for r in past["results"]}
    assert story["old"] in ids and story["new"] not in ids
    assert f"source/{story['second']}" not in ids and past["time"]["as_of"] == "2026-08-01"
    assert past["results"] and all((r["date"] or "") <= "2026-08-01" for r in past["results"])
    old = next(r for r in past["results"] if r["id"] == story["old"])
    assert old["as_of"]["fields"]["status"]["value"] == "accepted"


def test_kb_brief_gives_current_and_earlier_values_deciders_conflicts_and_evidence(
    mcp_server: RunningServer, story: dict[str, str]
) -> None:
    _, secret = mcp_server.token("*")
    question = f"What did we decide about Zephyr{story['tag']} pricing?"
    brief = call(mcp_server, secret, "kb_brief", {"question": question, "now": NOW})
    subjects = {s["id"]: s for s in brief["subjects"]}
    assert {story["old"], story["new"]} <= set(subjects)
    old = subjects[story["old"]]
    assert old["status"] == "reversed" and old["superseded_by"] == [story["new"]]
    assert subjects[story["new"]]["supersedes"] == [story["old"]]
    assert old["deciders"] == [f"Saraa Bat {story['tag']}"]
    [earlier] = [e for e in old["earlier"] if e["field"] == "status"]
    assert (earlier["value"], earlier["valid_from"], earlier["valid_to"]) == (
        "accepted",
        "2026-07-15",
        "2026-10-07",
    )
    assert earlier["replaced_by"] == "reversed" and "low seat usage" in earlier["reason"]
    [conflict] = [c for c in brief["conflicts"] if c["page"] == story["old"]]
    assert [side["value"] for side in conflict["sides"]] == [96000, 120000]
    direct = [e for e in brief["evidence"] if e["label"] == "direct"]
    review = [e for e in direct if e["source"] == story["second"]]
    assert review and review[0]["author"] == "Bold Erdene" and review[0]["date"] == "2026-10-07"
    assert "per shipment" in review[0]["text"]
    assert any(e["label"] == "inferred" and e["page"] == story["old"] for e in brief["evidence"])
    assert "[direct] 2026-10-07, Bold Erdene" in brief["text"]
    assert brief["tokens"] <= brief["budget"] == 1500 and brief["as_of"] is None


def test_kb_brief_as_of_answers_as_the_memory_knew_it_then(
    mcp_server: RunningServer, story: dict[str, str]
) -> None:
    _, secret = mcp_server.token("*")
    question = f"What did we decide about Zephyr{story['tag']} pricing?"
    brief = call(mcp_server, secret, "kb_brief", {"question": question, "now": NOW,
                                                  "as_of": "2026-08-01"})  # fmt: skip
    subjects = {s["id"]: s for s in brief["subjects"]}
    assert story["new"] not in subjects and subjects[story["old"]]["status"] == "accepted"
    assert subjects[story["old"]]["earlier"] == []
    assert {"field": "status", "to": "reversed", "date": "2026-10-07",
            "source": story["second"]} in subjects[story["old"]]["changed_since"]  # fmt: skip
    assert brief["evidence"] and all(
        e["date"] is None or e["date"] <= "2026-08-01" for e in brief["evidence"]
    )
    small = call(mcp_server, secret, "kb_brief", {"question": question, "now": NOW,
                                                  "budget": 200})  # fmt: skip
    assert small["tokens"] <= 200 and small["truncated"] is True


def test_kb_brief_reads_a_mongolian_question_the_same_way(
    mcp_server: RunningServer, story: dict[str, str]
) -> None:
    _, secret = mcp_server.token("*")
    question = f"Zephyr{story['tag']} үнийн талаар ямар шийдвэр гаргасан бэ?"
    brief = call(mcp_server, secret, "kb_brief", {"question": question, "now": NOW})
    subjects = {s["id"]: s for s in brief["subjects"]}
    assert subjects[story["old"]]["status"] == "reversed"
    assert story["new"] in subjects[story["old"]]["superseded_by"]


def test_kb_brief_never_shows_a_folder_the_token_was_not_granted(
    mcp_server: RunningServer, story: dict[str, str]
) -> None:
    _, secret = mcp_server.token("people,meetings")
    question = f"What did we decide about Zephyr{story['tag']} pricing? Saraa Bat {story['tag']}"
    brief = call(mcp_server, secret, "kb_brief", {"question": question, "now": NOW})
    text = json.dumps(brief, ensure_ascii=False)
    assert story["person"] in {s["id"] for s in brief["subjects"]}  # what it may read, it gets
    assert brief["subjects"] and all(
        s["id"].split("/")[0] in {"people", "meetings"} for s in brief["subjects"]
    )
    # (a note's path such as "decisions/pricing.md" may show: it is a source, not a page)
    assert story["old"] not in text and story["new"] not in text
    assert f"Zephyr{story['tag']}" not in text.replace(question, "")
    assert "per shipment" not in text and "96000" not in text
    assert not [e for e in brief["evidence"] if e["label"] == "direct"]  # no notes, no quotes


def test_a_page_without_history_keeps_its_fields_and_says_why(
    mcp_server: RunningServer, story: dict[str, str]
) -> None:
    kb = mcp_server.kb()
    page = Page(title=f"Old page {story['tag']}", type="person", fields={"role": "Driver"})
    page_id = kb.put_page("people", page, None).id
    with kb.db.connection() as conn, conn.transaction():  # as if written before migration 013
        conn.execute("DELETE FROM field_values WHERE page_id = %s", (page_id,))
        conn.execute("DELETE FROM field_history_pages WHERE page_id = %s", (page_id,))
    _, secret = mcp_server.token("*")
    got = call(mcp_server, secret, "kb_get_page", {"id": page_id, "as_of": "2026-01-01"})
    assert got["fields"] == {"role": "Driver"} and got["as_of"]["known"] is None
    assert "memserver reindex" in got["as_of"]["note"]
