"""Reading the graph: neighbours (direction, verbs, depth, scope) and entity pages."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from memserver.cli import main
from memserver.errors import NotFoundError, ToolCallError, UserError
from memserver.graph.neighbors import Edge, entity_pages, neighbors
from memserver.kb.page import Page
from tests.fixtures.kb import MakeKB
from tests.fixtures.server import RunningServer
from tests.memserver.graph.graph_pages import (
    PageWriter,
    call_tool,
    company,
    meeting,
    open_writer,
    person,
)


@pytest.fixture
def world(writer: PageWriter) -> PageWriter:
    w = writer
    w.put("companies", company("Globex"))
    w.put("people", person("Alice Chen", company="Globex"))
    w.put("people", person("Bob Martinez", reports_to="Alice Chen", summary="Works at Globex."))
    w.put("people", person("Carol Diaz", summary="Carol reports to Alice Chen."))
    w.put("meetings", meeting("Kickoff", "2026-09-08", ("Alice Chen", "Bob Martinez")))
    w.put("meetings", meeting("Review", "2026-09-20", ("Alice Chen",), summary="[[Globex]]"))
    w.put("meetings", meeting("Standup", "2026-09-25", ("Bob Martinez", "Nobody Known")))
    return w


def _triples(edges: list[Edge]) -> set[tuple[str, str, str, int]]:
    return {(e.from_id, e.verb, e.to_id, e.depth) for e in edges}


def test_outgoing_edges_of_a_page(world: PageWriter) -> None:
    edges = neighbors(world.db, "people/bob-martinez", None, direction="out")
    assert _triples(edges) == {
        ("people/bob-martinez", "reports_to", "people/alice-chen", 1),
        ("people/bob-martinez", "works_at", "companies/globex", 1),
    }
    assert {e.to_title for e in edges} == {"Alice Chen", "Globex"}


def test_incoming_edges_with_a_verb_filter(world: PageWriter) -> None:
    edges = neighbors(world.db, "people/alice-chen", None, verbs=["reports_to"], direction="in")
    assert _triples(edges) == {
        ("people/bob-martinez", "reports_to", "people/alice-chen", 1),
        ("people/carol-diaz", "reports_to", "people/alice-chen", 1),
    }


def test_both_directions_and_unresolved_edges_left_out(world: PageWriter) -> None:
    edges = neighbors(world.db, "meetings/2026-09-25-standup", None)
    assert _triples(edges) == {
        ("meetings/2026-09-25-standup", "attended", "people/bob-martinez", 1),
    }


def test_one_edge_written_two_ways_is_listed_once_with_its_origins(world: PageWriter) -> None:
    world.put("people", person("Dan Wu", reports_to="Alice Chen", summary="Reports to Alice Chen."))
    edges = neighbors(world.db, "people/dan-wu", None, direction="out")
    assert [(e.verb, e.to_id, e.origins) for e in edges] == [
        ("reports_to", "people/alice-chen", ("field", "prose"))
    ]


def test_depth_two_follows_the_neighbours(world: PageWriter) -> None:
    edges = neighbors(world.db, "people/carol-diaz", None, direction="out", depth=2)
    assert _triples(edges) == {
        ("people/carol-diaz", "reports_to", "people/alice-chen", 1),
        ("people/alice-chen", "works_at", "companies/globex", 2),
    }
    both = neighbors(world.db, "people/carol-diaz", None, depth=2)
    assert ("meetings/2026-09-08-kickoff", "attended", "people/alice-chen", 2) in _triples(both)
    assert {e.depth for e in both if "people/carol-diaz" in (e.from_id, e.to_id)} == {1}


def test_an_edge_appears_only_when_both_ends_are_in_scope(world: PageWriter) -> None:
    edges = neighbors(world.db, "people/alice-chen", {"people"})
    assert {e.from_id.split("/")[0] for e in edges} == {"people"}
    assert {e.to_id.split("/")[0] for e in edges} == {"people"}
    assert len(edges) == 2  # Bob and Carol report to her; meetings and Globex are hidden
    deep = neighbors(world.db, "people/carol-diaz", {"people"}, depth=2)
    assert deep and all(not e.to_id.startswith(("companies/", "meetings/")) for e in deep)
    assert deep and all(not e.from_id.startswith(("companies/", "meetings/")) for e in deep)


def test_a_start_page_out_of_scope_is_reported_like_a_missing_one(world: PageWriter) -> None:
    with pytest.raises(NotFoundError) as hidden:
        neighbors(world.db, "companies/globex", {"people"})
    with pytest.raises(NotFoundError) as missing:
        neighbors(world.db, "companies/nothing", {"people"})
    assert str(hidden.value).replace("globex", "X") == str(missing.value).replace("nothing", "X")


def test_bad_direction_and_depth_are_user_errors(world: PageWriter) -> None:
    with pytest.raises(UserError, match="direction"):
        neighbors(world.db, "people/alice-chen", None, direction="sideways")
    with pytest.raises(UserError, match="depth"):
        neighbors(world.db, "people/alice-chen", None, depth=3)


def test_neighbors_accepts_a_connection(world: PageWriter) -> None:
    with world.db.connection() as conn:
        edges = neighbors(conn, "companies/globex", None, direction="in")
    assert {e.from_id for e in edges} == {
        "people/alice-chen",
        "people/bob-martinez",
        "meetings/2026-09-20-review",
    }


def test_entity_pages_lists_the_meetings_with_a_person_newest_first(world: PageWriter) -> None:
    alice = entity_pages(world.db, "people/alice-chen", "meetings")
    assert alice == ["meetings/2026-09-20-review", "meetings/2026-09-08-kickoff"]
    # The newer standup without Alice never competes.
    assert "meetings/2026-09-25-standup" not in alice
    bob = entity_pages(world.db, "people/bob-martinez", "meetings", newest_first=False)
    assert bob == ["meetings/2026-09-08-kickoff", "meetings/2026-09-25-standup"]


def test_entity_pages_with_verbs_direction_and_window(world: PageWriter) -> None:
    reports = entity_pages(
        world.db, "people/alice-chen", "people", verbs=["reports_to"], direction="in"
    )
    assert reports == ["people/bob-martinez", "people/carol-diaz"]
    assert entity_pages(world.db, "people/bob-martinez", "people", direction="in") == []
    window = entity_pages(
        world.db,
        "people/alice-chen",
        "meetings",
        start=dt.date(2026, 9, 1),
        end=dt.date(2026, 9, 10),
    )
    assert window == ["meetings/2026-09-08-kickoff"]
    assert entity_pages(world.db, "people/alice-chen", "meetings", limit=1) == [
        "meetings/2026-09-20-review"
    ]


def test_entity_pages_respects_scope(world: PageWriter) -> None:
    assert entity_pages(world.db, "people/alice-chen", "meetings", folders={"people"}) == []
    assert entity_pages(world.db, "people/alice-chen", "meetings", folders={"meetings"}) == []
    assert entity_pages(
        world.db, "people/alice-chen", "meetings", folders={"meetings", "people"}
    ) == ["meetings/2026-09-20-review", "meetings/2026-09-08-kickoff"]


# --------------------------------------------------------------------------- MCP tool


def test_kb_neighbors_tool_shows_only_edges_inside_the_token_scope(
    mcp_server: RunningServer,
) -> None:
    tag = uuid.uuid4().hex[:6]
    kb = mcp_server.kb()
    boss = kb.put_page("people", Page(title=f"Ada {tag}", type="person"), None).id
    kb.put_page(
        "people", Page(title=f"Ben {tag}", type="person", fields={"reports_to": f"Ada {tag}"}), None
    )
    kb.put_page(
        "meetings",
        Page(
            title=f"Sync {tag}",
            type="meeting",
            fields={"date": "2026-09-08", "attendees": [f"Ada {tag}"]},
        ),
        None,
    )
    _, people = mcp_server.token("people")
    _, both = mcp_server.token("people,meetings")
    narrow = call_tool(mcp_server, people, "kb_neighbors", {"page_id": boss})
    assert [(e["from_id"], e["verb"]) for e in narrow["edges"]] == [
        (f"people/ben-{tag}", "reports_to")
    ]
    wide = call_tool(mcp_server, both, "kb_neighbors", {"id": boss, "verb": "attended,reports_to"})
    assert {e["verb"] for e in wide["edges"]} == {"attended", "reports_to"}
    inward = call_tool(
        mcp_server, both, "kb_neighbors", {"id": boss, "verbs": ["reports_to"], "direction": "in"}
    )
    assert [e["from_title"] for e in inward["edges"]] == [f"Ben {tag}"]
    with pytest.raises(ToolCallError, match="no page") as hidden:
        call_tool(mcp_server, people, "kb_neighbors", {"id": f"meetings/2026-09-08-sync-{tag}"})
    with pytest.raises(ToolCallError, match="no page") as missing:
        call_tool(mcp_server, people, "kb_neighbors", {"id": f"meetings/2026-09-08-none-{tag}"})
    assert hidden.value.server_message.replace("sync", "X") == (
        missing.value.server_message.replace("none", "X")
    )


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def cli_kb(
    make_kb: MakeKB, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[list[str]]:
    """A knowledge base with a few linked pages; yields the CLI's leading arguments."""
    monkeypatch.setenv("DATABASE_URL", database_url)
    config = tmp_path / "config.yaml"
    config.write_text("embedding:\n  provider: hash\n  dims: 384\n", encoding="utf-8")
    for w in open_writer(make_kb, database_url):
        w.put("people", person("Alice Chen", aliases=("Alice",)))
        w.put("people", person("Bob Martinez", reports_to="Alice Chen"))
        w.put("meetings", meeting("Kickoff", "2026-09-08", ("Alice", "Bob Martinez")))
        yield ["--kb", str(w.kb.paths.root), "--config", str(config)]


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_neighbors_command(cli_kb: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, *cli_kb, "neighbors", "people/alice-chen", "--json")
    assert code == 0
    data = json.loads(out)
    assert {(e["from_id"], e["verb"]) for e in data["edges"]} == {
        ("people/bob-martinez", "reports_to"),
        ("meetings/2026-09-08-kickoff", "attended"),
    }
    code, out, _ = run_cli(
        capsys,
        *cli_kb,
        "neighbors",
        "people/alice-chen",
        "--verbs",
        "reports_to",
        "--direction",
        "in",
        "--folders",
        "people",
    )
    assert code == 0
    assert "people/bob-martinez --reports_to--> people/alice-chen" in out
    assert "kickoff" not in out


def test_neighbors_command_errors_are_one_line(
    cli_kb: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(capsys, *cli_kb, "neighbors", "people/nobody")
    assert code == 2 and "no page 'people/nobody'" in err and "Traceback" not in err
    code, _, err = run_cli(capsys, *cli_kb, "neighbors", "people/alice-chen", "--depth", "3")
    assert code == 2 and "depth" in err


def test_resolve_command(cli_kb: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, *cli_kb, "resolve", "alice", "--json")
    assert code == 0
    data = json.loads(out)
    assert (data["verdict"], data["candidates"][0]["why"]) == ("exists", "alias_hit")
    assert data["candidates"][0]["id"] == "people/alice-chen"
    code, out, _ = run_cli(capsys, *cli_kb, "resolve", "Kickoff", "--date", "2026-09-09")
    assert code == 0 and "new" in out
    code, out, _ = run_cli(
        capsys, *cli_kb, "resolve", "Kickoff", "--folder", "meetings", "--date", "2026-09-08"
    )
    assert code == 0 and "exists" in out and "meetings/2026-09-08-kickoff" in out
    code, _, err = run_cli(capsys, *cli_kb, "resolve", "Kickoff", "--date", "soon")
    assert code == 2 and "not a date" in err
