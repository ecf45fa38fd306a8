"""The search pipeline against a real PostgreSQL: time, ordering, scope, modes, degraded."""

from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from memserver import cli
from memserver.clients.config import EndpointSettings
from memserver.clients.embed import HashEmbedder
from memserver.clients.laya import LayaClient
from memserver.clients.llm import Reranker
from memserver.errors import NotFoundError, UserError
from memserver.routing.router import Router
from memserver.search import source_arms
from memserver.search.pipeline import Searcher, SearchRequest, SearchResponse
from memserver.search.shaping import OUTSIDE_WINDOW as OUTSIDE
from tests.fixtures.llm_server import HTTPError, LayaServer, LLMServer
from tests.memserver.search.search_pages import NOW, PUBLIC, World, search_world

__all__ = ["search_world"]

PAGE_ARMS = {"keyword", "vector", "title", "timeline", "dated", "graph"}
RESULT_FIELDS = {"id", "title", "folder", "date", "score", "snippet", "ranks", "labels", "timeline"}


def ask(world: World, question: str, searcher: Searcher | None = None, **kw: Any) -> SearchResponse:
    request = SearchRequest(question, scope=kw.pop("scope", PUBLIC), now=NOW, **kw)
    return (searcher or world.searcher).search(request)


def ids(response: SearchResponse) -> list[str]:
    return [r.id for r in response.results]


def test_latest_meeting_with_a_person_follows_her_edges(search_world: World) -> None:
    response = ask(search_world, "latest meeting with Alice Chen")
    assert response.time["order"] == "newest"
    top = response.results[0]
    # The 2026-11-12 Globex review mentions Alice but she did not attend: it never wins.
    assert top.id == search_world.id("Roadmap review", "2026-11-05")
    assert "date_ordered" in top.labels and "graph:attended" in top.labels
    assert ids(response)[1] == search_world.id("Roadmap review", "2026-07-08")


def test_a_name_in_the_other_script_finds_the_person_by_transliteration(
    search_world: World,
) -> None:
    response = ask(search_world, "сүүлийн уулзалт Алистай")  # latest meeting with Alice
    assert response.time["order"] == "newest"
    top = response.results[0]
    assert top.id == search_world.id("Roadmap review", "2026-11-05")
    assert "graph:attended" in top.labels


def test_a_latin_name_written_in_cyrillic_finds_its_page_and_the_notes_naming_it(
    search_world: World,
) -> None:
    """ "Глобекстэй" (with Globex) and "Софиятай" (with Sofia) are names: the page titled
    Globex is named by the question, and the keyword arm finds "Globex" in English pages."""
    response = ask(search_world, "Глобекстэй долоо хоног бүрийн уулзалт")  # weekly meeting
    top = response.results[:3]
    globex = search_world.id("Globex")
    assert globex in [r.id for r in top]
    assert "title" in next(r for r in response.results if r.id == globex).ranks
    check_in = search_world.id("Globex weekly check-in", "2026-09-15")
    assert check_in in ids(response)[:5]
    # the keyword arm alone finds the English pages that say "Globex"
    said = ids(ask(search_world, "Глобексийн", arms=("keyword",)))
    assert check_in in said and search_world.id("Globex integration review") in said
    # a person by the first name alone: "Софиятай" (with Sofia) is Sofia Rossi
    people = ask(search_world, "Софиятай хийсэн ажил")
    assert ids(people)[0] == search_world.id("Sofia Rossi")
    # a business word stays the glossary's: "гэрээ" (contract) names no page
    plain = ask(search_world, "гэрээ")
    assert plain.results and all("title" not in r.ranks for r in plain.results)


def test_a_name_written_in_latin_letters_finds_the_note_that_writes_it_in_cyrillic(
    search_world: World,
) -> None:
    """ "Ulaanbaatar" is a name the question writes in Latin letters; the page writes
    "Улаанбаатарын": the keyword arm searches the name's Cyrillic spellings too."""
    nomin = search_world.id("Номин Трейд")
    said = ids(ask(search_world, "distributor based in Ulaanbaatar", arms=("keyword",)))
    assert nomin in said
    # a short name ("Tom": "том" is a word) is left alone
    assert nomin not in ids(ask(search_world, "Tom", arms=("keyword",)))


