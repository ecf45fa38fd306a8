"""What indexing a note costs with the local embedder: ``reindex`` from scratch, CPU a note.

Builds a knowledge base under ``--work`` (emptied first) whose ``source/`` holds a corpus
as notes, then runs ``KnowledgeBase.reindex()`` once, with nothing embedded before:

- ``orgmem``: OrgMemBench's small tier (``../shared/data/orgmem-small/``, 126 artefacts:
  transcripts, Slack and email threads, reports), each artefact one note dated by its
  event (``events_dates.json``);
- ``locomo``: LoCoMo's development half (five conversations, 128 sessions), each session
  one note as ``bench.eval_locomo`` writes it, a folder per conversation.

Reported: notes, sentences and contexts cut, distinct texts embedded, wall seconds and the
CPU seconds of this process (the embedder runs in it; PostgreSQL, a process of its own, is
not counted), and CPU seconds a note. Run the engines one after the other on a quiet
machine, or alternate them, and compare CPU seconds.

    .venv/bin/python -m bench.bench_index_notes --corpus orgmem --engine onnx --json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from bench.eval_locomo import DATA, SCHEMA, load, note_path
from memserver.clients.embed import LOCAL_ENGINES, TEXTS_PER_CALL, make_embedder
from memserver.store.knowledge_base import KnowledgeBase

ORGMEM = Path(__file__).resolve().parents[2] / "shared" / "data" / "orgmem-small"
_META = re.compile(r"\A<!--.*?-->\s*", re.DOTALL)


def orgmem_notes(root: Path = ORGMEM) -> dict[str, str]:
    """source path -> note text (frontmatter date from the artefact's event)."""
    dates = json.loads((root / "events_dates.json").read_text(encoding="utf-8"))
    notes = {}
    for line in (root / "corpus_index.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        text = _META.sub("", (root / row["path"]).read_text(encoding="utf-8"))
        day = (dates.get(row.get("event_id") or "") or {}).get("occurred_at")
        front = f"---\ndate: {day}\n---\n" if day else ""
        notes[f"{row['event_id'] or 'none'}/{row['slot_id']}.md"] = front + text
    return notes


def locomo_notes(path: Path = DATA) -> dict[str, str]:
    return {
        f"{conv.name}/{note_path(n)}": text
        for conv in load(path)
        for n, (_, text) in conv.notes.items()
    }


def build(kb: Path, notes: dict[str, str]) -> None:
    if kb.exists():
        shutil.rmtree(kb)
    (kb / "source").mkdir(parents=True)
    (kb / "schema.yaml").write_text(SCHEMA, encoding="utf-8")
    for rel, text in notes.items():
        target = kb / "source" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def run(
    corpus: str, engine: str, work: Path, texts_per_call: int = TEXTS_PER_CALL
) -> dict[str, Any]:
    notes = orgmem_notes() if corpus == "orgmem" else locomo_notes()
    kb_dir = work / f"{corpus}-{engine}"
    build(kb_dir, notes)
    embedder = make_embedder("local", engine=engine, texts_per_call=texts_per_call)
    load_before = os.getloadavg()[0]
    with KnowledgeBase.open(kb_dir, embedder=embedder, database_url=None) as kb:
        embedder.embed_query("warm the model up")  # its loading is not indexing
        wall = time.perf_counter()
        cpu = time.process_time()
        report = kb.reindex()
        cpu = time.process_time() - cpu
        wall = time.perf_counter() - wall
        with kb.db.reading() as conn:
            counted = conn.execute(
                "SELECT count(*), count(context), count(DISTINCT text_hash)"
                " + count(DISTINCT context_hash) FROM source_chunks"
            ).fetchone()
        sentences, contexts, distinct = counted or (0, 0, 0)
    return {
        "corpus": corpus,
        "engine": engine,
        "texts_per_call": texts_per_call,
        "embedder": embedder.name,
        "notes": report.sources_indexed,
        "sentences": sentences,
        "contexts": contexts,
        "distinct_texts": distinct,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "cpu_s_note": round(cpu / max(1, report.sources_indexed), 3),
        "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", nargs="*", default=["orgmem", "locomo"])
    parser.add_argument("--engine", nargs="*", default=list(LOCAL_ENGINES), choices=LOCAL_ENGINES)
    parser.add_argument("--work", type=Path, default=Path("/tmp/memserver-index-notes"))
    parser.add_argument(
        "--texts-per-call",
        type=int,
        default=TEXTS_PER_CALL,
        help="passages of one token count an onnx call takes (1: each alone, as before)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    for corpus in args.corpus:
        for engine in args.engine:
            row = run(corpus, engine, args.work, args.texts_per_call)
            rows.append(row)
            print(json.dumps(row) if args.json else row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
