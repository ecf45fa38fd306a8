"""Retrieval arms against a real PostgreSQL: scope filtering in SQL, windows, matching."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

import numpy as np
import pytest

from memserver.search import arms, source_arms
from memserver.search.fusion import Hit
from memserver.search.intent import GraphPlan, analyze, plan_graph
from memserver.search.text_query import TextQuery
from memserver.search.types import SOURCE_PREFIX
from tests.memserver.search.search_pages import PUBLIC, World, search_world

__all__ = ["search_world"]

ALL = (*PUBLIC, "hr")

T = TypeVar("T")


def intent(world: World, text: str, folders: tuple[str, ...] = ALL) -> TextQuery:
    return TextQuery.of(analyze(text, world.kb.schema, folders))


def run(world: World, fn: Callable[..., T], *args: object, **kw: object) -> T:
    with world.kb.db.connection() as conn:
        return fn(conn, *args, **kw)


def nearest(world: World, vector: np.ndarray) -> list[Hit]:
    """The source vector arm's hits."""
    with world.kb.db.connection() as conn:
        return source_arms.nearest_sentences(conn, world.kb.db, vector).hits


def _keyword(world: World, folders: tuple[str, ...]) -> list[Hit]:
    return run(world, arms.keyword, intent(world, "Alice Chen compensation Globex"), folders)


def _vector(world: World, folders: tuple[str, ...]) -> list[Hit]:
    vector = world.kb.embedder.embed_query("Alice Chen compensation review")
    return run(world, arms.vector, world.kb.db, vector, folders)


def _title(world: World, folders: tuple[str, ...]) -> list[Hit]:
    return run(
        world, arms.title, analyze("Alice Chen compensation review", world.kb.schema, ALL), folders
    )


def _dated(world: World, folders: tuple[str, ...]) -> list[Hit]:
    return run(world, arms.dated, folders, dt.date(2026, 11, 1), dt.date(2026, 12, 1))


def _graph(world: World, folders: tuple[str, ...]) -> list[Hit]:
    plan = GraphPlan(world.id("Alice Chen"), "hr", None, "both", "linked")
    return run(world, arms.graph, [plan], folders)


@pytest.mark.parametrize("arm", [_keyword, _vector, _title, _dated, _graph])
def test_every_arm_keeps_out_of_scope_pages_in_the_database(
    search_world: World, arm: Callable[[World, tuple[str, ...]], list[Hit]]
) -> None:
    hr_page = search_world.id("Alice Chen compensation review")
    with_hr = arm(search_world, ALL)
    assert hr_page in {h.id for h in with_hr}  # the page would match ...
    scoped = arm(search_world, PUBLIC)
    assert hr_page not in {h.id for h in scoped}  # ... but never leaks
    assert {h.folder for h in scoped} <= set(PUBLIC)  # nor does any page outside the scope


def test_timeline_arm_is_scoped_and_windowed(search_world: World) -> None:
    october = (dt.date(2026, 10, 1), dt.date(2026, 11, 1))
    query = intent(search_world, "invoice")
    found = run(search_world, arms.timeline, query, ALL, *october)
    assert found[0].id == search_world.id("Globex")
    assert found[0].date == dt.date(2026, 10, 27)  # newest matching entry first
    assert run(search_world, arms.timeline, query, ("people", "meetings"), *october) == []
    assert (
        run(search_world, arms.timeline, query, ALL, dt.date(2026, 6, 1), dt.date(2026, 7, 1)) == []
    )


def test_keyword_matches_an_identifier_exactly(search_world: World) -> None:
    found = run(search_world, arms.keyword, intent(search_world, "INV-2026-044"), PUBLIC)
    assert found[0].id == search_world.id("Globex") and found[0].detail == "all_terms"
    assert run(search_world, arms.keyword, intent(search_world, "INV-2026-045"), PUBLIC) == []


def test_keyword_finds_mongolian_words_with_case_endings(search_world: World) -> None:
    found = run(search_world, arms.keyword, intent(search_world, "Трейдтэй"), PUBLIC)
    ids = [h.id for h in found]
    assert search_world.id("Номин Трейд") in ids