def test_first_meeting_with_a_person(search_world: World) -> None:
    response = ask(search_world, "first meeting with Alice")
    assert response.time["order"] == "oldest"
    assert ids(response)[0] == search_world.id("Roadmap review", "2026-07-08")


def test_latest_decision_about_a_topic_orders_by_date(search_world: World) -> None:
    assert ids(ask(search_world, "latest decision about pricing"))[0] == search_world.id(
        "Usage-based pricing"
    )
    assert ids(ask(search_world, "first pricing decision"))[0] == search_world.id(
        "Per-seat pricing"
    )


def test_an_order_word_orders_events_not_the_people_a_question_names(
    search_world: World,
) -> None:
    # "first" orders what happened; a person's page is dated only by its newest entry.
    response = ask(search_world, "When did Alice Chen first hear about pricing?")
    assert response.time["order"] == "oldest"
    ordered = [r for r in response.results if "date_ordered" in r.labels]
    assert ordered, ids(response)
    assert {r.folder for r in ordered} <= {"meetings", "decisions"}
    # A question about people orders people.
    people = ask(search_world, "Which person joined first?", folders=["people"])
    assert {r.folder for r in people.results if "date_ordered" in r.labels} <= {"people"}


def test_latest_is_on_or_before_now_and_next_is_the_first_after_it(search_world: World) -> None:
    planned = search_world.id("Globex go-live check")  # 2026-12-03, after NOW
    latest = ask(search_world, "latest meeting with Bob")
    assert latest.time["order"] == "newest"
    assert ids(latest)[0] == search_world.id("Globex integration review")
    assert planned not in [r.id for r in latest.results if "date_ordered" in r.labels]
    for question in ("next meeting with Bob", "upcoming meetings with Globex"):
        response = ask(search_world, question)
        assert response.time["order"] == "next", question
        assert ids(response)[0] == planned, question
        ordered = [r for r in response.results if "date_ordered" in r.labels]
        assert ordered and all(r.date and r.date > "2026-11-20" for r in ordered)
    mongolian = ask(search_world, "Globex-той хийх дараагийн уулзалт")
    assert mongolian.time["order"] == "next"
    assert ids(mongolian)[0] == planned
    # kb_latest's request shape: a folder, an entity, an order
    for order, expected in (
        ("newest", "Globex integration review"),
        ("next", "Globex go-live check"),
    ):
        request = SearchRequest("Globex", scope=PUBLIC, now=NOW, order=order, focus="meetings")
        assert ids(search_world.searcher.search(request))[0] == search_world.id(expected), order


def test_a_folder_named_with_a_window_puts_its_pages_in_the_window_first(
    search_world: World,
) -> None:
    november = {
        search_world.id("Roadmap review", "2026-11-05"),
        search_world.id("Globex integration review"),
        search_world.id("Номин Трейд гэрээний уулзалт"),
    }
    for question in ("meetings in November", "11-р сарын уулзалтууд", "calls in November"):
        response = ask(search_world, question, mode="conservative")
        assert set(ids(response)[:3]) == november, question
    day = ask(search_world, "meetings on 2026-11-12", mode="conservative")
    assert ids(day)[0] == search_world.id("Globex integration review")


def test_an_explicit_date_keeps_only_pages_of_that_day(search_world: World) -> None:
    response = ask(search_world, "meetings on 2026-09-15")
    assert response.time["window"]["start"].startswith("2026-09-15")
    assert ids(response)[0] == search_world.id("Globex weekly check-in")
    assert response.results and all(r.date == "2026-09-15" or r.timeline for r in response.results)


def test_a_relative_window_keeps_dated_pages_and_timeline_entries_inside_it(
    search_world: World,
) -> None:
    response = ask(search_world, "what happened last week")  # 2026-11-09 .. 2026-11-16
    found = ids(response)
    assert search_world.id("Globex integration review") in found
    assert search_world.id("Bob Martinez") in found  # a timeline entry on 2026-11-12
    bob = next(r for r in response.results if r.id == search_world.id("Bob Martinez"))
    assert [line.date.isoformat() for line in bob.timeline] == ["2026-11-12"]
    for result in response.results:
        inside = result.date is not None and "2026-11-09" <= result.date < "2026-11-16"
        assert inside or result.timeline


