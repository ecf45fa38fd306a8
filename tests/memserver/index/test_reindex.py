"""Reindex: the index rebuilt from knowledge/ and source/, idempotent, never half a page."""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterator
from contextlib import AbstractContextManager
from datetime import date
from typing import Any

import pytest

from memserver.clients.config import EndpointSettings
from memserver.clients.llm import Reranker
from memserver.db.database import Database
from memserver.errors import NotFoundError
from memserver.index import indexer as indexing
from memserver.index import reindex as reindexing
from memserver.index.indexer import suspend_search_indexes
from memserver.kb.page import Page, TimelineEntry, page_slug, render_page
from memserver.search import source_arms
from memserver.search.pipeline import Searcher
from memserver.search.source_arms import closest_sentences, sentence_context
from memserver.search.types import SOURCE_PREFIX, SearchRequest
from memserver.store.knowledge_base import KnowledgeBase
from tests.fixtures.llm_server import LLMServer

PAGES = {
    "people": [
        Page(
            "Alice Chen",
            "person",
            fields={"role": "CTO", "company": "Acme Logistics"},
            aliases=("Alice",),
            sections={"Summary": "Alice runs engineering and reports to Maria Lopez."},
            timeline=(TimelineEntry(date(2026, 3, 1), "Became CTO.", "team/roster.md"),),
        ),
        Page(
            "Maria Lopez",
            "person",
            fields={"role": "CEO", "company": "Acme Logistics"},
            sections={"Summary": "Maria founded Acme."},
        ),
    ],
    "companies": [
        Page(
            "Acme Logistics",
            "company",
            fields={"status": "partner", "contract_value": 0},
            sections={"Summary": "Our own company."},
            timeline=(TimelineEntry(date(2020, 5, 1), "Founded."),),
        )
    ],
    "meetings": [
        Page(
            "Kickoff",
            "meeting",
            fields={"date": "2026-09-08", "attendees": ["Alice Chen", "Maria Lopez"]},
            sections={"Summary": "Kickoff with [[people/alice-chen]]."},
        )
    ],
}


def write(kb: KnowledgeBase, folder: str, page: Page) -> str:
    spec = kb.schema.folder(folder)
    slug = page_slug(page, spec)
    path = kb.paths.page_path(folder, slug)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_page(page, spec), encoding="utf-8")
    return f"{folder}/{slug}"


def write_all(kb: KnowledgeBase) -> list[str]:
    return [write(kb, folder, page) for folder, pages in PAGES.items() for page in pages]


TABLES = {
    "pages": "id, folder, slug, title, type, fields, effective_date, version, content_hash,"
    " body, title_norm, slug_norm, created_at, updated_at",
    "page_versions": "page_id, version, markdown, content_hash, written_by, note, created_at",
    "page_aliases": "page_id, folder, alias, alias_norm",
    "chunks": "id, page_id, folder, ordinal, section, text, embedding::text, stale, effective_date",
    "timeline_entries": "id, page_id, folder, ordinal, date, text, source",
    "links": "id, from_id, from_folder, verb, to_id, to_ref, to_ref_norm, to_folder, origin",
    "source_docs": "path, hash, doc_date, status, size, title, indexed_at, updated_at",
    "source_chunks": "id, path, ordinal, text, embedding::text, stale, doc_date",
}
GENERATED = ("id", "created_at", "updated_at", "indexed_at")


