"""Seconds a note for the ingest agent without a model, as a user runs it.

``ingest-agent --kb COPY --json`` (the rules extractor, a trusted stdio memory server
with the default local embedder and the copy's embedded PostgreSQL) over a fresh
knowledge base of:

- ``example``: example_kb's 28 notes (``make up``'s case);
- ``orgmem``: OrgMemBench's small tier, 126 artefacts written as notes by
  ``bench.orgmem_notes`` (read in place from ``--data``, never copied into the
  repository).

Reported per set: the agent's own seconds a note (p50, mean, p90, from its ``--json``
summary), the whole run's wall time a note, MCP tool calls a note, the CPU seconds of the
agent and everything it started (server, database), the server's time per tool (its
audit log) and the load average before and after. ``--py-spy DIR`` records the agent and
its server with py-spy (``pip install py-spy``; raw stacks in DIR, the busiest functions
printed).

    .venv/bin/python -m bench.bench_note_ingest --json
    .venv/bin/python -m bench.bench_note_ingest --sets orgmem --py-spy /tmp/ingest-profile
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from bench.bench_up import _FOREIGN, load, tool_times
from bench.common import percentile
from bench.orgmem_notes import DATA, write_notes

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = Path(tempfile.gettempdir()) / "memserver-bench"
SETS = ("example", "orgmem")
# Frames of a thread that waits (a lock, a queue, a socket): not where time is spent.
_WAITING = re.compile(r"^(Condition\.wait|Event\.wait|Queue\.get|select|_wait_for_tstate_lock)")


def make_kb(kind: str, work: Path, data: Path, limit: int | None) -> Path:
    kb = work / kind
    if kind == "example":
        shutil.copytree(
            ROOT / "example_kb", kb, ignore=shutil.ignore_patterns(".memserver", "knowledge")
        )
        (kb / "manifest.json").unlink(missing_ok=True)
    else:
        write_notes(data, kb, limit)
    return kb


def watch_cpu(proc: subprocess.Popen[str], deadline: float) -> dict[str, float]:
    """Wait for ``proc``; the CPU seconds of the agent, the memory server it started and
    PostgreSQL (each process's last reading before it ended, twice a second)."""
    seen: dict[int, tuple[str, float]] = {}
    top = psutil.Process(proc.pid)
    while proc.poll() is None:
        if time.monotonic() > deadline:
            proc.kill()
            raise TimeoutError("ingest-agent did not finish in time")
        try:
            family = [top, *top.children(recursive=True)]
        except psutil.Error:
            family = []
        for member in family:
            try:
                times, line = member.cpu_times(), " ".join(member.cmdline())
            except psutil.Error:
                continue
            who = "agent" if "ingest-agent" in line else "server" if "memserver" in line else ""
            who = who or ("postgres" if "postgres" in member.name() else "other")
            seen[member.pid] = (who, times.user + times.system)
        time.sleep(0.5)
    totals: dict[str, float] = collections.defaultdict(float)
    for who, seconds in seen.values():
        totals[who] += seconds
    return dict(totals)


def run_set(kind: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    kb = make_kb(kind, work, args.data, args.limit)
    notes = len(list((kb / "source").rglob("*.md")))
    argv = [str(ROOT / ".venv" / "bin" / "ingest-agent"), "--kb", str(kb), "--json"]
    raw = None
    if args.py_spy is not None:
        args.py_spy.mkdir(parents=True, exist_ok=True)
        raw = args.py_spy / f"{kind}.raw"
        spy = [shutil.which("py-spy") or str(ROOT / ".venv" / "bin" / "py-spy"), "record"]
        argv = [*spy, "--subprocesses", "-r", "25", "--format", "raw", "-o", str(raw), "--", *argv]
    env = {k: v for k, v in os.environ.items() if k not in _FOREIGN}
    result: dict[str, Any] = {"set": kind, "notes": notes, "load_start": load()}
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        proc = subprocess.Popen(argv, stdout=stdout, stderr=stderr, text=True, env=env)
        cpu = watch_cpu(proc, started + args.timeout)
        wall = time.monotonic() - started
        stdout.seek(0)
        stderr.seek(0)
        done = subprocess.CompletedProcess(argv, proc.returncode, stdout.read(), stderr.read())
    result["load_end"] = load()
    out = done.stdout[done.stdout.find("{") :]
    if done.returncode not in (0, 1) or not out:
        raise RuntimeError(f"ingest-agent ended with {done.returncode}: {done.stderr[-2000:]}")
    summary, _ = json.JSONDecoder().raw_decode(out)  # py-spy may write after it
    seconds = [s["seconds"] for s in summary["sources"]]
    result |= {
        "ingested": summary["ingested"],
        "failed": summary["failed"],
        "wall_s": round(wall, 1),
        "wall_per_note_s": round(wall / max(notes, 1), 3),
        "note_p50_s": round(statistics.median(seconds), 3) if seconds else None,
        "note_mean_s": round(statistics.fmean(seconds), 3) if seconds else None,
        "note_p90_s": round(percentile(seconds, 0.9), 3),
        "tool_calls_per_note": round(summary["tool_calls"] / max(len(seconds), 1), 1),
        "cpu_s": {who: round(seconds, 1) for who, seconds in cpu.items()},
        "pages": {d.name: len(list(d.glob("*.md"))) for d in sorted((kb / "knowledge").iterdir())},
        "tools": tool_times(kb),
    }
    if raw is not None:
        result["profile"] = busiest(raw, args.top)
    return result


def busiest(raw: Path, top: int) -> dict[str, list[str]]:
    """The functions most often on a working thread's stack, per process (py-spy raw
    stacks; a thread waiting on a lock, queue or socket is left out)."""
    seen: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    totals: collections.Counter[str] = collections.Counter()
    for line in raw.read_text("utf-8").splitlines():
        stack, _, count = line.rpartition(" ")
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";")]
        if len(frames) < 3 or _WAITING.match(frames[-1]):
            continue
        server = frames[1].startswith("process ")
        who, frames = ("server", frames[2:]) if server else ("agent", frames[1:])
        totals[who] += int(count)
        for frame in set(frames):
            seen[who][frame] += int(count)
    return {
        who: [f"{100 * n / totals[who]:5.1f}% {frame}" for frame, n in seen[who].most_common(top)]
        for who in sorted(seen)
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    parser.add_argument("--data", type=Path, default=DATA, help="the orgmem-small directory")
    parser.add_argument("--limit", type=int, help="only the first N OrgMemBench artefacts")
    parser.add_argument("--py-spy", type=Path, metavar="DIR", help="profile into DIR")
    parser.add_argument("--top", type=int, default=40, help="functions listed per process")
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--keep", action="store_true", help="keep the knowledge bases")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    SCRATCH.mkdir(mode=0o755, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bench-notes-", dir=SCRATCH))
    try:
        results = [run_set(kind, args, work) for kind in args.sets]
    finally:
        if args.keep:
            print(f"knowledge bases kept under {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
        return 0
    for result in results:
        for key, value in result.items():
            if key == "profile":
                for who, lines in value.items():
                    print(f"{'profile ' + who:>20}:", *lines, sep="\n    ")
            else:
                print(f"{key:>20}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
