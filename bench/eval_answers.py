"""Answer quality without a model: the 30 questions of example_kb/EXPECTED.md, scored.

What a new user meets first (`make up` with no key), through the same programs:

1. a fresh copy of ``example_kb`` (no ``knowledge/``, no ledger) is ingested with
   ``ingest-agent --kb DIR --rules`` (the deterministic extractor, no model);
2. ``memserver serve`` serves it over Streamable HTTP with a read token;
3. each question of EXPECTED.md section 6 is asked with ``read-agent --no-llm ask
   --json --now <reference now>``;
4. each answer is scored against the facts of ``example_kb/EXPECTED_ANSWERS.yaml``
   (patterns written from EXPECTED.md; see the comment at its top): correct when every
   fact is found and nothing forbidden is, partial when some facts are.

Prints x/30 correct, the partial and wrong counts, and every missed fact ("must"-level
misses flagged). The embedder is the default local model; ``--embedder hash`` is
faster and lexical only.

    nice -n 10 .venv/bin/python -m bench.eval_answers [--embedder local|hash] [--port 9617]
        [--json out.json] [--show] [--keep DIR] [--only 1,5,23] [--rewordings]

``--rewordings`` also asks the three rewordings of each question and the follow-up chats
of ``bench/rewordings/`` (``bench.answer_rewordings``), scored with the originals' facts,
and reports originals and rewordings on the tuning and the validation half.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bench import answer_rewordings as rewordings
from bench.common import create_token, free_port, stop_process, this_checkout, wait_ready

REPO = Path(__file__).resolve().parents[1]

EXAMPLE_KB = REPO / "example_kb"
EXPECTED = EXAMPLE_KB / "EXPECTED.md"
PATTERNS = EXAMPLE_KB / "EXPECTED_ANSWERS.yaml"
BIN = Path(sys.executable).parent
_ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*(.+?)\s*\|\s*(.+?)\s*\|\s*(.+?)\s*\|\s*$")


@dataclass(frozen=True)
class Fact:
    text: str
    level: str
    patterns: tuple[re.Pattern[str], ...]
    one_line: bool  # every pattern on one line
    lead: bool  # on the answer's first line

    def found(self, answer: str) -> bool:
        lines = answer.splitlines()[:1] if self.lead else answer.splitlines()
        if self.one_line:
            return any(all(p.search(line) for p in self.patterns) for line in lines)
        return any(p.search(line) for p in self.patterns for line in lines)


@dataclass(frozen=True)
class Question:
    number: int
    text: str
    expected: str
    facts: tuple[Fact, ...]
    forbid: tuple[Fact, ...] = ()
    variant: int = 0  # 0: the question as EXPECTED.md asks it; 1, 2 ...: a rewording of it
    new: str = ""  # the file of bench/rewordings/ of a new question ("": of EXPECTED.md)


@dataclass
class Score:
    question: Question
    answer: str
    missed: list[Fact] = field(default_factory=list)
    forbidden: list[Fact] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def verdict(self) -> str:
        if not self.missed and not self.forbidden:
            return "correct"
        if len(self.missed) < len(self.question.facts):
            return "partial"
        return "wrong"


def _compile(value: str) -> re.Pattern[str]:
    # A space in a pattern matches any run of white space in the answer ("900 ?₮": none too).
    spaced = re.sub(r" \?", r"\\s*", value)
    return re.compile(re.sub(r"(?:\\ | )+", r"\\s+", spaced), re.IGNORECASE)


def _fact(spec: Mapping[str, Any]) -> Fact:
    if "line" in spec:
        patterns, one_line = tuple(_compile(p) for p in spec["line"]), True
    else:
        patterns, one_line = (_compile(spec["pattern"]),), False
    return Fact(
        str(spec["fact"]), str(spec.get("level", "llm")), patterns, one_line, bool(spec.get("lead"))
    )


def load_questions() -> tuple[str, list[Question]]:
    """The questions of EXPECTED.md section 6 with the facts of EXPECTED_ANSWERS.yaml."""
    rows: dict[int, tuple[str, str]] = {}
    in_table = False
    for line in EXPECTED.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            in_table = line.startswith("## 6.")
        match = _ROW.match(line) if in_table else None
        if match:
            # "(LLM: needs ...)" after a question is a note for the reader, not asked
            asked = re.sub(r"\s*\(LLM:[^)]*\)\s*$", "", match.group(2))
            rows[int(match.group(1))] = (asked, match.group(3))
    spec = yaml.safe_load(PATTERNS.read_text(encoding="utf-8"))
    patterns = {int(k): v for k, v in spec["questions"].items()}
    if set(patterns) != set(rows):
        raise SystemExit(
            f"{PATTERNS.name} and EXPECTED.md disagree on the questions: "
            f"{sorted(set(patterns) ^ set(rows))}"
        )
    questions = [
        Question(
            n,
            rows[n][0],
            rows[n][1],
            tuple(_fact(f) for f in patterns[n]["facts"]),
            tuple(_fact(f) for f in patterns[n].get("forbid") or ()),
        )
        for n in sorted(rows)
    ]
    return str(spec["now"]), questions


def _flat(answer: str) -> str:
    return "\n".join(" ".join(line.split()) for line in answer.splitlines())


def score(question: Question, answer: str) -> Score:
    flat = _flat(answer)
    result = Score(question, answer)
    result.missed = [f for f in question.facts if not f.found(flat)]
    result.forbidden = [f for f in question.forbid if f.found(flat)]
    return result


# --------------------------------------------------------------------------- running


def _env(
    config: Path,
    token: str | None = None,
    url: str | None = None,
    model: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """No model (or the ``model``'s LLM_* variables), this run's config (the embedder)
    for every program and the servers they start, and the read token when given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "MEMORY_"))}
    env.update(model or {})
    env["MEMORY_CONFIG"] = str(config)
    if token is not None and url is not None:
        env.update(MEMORY_TOKEN=token, MEMORY_URL=url)
    return this_checkout(env)