def test_keyword_window_uses_chunk_dates(search_world: World) -> None:
    query = intent(search_world, "roadmap review")
    july = run(
        search_world,
        arms.keyword,
        query,
        PUBLIC,
        start=dt.date(2026, 7, 1),
        end=dt.date(2026, 8, 1),
    )
    assert [h.id for h in july] == [search_world.id("Roadmap review", "2026-07-08")]


def test_vector_short_window_is_exact_and_windowed(search_world: World) -> None:
    vector = search_world.kb.embedder.embed_query("roadmap review")
    found = run(
        search_world,
        arms.vector,
        search_world.kb.db,
        vector,
        PUBLIC,
        start=dt.date(2026, 11, 1),
        end=dt.date(2026, 11, 8),
    )
    assert {h.id for h in found} == {
        search_world.id("Roadmap review", "2026-11-05"),
        search_world.id("Alice Chen"),  # its timeline chunk is dated 2026-11-05
    }


def test_title_arm_exact_alias_and_names_inside_the_question(search_world: World) -> None:
    bob = run(search_world, arms.title, analyze("Bob", search_world.kb.schema, PUBLIC), PUBLIC)
    assert bob[0].id == search_world.id("Bob Martinez") and bob[0].detail == "exact_alias"
    inside = run(
        search_world,
        arms.title,
        analyze("latest meeting with Bob Martinez", search_world.kb.schema, PUBLIC),
        PUBLIC,
    )
    assert inside[0].id == search_world.id("Bob Martinez")
    assert inside[0].detail == "title_in_question" and inside[0].name == "bob martinez"
    fuzzy = run(
        search_world, arms.title, analyze("Dana Whitfeld", search_world.kb.schema, PUBLIC), PUBLIC
    )
    assert fuzzy[0].id == search_world.id("Dana Whitfield") and fuzzy[0].detail == "fuzzy_title"


def test_title_arm_strips_mongolian_endings(search_world: World) -> None:
    found = run(
        search_world, arms.title, analyze("Номин Трейдтэй", search_world.kb.schema, PUBLIC), PUBLIC
    )
    assert found[0].id == search_world.id("Номин Трейд")


def test_graph_plan_follows_reports_to_inward(search_world: World) -> None:
    schema = search_world.kb.schema
    question = analyze("who reports to Tom Becker", schema, PUBLIC)
    names = run(search_world, arms.title, question, PUBLIC)
    plans = plan_graph(names[:1], question, schema, PUBLIC)
    assert plans[0].verbs == ("reports_to",) and plans[0].direction == "in"
    found = run(search_world, arms.graph, plans, PUBLIC)
    assert [h.id for h in found] == [search_world.id("Sofia Rossi")]
    reverse = analyze("who does Tom Becker report to", schema, PUBLIC)
    plans = plan_graph(run(search_world, arms.title, reverse, PUBLIC)[:1], reverse, schema, PUBLIC)
    assert [h.id for h in run(search_world, arms.graph, plans, PUBLIC)] == [
        search_world.id("Alice Chen")
    ]


def test_sources_arms_one_hit_per_file(search_world: World) -> None:
    found = run(search_world, source_arms.source_keyword, intent(search_world, "INV-2026-044"))
    assert [h.id for h in found] == ["source/notes/2026-10-02-invoice-followup.md"]
    assert found[0].folder == "source" and found[0].date == dt.date(2026, 10, 2)
    vector = search_world.kb.embedder.embed_query("Globex go-live checklist")
    near = nearest(search_world, vector)
    assert len({h.id for h in near}) == len(near) == 3


def test_hubness_is_closeness_to_the_rest_of_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """A family of near-identical sentences sits close to each other; a sentence standing
    alone does not. Within a pool a vector is not its own neighbour."""
    monkeypatch.setattr(source_arms, "SOURCES", replace(source_arms.SOURCES, hub_neighbours=2))
    rng = np.random.default_rng(3)
    base = rng.normal(size=16)
    family = np.stack([base + 0.05 * rng.normal(size=16) for _ in range(4)])
    loner = (base + 1.5 * rng.normal(size=16))[None, :]
    pool = np.vstack([family, loner])
    hub = source_arms.hubness(pool, pool, within=True)
    assert hub[:4].min() > 0.95 > hub[4]
    assert source_arms.hubness(family[:2], family[:2], within=True).tolist() == [0.0, 0.0]
    outside = source_arms.hubness(loner, family, within=False)  # the loner, not in the pool
    assert outside[0] == pytest.approx(hub[4], abs=1e-5)
    near = source_arms.Hubs(family, {("a.md", "in the pool"): 0.9}, 0.5, active=True)
    keys = [("a.md", "in the pool"), ("b.md", "outside it")]
    vectors = np.vstack([family[0], loner[0]])
    damped = near.damp(keys, np.array([0.8, 0.8]), vectors)
    beyond = source_arms.hubness(loner, family, within=False)[0]
    weight = source_arms.SOURCES.hub_weight
    assert damped.tolist() == pytest.approx([0.8 - weight * 0.4, 0.8 - weight * (beyond - 0.5)])
    idle = dataclasses.replace(near, active=False)  # a pool too small to tell
    assert idle.damp(keys, np.array([0.8, 0.8]), vectors).tolist() == [0.8, 0.8]