def snapshot(kb: KnowledgeBase, *, content_only: bool = False) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the index tables (without identity ids and times if content_only)."""
    out = {}
    with kb.db.connection() as conn:
        for table, columns in TABLES.items():
            names = [c.strip() for c in columns.split(",")]
            if content_only:
                names = [n for n in names if n not in GENERATED]
            select = ", ".join(names)
            out[table] = conn.execute(f"SELECT {select} FROM {table} ORDER BY {select}").fetchall()
    return out


def test_reindex_builds_the_index_from_files_and_sources(kb: KnowledgeBase) -> None:
    ids = write_all(kb)
    seen: list[tuple[int, int]] = []
    report = kb.reindex(on_progress=lambda done, total: seen.append((done, total)))
    assert (report.indexed, report.unchanged, report.removed, report.failed) == (4, 0, 0, ())
    assert report.sources_indexed == 28 and report.sources_unreadable == ()
    assert seen[-1][0] == seen[-1][1] == 4 + 28
    for page_id in ids:
        stored = kb.get_page(page_id)
        assert stored.version == 1
        assert stored.markdown == kb.paths.page_path(*page_id.split("/")).read_text("utf-8")
    with kb.db.connection() as conn:
        rows = conn.execute("SELECT from_id, to_ref, to_id FROM links").fetchall()
    links = {(f, r): t for f, r, t in rows}
    assert links[("meetings/2026-09-08-kickoff", "Maria Lopez")] == "people/maria-lopez"
    assert links[("people/alice-chen", "Maria Lopez")] == "people/maria-lopez"  # prose verb
    assert kb.history("people/alice-chen")[0].written_by == "reindex"


def test_reindex_twice_leaves_identical_rows(kb: KnowledgeBase) -> None:
    write_all(kb)
    kb.reindex()
    first = snapshot(kb)
    again = kb.reindex()
    assert (again.indexed, again.unchanged, again.sources_indexed, again.embedded) == (0, 4, 0, 0)
    assert snapshot(kb) == first
    content = snapshot(kb, content_only=True)
    forced = kb.reindex(force=True)
    assert forced.indexed == 4 and forced.sources_indexed == 28
    assert snapshot(kb, content_only=True) == content


def test_reindex_counts_the_vectors_it_embeds_after_the_files(kb: KnowledgeBase) -> None:
    write_all(kb)
    inline = kb.reindex()
    expected = snapshot(kb, content_only=True)
    files: list[tuple[int, int]] = []
    vectors: list[tuple[int, int]] = []
    kb.db.reset_embedding(kb.embedder.name, kb.embedder.dims)  # every vector forgotten
    report = kb.reindex(  # written stale first, then embedded and counted
        force=True,
        on_progress=lambda done, total: files.append((done, total)),
        on_embedding=lambda done, total: vectors.append((done, total)),
    )
    assert files and vectors
    assert vectors[0][0] == 0 and vectors[-1][0] == vectors[-1][1] == report.embedded > 0
    assert [d for d, _ in vectors] == sorted(d for d, _ in vectors)
    assert inline.embedded == 0  # embedded as the files were read, none left stale
    assert snapshot(kb, content_only=True) == expected  # the same rows and vectors


def test_pages_written_by_put_are_unchanged_for_reindex(kb: KnowledgeBase) -> None:
    for folder, pages in PAGES.items():
        for page in pages:
            kb.put_page(folder, page, None)
    before = snapshot(kb)
    report = kb.reindex()
    assert (report.indexed, report.unchanged) == (0, 4)
    assert {k: v for k, v in snapshot(kb).items() if not k.startswith("source")} == {
        k: v for k, v in before.items() if not k.startswith("source")
    }


def test_edited_file_gets_a_new_version_and_deleted_file_leaves_the_index(
    kb: KnowledgeBase,
) -> None:
    write_all(kb)
    kb.reindex()
    edited = Page(
        "Maria Lopez",
        "person",
        fields={"role": "Chair", "company": "Acme Logistics"},
        sections={"Summary": "Maria chairs the board."},
    )
    write(kb, "people", edited)
    kb.paths.page_path("companies", "acme-logistics").unlink()
    report = kb.reindex()
    assert (report.indexed, report.unchanged, report.removed) == (1, 2, 1)
    assert kb.get_page("people/maria-lopez").page == edited
    assert [v.version for v in kb.history("people/maria-lopez")] == [2, 1]
    with pytest.raises(NotFoundError, match="no page 'companies/acme-logistics'"):
        kb.get_page("companies/acme-logistics")
    # its history stays, and edges to it are unresolved again
    assert [v.version for v in kb.history("companies/acme-logistics")] == [1]
    with kb.db.connection() as conn:
        link = conn.execute(
            "SELECT to_id FROM links WHERE from_id = 'people/alice-chen' AND verb = 'works_at'"
            " AND origin = 'field'"
        ).fetchone()
    assert link == (None,)
    write(kb, "companies", PAGES["companies"][0])  # back again: same content, same version
    assert kb.reindex().indexed == 1
    assert kb.get_page("companies/acme-logistics").version == 1


def test_invalid_pages_are_reported_with_every_problem_and_not_indexed(kb: KnowledgeBase) -> None:
    write_all(kb)
    kb.reindex()
    path = kb.paths.page_path("people", "alice-chen")
    good = path.read_text("utf-8")
    path.write_text(
        good.replace("type: person", "type: robot").replace("## Summary", "## Gossip"), "utf-8"
    )
    broken = kb.paths.page_path("people", "no-frontmatter")
    broken.write_text("just text\n", "utf-8")
    stray = kb.paths.knowledge / "recipes" / "soup.md"
    stray.parent.mkdir()
    stray.write_text(good, "utf-8")
    report = kb.reindex()
    failed = {f.path: f.problems for f in report.failed}
    assert set(failed) == {
        "knowledge/people/alice-chen.md",
        "knowledge/people/no-frontmatter.md",
        "knowledge/recipes/soup.md",
    }
    assert {p.location for p in failed["knowledge/people/alice-chen.md"]} >= {
        "type",
        "sections.Gossip",
    }
    assert "not in schema.yaml" in str(failed["knowledge/recipes/soup.md"][0])
    # the last good version of alice stays indexed whole; nothing of the bad one got in
    stored = kb.get_page("people/alice-chen")
    assert stored.markdown == good and stored.page.type == "person"
    with kb.db.connection() as conn:
        gossip = conn.execute("SELECT count(*) FROM chunks WHERE section = 'Gossip'").fetchone()
    assert gossip == (0,)
    assert (report.indexed, report.unchanged) == (0, 3)


def test_sources_are_redacted_and_only_changed_ones_reindexed(kb: KnowledgeBase) -> None:
    kb.reindex()
    with kb.db.connection() as conn:
        texts = [t for (t,) in conn.execute("SELECT text FROM source_chunks").fetchall()]
        private = conn.execute(
            "SELECT count(*) FROM source_chunks WHERE path = %s AND text LIKE %s",
            ("one-on-ones/2026-09-29-maria-alex-1on1.md", "%[redacted]%"),
        ).fetchone()
    assert texts and not any("<private" in t.lower() for t in texts)
    assert private is not None and private[0] >= 1
    source = kb.paths.source / "slack" / "general" / "2026-10-08.md"
    source.write_text(source.read_text("utf-8") + "\nAlso: the offsite moved to Erdenet.\n")
    (kb.paths.source / "slack" / "finance" / "2026-10-01.md").unlink()
    report = kb.reindex()
    assert (report.sources_indexed, report.sources_unchanged, report.sources_removed) == (1, 26, 1)
    with kb.db.connection() as conn:
        hits = conn.execute(
            "SELECT DISTINCT path FROM source_chunks"
            " WHERE tsv @@ plainto_tsquery('simple', 'offsite erdenet')"
        ).fetchall()
        gone = conn.execute(
            "SELECT count(*) FROM source_docs WHERE path = 'slack/finance/2026-10-01.md'"
        ).fetchone()
    assert hits == [("slack/general/2026-10-08.md",)]
    assert gone == (0,)


def test_binary_sources_are_reported_not_indexed(kb: KnowledgeBase) -> None:
    (kb.paths.source / "scan.bin").write_bytes(b"%PDF-1.4\x00\x01binary")
    report = kb.reindex()
    [(path, why)] = report.sources_unreadable
    assert path == "scan.bin" and "binary file (contains NUL bytes)" in why
    with kb.db.connection() as conn:
        assert conn.execute(
            "SELECT count(*) FROM source_docs WHERE path = 'scan.bin'"
        ).fetchone() == (0,)


def _hnsw(kb: KnowledgeBase) -> list[tuple[str, str]]:
    with kb.db.connection() as conn:
        return conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE indexdef LIKE '%% USING hnsw %%'"
            " ORDER BY 1"
        ).fetchall()


def _text_indexes(kb: KnowledgeBase) -> set[str]:
    with kb.db.connection() as conn:
        rows = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE indexdef LIKE '%% USING gin %%'"
        )
        return {name for (name,) in rows.fetchall()}


def test_bulk_reindex_rebuilds_search_indexes_even_after_a_crash(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_all(kb)
    before = _hnsw(kb)
    assert len(before) == 3  # chunks, source sentences and their contexts
    searchable = _text_indexes(kb)
    assert set(indexing.SEARCH_ONLY_INDEXES) <= searchable
    # as if a bulk reindex died mid-load
    assert suspend_search_indexes(kb.db) == 3 + len(indexing.SEARCH_ONLY_INDEXES)
    assert _hnsw(kb) == [] and not set(indexing.SEARCH_ONLY_INDEXES) & _text_indexes(kb)
    monkeypatch.setattr(reindexing, "BULK_PAGES", 1)  # 4 pages count as a bulk load
    report = kb.reindex()
    assert report.indexed == 4
    assert _hnsw(kb) == before and _text_indexes(kb) == searchable
    with kb.db.connection() as conn:
        left = conn.execute("SELECT count(*) FROM index_meta WHERE key LIKE 'suspended%%'")
        assert left.fetchone() == (0,)
        row = conn.execute("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL").fetchone()
    assert row is not None and row[0] > 0


def test_a_reindex_that_recuts_every_source_rebuilds_the_vector_indexes(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Re-cutting every source (a new source format) replaces all source rows: the indexes
    are dropped and rebuilt, so the HNSW graphs keep no dead rows of the old cut."""
    write_all(kb)
    kb.reindex()
    before = _hnsw(kb)
    bulk: list[bool] = []
    real = reindexing.search_indexes_suspended

    def recording(db: Database, enabled: bool = True) -> AbstractContextManager[None]:
        bulk.append(enabled)
        return real(db, enabled)

    monkeypatch.setattr(reindexing, "search_indexes_suspended", recording)
    assert kb.reindex().sources_indexed == 0 and bulk == [False]
    with kb.db.connection() as conn:
        conn.execute(
            "UPDATE index_meta SET value = 'source-sentences-2' WHERE key = %s",
            (indexing.SOURCE_CHUNKS,),
        )
    assert kb.reindex().sources_indexed > 0 and bulk == [False, True]
    assert _hnsw(kb) == before


