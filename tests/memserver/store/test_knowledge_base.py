"""The knowledge base service: guarded writes, atomic files, degraded embedding, history."""

from __future__ import annotations

import datetime
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
import pytest

from memserver.clients.embed import HashEmbedder
from memserver.errors import (
    EmbeddingError,
    EmbeddingModelChanged,
    NotFoundError,
    PageValidationError,
    UserError,
    VersionConflictError,
)
from memserver.kb.layout import KBPaths
from memserver.kb.page import Page, TimelineEntry, chunk_page, render_page
from memserver.store.knowledge_base import KnowledgeBase
from memserver.store.records import split_id


class DownEmbedder:
    """An embedder whose backend is unreachable (same model name as HashEmbedder)."""

    name = "hash:384"
    dims = 384
    degraded: tuple[str, ...] = ()
    background = False

    def embed_passages(self, texts: Sequence[str]) -> list[np.ndarray]:
        raise EmbeddingError("embedding endpoint http://127.0.0.1:9 failed: connection refused")

    def embed_query(self, text: str) -> np.ndarray:
        raise EmbeddingError("embedding endpoint http://127.0.0.1:9 failed: connection refused")

    def close(self) -> None:
        """Nothing to release."""


def alice(role: str = "CTO", summary: str = "Alice runs engineering at Acme.") -> Page:
    return Page(
        title="Alice Chen",
        type="person",
        fields={"role": role, "company": "Acme Logistics", "email": "alice@acme.example"},
        aliases=("Alice",),
        sources=("team/roster.md",),
        sections={"Summary": summary, "Role": f"{role} since 2026."},
        timeline=(
            TimelineEntry(datetime.date(2026, 3, 1), f"Became {role}.", "team/roster.md"),
            TimelineEntry(datetime.date(2025, 1, 10), "Joined Acme Logistics."),
        ),
    )


def rows(kb: KnowledgeBase, query: str, *params: Any) -> list[tuple[Any, ...]]:
    with kb.db.connection() as conn:
        return conn.execute(query, params).fetchall()


def test_put_then_get_round_trips_page_file_and_index(kb: KnowledgeBase) -> None:
    page = alice()
    result = kb.put_page("people", page, None, written_by="agent")
    assert (result.id, result.version, result.created) == ("people/alice-chen", 1, True)
    assert "embedding_fallback_hash" in result.degraded  # the hash embedder is a fallback
    spec = kb.schema.folder("people")
    path = kb.paths.page_path("people", "alice-chen")
    assert result.path == str(path)
    assert path.read_text(encoding="utf-8") == render_page(page, spec)

    stored = kb.get_page("people/alice-chen")
    assert stored.page == page
    assert stored.markdown == render_page(page, spec)
    assert (stored.folder, stored.slug, stored.version) == ("people", "alice-chen", 1)
    assert stored.effective_date is not None and stored.effective_date.isoformat() == "2026-03-01"

    chunks = rows(kb, "SELECT text, stale, embedding IS NULL FROM chunks ORDER BY ordinal")
    assert [c[0] for c in chunks] == [c.text for c in chunk_page(page)]
    assert chunks and all(not stale and not missing for _, stale, missing in chunks)
    timeline = rows(kb, "SELECT ordinal, date::text, text, source FROM timeline_entries")
    assert sorted(timeline) == [
        (0, "2026-03-01", "Became CTO.", "team/roster.md"),
        (1, "2025-01-10", "Joined Acme Logistics.", None),
    ]
    assert rows(kb, "SELECT alias, alias_norm FROM page_aliases") == [("Alice", "alice")]
    assert rows(kb, "SELECT version, written_by FROM page_versions") == [(1, "agent")]
    # keyword search over the chunks' simple-config tsvector
    hits = rows(
        kb, "SELECT count(*) FROM chunks WHERE tsv @@ plainto_tsquery('simple', 'engineering')"
    )
    assert hits[0][0] >= 1