def test_the_source_vector_arm_damps_hubs_on_the_cosine_scale(
    search_world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With damping the arm's scores move off the raw cosines, by hub_weight x (a
    sentence's hubness - the pool's mean), and the files the keyword arm found beyond the
    pool are damped against that pool the same way; without it they are the cosines."""
    monkeypatch.setattr(source_arms, "SOURCES", replace(source_arms.SOURCES, hub_neighbours=1))
    db = search_world.kb.db
    vector = search_world.kb.embedder.embed_query("Globex go-live checklist")
    with search_world.kb.db.connection() as conn:
        near = source_arms.nearest_sentences(conn, db, vector)
        paths = [h.id.removeprefix(SOURCE_PREFIX) for h in near.hits]
        raw = {h.id: h.score for h in source_arms.source_cosines(conn, db, vector, paths)}
        damped = source_arms.source_cosines(conn, db, vector, paths, near)
    assert len(near.own.vectors) >= 3 and near.own.mean > 0
    assert [h.score for h in near.hits] == sorted((h.score for h in near.hits), reverse=True)
    assert {h.id: h.score for h in damped} == pytest.approx({h.id: h.score for h in near.hits})
    assert any(abs(h.score - raw[h.id]) > 1e-4 for h in near.hits)
    monkeypatch.setattr(source_arms, "SOURCES", replace(source_arms.SOURCES, hub_weight=0.0))
    plain = nearest(search_world, vector)
    assert {h.id: h.score for h in plain} == pytest.approx(raw)


def test_source_cosines_score_given_files_like_the_vector_arm(search_world: World) -> None:
    db = search_world.kb.db
    vector = search_world.kb.embedder.embed_query("Globex go-live checklist")
    with search_world.kb.db.connection() as conn:
        pool = source_arms.nearest_sentences(conn, db, vector)
    near = {h.id: h.score for h in pool.hits}
    paths = [i.removeprefix(SOURCE_PREFIX) for i in near]
    scored = run(search_world, source_arms.source_cosines, db, vector, paths[1:], pool)
    assert [h.id for h in scored] == list(near)[1:]  # the same order, the files asked only
    assert scored and all(abs(h.score - near[h.id]) < 1e-6 for h in scored)
    assert run(search_world, source_arms.source_cosines, db, vector, []) == []


def test_source_text_ranks_only_files_holding_a_word(search_world: World) -> None:
    query = intent(search_world, "Globex invoice accounts")
    invoice = "notes/2026-10-02-invoice-followup.md"
    found = run(
        search_world, source_arms.source_text_ranks, query, [invoice, "notes/2026-06-01-kickoff.md"]
    )
    assert [h.id for h in found] == [SOURCE_PREFIX + invoice]
    assert found[0].detail == "all_terms" and found[0].score > 0
    partial = run(
        search_world, source_arms.source_text_ranks, intent(search_world, "Globex zebra"), [invoice]
    )
    assert [h.detail for h in partial] == ["some_terms"]


def test_source_rank_weighs_a_rare_word_above_a_common_one(search_world: World) -> None:
    query = intent(search_world, "Globex payable")  # Globex: two notes; payable: one
    ranking = run(search_world, source_arms.source_rank_sql, query)
    assert ranking.params["idf1"] > ranking.params["idf0"] > 0
    assert ranking.idf_total == ranking.params["idf0"] + ranking.params["idf1"]
    assert ranking.share(ranking.params["idf1"]) == ranking.params["idf1"] / ranking.idf_total
    assert ranking.share(ranking.idf_total * 2) == 1.0
    found = run(
        search_world, source_arms.source_keyword, intent(search_world, "Globex tablets payable")
    )
    assert {h.id for h in found} == {
        "source/notes/2026-10-02-invoice-followup.md",
        "source/notes/2026-11-16-call-with-bob.md",
    }


def test_a_source_hit_carries_the_share_of_the_question_it_holds(search_world: World) -> None:
    """Both notes hold "Globex"; only the invoice note holds the rarer "payable" too, so
    its vote in the fusion is whole and the other note's a part."""
    found = run(search_world, source_arms.source_keyword, intent(search_world, "Globex payable"))
    share = {h.id.rsplit("/", 1)[-1]: h.share for h in found}
    assert share["2026-10-02-invoice-followup.md"] == pytest.approx(1.0)
    assert 0 < share["2026-11-16-call-with-bob.md"] < 0.5
    ranks = run(
        search_world,
        source_arms.source_text_ranks,
        intent(search_world, "Globex payable"),
        ["notes/2026-11-16-call-with-bob.md"],
    )
    assert ranks[0].share == pytest.approx(share["2026-11-16-call-with-bob.md"])