def test_ahead_passes_items_and_errors_through_in_order() -> None:
    assert list(reindexing.ahead(iter(range(10)), depth=2)) == list(range(10))

    def failing() -> Iterator[int]:
        yield 1
        raise ValueError("bad batch")

    got: list[int] = []
    with pytest.raises(ValueError, match="bad batch"):
        for item in reindexing.ahead(failing()):
            got.append(item)
    assert got == [1]
    stream = reindexing.ahead(iter(range(1000)), depth=1)
    assert isinstance(stream, Generator)  # a generator, so the consumer can close it
    assert next(stream) == 0
    stream.close()  # the consumer stops early: the worker thread ends too
    assert not [t for t in threading.enumerate() if t.name == "reindex-prepare"]


def test_a_load_refreshes_the_planner_statistics_as_it_grows(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_all(kb)
    monkeypatch.setattr(reindexing, "PAGE_BATCH", 2)
    kb.reindex()
    with kb.db.connection() as conn:
        rows = conn.execute(
            "SELECT relname, n_live_tup > 0, analyze_count > 0 FROM pg_stat_user_tables"
            " WHERE relname IN ('pages', 'links') ORDER BY relname"
        ).fetchall()
    assert rows == [("links", True, True), ("pages", True, True)]


def test_an_index_chunked_by_another_version_is_rechunked_once(kb: KnowledgeBase) -> None:
    """Upgrading chunk_page changes no file; reindex redoes every page's chunks anyway
    (no new version: the content is the same) and then leaves them alone."""
    write_all(kb)
    kb.reindex()
    before = snapshot(kb, content_only=True)
    with kb.db.transaction() as conn:
        conn.execute("UPDATE index_meta SET value = 'old' WHERE key = 'chunk_format'")
        conn.execute("UPDATE chunks SET text = 'cut the old way' WHERE ordinal = 0")
    report = kb.reindex()
    assert (report.indexed, report.unchanged) == (4, 0)
    assert snapshot(kb, content_only=True) == before
    again = kb.reindex()
    assert (again.indexed, again.unchanged) == (0, 4)


def test_sources_cut_into_windows_another_way_are_recut_once(kb: KnowledgeBase) -> None:
    kb.reindex()
    before = snapshot(kb, content_only=True)
    with kb.db.transaction() as conn:
        conn.execute(
            "UPDATE index_meta SET value = 'old' WHERE key = %s", (indexing.SOURCE_CHUNKS,)
        )
        conn.execute("DELETE FROM source_chunks WHERE ordinal > 0")
    report = kb.reindex()
    assert (report.indexed, report.sources_indexed) == (0, 28)
    assert snapshot(kb, content_only=True)["source_chunks"] == before["source_chunks"]
    assert kb.reindex().sources_indexed == 0


def test_a_new_index_records_its_chunk_formats_before_any_page(kb: KnowledgeBase) -> None:
    with kb.db.connection() as conn:
        assert indexing.chunk_format_current(conn, indexing.PAGE_CHUNKS)
        assert indexing.chunk_format_current(conn, indexing.SOURCE_CHUNKS)


def _a_note(kb: KnowledgeBase, sentences: int) -> tuple[str, list[str]]:
    """The path and sentences of the first source note with at least ``sentences``."""
    with kb.db.connection() as conn:
        row = conn.execute(
            "SELECT path, array_agg(text ORDER BY ordinal) FROM source_chunks"
            " GROUP BY path HAVING count(*) >= %s ORDER BY path LIMIT 1",
            (sentences,),
        ).fetchone()
    assert row is not None
    return row[0], list(row[1])


def _reranking(kb: KnowledgeBase, llm_server: LLMServer) -> Searcher:
    settings = EndpointSettings(name="rerank", base_url=llm_server.base_url, model="r")
    return Searcher(kb.db, kb.schema, kb.embedder, reranker=Reranker(settings))


def test_a_source_sentence_found_comes_with_its_neighbours(kb: KnowledgeBase) -> None:
    kb.reindex()
    path, texts = _a_note(kb, 4)
    with kb.db.connection() as conn:
        middle = sentence_context(conn, {SOURCE_PREFIX + path: texts[1]})
        first = sentence_context(conn, {SOURCE_PREFIX + path: texts[0]})
        assert sentence_context(conn, {}) == {}
    assert middle == {SOURCE_PREFIX + path: " ".join(texts[0:3])}
    assert first == {SOURCE_PREFIX + path: " ".join(texts[0:2])}
    searcher = Searcher.for_kb(kb, route=False)
    try:
        request = SearchRequest(
            texts[1], include_sources=True, arms={"source_keyword"}, route=False, limit=50
        )
        found = {r.id: r for r in searcher.search(request).results}
    finally:
        searcher.close()
    snippet = found[SOURCE_PREFIX + path].snippet
    assert texts[1] in snippet and len(snippet) > len(texts[1])  # with a neighbour


def test_a_reranker_reads_a_source_by_its_sentences_closest_to_the_question(
    kb: KnowledgeBase, llm_server: LLMServer
) -> None:
    """The one sentence a note matched by need not be the one that answers: a reranker is
    given the note's three sentences closest to the question."""
    kb.reindex()
    path, texts = _a_note(kb, 5)
    note = SOURCE_PREFIX + path
    with kb.db.connection() as conn:
        vector = kb.embedder.embed_query(texts[2])
        closest = closest_sentences(conn, kb.db, vector, [note])
        assert closest_sentences(conn, kb.db, vector, []) == {}
    assert closest[note][0] == texts[2] and len(closest[note]) == 3
    assert set(closest[note]) <= set(texts)
    searcher = _reranking(kb, llm_server)
    try:
        request = SearchRequest(texts[2], include_sources=True, route=False)
        response = searcher.search(request)
    finally:
        searcher.close()
    assert "reranker_unavailable" not in response.degraded
    (call,) = [c for c in llm_server.calls if c.path.endswith("rerank")]
    read = [d for d in call.body["documents"] if texts[2] in d]
    assert read and closest[note] and all(text in read[0] for text in closest[note])


def test_a_failing_sentence_lookup_still_reranks_the_sources(
    kb: KnowledgeBase, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When reading a note's closest sentences fails in the database, the reranker reads
    the note by its matched sentence and the search goes on in a clean transaction."""
    kb.reindex()

    def failing(conn: Any, *args: object) -> dict[str, list[str]]:
        conn.execute("SELECT 1 / 0")  # aborts the transaction, as a real failure would
        raise AssertionError("unreachable")

    monkeypatch.setattr(source_arms, "closest_sentences", failing)
    searcher = _reranking(kb, llm_server)
    try:
        question = "Globex pilot kickoff warehouse tablets"
        response = searcher.search(SearchRequest(question, include_sources=True, route=False))
    finally:
        searcher.close()
    assert "reranker_unavailable" not in response.degraded
    sources = [r for r in response.results if r.folder == "source"]
    assert sources and all(r.snippet for r in sources)
    assert response.results[0].ranks.get("rerank") == 1