def test_update_needs_the_current_version(kb: KnowledgeBase) -> None:
    kb.put_page("people", alice(), None)
    updated = kb.put_page("people", alice(role="CEO"), 1, written_by="agent")
    assert (updated.version, updated.created) == (2, False)
    assert kb.get_page("people/alice-chen").page.fields["role"] == "CEO"

    with pytest.raises(VersionConflictError) as stale:
        kb.put_page("people", alice(role="COO"), 1)
    assert (stale.value.base_version, stale.value.current_version) == (1, 2)
    assert "version 1" in str(stale.value) and "version is 2" in str(stale.value)

    with pytest.raises(VersionConflictError) as exists:
        kb.put_page("people", alice(role="COO"), None)  # a create of an existing page
    assert (exists.value.base_version, exists.value.current_version) == (None, 2)

    with pytest.raises(NotFoundError):
        kb.put_page("people", Page("Nobody Here", "person", sections={"Summary": "x"}), 3)
    assert kb.get_page("people/alice-chen").page.fields["role"] == "CEO"


def test_same_content_put_keeps_the_version(kb: KnowledgeBase) -> None:
    kb.put_page("people", alice(), None)
    again = kb.put_page("people", alice(), 1)
    assert (again.version, again.created) == (1, False)
    assert rows(kb, "SELECT count(*) FROM page_versions") == [(1,)]