def test_source_files_holding_a_rare_name_are_marked(
    search_world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name only one chunk holds ("Zgorzelec") names its file; a name two files hold
    ("Globex") does not, nor does an ordinary word as rare ("payable"), and in a tiny
    corpus rarity means nothing at all."""
    query = intent(search_world, "Globex accounts in Zgorzelec")
    found = run(search_world, source_arms.source_keyword, query)
    assert found and all(h.detail != "rare_term" for h in found)  # 3 sources: below rare_min_chunks
    monkeypatch.setattr(source_arms, "SOURCES", replace(source_arms.SOURCES, rare_min_chunks=0))
    monkeypatch.setattr(source_arms, "SOURCES", replace(source_arms.SOURCES, rare_df=1))
    marked = {
        h.id
        for h in run(search_world, source_arms.source_keyword, query)
        if h.detail == "rare_term"
    }
    assert marked == {"source/notes/2026-10-02-invoice-followup.md"}
    plain = run(search_world, source_arms.source_keyword, intent(search_world, "Globex payable"))
    assert plain and all(h.detail != "rare_term" for h in plain)


def test_amounts_are_identifiers_but_plain_numbers_are_not() -> None:
    from memserver.search.intent import identifiers

    assert identifiers("Rustam second quote $27,950 in 2 weeks of 2026") == ["$27,950"]
    assert identifiers("repairs around 18,400 and INV-2026-044") == ["INV-2026-044", "18,400"]
    assert identifiers("€1.2 million on 2026-09-15") == ["€1.2"]


def test_names_are_the_words_written_as_names() -> None:
    from memserver.search.intent import written_names

    assert written_names("Helga note about the Zgorzelec visit in Q3") == {"zgorzelec", "q3"}
    assert written_names("Insurance got more expensive") == set()  # first word: any sentence
    assert written_names("ask Бат about Дархан") == {"бат", "дархан"}


def test_the_text_query_knows_which_terms_name_something(search_world: World) -> None:
    query = intent(search_world, "Globex accounts payable in Zgorzelec INV-2026-044")
    named = {query.terms[i][0] for i in query.naming}
    assert named == {"zgorzelec", '"INV-2026-044"'}


def test_keyword_finds_an_abbreviation_by_the_words_it_stands_for(search_world: World) -> None:
    # Bob's page writes "VP of Operations"; the question spells the title out
    asked = intent(search_world, "vice president of operations")
    found = run(search_world, arms.keyword, asked, PUBLIC)
    assert found and found[0].id == search_world.id("Bob Martinez"), found
    assert found[0].detail == "all_terms"


def test_a_name_written_with_an_abbreviation_is_named_by_its_words(search_world: World) -> None:
    # a page titled "Globex ETA Rollout" is named by a question spelling "ETA" out
    asked = analyze(
        "who owns the Globex estimated time of arrival rollout", search_world.kb.schema, PUBLIC
    )
    assert "globex eta rollout" in asked.ngrams
    assert "globex estimated time of arrival rollout" in asked.ngrams
