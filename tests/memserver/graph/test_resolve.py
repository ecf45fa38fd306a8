"""Entity resolution: exact slug, title, alias, fuzzy, semantic; dates, ambiguity, scope."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest

from memserver.clients.embed import HashEmbedder
from memserver.errors import NotFoundError, ToolCallError
from memserver.graph.resolve import ResolveResult, dated_folders, resolve
from memserver.kb.page import Page
from tests.fixtures.server import RunningServer
from tests.memserver.graph.graph_pages import (
    SCHEMA,
    PageWriter,
    call_tool,
    company,
    meeting,
    person,
)


@pytest.fixture
def world(writer: PageWriter) -> PageWriter:
    w = writer
    w.put("people", person("Alice Chen"))
    w.put("people", person("Bob Martinez", aliases=("Bob", "Боб Мартинес")))
    w.put("people", person("Alex Kim", aliases=("Alex",)))
    w.put("people", person("Alex Novak", aliases=("Alex",)))
    w.put("people", person("Энхтуяа Ганбаатар"))
    w.put("companies", company("Globex", summary="Freight forwarding customer in Shenzhen."))
    w.put("meetings", meeting("Weekly sync", "2026-09-08"))
    w.put("meetings", meeting("Weekly sync", "2026-09-15"))
    return w


def find(w: PageWriter, name: str, **kwargs: Any) -> ResolveResult:
    return resolve(w.db, None, name, kwargs.pop("folders", None), schema=SCHEMA, **kwargs)


def top(result: ResolveResult) -> tuple[str, str, str]:
    assert result.best is not None
    return result.verdict, result.best.id, result.best.why


def test_exact_slug(world: PageWriter) -> None:
    assert top(find(world, "alice-chen")) == ("exists", "people/alice-chen", "exact_slug")
    assert top(find(world, "people/alice-chen")) == ("exists", "people/alice-chen", "exact_slug")
    assert top(find(world, "[[people/alice-chen]]")) == (
        "exists",
        "people/alice-chen",
        "exact_slug",
    )


def test_exact_title_ignores_case_and_punctuation(world: PageWriter) -> None:
    assert top(find(world, "ALICE  chen")) == ("exists", "people/alice-chen", "exact_title")
    assert top(find(world, "энхтуяа ганбаатар")) == (
        "exists",
        "people/энхтуяа-ганбаатар",
        "exact_title",
    )


def test_alias_hit(world: PageWriter) -> None:
    result = find(world, "bob")
    assert top(result) == ("exists", "people/bob-martinez", "alias_hit")
    assert result.best is not None and result.best.score == pytest.approx(0.95)
    assert top(find(world, "БОБ МАРТИНЕС")) == ("exists", "people/bob-martinez", "alias_hit")


def test_fuzzy_title_is_probable_never_exists(world: PageWriter) -> None:
    result = find(world, "Bob Martines")
    assert top(result) == ("probable", "people/bob-martinez", "fuzzy_title")
    assert not result.ambiguous
    assert 0.5 <= result.candidates[0].score < 0.95
    assert top(find(world, "Alice")) == ("probable", "people/alice-chen", "fuzzy_title")


def test_a_name_in_the_other_script_resolves_by_transliteration(world: PageWriter) -> None:
    world.put("people", person("Batbayar Dorj"))
    # Cyrillic for a Latin title, with a case ending ("with Alice"), and the reverse
    assert top(find(world, "Алистай")) == ("probable", "people/alice-chen", "transliteration")
    assert top(find(world, "Батбаяр Дорж")) == (
        "probable",
        "people/batbayar-dorj",
        "transliteration",
    )
    result = find(world, "Enkhtuyaa Ganbaatar")
    assert top(result) == ("probable", "people/энхтуяа-ганбаатар", "transliteration")
    assert result.best is not None and result.best.score == pytest.approx(0.9)
    assert find(world, "Алекс").ambiguous  # two people called Alex, in either script
    # English writes with "A" what Mongolian writes with "Э": "Элис Чен" is Alice Chen
    assert top(find(world, "Элис Чен")) == ("probable", "people/alice-chen", "transliteration")
    assert find(world, "Элис Чен").best.score == pytest.approx(0.9)  # type: ignore[union-attr]
    assert find(world, "Зэд Куукс").verdict == "new"


def test_nothing_close_is_new(world: PageWriter) -> None:
    result = find(world, "Zed Quux")
    assert result.verdict == "new"
    assert result.candidates == ()
    assert find(world, "  ...  ").verdict == "new"


def test_two_pages_with_the_same_alias_are_ambiguous(world: PageWriter) -> None:
    result = find(world, "Alex")
    assert result.verdict == "probable"
    assert result.ambiguous
    assert {c.id for c in result.candidates[:2]} == {"people/alex-kim", "people/alex-novak"}
    assert {c.why for c in result.candidates[:2]} == {"alias_hit"}


def test_equally_fuzzy_pages_are_ambiguous(world: PageWriter) -> None:
    world.put("people", person("Sam Lee"))
    world.put("people", person("Sam Park"))
    result = find(world, "Sam")
    assert (result.verdict, result.ambiguous) == ("probable", True)
    assert {c.id for c in result.candidates[:2]} == {"people/sam-lee", "people/sam-park"}


def test_dated_folders_match_only_the_same_date(world: PageWriter) -> None:
    assert dated_folders(SCHEMA) == {"meetings"}
    both = find(world, "Weekly sync")
    assert (both.verdict, both.ambiguous) == ("probable", True)
    assert {c.id for c in both.candidates} == {
        "meetings/2026-09-08-weekly-sync",
        "meetings/2026-09-15-weekly-sync",
    }
    one = find(world, "Weekly sync", date="2026-09-15")
    assert top(one) == ("exists", "meetings/2026-09-15-weekly-sync", "exact_title")
    assert [c.effective_date for c in one.candidates] == [dt.date(2026, 9, 15)]
    assert find(world, "Weekly sync", date=dt.date(2026, 9, 22)).verdict == "new"
    # Entity folders ignore the date.
    assert top(find(world, "Alice Chen", date="2026-01-01"))[1] == "people/alice-chen"


def test_scope_and_folder_filter(world: PageWriter) -> None:
    assert find(world, "Alice Chen", folders={"companies"}).verdict == "new"
    assert find(world, "Alice Chen", folders={"people"}).verdict == "exists"
    assert find(world, "Alice Chen", folder="companies").verdict == "new"
    with pytest.raises(NotFoundError):
        find(world, "Alice Chen", folders={"companies"}, folder="people")
    with pytest.raises(NotFoundError):
        find(world, "Alice Chen", folder="nowhere")


def test_same_title_in_two_folders_is_ambiguous_unless_the_folder_is_given(
    world: PageWriter,
) -> None:
    world.put("people", person("Globex"))
    assert find(world, "Globex").ambiguous
    assert top(find(world, "Globex", folder="companies")) == (
        "exists",
        "companies/globex",
        "exact_title",
    )


def test_semantic_match_when_nothing_matches_by_name(world: PageWriter) -> None:
    embedder = HashEmbedder()
    # An index embedded with another model: the semantic step is skipped, not an error.
    other = resolve(world.db, HashEmbedder(dims=64), "freight forwarding Shenzhen", None)
    assert other.verdict == "new"
    result = resolve(world.db, embedder, "freight forwarding Shenzhen", None, schema=SCHEMA)
    assert result.best is not None
    assert (result.best.id, result.best.why) == ("companies/globex", "semantic")
    assert result.degraded == ("embedding_fallback_hash",)
    scoped = resolve(world.db, embedder, "freight forwarding Shenzhen", {"people"})
    assert (scoped.verdict, scoped.candidates) == ("new", ())  # Globex is out of scope


def test_exact_matches_skip_the_semantic_step(world: PageWriter) -> None:
    embedder = HashEmbedder()
    result = resolve(world.db, embedder, "Globex", None, schema=SCHEMA)
    assert [c.why for c in result.candidates] == ["exact_title"]
    assert result.degraded == ()


# --------------------------------------------------------------------------- MCP tool


def test_kb_resolve_tool_gives_verdict_advice_and_respects_scope(
    mcp_server: RunningServer,
) -> None:
    tag = uuid.uuid4().hex[:6]
    kb = mcp_server.kb()
    kb.put_page("people", Page(title=f"Roberto {tag}", type="person", aliases=(f"Rob{tag}",)), None)
    kb.put_page(
        "meetings",
        Page(title=f"Standup {tag}", type="meeting", fields={"date": "2026-09-08"}),
        None,
    )
    _, people = mcp_server.token("people")
    _, meetings = mcp_server.token("meetings")
    hit = call_tool(mcp_server, people, "kb_resolve", {"query": f"rob{tag}", "folder": "people"})
    assert (hit["verdict"], hit["candidates"][0]["why"]) == ("exists", "alias_hit")
    assert hit["candidates"][0]["id"] == f"people/roberto-{tag}"
    assert "kb_get_page" in hit["advice"]
    # Pages outside the token's folders are never candidates.
    assert (
        call_tool(mcp_server, meetings, "kb_resolve", {"name": f"Roberto {tag}"})["verdict"]
        == "new"
    )
    with pytest.raises(ToolCallError, match="no folder 'people' in your scope"):
        call_tool(mcp_server, meetings, "kb_resolve", {"name": "x", "folder": "people"})
    dated = {"name": f"standup {tag}", "day": "2026-09-08"}
    assert call_tool(mcp_server, meetings, "kb_resolve", dated)["verdict"] == "exists"
    dated["day"] = "2026-09-09"
    assert call_tool(mcp_server, meetings, "kb_resolve", dated)["verdict"] == "new"