def test_concurrent_puts_on_one_base_version_one_wins_nothing_lost(kb: KnowledgeBase) -> None:
    kb.put_page("people", alice(), None)
    barrier = threading.Barrier(2, timeout=10)
    outcomes: dict[str, Any] = {}

    def write(role: str) -> None:
        page = alice(role=role, summary=f"Alice is the {role}.")
        barrier.wait()
        try:
            outcomes[role] = kb.put_page("people", page, 1, written_by=role)
        except VersionConflictError as exc:
            outcomes[role] = exc

    threads = [threading.Thread(target=write, args=(role,)) for role in ("CEO", "COO")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
        assert not thread.is_alive()
    winners = [r for r, o in outcomes.items() if not isinstance(o, Exception)]
    losers = [o for o in outcomes.values() if isinstance(o, VersionConflictError)]
    assert len(winners) == 1 and len(losers) == 1
    assert (losers[0].base_version, losers[0].current_version) == (1, 2)
    winner = winners[0]
    stored = kb.get_page("people/alice-chen")
    assert stored.version == 2 and stored.page.fields["role"] == winner
    assert kb.paths.page_path("people", "alice-chen").read_text(encoding="utf-8") == stored.markdown
    history = rows(kb, "SELECT version, written_by FROM page_versions ORDER BY version")
    assert history == [(1, ""), (2, winner)]
    assert kb.get_version("people/alice-chen", 1) == render_page(
        alice(), kb.schema.folder("people")
    )


def _index_snapshot(kb: KnowledgeBase) -> list[list[tuple[Any, ...]]]:
    return [
        rows(kb, "SELECT id, version, content_hash, body FROM pages ORDER BY id"),
        rows(kb, "SELECT page_id, version, content_hash FROM page_versions ORDER BY 1, 2"),
        rows(kb, "SELECT page_id, ordinal, text FROM chunks ORDER BY 1, 2"),
        rows(kb, "SELECT page_id, ordinal, text FROM timeline_entries ORDER BY 1, 2"),
        rows(kb, "SELECT page_id, alias FROM page_aliases ORDER BY 1, 2"),
        rows(kb, "SELECT from_id, verb, to_ref FROM links ORDER BY 1, 2, 3"),
    ]


def test_failure_between_staging_and_commit_keeps_file_and_index(kb: KnowledgeBase) -> None:
    kb.put_page("people", alice(), None)
    path = kb.paths.page_path("people", "alice-chen")
    before_bytes = path.read_bytes()
    before_index = _index_snapshot(kb)
    seen: list[str] = []

    def crash(step: str, page_id: str) -> None:
        if step == "staged":  # the new file is staged beside the page here
            seen.extend(p.read_text(encoding="utf-8") for p in path.parent.glob(".*.tmp"))
            raise RuntimeError("power cut")

    kb.write_step = crash
    with pytest.raises(RuntimeError, match="power cut"):
        kb.put_page("people", alice(role="CEO"), 1)
    assert "role: CEO" in seen[0]
    assert path.read_bytes() == before_bytes
    assert _index_snapshot(kb) == before_index

    with pytest.raises(RuntimeError):  # a failed create leaves no file behind
        kb.put_page("people", Page("Bob Martinez", "person", sections={"Summary": "Ops."}), None)
    assert not kb.paths.page_path("people", "bob-martinez").exists()
    with pytest.raises(NotFoundError):
        kb.get_page("people/bob-martinez")

    kb.write_step = None  # and the page is still writable afterwards
    assert kb.put_page("people", alice(role="CEO"), 1).version == 2
    assert [p.name for p in path.parent.iterdir()] == ["alice-chen.md"]  # no temp files left


def test_failed_commit_restores_the_previous_file(kb: KnowledgeBase) -> None:
    kb.put_page("people", alice(), None)
    path = kb.paths.page_path("people", "alice-chen")
    before_bytes = path.read_bytes()
    with kb.db.connection() as conn:  # a deferred check fails only at COMMIT
        conn.execute(
            "CREATE FUNCTION no_ceo() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            " IF NEW.fields->>'role' = 'CEO' THEN RAISE EXCEPTION 'CEO refused at commit'; END IF;"
            " RETURN NULL; END $$"
        )
        conn.execute(
            "CREATE CONSTRAINT TRIGGER no_ceo AFTER INSERT OR UPDATE ON pages"
            " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION no_ceo()"
        )
    with pytest.raises(psycopg.errors.RaiseException, match="refused at commit"):
        kb.put_page("people", alice(role="CEO"), 1)
    assert path.read_bytes() == before_bytes
    assert kb.get_page("people/alice-chen").version == 1
    assert kb.put_page("people", alice(role="COO"), 1).version == 2


def test_validation_failure_lists_every_problem_and_writes_nothing(kb: KnowledgeBase) -> None:
    bad = Page(
        title="Globex",
        type="person",  # wrong type for companies
        fields={"status": "friend", "contract_value": "lots"},
        sections={"Gossip": "x"},
    )
    with pytest.raises(PageValidationError) as err:
        kb.put_page("companies", bad, None)
    locations = {p.location for p in err.value.problems}
    assert {"type", "fields.status", "fields.contract_value", "sections.Gossip"} <= locations
    assert not kb.paths.knowledge.exists() or not any(kb.paths.knowledge.rglob("*.md"))
    assert rows(kb, "SELECT count(*) FROM pages") == [(0,)]
    assert rows(kb, "SELECT count(*) FROM page_versions") == [(0,)]


def test_unsafe_slug_and_bad_conflicts_are_refused_before_writing(kb: KnowledgeBase) -> None:
    with pytest.raises(UserError, match="refused slug"):
        kb.put_page("people", alice(), None, slug="../escape")
    with pytest.raises(UserError, match="conflict status"):
        kb.put_page("people", alice(), None, conflicts=[{"field": "role", "status": "maybe"}])
    assert rows(kb, "SELECT count(*) FROM pages") == [(0,)]


def test_conflicts_are_recorded_with_the_write(kb: KnowledgeBase) -> None:
    kb.put_page("people", alice(), None)
    kb.put_page(
        "people",
        alice(role="CEO"),
        1,
        conflicts=[
            {
                "field": "role",
                "old_value": "CTO",
                "new_value": "CEO",
                "old_source": "team/roster.md",
                "new_source": "updates/2026-10.md",
                "status": "superseded",
            }
        ],
    )
    assert rows(
        kb, "SELECT page_id, folder, field, old_value, new_value, new_source, status FROM conflicts"
    ) == [("people/alice-chen", "people", "role", "CTO", "CEO", "updates/2026-10.md", "superseded")]


def test_embedding_outage_stores_the_page_keyword_indexed_and_stale(
    example_kb: KBPaths, database_url: str
) -> None:
    with KnowledgeBase.open(
        example_kb.root, embedder=DownEmbedder(), database_url=database_url
    ) as down:
        result = down.put_page("people", alice(), None)
        assert result.degraded == ("embedding_unavailable",)
        assert down.paths.page_path("people", "alice-chen").exists()
        assert down.get_page("people/alice-chen").page == alice()
        assert rows(down, "SELECT bool_and(stale), bool_and(embedding IS NULL) FROM chunks") == [
            (True, True)
        ]
        hits = rows(
            down,
            "SELECT count(*) FROM chunks WHERE tsv @@ plainto_tsquery('simple', 'engineering')",
        )
        assert hits[0][0] >= 1
        report = down.reindex()  # still down: nothing lost, still degraded
        assert report.degraded == ("embedding_unavailable",)
        stale = down.stats()["stale"]
        assert stale["chunks"] == len(chunk_page(alice()))
        assert stale["source_chunks"] > 0  # example_kb's sources, indexed while down
    with KnowledgeBase.open(
        example_kb.root, embedder=HashEmbedder(), database_url=database_url
    ) as up:
        report = up.reindex()
        assert report.embedded == sum(stale.values())
        assert up.stats()["stale"] == {"chunks": 0, "source_chunks": 0}
        stored = rows(up, "SELECT text, embedding FROM chunks ORDER BY ordinal LIMIT 1")[0]
        assert np.allclose(stored[1], HashEmbedder().embed_passages([stored[0]])[0], atol=1e-6)


def test_a_different_embedding_model_is_refused_until_reindex_force(
    example_kb: KBPaths, database_url: str
) -> None:
    with KnowledgeBase.open(
        example_kb.root, embedder=HashEmbedder(), database_url=database_url
    ) as kb:
        kb.put_page("people", alice(), None)
    with pytest.raises(EmbeddingModelChanged, match="reindex --force"):
        KnowledgeBase.open(example_kb.root, embedder=HashEmbedder(256), database_url=database_url)
    with KnowledgeBase.open(
        example_kb.root,
        embedder=HashEmbedder(256),
        database_url=database_url,
        check_embedding=False,
    ) as kb:
        with pytest.raises(EmbeddingModelChanged):
            kb.reindex()
        report = kb.reindex(force=True)
        assert report.indexed == 1 and not report.failed
        assert kb.db.embedding_info() == ("hash:256", 256)
        dims = rows(kb, "SELECT DISTINCT vector_dims(embedding) FROM chunks")
        assert dims == [(256,)]
        assert kb.get_page("people/alice-chen").version == 1  # same content, same version


def test_out_of_scope_pages_look_missing(kb: KnowledgeBase) -> None:
    kb.put_page("people", alice(), None)
    with pytest.raises(NotFoundError) as hidden:
        kb.get_page("people/alice-chen", folders={"companies"})
    with pytest.raises(NotFoundError) as missing:
        kb.get_page("people/nobody", folders={"people"})
    assert str(hidden.value) == str(missing.value).replace("nobody", "alice-chen")
    with pytest.raises(NotFoundError):
        kb.history("people/alice-chen", folders={"companies"})
    with pytest.raises(NotFoundError):
        kb.get_version("people/alice-chen", 1, folders=())
    assert kb.list_pages(folders={"companies"}) == ([], 0)
    assert kb.get_page("people/alice-chen", folders={"people"}).version == 1


def _meeting(title: str, day: str, attendees: list[str]) -> Page:
    return Page(
        title=title,
        type="meeting",
        fields={"date": day, "attendees": attendees, "kind": "internal"},
        sections={"Summary": f"{title} notes."},
    )


def test_list_pages_filters_orders_and_pages(kb: KnowledgeBase) -> None:
    for i, day in enumerate(["2026-01-05", "2026-03-10", "2026-02-20", "2026-03-31"]):
        kb.put_page("meetings", _meeting(f"Sync {i}", day, ["Alice Chen"]), None)
    kb.put_page("people", alice(), None)
    pages, total = kb.list_pages(folder="meetings", limit=2)
    assert total == 4
    assert [p.effective_date.isoformat() for p in pages if p.effective_date] == [
        "2026-03-31",
        "2026-03-10",
    ]
    rest, _ = kb.list_pages(folder="meetings", limit=2, offset=2)
    assert [p.title for p in rest] == ["Sync 2", "Sync 0"]
    march, total = kb.list_pages(start=datetime.date(2026, 3, 1), end=datetime.date(2026, 3, 31))
    # alice's page is dated by her newest timeline entry (2026-03-01)
    assert [p.id for p in march] == ["meetings/2026-03-10-sync-1", "people/alice-chen"]
    assert total == 2
    everything, total = kb.list_pages(folders={"people", "meetings"})
    assert total == 5 and everything[0].folder == "meetings"


def test_list_pages_by_a_field_s_value_in_any_case_and_among_a_list_s_items(
    kb: KnowledgeBase,
) -> None:
    kb.put_page("meetings", _meeting("Sync A", "2026-01-05", ["Alice Chen", "Bob Martinez"]), None)
    kb.put_page("meetings", _meeting("Sync B", "2026-01-06", ["Bob Martinez"]), None)
    kb.put_page("people", alice(), None)
    people, total = kb.list_pages(folder="people", where_field=("company", "acme logistics"))
    assert [p.id for p in people] == ["people/alice-chen"] and total == 1
    met, total = kb.list_pages(folder="meetings", where_field=("attendees", "Alice Chen"))
    assert [p.title for p in met] == ["Sync A"] and total == 1
    none, total = kb.list_pages(folder="people", where_field=("company", "Globex"))
    assert none == [] and total == 0


def test_history_and_restore_write_the_old_content_as_a_new_version(kb: KnowledgeBase) -> None:
    kb.put_page("people", alice(), None, written_by="ingest")
    kb.put_page("people", alice(role="CEO"), 1, written_by="ingest")
    history = kb.history("people/alice-chen")
    assert [(v.version, v.written_by) for v in history] == [(2, "ingest"), (1, "ingest")]
    assert history[0].content_hash != history[1].content_hash

    restored = kb.restore("people/alice-chen", 1, written_by="admin")
    assert (restored.version, restored.created) == (3, False)
    stored = kb.get_page("people/alice-chen")
    assert stored.page == alice() and stored.version == 3
    assert kb.get_version("people/alice-chen", 3) == kb.get_version("people/alice-chen", 1)
    assert rows(kb, "SELECT note FROM page_versions WHERE version = 3") == [
        ("restore of version 1",)
    ]
    with pytest.raises(NotFoundError, match="no version 9"):
        kb.restore("people/alice-chen", 9)


def test_links_wire_themselves_whatever_the_write_order(kb: KnowledgeBase) -> None:
    kb.put_page("meetings", _meeting("Kickoff", "2026-09-08", ["Alice Chen", "Bob"]), None)
    assert rows(kb, "SELECT verb, to_ref, to_id FROM links ORDER BY to_ref") == [
        ("attended", "Alice Chen", None),
        ("attended", "Bob", None),
    ]
    kb.put_page("people", alice(), None)
    linked = rows(kb, "SELECT to_ref, to_id FROM links WHERE from_id LIKE 'meetings/%%'")
    assert ("Alice Chen", "people/alice-chen") in linked
    assert ("Bob", None) in linked


def test_split_id_refuses_what_is_not_folder_slug() -> None:
    assert split_id("people/alice-chen") == ("people", "alice-chen")
    for bad in ("alice", "people/", "/alice", "people/../x", "people/a/b"):
        with pytest.raises(UserError):
            split_id(bad)


def test_stats_counts_pages_per_folder(kb: KnowledgeBase) -> None:
    kb.put_page("people", alice(), None)
    kb.put_page("meetings", _meeting("Kickoff", "2026-09-08", ["Alice Chen"]), None)
    stats = kb.stats()
    assert stats["pages"] == 2 and stats["folders"] == {"meetings": 1, "people": 1}
    assert stats["embedding"]["model"] == "hash:384"
    assert stats["tables"]["page_versions"] == 2
