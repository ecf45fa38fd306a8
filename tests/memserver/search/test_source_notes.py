"""Raw sources as whole notes: the note-level keyword arm, the dates a note mentions, and
windows that prefer, never empty, a search."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from memserver.clients.embed import HashEmbedder
from memserver.index.source_notes import light_stem, words_of
from memserver.search.pipeline import Searcher, SearchRequest, SearchResponse
from memserver.search.settings import SOURCES
from memserver.search.shaping import OUTSIDE_WINDOW, fill_outside_window, nearness
from memserver.search.source_notes import note_keyword
from memserver.search.types import MODES, SearchResult
from memserver.store.knowledge_base import KnowledgeBase
from tests.fixtures.db import scratch_database

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
SCHEMA = """\
timezone: UTC
folders:
  - name: notes
    type: note
    description: Notes.
"""
# Conversation notes, one per session, as the LoCoMo benchmark writes them.
NOTES = {
    "session-01.md": (
        "2023-05-08",
        "Caroline: I went to a support group yesterday and it was powerful.\n"
        "Melanie: That is great. We went camping in the mountains last year.\n"
        "Caroline: Sweden was where I grew up, we moved when I was ten.\n",
    ),
    "session-02.md": (
        "2023-05-25",
        "Melanie: The kids loved the camping trip, they roasted marshmallows.\n"
        "Caroline: Camping sounds fun. Did the kids sleep in the tent?\n"
        "Melanie: They did, and the camping stove worked fine this time.\n",
    ),
    "session-03.md": (
        "2023-06-09",
        "Caroline: I gave a talk at a school about my journey.\n"
        "Melanie: I painted a sunrise over the lake and I am going hiking on Sunday.\n",
    ),
    "session-04.md": (
        "2023-06-27",
        "Melanie: I read a book about camping gear, one chapter on stoves.\n"
        "Caroline: My pottery class starts next week.\n",
    ),
}


@dataclass
class Notes:
    kb: KnowledgeBase
    searcher: Searcher

    def ask(self, question: str) -> SearchResponse:
        request = SearchRequest(question, now=NOW, include_sources=True)
        return self.searcher.search(request)


def write_notes(kb_dir: Path) -> None:
    (kb_dir / "source").mkdir(parents=True)
    (kb_dir / "schema.yaml").write_text(SCHEMA, encoding="utf-8")
    for rel, (day, body) in NOTES.items():
        text = f"---\ndate: {day}\n---\n{body}"
        (kb_dir / "source" / rel).write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def notes(
    tmp_path_factory: pytest.TempPathFactory, pg_url: str, _db_template: str
) -> Iterator[Notes]:
    kb_dir = tmp_path_factory.mktemp("notes") / "kb"
    write_notes(kb_dir)
    with scratch_database(pg_url, _db_template, "memnotes") as url:
        kb = KnowledgeBase.open(kb_dir, embedder=HashEmbedder(), database_url=url)
        kb.reindex()
        searcher = Searcher.for_kb(kb, route=False)
        try:
            yield Notes(kb, searcher)
        finally:
            searcher.close()
            kb.close()


def source(rel: str) -> str:
    return f"source/{rel}"


def test_the_index_holds_each_notes_words_and_mentions(notes: Notes) -> None:
    with notes.kb.db.connection() as conn:
        mentions = conn.execute(
            "SELECT start_date, end_date FROM source_mentions WHERE path = 'session-01.md'"
            " ORDER BY start_date"
        ).fetchall()
        words = conn.execute(
            "SELECT term, tf FROM source_terms WHERE path = 'session-02.md'"
            " AND term IN ('camp', 'kid', 'may', '2023', 'thursday', 'melani')"
        ).fetchall()
    assert mentions == [
        (dt.date(2022, 1, 1), dt.date(2023, 1, 1)),
        (dt.date(2023, 5, 7), dt.date(2023, 5, 8)),
    ]
    # Its text, speakers and frontmatter included, and its date written out (ISO, then
    # "25 May 2023 Thursday"); lightly stemmed ("camping" -> "camp", "kids" -> "kid").
    assert dict(words) == {"camp": 3, "kid": 2, "may": 1, "2023": 3, "thursday": 1, "melani": 2}


def test_unchanged_notes_get_their_note_rows_without_being_embedded_again(notes: Notes) -> None:
    with notes.kb.db.transaction() as conn:
        conn.execute("DELETE FROM source_terms WHERE path = 'session-03.md'")
        conn.execute("UPDATE source_docs SET note_key = NULL WHERE path = 'session-03.md'")
    report = notes.kb.reindex()
    assert report.sources_indexed == 0  # no note cut or embedded again
    with notes.kb.db.connection() as conn:
        row = conn.execute(
            "SELECT count(*) FROM source_terms WHERE path = 'session-03.md'"
        ).fetchone()
    assert row is not None and row[0] > 10


def test_the_note_arm_ranks_a_note_by_all_its_turns(notes: Notes) -> None:
    with notes.kb.db.connection() as conn:
        hits = note_keyword(conn, "What did the kids do on the camping trip?")
    assert hits[0].id == source("session-02.md")  # three turns on camping, kids, the trip
    assert hits[0].detail == "note" and hits[0].share == 1.0
    assert hits and all(0 < h.share <= 1 for h in hits)
    response = notes.ask("What did the kids do on the camping trip?")
    assert response.results[0].id == source("session-02.md")
    assert "source_note" in response.results[0].ranks
    assert "camping" in response.results[0].snippet


def test_a_word_no_note_holds_weighs_as_a_rare_word_not_more(notes: Notes) -> None:
    """The word "describe" is the asker's, in no note: it counts at its rarest idf, so the
    note that holds every other word keeps most of its vote."""

    def idf(df: int, n: int = len(NOTES)) -> float:
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    with notes.kb.db.connection() as conn:
        hits = note_keyword(conn, "How did the kids describe the camping trip?")
    assert hits[0].id == source("session-02.md")
    held = 2 * idf(1) + idf(3)  # "kids" and "trip" in one note, "camping" in three
    expected = (held / (held + idf(0))) ** SOURCES.gate_power
    assert hits[0].share == pytest.approx(expected)
    assert hits[0].share > 0.15  # three times the absent word's rarity left 0.02


def bag_of_words(weights: dict[str, float]) -> Callable[[str], np.ndarray | None]:
    """An embedder whose vector is the text's words, each at its weight (1 unless given):
    a word of little weight leaves the text's meaning where it was."""
    dims: dict[str, int] = {}

    def embed(text: str) -> np.ndarray | None:
        vector = np.zeros(32)
        for word in words_of(text):
            vector[dims.setdefault(word, len(dims))] += weights.get(word, 1.0)
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else None

    return embed


