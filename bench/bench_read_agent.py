"""Read agent benchmark: the agent's own overhead per question, and tool calls per question.

Generates a knowledge base (``bench/gen_kb.py``), indexes it (``memserver reindex``,
offline hash embedder), serves it (``memserver serve`` in a subprocess on a free
loopback port) and asks a set of questions through ``ReadAgent`` over MCP with a
read-only token. Per question it records the wall time, the time inside the model,
the time inside the tools (MCP round trips, search included), and what is left: the
agent's own overhead (prompting, tool conversion, JSON, citation checks, threads).

The model is, by default, a scripted OpenAI-compatible server on loopback (the test
fixture ``tests/fixtures/llm_server.py``) following a fixed policy: ``kb_query`` with
the question, ``kb_get_page`` on the top result, then a cited answer. So "model" time
is only its HTTP round trip, and the tool-call count is the policy's. With
``--real-llm`` the model comes from LLM_BASE_URL/LLM_MODEL/LLM_API_KEY (or
``--config``), and the tool-call counts are the model's own.

Questions come from the generated ground truth (entity lookups, latest meeting with a
company, a meeting on a date, project owners, renewals), or from ``--questions FILE``
(a JSON list of ``{"question", "expected": [ids]?, "now"?}``, e.g. a search
evaluation set). The extractive mode (no LLM) is timed on the same questions.

    .venv/bin/python -m bench.bench_read_agent                  # 300 pages, 30 questions
    .venv/bin/python -m bench.bench_read_agent --pages 1000 --json
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from bench.common import (
    create_token,
    free_port,
    percentile,
    scripted_llm,
    stop_process,
    wait_ready,
)
from bench.gen_kb import GeneratedKB, generate_kb
from memserver.clients.config import load_settings
from memserver.clients.llm import LLMClient
from memserver.clients.mcp import open_http
from read_agent.agent import Answer, ReadAgent

NOW = "2026-07-01T12:00:00+00:00"  # after the generated two years of meetings


@dataclass(frozen=True)
class Question:
    text: str
    expected: tuple[str, ...] = ()
    now: str = NOW
    category: str = "given"


# -- questions -------------------------------------------------------------------------------


def generated_questions(kb: GeneratedKB, count: int, seed: int = 11) -> list[Question]:
    """Questions whose answer page is known, spread over five kinds."""
    rng = random.Random(seed)
    people, companies = kb.by_folder("people"), kb.by_folder("companies")
    meetings, projects = kb.by_folder("meetings"), kb.by_folder("projects")
    by_company: dict[str, list[Any]] = {}
    for meeting in meetings:
        if meeting.facts.get("company"):
            by_company.setdefault(meeting.facts["company"], []).append(meeting)
    makers: list[Callable[[], Question]] = [
        lambda: _pick(rng, people, lambda p: Question(f"What is {p.title}'s role?", (p.id,))),
        lambda: _pick(
            rng, companies, lambda c: Question(f"When does {c.title}'s contract renew?", (c.id,))
        ),
        lambda: _pick(
            rng,
            meetings,
            lambda m: Question(f"What was decided at the {m.title} on {m.date}?", (m.id,)),
        ),
        lambda: _pick(
            rng, projects, lambda p: Question(f"Who owns the {p.title} project?", (p.id,))
        ),
        lambda: _latest(rng, by_company, kb),
    ]
    kinds = ("person_role", "company_renewal", "meeting_on_date", "project_owner", "latest_with")
    out: list[Question] = []
    for i in range(count):
        question = makers[i % len(makers)]()
        out.append(Question(question.text, question.expected, question.now, kinds[i % len(kinds)]))
    return out


def _pick(rng: random.Random, pages: list[Any], make: Callable[[Any], Question]) -> Question:
    return make(rng.choice(pages))


def _latest(rng: random.Random, by_company: dict[str, list[Any]], kb: GeneratedKB) -> Question:
    company = rng.choice(sorted(by_company))
    newest = max(by_company[company], key=lambda m: m.date)
    return Question(f"When was the latest meeting with {company}?", (newest.id,))


def load_questions(path: Path) -> list[Question]:
    rows = json.loads(path.read_text(encoding="utf-8"))
    return [
        Question(
            row["question"],
            tuple(row.get("expected") or ()),
            row.get("now") or NOW,
            row.get("category", "given"),
        )
        for row in rows
    ]


# -- the scripted model ----------------------------------------------------------------------


def policy(body: dict[str, Any]) -> Any:
    """kb_query with the question -> kb_get_page on the top hit -> a cited answer."""
    from tests.fixtures.llm_server import Reply, tool_call

    messages = body["messages"]
    results = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
    question = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    if not results:
        return Reply(tool_calls=[tool_call("kb_query", {"question": question})])
    if len(results) == 1:
        hits = results[0].get("results") or []
        if not hits:
            return "The knowledge base has no answer to this question."
        return Reply(tool_calls=[tool_call("kb_get_page", {"id": hits[0]["id"]})])
    page = results[-1]
    date = page.get("effective_date") or "undated"
    summary = next(iter(page.get("sections", {}).values()), "")
    return f"{summary} ({date}) [{page['id']}]"


# -- running ---------------------------------------------------------------------------------


def ask_all(
    url: str, token: str, llm: LLMClient | None, questions: Sequence[Question], max_steps: int
) -> list[Answer]:
    async def main() -> list[Answer]:
        out = []
        async with open_http(url, token) as memory:
            agent = ReadAgent(memory, llm, max_steps=max_steps)
            await agent.toolset()  # listed once per session, as in the CLI and the server
            for question in questions:
                now = dt.datetime.fromisoformat(question.now)
                out.append(await agent.ask(question.text, now=now))
        return out

    return anyio.run(main)


def summarize(answers: Sequence[Answer], questions: Sequence[Question]) -> dict[str, Any]:
    def ms(values: list[float]) -> dict[str, float]:
        return {
            "p50": round(statistics.median(values) * 1000, 1),
            "p95": round(percentile(values, 0.95) * 1000, 1),
            "mean": round(statistics.fmean(values) * 1000, 1),
        }

    calls = [len(a.tool_calls) for a in answers]
    expected = [(a, q) for a, q in zip(answers, questions, strict=True) if q.expected]
    cited = sum(1 for a, q in expected if {c.id for c in a.citations} & set(q.expected))
    by_category: dict[str, list[int]] = {}
    for answer, question in zip(answers, questions, strict=True):
        by_category.setdefault(question.category, []).append(len(answer.tool_calls))
    return {
        "questions": len(answers),
        "total_ms": ms([a.timings.total for a in answers]),
        "model_ms": ms([a.timings.model for a in answers]),
        "tools_ms": ms([a.timings.tools for a in answers]),
        "overhead_ms": ms([a.timings.overhead for a in answers]),
        "outside_model_ms": ms([a.timings.total - a.timings.model for a in answers]),
        "tool_calls_per_question": round(statistics.fmean(calls), 2),
        "tool_calls_max": max(calls),
        "tool_calls_by_category": {
            k: round(statistics.fmean(v), 2) for k, v in by_category.items()
        },
        "steps_mean": round(statistics.fmean(a.steps for a in answers), 2),
        "removed_citations": sum(len(a.removed_citations) for a in answers),
        "cited_expected_page": f"{cited}/{len(expected)}",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=300, help="generated pages")
    parser.add_argument("--questions", type=int, default=30, help="generated questions")
    parser.add_argument("--questions-file", type=Path, help="JSON list of questions instead")
    parser.add_argument("--max-steps", type=int, default=6)
    parser.add_argument("--real-llm", action="store_true", help="use the configured model")
    parser.add_argument("--config", help="config.yaml for --real-llm")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="bench_read_agent_"))
    kb_dir = work / "kb"
    kb = generate_kb(kb_dir, pages=args.pages, seed=7)
    questions = (
        load_questions(args.questions_file)
        if args.questions_file
        else generated_questions(kb, args.questions)
    )
    config = work / "config.yaml"
    config.write_text("embedding:\n  provider: hash\n  dims: 384\n")
    command = [sys.executable, "-m", "memserver.cli", "--kb", str(kb_dir), "--config", str(config)]
    reader = create_token(command, "bench-reader", "*")
    t0 = time.monotonic()
    subprocess.run([*command, "reindex"], check=True, capture_output=True)
    index_seconds = time.monotonic() - t0
    port = free_port()
    server = subprocess.Popen([*command, "serve", "--addr", f"127.0.0.1:{port}"])
    scripted: Any = None
    try:
        wait_ready(f"http://127.0.0.1:{port}")
        url = f"http://127.0.0.1:{port}/mcp"
        with model(args.real_llm, args.config) as (llm, scripted):
            ask_all(url, reader, llm, questions[:2], args.max_steps)  # warm up both sides
            agent_answers = ask_all(url, reader, llm, questions, args.max_steps)
        extractive_answers = ask_all(url, reader, None, questions, args.max_steps)
    finally:
        stop_process(server)
        shutil.rmtree(work, ignore_errors=True)

    report = {
        "pages": len(kb.pages),
        "index_s": round(index_seconds, 1),
        "model": "configured LLM"
        if args.real_llm
        else "scripted policy (kb_query, kb_get_page, answer)",
        "agent": summarize(agent_answers, questions),
        "extractive": summarize(extractive_answers, questions),
        "scripted_model_requests": len(scripted.requests) if scripted is not None else None,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print(report)
    return 0


@contextlib.contextmanager
def model(real: bool, config: str | None) -> Iterator[tuple[LLMClient, Any]]:
    """The model for the agent runs: the configured LLM, or the scripted server (returned)."""
    if real:
        settings = load_settings(config)
        if settings.llm is None:
            raise SystemExit("--real-llm: set LLM_BASE_URL and LLM_MODEL (or llm in config)")
        with LLMClient(settings.llm) as llm:
            yield llm, None
        return
    with scripted_llm(policy) as (llm, server):
        yield llm, server


def _print(report: dict[str, Any]) -> None:
    print(f"{report['pages']} pages (indexed in {report['index_s']} s); model: {report['model']}")
    for mode in ("agent", "extractive"):
        row = report[mode]
        print(
            f"  {mode}: {row['questions']} questions; total p50 {row['total_ms']['p50']} ms "
            f"p95 {row['total_ms']['p95']} ms; model p50 {row['model_ms']['p50']} ms; tools p50 "
            f"{row['tools_ms']['p50']} ms; overhead p50 {row['overhead_ms']['p50']} ms p95 "
            f"{row['overhead_ms']['p95']} ms; outside the model p50 "
            f"{row['outside_model_ms']['p50']} ms; tool calls/question "
            f"{row['tool_calls_per_question']} (max {row['tool_calls_max']}); cited the "
            f"expected page {row['cited_expected_page']}"
        )


if __name__ == "__main__":
    sys.exit(main())
