"""Each text is embedded once (reuse by text hash), and the background embedder fills
what writes leave to it, also after the process that wrote it was killed."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memserver.clients.embed import HashEmbedder
from memserver.kb.layout import KBPaths
from memserver.kb.page import Page, TimelineEntry, chunk_page
from memserver.store.knowledge_base import KnowledgeBase

WAIT = 60.0


class Counting(HashEmbedder):
    """The hash embedder, recording every passage it embeds; ``background`` as given,
    and with ``gate`` each batch waits until the gate opens (bounded)."""

    def __init__(self, *, background: bool = False, gate: threading.Event | None = None) -> None:
        super().__init__()
        self.background = background
        self.gate = gate
        self.passages: list[str] = []

    def embed_passages(self, texts: Sequence[str]) -> list[np.ndarray]:
        if self.gate is not None:
            assert self.gate.wait(WAIT), "the test never opened the gate"
        self.passages.extend(texts)
        return super().embed_passages(texts)


def alice(summary: str = "Alice runs engineering at Acme.", *entries: TimelineEntry) -> Page:
    return Page(
        title="Alice Chen",
        type="person",
        fields={"role": "CTO"},
        sections={"Summary": summary},
        timeline=(*entries, TimelineEntry(date(2025, 1, 10), "Joined Acme Logistics.")),
    )


def open_kb(root: Path, url: str, embedder: HashEmbedder) -> KnowledgeBase:
    return KnowledgeBase.open(root, embedder=embedder, database_url=url)


@pytest.fixture
def counted(example_kb: KBPaths, database_url: str) -> Iterator[tuple[KnowledgeBase, Counting]]:
    embedder = Counting()
    kb = open_kb(example_kb.root, database_url, embedder)
    try:
        yield kb, embedder
    finally:
        kb.close()


def stale_rows(kb: KnowledgeBase) -> int:
    with kb.db.connection() as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM chunks WHERE stale)"
            " + (SELECT count(*) FROM source_chunks WHERE stale)"
            " + (SELECT count(*) FROM source_chunks WHERE context_stale)"
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_second_put_of_the_same_page_embeds_nothing(
    counted: tuple[KnowledgeBase, Counting],
) -> None:
    kb, embedder = counted
    kb.put_page("people", alice(), None)
    first = list(embedder.passages)
    assert sorted(first) == sorted({c.text for c in chunk_page(alice())})
    kb.put_page("people", alice(), 1)
    assert embedder.passages == first  # the same page again: 0 texts


def test_an_edited_page_embeds_only_its_new_texts(counted: tuple[KnowledgeBase, Counting]) -> None:
    kb, embedder = counted
    kb.put_page("people", alice(), None)
    before = {c.text for c in chunk_page(alice())}
    embedder.passages.clear()
    edited = alice(
        "Alice runs engineering at Acme.", TimelineEntry(date(2026, 3, 1), "Became CTO.")
    )
    kb.put_page("people", edited, 1)
    new = {c.text for c in chunk_page(edited)} - before
    assert new and sorted(embedder.passages) == sorted(new)
    with kb.db.connection() as conn:
        rows = conn.execute("SELECT text, embedding FROM chunks WHERE NOT stale").fetchall()
    assert {text for text, _ in rows} == {c.text for c in chunk_page(edited)}
    expected = HashEmbedder()
    for text, vector in rows:  # reused vectors are the text's own
        assert np.allclose(vector, expected.embed_passages([text])[0], atol=1e-6)


def test_reindex_of_an_unchanged_kb_embeds_nothing(
    counted: tuple[KnowledgeBase, Counting],
) -> None:
    kb, embedder = counted
    kb.put_page("people", alice(), None)
    kb.reindex()  # indexes source/ (sentences) as well
    assert embedder.passages
    embedder.passages.clear()
    assert kb.reindex().embedded == 0
    forced = kb.reindex(force=True)  # re-cut and rewritten, the same model
    assert forced.indexed == 1 and forced.sources_indexed > 0
    assert embedder.passages == []
    assert stale_rows(kb) == 0


def test_a_sentence_two_sources_share_is_embedded_once(make_kb: Any, database_url: str) -> None:
    shared = "The warehouse in Darkhan switched to the new scanners on Monday."
    paths = make_kb(
        sources={
            "a.md": f"# Note A\n\nOrders reached the shops late twice this week.\n\n{shared}\n",
            "b.md": f"# Note B\n\nNobody at the counter complained about it.\n\n{shared}\n",
        }
    )
    embedder = Counting()
    with open_kb(paths.root, database_url, embedder) as kb:
        kb.reindex()
        assert embedder.passages.count(shared) == 1
        embedder.passages.clear()
        (paths.source / "b.md").write_text(
            f"# Note B\n\nEveryone at the counter liked the new scanners.\n\n{shared}\n",
            encoding="utf-8",
        )
        kb.index_sources(kb.manifest.scan().entries)
        # (not a conversation: no contexts; tests/memserver/index/test_sources.py)
        assert embedder.passages == ["# Note B Everyone at the counter liked the new scanners."]


def test_the_background_embedder_fills_what_puts_leave_to_it(
    example_kb: KBPaths, database_url: str
) -> None:
    gate = threading.Event()
    embedder = Counting(background=True, gate=gate)
    with open_kb(example_kb.root, database_url, embedder) as kb:
        assert kb.start_background_embedding()
        result = kb.put_page("people", alice(), None)
        assert "embedding_pending" in result.degraded
        assert kb.embedding_pending()
        assert stale_rows(kb) == len(chunk_page(alice()))
        with kb.db.connection() as conn:  # keyword-searchable at once
            hits = conn.execute(
                "SELECT count(*) FROM chunks WHERE tsv @@ plainto_tsquery('simple', 'engineering')"
            ).fetchone()
        assert hits is not None and hits[0] >= 1
        gate.set()
        assert kb.background is not None and kb.background.wait_idle(WAIT)
        assert stale_rows(kb) == 0 and not kb.embedding_pending()
        assert sorted(embedder.passages) == sorted({c.text for c in chunk_page(alice())})


WRITER = """
import sys, threading
sys.path.insert(0, {repo!r})
from tests.memserver.index.test_embedding import Counting, alice, open_kb
never = threading.Event()
kb = open_kb({root!r}, {url!r}, Counting(background=True, gate=never))
kb.start_background_embedding()
result = kb.put_page("people", alice(), None)
print("stored", ",".join(result.degraded), flush=True)
never.wait(600)
"""


def test_the_background_embedder_resumes_after_a_kill(
    example_kb: KBPaths, database_url: str
) -> None:
    repo = str(Path(__file__).resolve().parents[3])
    script = WRITER.format(repo=repo, root=str(example_kb.root), url=database_url)
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the put committed; its worker is stuck in the model
        assert line.startswith("stored") and "embedding_pending" in line, proc.stderr
        proc.send_signal(signal.SIGKILL)
        proc.wait(WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(WAIT)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    embedder = Counting(background=True)
    with open_kb(example_kb.root, database_url, embedder) as kb:
        assert stale_rows(kb) == len(chunk_page(alice()))  # nothing embedded, nothing lost
        kb.start_background_embedding()
        assert kb.background is not None and kb.background.wait_idle(WAIT)
        assert stale_rows(kb) == 0
        assert sorted(embedder.passages) == sorted({c.text for c in chunk_page(alice())})