def test_a_word_no_note_holds_that_the_question_does_without_counts_as_its_rarest_held_word(
    notes: Notes,
) -> None:
    """ "describe" is in no note. When leaving it out barely moves the question's vector
    (less than leaving out the words the notes hold, or a stop word), the notes simply
    never use it: it counts as rare as "kids" or "trip" (one note each), not at the
    largest rarity there is. When it carries the question's meaning, it keeps that."""

    def idf(df: int, n: int = len(NOTES)) -> float:
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    question = "How did the kids describe the camping trip?"
    with notes.kb.db.connection() as conn:
        alone = note_keyword(conn, question)
        aside = note_keyword(conn, question, embed=bag_of_words({"describe": 0.2}))
        meant = note_keyword(conn, question, embed=bag_of_words({"describe": 3.0}))
    held = 2 * idf(1) + idf(3)
    assert aside[0].id == alone[0].id == source("session-02.md")
    assert aside[0].share == pytest.approx((held / (held + idf(1))) ** SOURCES.gate_power)
    assert aside[0].share > 2 * alone[0].share
    assert meant[0].share == pytest.approx(alone[0].share)


def test_a_long_question_costs_the_embedder_nothing_here(notes: Notes) -> None:
    """The test of a missing word embeds the question once a word: past
    ``SOURCES.incidental_vectors`` vectors a question keeps every rarity instead."""
    calls: list[str] = []
    embed = bag_of_words({"describe": 0.2})

    def counted(text: str) -> np.ndarray | None:
        calls.append(text)
        return embed(text)

    many = " ".join(f"w{i}" for i in range(SOURCES.incidental_vectors))
    question = f"How did the kids describe the camping trip {many}?"
    with notes.kb.db.connection() as conn:
        alone = note_keyword(conn, question)
        tested = note_keyword(conn, question, embed=counted)
    assert calls == []
    assert tested[0].id == alone[0].id and tested[0].share == pytest.approx(alone[0].share)
    with notes.kb.db.connection() as conn:
        note_keyword(conn, "How did the kids describe the camping trip?", embed=counted)
    assert 0 < len(calls) <= SOURCES.incidental_vectors