def test_mongolian_question_with_case_endings(search_world: World) -> None:
    response = ask(search_world, "Номин Трейдтэй хийсэн сүүлийн уулзалт")
    assert response.time["order"] == "newest"
    assert ids(response)[0] == search_world.id("Номин Трейд гэрээний уулзалт")


def test_who_reports_to_follows_the_edge_inward(search_world: World) -> None:
    response = ask(search_world, "who reports to Dana Whitfield")
    assert set(ids(response)[:2]) == {
        search_world.id("Alice Chen"),
        search_world.id("Bob Martinez"),
    }


def test_exact_title_is_pinned_and_identifiers_match(search_world: World) -> None:
    response = ask(search_world, "Globex")
    assert response.results[0].id == search_world.id("Globex")
    assert {"pinned", "exact_title_match"} <= set(response.results[0].labels)
    invoice = ask(search_world, "INV-2026-044")
    assert invoice.results[0].id == search_world.id("Globex")
    assert "keyword_exact" in invoice.results[0].labels
    assert next(line.text for line in invoice.results[0].timeline).startswith(
        "Invoice INV-2026-044"
    )


def test_scope_and_folder_narrowing(search_world: World) -> None:
    question = "Alice Chen compensation review"
    assert search_world.id(question) in ids(ask(search_world, question, scope=None))
    scoped = ids(ask(search_world, question))
    assert scoped and all(not i.startswith("hr/") for i in scoped)
    narrowed = ask(search_world, "Alice Chen", folders=["meetings"])
    assert narrowed.results and {r.folder for r in narrowed.results} == {"meetings"}
    with pytest.raises(NotFoundError, match="hr"):
        ask(search_world, question, folders=["hr"])


def test_sources_only_with_include_sources_and_source_access(search_world: World) -> None:
    plain = ask(search_world, "INV-2026-044")
    assert plain.results and all(r.folder != "source" for r in plain.results)
    response = ask(search_world, "INV-2026-044", include_sources=True)
    source = [r for r in response.results if r.folder == "source"]
    assert source[0].id == "source/notes/2026-10-02-invoice-followup.md"
    assert len({r.id for r in source}) == len(source)  # one result per source file
    assert source[0].date == "2026-10-02" and "source" in response.folders
    denied = ask(search_world, "INV-2026-044", include_sources=True, source_access=False)
    assert denied.results and all(r.folder != "source" for r in denied.results)
    assert "sources_not_in_scope" in denied.degraded


def test_both_source_arms_score_every_source_file_either_found(
    search_world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file the keyword arm found beyond the vector arm's pool (here a pool of one
    file, as in a KB with more sources than the pool) still gets its cosine and a vector
    rank, so both arms' evidence on it is fused."""
    monkeypatch.setattr(
        source_arms,
        "nearest_sentences",
        functools.partial(source_arms.nearest_sentences, limit=1),
    )
    response = ask(
        search_world,
        "Globex accounts payable",
        include_sources=True,
        arms={"source_keyword", "source_vector"},
    )
    found = [r for r in response.results if "source_keyword" in r.ranks]
    assert len(found) >= 2 and all("source_vector" in r.ranks for r in found)  # both notes
    assert sorted(r.ranks["source_vector"] for r in found)[-1] >= 2  # beyond the pool


