"""Both agents with a real model: example_kb ingested by it, the 30 questions answered by it.

1. a fresh copy of ``example_kb`` is ingested with ``ingest-agent --kb DIR`` and the model
   (``LLM_BASE_URL``/``LLM_MODEL`` set, ``LLM_PROFILE`` when given): per note the LLM
   calls, tokens, seconds, the extractor that wrote it and why a model's work was replaced;
2. the pages are checked against EXPECTED.md (``bench/expected_pages.py``: field precision
   and recall, attendees and meeting dates the sources do not state);
3. ``memserver serve`` (with the model, as a user runs it) serves the copy; each of
   ``bench/eval_answers.py``'s 30 questions is asked with the model and, on the same
   pages, without one: x/30 for both, and which answers the model wrote.

A benchmark, not a test: it needs a running model server, e.g. the 1.5B model of
``../shared/tools/local-model/serve.sh 1.5b 9481``::

    nice -n 10 .venv/bin/python -m bench.eval_real_model \\
        --base-url http://127.0.0.1:9481/v1 --model qwen2.5-coder-1.5b [--profile small]
        [--embedder local|hash] [--json out.json] [--keep DIR [--reuse]] [--only 1,5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench import expected_pages
from bench.eval_answers import (
    EXPECTED,
    ask_json,
    ingest,
    load_questions,
    prepare,
    score,
    serve,
)


def _uptime() -> str:
    out = subprocess.run(["uptime"], capture_output=True, text=True, check=False)
    return out.stdout.strip()


def notes_table(summary: Mapping[str, Any]) -> str:
    rows = [f"{'note':<58} {'status':<8} {'by':<5} calls tokens    s  degraded / error"]
    for s in summary.get("sources") or ():
        why = ", ".join(s.get("degraded") or ()) or (s.get("error") or "")[:80]
        rows.append(
            f"{s['path'][:58]:<58} {s['status']:<8} {s.get('extractor', ''):<5} "
            f"{s.get('llm_calls', 0):>5} {s.get('tokens', 0):>6} {s.get('seconds', 0):>5.0f}  {why}"
        )
    sources = list(summary.get("sources") or ())
    failed = sum(1 for s in sources if s["status"] == "failed")
    rows.append(
        f"{len(sources)} notes, {failed} failed; {sum(s.get('llm_calls', 0) for s in sources)} "
        f"LLM calls, {sum(s.get('tokens', 0) for s in sources)} tokens, "
        f"{sum(s.get('model_seconds', 0) for s in sources):.0f} s waiting for the model, "
        f"{sum(s.get('dropped_count', 0) for s in sources)} values dropped"
    )
    return "\n".join(rows)


def run(args: argparse.Namespace) -> dict[str, Any]:
    model = {"LLM_BASE_URL": args.base_url, "LLM_MODEL": args.model, "LLM_API_KEY": "none"}
    if args.profile != "auto":
        model["LLM_PROFILE"] = args.profile
    now, questions = load_questions()
    if args.only:
        wanted = {int(n) for n in args.only.split(",")}
        questions = [q for q in questions if q.number in wanted]
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="eval-model-"))
    work.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {"uptime_start": _uptime(), "model": args.model, "questions": []}
    try:
        if args.reuse:  # the knowledge base a run with --keep ingested: questions only
            kb, config = work / "kb", work / "config.yaml"
        else:
            kb, config = prepare(work, args.embedder)
            started = time.perf_counter()
            summary = ingest(kb, config, model)
            out["ingest_seconds"] = time.perf_counter() - started
            out["notes"] = summary.get("sources") or []
            print(notes_table(summary))
            print(f"ingest: {out['ingest_seconds']:.0f} s ({_uptime()})\n")
        checked = expected_pages.check(EXPECTED, kb / "knowledge")
        print(expected_pages.report(checked) + "\n")
        out["unstated_people"] = checked.unstated_people
        out["wrong_dates"] = checked.wrong_dates
        with serve(kb, config, args.port, model) as (url, token):
            for question in questions:
                with_model, seconds = ask_json(question.text, now, url, token, config, model)
                without, _ = ask_json(question.text, now, url, token, config)
                a, b = score(question, with_model["answer"]), score(question, without["answer"])
                why = ",".join(with_model.get("degraded") or ())
                print(
                    f"{question.number:>2} model {a.verdict:<8} no-model {b.verdict:<8} "
                    f"{with_model.get('mode', ''):<10} {seconds:>5.0f} s  {why}"
                )
                if args.show:
                    print("\n".join(f"     | {line}" for line in with_model["answer"].splitlines()))
                out["questions"].append(
                    {
                        "n": question.number,
                        "model": a.verdict,
                        "no_model": b.verdict,
                        "mode": with_model.get("mode"),
                        "degraded": with_model.get("degraded"),
                        "missed": [f.text for f in a.missed],
                        "answer": with_model["answer"],
                        "seconds": round(seconds, 1),
                    }
                )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    out["uptime_end"] = _uptime()
    return out


def summary_line(out: Mapping[str, Any]) -> str:
    rows = out["questions"]
    model = sum(1 for r in rows if r["model"] == "correct")
    plain = sum(1 for r in rows if r["no_model"] == "correct")
    wrote = sum(1 for r in rows if r["mode"] in ("evidence", "agent"))
    seconds = [r["seconds"] for r in rows]
    median = sorted(seconds)[len(seconds) // 2] if seconds else 0.0
    return (
        f"with the model {model}/{len(rows)} correct, without it {plain}/{len(rows)} on the "
        f"same pages; the model wrote {wrote} answers (median {median:.0f} s per answer)\n"
        f"load at start: {out['uptime_start']}\nload at end:   {out['uptime_end']}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--base-url", required=True, help="the model server, e.g. http://127.0.0.1:9481/v1"
    )
    parser.add_argument("--model", required=True, help="the model id (its size picks the profile)")
    parser.add_argument("--profile", default="auto", choices=["auto", "small", "standard"])
    parser.add_argument("--embedder", default="local", choices=["local", "hash"])
    parser.add_argument("--port", type=int, default=None, help="memory server port (default: free)")
    parser.add_argument("--json", default=None, help="write the results here")
    parser.add_argument("--show", action="store_true", help="print every answer the model gave")
    parser.add_argument("--keep", default=None, help="work in DIR and keep it")
    parser.add_argument("--only", default=None, help="comma-separated question numbers")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="ask over the knowledge base an earlier run ingested in --keep DIR (no ingest)",
    )
    args = parser.parse_args(argv)
    if args.reuse and not (args.keep and (Path(args.keep) / "kb").is_dir()):
        parser.error("--reuse needs --keep DIR holding a knowledge base an earlier run ingested")
    out = run(args)
    print(summary_line(out))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