def test_a_note_mentioning_a_year_is_inside_a_window_on_that_year(notes: Notes) -> None:
    response = notes.ask("Where did Melanie go camping in 2022?")
    first = response.results[0]
    # Written in 2023, session 1 says "last year": it answers a question about 2022.
    assert first.id == source("session-01.md") and OUTSIDE_WINDOW not in first.labels
    assert "timeline_match" in first.labels
    # Nothing else is about 2022: the rest is filled in from the search without the
    # window, after the notes inside it, and the response says how many.
    rest = response.results[1:]
    assert rest and all(OUTSIDE_WINDOW in r.labels for r in rest)
    assert response.outside_window == len(rest)
    assert source("session-02.md") in [r.id for r in rest]


def test_a_window_with_nothing_inside_never_empties_the_search(notes: Notes) -> None:
    # "on Sunday" in the past tense is the latest Sunday before now (2026-11-29): no note.
    response = notes.ask("What did Caroline talk about at the school on Sunday?")
    assert response.time["window"]["start"].startswith("2026-11-29")
    assert response.results and response.results[0].id == source("session-03.md")
    assert response.outside_window == len(response.results) >= 3
    assert response.results and all(OUTSIDE_WINDOW in r.labels for r in response.results)


def test_filled_results_dated_near_the_window_come_first_among_close_scores() -> None:
    """A question dates what a note tells days after it happened: with nothing inside a
    one-day window, the note written four days later leads the one of two weeks later at
    a close score; a clearly better score still leads; an undated result keeps its own."""

    def hit(name: str, score: float, date: str | None) -> SearchResult:
        return SearchResult(source(name), name, "source", date, score, "", {}, ())

    window = (dt.date(2023, 5, 23), dt.date(2023, 5, 24))
    assert nearness("2023-05-23", *window) == 1.0
    assert nearness("2023-05-27", *window) > nearness("2023-05-11", *window) > 0
    assert nearness(None, *window) == nearness("2023-05-27", None, None) == 0.0
    wider = [
        hit("best.md", 0.97, "2023-01-01"),
        hit("far.md", 0.81, "2023-06-30"),
        hit("undated.md", 0.805, None),
        hit("near.md", 0.80, "2023-05-27"),
    ]
    kept, _, filled = fill_outside_window([], wider, 10, MODES["balanced"], window)
    assert [r.title for r in kept] == ["best.md", "near.md", "far.md", "undated.md"]
    assert filled == 4 and kept and all(OUTSIDE_WINDOW in r.labels for r in kept)
    same, _, _ = fill_outside_window([], wider, 10, MODES["balanced"])  # no window: as found
    assert [r.title for r in same] == ["best.md", "far.md", "undated.md", "near.md"]


def test_a_window_holding_enough_results_is_not_filled(notes: Notes) -> None:
    request = SearchRequest("camping in May 2023", now=NOW, include_sources=True, limit=2)
    response = notes.searcher.search(request)
    assert [r.id for r in response.results] == [source("session-02.md"), source("session-01.md")]
    assert response.outside_window == 0


def test_light_stems_meet_across_inflections() -> None:
    stems = {light_stem(w) for w in ("painting", "paintings", "painted", "paints", "paint")}
    assert stems == {"paint"}
    assert light_stem("hiking") == light_stem("hikes") == light_stem("hike")
    assert light_stem("running") == "run" and light_stem("studies") == "study"
    assert light_stem("gave") == light_stem("give") and light_stem("went") == "go"
    assert light_stem("speed") == "speed" and light_stem("class") == "class"
    assert light_stem("уулзсан") == "уулзсан" and light_stem("2023") == "2023"