def prepare(work: Path, embedder: str) -> tuple[Path, Path]:
    kb = work / "kb"
    shutil.copytree(
        EXAMPLE_KB, kb, ignore=shutil.ignore_patterns(".memserver", "knowledge", "manifest.json")
    )
    config = work / "config.yaml"
    config.write_text(yaml.safe_dump({"embedding": {"provider": embedder}}), encoding="utf-8")
    return kb, config


def ingest(kb: Path, config: Path, model: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``ingest-agent --kb`` over the copy: the rules extractor, or the ``model``."""
    rules = [] if model else ["--rules"]
    out = subprocess.run(
        [str(BIN / "ingest-agent"), "--kb", str(kb), *rules, "--json"],
        capture_output=True,
        text=True,
        env=_env(config, model=model),
        timeout=3600,
    )
    if out.returncode not in (0, 1):
        raise SystemExit(f"ingest-agent failed ({out.returncode}):\n{out.stderr[-2000:]}")
    summary: dict[str, Any] = json.loads(out.stdout)
    return summary


def ask(question: str, now: str, url: str, token: str, config: Path) -> tuple[str, float]:
    answer, seconds = ask_json(question, now, url, token, config)
    return str(answer["answer"]), seconds


def ask_json(
    question: str,
    now: str,
    url: str,
    token: str,
    config: Path,
    model: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any], float]:
    """``read-agent ask --json``: without a model, or with the ``model``."""
    started = time.perf_counter()
    no_llm = [] if model else ["--no-llm"]
    out = subprocess.run(
        [str(BIN / "read-agent"), *no_llm, "ask", "--json", "--now", now, question],
        capture_output=True,
        text=True,
        env=_env(config, token, url, model),
        timeout=600,
    )
    seconds = time.perf_counter() - started
    if out.returncode != 0:
        failed = f"(read-agent failed with {out.returncode}: {out.stderr.strip()[-500:]})"
        return {"answer": failed, "mode": "failed", "degraded": []}, seconds
    answer: dict[str, Any] = json.loads(out.stdout)
    return answer, seconds


def run(args: argparse.Namespace) -> tuple[list[Score], list[rewordings.Conversation]]:
    now, questions = load_questions()
    wanted = {int(n) for n in args.only.split(",")} if args.only else None
    if wanted:
        questions = [q for q in questions if q.number in wanted]
    chats: list[rewordings.Conversation] = []
    if args.rewordings:
        questions += rewordings.reworded(questions)
        new = rewordings.new_questions(Question, _fact, now)
        questions += [q for q in new if not wanted or q.number in wanted]
        chat_now, chats = rewordings.conversations(_fact)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="eval-answers-"))
    if args.keep and (work / "kb").exists():
        kb, config = work / "kb", work / "config.yaml"
    else:
        work.mkdir(parents=True, exist_ok=True)
        kb, config = prepare(work, args.embedder)
        started = time.perf_counter()
        summary = ingest(kb, config)
        print(
            f"ingested {len(summary.get('sources') or [])} sources with the rules extractor "
            f"in {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
        )
    scores: list[Score] = []
    try:
        with serve(kb, config, args.port) as (url, token):
            for question in questions:
                answer, seconds = ask(question.text, now, url, token, config)
                result = score(question, answer)
                result.seconds = seconds
                scores.append(result)
            if chats:
                with rewordings.read_agent(url, token, _env(config)) as (base, key):
                    rewordings.ask_chats(chats, chat_now, base, key, _flat)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return scores, chats


@contextlib.contextmanager
def serve(
    kb: Path, config: Path, port: int | None = None, model: Mapping[str, str] | None = None
) -> Iterator[tuple[str, str]]:
    """``memserver serve`` over the ingested copy, with a read token: (MCP URL, token)."""
    memserver = [str(BIN / "memserver"), "--config", str(config), "--kb", str(kb)]
    token = create_token(memserver, f"eval-{os.getpid()}", "*")
    port = port or free_port()
    server = subprocess.Popen(
        [*memserver, "serve", "--addr", f"127.0.0.1:{port}"],
        env=_env(config, model=model),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_ready(f"http://127.0.0.1:{port}", timeout=300)
        yield f"http://127.0.0.1:{port}/mcp", token
    finally:
        stop_process(server)
        # The embedded PostgreSQL outlives the server process until this stops it.
        subprocess.run([*memserver, "stats"], capture_output=True, env=_env(config), timeout=120)


def report(scores: Sequence[Score], show: bool) -> str:
    lines = []
    for s in scores:
        mark = f".{s.question.variant}" if s.question.variant else "  "
        lines.append(f"{s.question.number:>2}{mark} {s.verdict:<8} {s.question.text}")
        for fact in s.missed:
            flag = "MUST " if fact.level == "must" else ""
            lines.append(f"     {flag}missed: {fact.text}")
        for fact in s.forbidden:
            lines.append(f"     MUST forbidden: {fact.text}")
        if show:
            lines.extend(f"     | {line}" for line in s.answer.splitlines())
    correct = sum(1 for s in scores if s.verdict == "correct")
    partial = sum(1 for s in scores if s.verdict == "partial")
    must_missed = sum(1 for s in scores for f in s.missed if f.level == "must") + sum(
        len(s.forbidden) for s in scores
    )
    lines.append(
        f"\n{correct}/{len(scores)} correct, {partial} partial, "
        f"{len(scores) - correct - partial} wrong; must-level misses: {must_missed}"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="local", choices=["local", "hash"])
    parser.add_argument("--port", type=int, default=None, help="memory server port (default: free)")
    parser.add_argument("--json", default=None, help="write per-question results here")
    parser.add_argument("--show", action="store_true", help="print every answer")
    parser.add_argument("--keep", default=None, help="work in DIR and keep it (reused if ingested)")
    parser.add_argument("--only", default=None, help="comma-separated question numbers")
    parser.add_argument(
        "--rewordings",
        action="store_true",
        help="also ask bench/rewordings/ (the rewordings of each question, the new "
        "questions, the chats) and report each set on each half",
    )
    args = parser.parse_args(argv)
    scores, chats = run(args)
    print(report(scores, args.show))
    if args.rewordings:
        print(rewordings.report(scores, chats, args.show))
    if args.json:
        half = rewordings.half_of(scores)
        rows = [
            {
                "n": s.question.number,
                "variant": s.question.variant,
                "new": s.question.new,
                "half": half(s),
                "question": s.question.text,
                "verdict": s.verdict,
                "missed": [f.text for f in s.missed],
                "forbidden": [f.text for f in s.forbidden],
                "answer": s.answer,
                "seconds": round(s.seconds, 2),
            }
            for s in scores
        ]
        Path(args.json).write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
