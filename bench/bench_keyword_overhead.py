"""Keyword-only search against the raw full-text query, at 10,000 generated pages.

The knowledge base is ``bench/bench_search_latency.py``'s (``bench/gen_kb.py``, seed 7,
hash embedder; built once under ``--root`` and reused). For each of its 56 questions:

- ``raw_all``: one full-text query on an autocommit connection,
  ``SELECT page_id, ts_rank_cd(tsv, q) FROM chunks WHERE tsv @@ q ORDER BY 2 DESC
  LIMIT 50`` with ``q = websearch_to_tsquery('simple', question)`` (every word, the
  time words too: most questions match nothing, which is why it is fast);
- ``raw_any``: the same with any of the question's words (``w1 or w2 ...``): ranks
  every chunk holding one of them;
- ``arm``: the keyword arm's own SQL, as the pipeline sends it (``arms.keyword`` on the
  question as the pipeline reads it: time words out, staged matching, ranking among at
  most ``MATCH_CAP`` chunks per stage) on an autocommit connection: the full-text work a
  keyword-only search needs;
- ``keyword-only``: ``Searcher.search`` with the keyword arm alone, as kb_query runs it
  (time parsing, intent, the keyword arm, fusion, shaping: titles, timeline lines, lead
  snippets), no embedding.

Medians over ``--rounds`` rounds, the SQL statements and round trips a search sends
(counted on the connection), and the time spent inside them.

    .venv/bin/python -m bench.bench_keyword_overhead --pages 10000 --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

import psycopg

from bench.bench_search_latency import NOW, build, kb_arguments, queries
from memserver.clients.embed import HashEmbedder
from memserver.search import arms
from memserver.search.intent import analyze
from memserver.search.pipeline import Searcher, SearchRequest, window_dates
from memserver.search.text_query import TextQuery
from memserver.store.knowledge_base import KnowledgeBase
from memserver.timeparse.parse import parse_time
from memserver.timeparse.window import reference_time


def arm_only(conn: Any, schema: Any, question: str) -> int:
    """The keyword arm's SQL for ``question``, as a keyword-only search sends it."""
    tq = parse_time(question, now=reference_time(NOW, schema.tz), tz=schema.tz)
    folders = list(schema.folder_names)
    text = TextQuery.of(analyze(tq.query, schema, folders))
    start, end = window_dates(tq.window)
    return len(arms.keyword(conn, text, folders, start=start, end=end))


RAW = (
    "SELECT page_id, ts_rank_cd(tsv, q) AS r FROM chunks,"
    " websearch_to_tsquery('simple', %s) AS q WHERE tsv @@ q ORDER BY r DESC LIMIT 50"
)


class Counting:
    """Counts the statements psycopg sends (and the time inside them) while active."""

    # Every statement goes through Cursor.execute (Connection.execute makes a cursor).

    def __init__(self) -> None:
        self.statements = 0
        self.seconds = 0.0
        self._originals: list[tuple[type, Any]] = []

    def __enter__(self) -> Counting:
        for cls in (psycopg.Cursor,):  # Connection.execute goes through a cursor
            original = cls.execute
            self._originals.append((cls, original))

            def execute(obj: Any, *args: Any, _original: Any = original, **kw: Any) -> Any:
                began = time.perf_counter()
                try:
                    return _original(obj, *args, **kw)
                finally:
                    self.seconds += time.perf_counter() - began
                    self.statements += 1

            setattr(cls, "execute", execute)  # noqa: B010
        return self

    def __exit__(self, *exc: object) -> None:
        for cls, original in self._originals:
            setattr(cls, "execute", original)  # noqa: B010


def any_words(question: str) -> str:
    return " or ".join(w for w in question.replace("-", " ").split() if w.isalnum())


def median_ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


def run(args: argparse.Namespace) -> dict[str, Any]:
    root = args.root / f"kb{args.pages}"
    made, _ = build(root, args.pages, args.seed)
    qs = queries(made, args.queries, args.seed)
    result: dict[str, Any] = {"load_start": " ".join(f"{x:.2f}" for x in os.getloadavg())}
    with KnowledgeBase.open(root, embedder=HashEmbedder(), database_url=None) as kb:
        searcher = Searcher(kb.db, kb.schema, None)
        raw: list[float] = []
        raw_any: list[float] = []
        arm: list[float] = []
        pipeline: list[float] = []
        counted = Counting()
        with psycopg.connect(kb.db.url, autocommit=True) as conn:
            for q in qs:  # warm the caches (and psycopg's prepared statements)
                conn.execute(RAW, (q,)).fetchall()
                conn.execute(RAW, (any_words(q),)).fetchall()
                arm_only(conn, kb.schema, q)
                searcher.search(SearchRequest(q, now=NOW, arms={"keyword"}, route=False))
            for _ in range(args.rounds):
                for q in qs:
                    began = time.perf_counter()
                    conn.execute(RAW, (q,)).fetchall()
                    raw.append(time.perf_counter() - began)
                    began = time.perf_counter()
                    conn.execute(RAW, (any_words(q),)).fetchall()
                    raw_any.append(time.perf_counter() - began)
                    began = time.perf_counter()
                    arm_only(conn, kb.schema, q)
                    arm.append(time.perf_counter() - began)
                    request = SearchRequest(q, now=NOW, arms={"keyword"}, route=False)
                    began = time.perf_counter()
                    with counted:
                        searcher.search(request)
                    pipeline.append(time.perf_counter() - began)
        searcher.close()
        result["chunks"] = kb.db.counts()["chunks"]
    searches = len(pipeline)
    result |= {
        "pages": args.pages,
        "searches": searches,
        "raw_all_ms": median_ms(raw),
        "raw_any_ms": median_ms(raw_any),
        "arm_sql_ms": median_ms(arm),
        "keyword_only_ms": median_ms(pipeline),
        "ratio_to_raw_all": round(statistics.median(pipeline) / statistics.median(raw), 2),
        "ratio_to_raw_any": round(statistics.median(pipeline) / statistics.median(raw_any), 2),
        "ratio_to_arm_sql": round(statistics.median(pipeline) / statistics.median(arm), 2),
        "statements_per_search": round(counted.statements / searches, 2),
        "ms_in_sql_per_search": round(counted.seconds * 1000 / searches, 2),
        "ms_outside_sql_per_search": round((sum(pipeline) - counted.seconds) * 1000 / searches, 2),
        "load_end": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10_000)
    kb_arguments(parser)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args)
    print(json.dumps(result, indent=2) if args.json else result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