def test_a_rare_name_in_the_sources_leaves_their_order_to_the_keyword_arm(
    search_world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one note naming Zgorzelec answers the question; the vector arm, which would
    rank the notes by meaning, is left out of the source fusion (no source_vector rank)."""
    monkeypatch.setattr(source_arms, "SOURCES", replace(source_arms.SOURCES, rare_min_chunks=0))
    monkeypatch.setattr(source_arms, "SOURCES", replace(source_arms.SOURCES, rare_df=1))
    response = ask(search_world, "Globex accounts in Zgorzelec", include_sources=True)
    sources = [r for r in response.results if r.folder == "source"]
    assert sources[0].id == "source/notes/2026-10-02-invoice-followup.md"
    assert sources and all("source_vector" not in r.ranks for r in sources)
    monkeypatch.setattr(
        source_arms, "SOURCES", replace(source_arms.SOURCES, rare_df=0)
    )  # nothing is rare: both arms rank the notes
    again = ask(search_world, "Globex accounts in Zgorzelec", include_sources=True).results
    assert any("source_vector" in r.ranks for r in again if r.folder == "source")
    # "payable" is as rare, but an ordinary word: the notes' meaning still counts
    monkeypatch.setattr(source_arms, "SOURCES", replace(source_arms.SOURCES, rare_df=1))
    plain = ask(search_world, "Globex accounts payable", include_sources=True).results
    assert any("source_vector" in r.ranks for r in plain if r.folder == "source")


def test_modes_set_count_and_budget(search_world: World) -> None:
    conservative = ask(search_world, "review", mode="conservative")
    assert conservative.mode == "conservative" and conservative.tokens <= 4_000
    assert conservative.results and all(len(r.snippet) <= 321 for r in conservative.results)
    tokenmax = ask(search_world, "review", mode="tokenmax")
    assert len(tokenmax.results) >= len(conservative.results)
    assert len(ask(search_world, "review", limit=2).results) == 2
    with pytest.raises(UserError, match="tokenmax"):
        ask(search_world, "review", mode="fast")


def test_every_response_reports_time_and_degraded(search_world: World) -> None:
    data = ask(search_world, "Globex last week").to_dict()
    assert set(data["time"]) >= {"window", "order", "soft_recency", "query"}
    assert "embedding_fallback_hash" in data["degraded"]  # the world uses the hash embedder
    for result in data["results"]:
        assert set(result) == RESULT_FIELDS


def test_a_vector_index_of_another_model_is_reported_and_keywords_still_answer(
    search_world: World,
) -> None:
    other = Searcher(search_world.kb.db, search_world.kb.schema, HashEmbedder(dims=64))
    response = ask(search_world, "Globex", other)
    assert "vector_arm_failed" in response.degraded
    assert response.results[0].id == search_world.id("Globex")
    assert "vector" not in response.arms


def _reranker(llm_server: LLMServer) -> Reranker:
    return Reranker(
        EndpointSettings(name="rerank", base_url=llm_server.base_url, model="r", timeout=5.0)
    )


def test_rerank_reorders_and_a_failing_reranker_keeps_the_order(
    search_world: World, llm_server: LLMServer
) -> None:
    db, schema, embedder = search_world.kb.db, search_world.kb.schema, search_world.kb.embedder
    plain = ask(search_world, "roadmap localization", mode="balanced")
    reranked = Searcher(db, schema, embedder, reranker=_reranker(llm_server))
    good = ask(search_world, "roadmap localization", reranked)
    assert good.results[0].ranks.get("rerank") == 1 and "reranker_unavailable" not in good.degraded
    llm_server.enqueue_rerank(HTTPError(500))
    failed = ask(search_world, "roadmap localization", reranked)
    assert "reranker_unavailable" in failed.degraded
    assert ids(failed) == ids(plain)
    conservative = ask(search_world, "roadmap localization", reranked, mode="conservative")
    assert conservative.results and all(
        "rerank" not in r.ranks for r in conservative.results
    )  # no rerank there
    reranked.close()


def test_routing_narrows_and_retries_on_the_whole_scope(
    search_world: World, laya_server: LayaServer
) -> None:
    endpoint = EndpointSettings(
        name="laya", base_url=laya_server.base_url, timeout=5.0, options=MappingProxyType({})
    )
    router = Router(search_world.kb.schema, laya=LayaClient(endpoint))
    searcher = Searcher(
        search_world.kb.db, search_world.kb.schema, search_world.kb.embedder, router=router
    )
    laya_server.answers = {"decisions": 0.9, "people": 0.1, "companies": 0.1, "meetings": 0.1}
    narrowed = ask(search_world, "pricing per seat", searcher, route=True)
    assert narrowed.routing == {"stage": "laya", "folders": ["decisions"], "retried": False}
    assert {r.folder for r in narrowed.results} == {"decisions"}
    named = ask(search_world, "Sofia Rossi pricing", searcher, route=True)
    assert set(named.folders) == {"decisions", "people"}  # the named person's folder stays
    retried = ask(search_world, "metering service", searcher, route=True)
    assert retried.routing is not None and retried.routing["retried"] is True
    assert ids(retried)[0] == search_world.id("Sofia Rossi")
    searcher.close()


def test_timeline_of_a_window_and_of_a_page(search_world: World) -> None:
    week = search_world.searcher.timeline(window="last week", scope=PUBLIC, now=NOW)
    dates = [e["date"] for e in week["events"]]
    assert (
        dates
        and dates == sorted(dates, reverse=True)
        and all("2026-11-09" <= d < "2026-11-16" for d in dates)
    )
    assert {e["id"] for e in week["events"]} >= {
        search_world.id("Globex integration review"),
        search_world.id("Bob Martinez"),
    }
    history = search_world.searcher.timeline(page=search_world.id("Globex"), scope=PUBLIC, now=NOW)
    assert [e["date"] for e in history["events"]] == ["2026-10-27", "2026-10-01"]
    with pytest.raises(NotFoundError):
        search_world.searcher.timeline(page="hr/x", scope=PUBLIC)
    with pytest.raises(UserError, match="window"):
        search_world.searcher.timeline(window="pricing", scope=PUBLIC)


def test_latest_of_a_folder_about_an_entity(search_world: World) -> None:
    request = SearchRequest("Alice Chen", scope=PUBLIC, now=NOW, order="newest", focus="meetings")
    response = search_world.searcher.search(request)
    assert ids(response)[:2] == [
        search_world.id("Roadmap review", "2026-11-05"),
        search_world.id("Roadmap review", "2026-07-08"),
    ]
    listing = search_world.searcher.search(
        dataclasses.replace(request, question="", order="oldest", focus="decisions")
    )
    assert ids(listing) == [
        search_world.id("Per-seat pricing"),
        search_world.id("Usage-based pricing"),
    ]


def test_cli_search_json_prints_one_object(
    search_world: World, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        f"database_url: {json.dumps(search_world.database_url)}\nembedding:\n  provider: hash\n",
        encoding="utf-8",
    )
    kb_dir = str(search_world.kb.paths.root)
    argv = ["--kb", kb_dir, "--config", str(config), "search", "--json", "--now", NOW.isoformat()]
    code = cli.main(
        [*argv, "--mode", "conservative", "--limit", "3", "latest", "meeting", "with", "Bob"]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "conservative" and data["time"]["order"] == "newest"
    assert data["results"][0]["id"] == search_world.id("Globex integration review")
    assert data["results"] and all(set(r) == RESULT_FIELDS for r in data["results"])
    assert len(data["results"]) <= 3
    assert cli.main([*argv, "--folders", "nope", "x"]) == 2
    assert "nope" in capsys.readouterr().err


def test_tokenmax_expands_the_question_and_adds_graph_neighbours(
    search_world: World, llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    from memserver.clients.llm import LLMClient

    llm = LLMClient(llm_endpoint)
    searcher = Searcher(
        search_world.kb.db, search_world.kb.schema, search_world.kb.embedder, llm=llm
    )
    llm_server.enqueue('{"variants": ["usage based billing per shipment", "pricing change"]}')
    response = ask(search_world, "how do we charge customers now", searcher, mode="tokenmax")
    assert {"keyword_x1", "keyword_x2", "vector_x1", "graph_augment"} <= set(response.arms)
    assert search_world.id("Usage-based pricing") in ids(response)[:3]
    assert len(llm_server.requests) == 1
    short = ask(search_world, "pricing", searcher, mode="tokenmax")  # under 3 words
    assert "keyword_x1" not in short.arms and len(llm_server.requests) == 1
    balanced = ask(search_world, "how do we charge customers now", searcher)
    assert "keyword_x1" not in balanced.arms  # expansion is tokenmax only
    llm_server.enqueue(HTTPError(500), HTTPError(500), HTTPError(500))
    failed = ask(search_world, "how do we charge customers now", searcher, mode="tokenmax")
    assert "expansion_unavailable" in failed.degraded and failed.results
    llm.close()


def test_tokenmax_searches_the_raw_sources_with_the_rewrites_too(
    search_world: World, llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    """A note in other words than the question is found by the LLM's rewrite: with
    ``include_sources`` the rewrites run the source arms as well."""
    from memserver.clients.llm import LLMClient

    llm = LLMClient(llm_endpoint)
    searcher = Searcher(
        search_world.kb.db, search_world.kb.schema, search_world.kb.embedder, llm=llm
    )
    kickoff = "source/notes/2026-06-01-kickoff.md"
    question = "mobile application for truckers"  # no word of it in any note
    plain = ask(search_world, question, searcher, include_sources=True)
    assert not any("source_keyword" in r.ranks for r in plain.results)
    llm_server.enqueue('{"variants": ["driver app notes"]}')
    response = ask(search_world, question, searcher, mode="tokenmax", include_sources=True)
    assert {"source_keyword_x1", "source_vector_x1"} <= set(response.arms)
    found = {r.id: r for r in response.results}
    assert found[kickoff].ranks["source_keyword_x1"] == 1
    llm_server.enqueue('{"variants": ["driver app notes"]}')
    denied = ask(
        search_world, question, searcher, mode="tokenmax", include_sources=True,
        source_access=False,
    )  # fmt: skip
    assert "keyword_x1" in denied.arms
    assert not any(arm.startswith("source_") for arm in denied.arms)
    llm.close()


def test_a_window_ranks_pages_inside_it_first_and_fills_in_the_rest(
    search_world: World,
) -> None:
    response = ask(search_world, "Globex go-live checklist on 2026-09-15")
    labels = [OUTSIDE in r.labels for r in response.results]
    assert response.results[0].id == search_world.id("Globex weekly check-in")  # that day
    assert not labels[0] and any(labels)
    assert labels == sorted(labels)  # every page inside the window before any outside it
    assert response.outside_window == sum(labels)
    outside = [r for r in response.results if OUTSIDE in r.labels]
    assert outside and all(r.date != "2026-09-15" for r in outside)
    # Nothing at all inside: the search is not empty, and says where its results are from.
    empty = ask(search_world, "Globex go-live checklist in March 2025")
    assert empty.results and empty.outside_window == len(empty.results)


def test_pages_and_notes_keep_budgets_of_their_own(search_world: World) -> None:
    """A question whose pages alone would fill the response still gets its notes, each
    kind within its share of the count, the page it names exactly still first, and the
    keyword and vector arms' first notes among them."""
    question = "Roadmap review"
    pages_only = ask(search_world, question, include_sources=True, arms=PAGE_ARMS, limit=4)
    assert len(pages_only.results) == 4
    both = ask(search_world, question, include_sources=True, limit=4)
    kinds = [r.folder == "source" for r in both.results]
    assert len(kinds) == 4 and 1 <= sum(kinds) <= 2
    assert both.results[0].id == pages_only.results[0].id and "pinned" in both.results[0].labels
    alone = {
        r.id
        for arm in ("source_keyword", "source_note", "source_vector")
        for r in ask(search_world, question, include_sources=True, arms={arm}).results[:1]
    }
    assert alone and alone <= {r.id for r in both.results}


@pytest.mark.parametrize(
    "question",
    [
        "Who is Alice Chen, and what was decided about pricing?",
        "What is the Globex go-live checklist? Who is Alice Chen, and what did INV-2026-044 say?",
        "Who is Alice Chen? What is Globex, when was the roadmap review, and what was decided "
        "about pricing?",
    ],
)
def test_a_question_of_several_parts_keeps_each_parts_best(
    search_world: World, question: str
) -> None:
    response = ask(search_world, question, include_sources=True)
    assert 2 <= len(response.parts) <= 4
    got = ids(response)
    for part in response.parts:
        alone = ask(search_world, part, include_sources=True).results
        assert alone[0].id in got, part
    assert len(got) == len(set(got)) <= 20
    single = ask(search_world, "Who is Alice Chen", include_sources=True)
    assert single.parts == ()


@pytest.mark.parametrize(
    "question",
    [
        "Zgorzelec",  # only a note says it
        "Globex go-live checklist in March 2025",  # nothing inside the window
        "latest word from Zgorzelec",
        "What did Alice Chen decide? And what is INV-2026-044?",
    ],
)
def test_a_search_that_found_anything_never_returns_an_empty_list(
    search_world: World, question: str
) -> None:
    found = [
        arm
        for arm in ("keyword", "vector", "title", "source_keyword", "source_note", "source_vector")
        if ask(search_world, question, include_sources=True, arms={arm}).results
    ]
    assert found
    assert ask(search_world, question, include_sources=True).results
