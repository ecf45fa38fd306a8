"""Whole answers on real conversations: LoCoMo's development half, through the read agent.

The knowledge bases are those of ``bench/eval_locomo.py`` (one per conversation, each
session one note in ``source/``; built or brought up to date the same way, in
``--work``). Every question of categories 1 (multi-hop), 2 (temporal) and 4 (single-hop)
with evidence is asked of the read agent **without a model**: the extractive answer
``read-agent --kb DIR --no-llm ask`` gives, over a stdio MCP memory server (one per
conversation, trusted). Each answer is scored:

* **cited**: it cites a session (``source/session-NN.md``) that holds an evidence turn;
  **cited@1**: its first citation does (the answer cites up to six sessions, the
  baseline one);
* **shown**: one of its evidence lines (the first line or a ``- `` line, without date,
  speaker and citation) quotes an evidence turn: the turn's words are in the line, or
  the line's words (five or more) are a run of the turn's (a sentence of a long turn);
* **F1**: token F1 of its first line (citations removed) against LoCoMo's gold
  ``answer``, as LoCoMo scores it: lowercased, punctuation and articles removed,
  token overlap (no stemming);
* for temporal questions whose gold answer is a day or a month ("7 May 2023",
  "June, 2023"): whether that date (``2023-05-07``, ``2023-06``) is on the first line
  (**date@1**) or anywhere in the answer (**date@any**).

Beside it, the **baseline**: the sentence of BM25's top session (``eval_locomo``'s BM25
over whole sessions) holding the most BM25 weight (idf) of the question's words,
written as an answer line (``<session date> · Speaker: sentence [source/session-NN.md]``)
and scored the same way.

    nice -n 10 .venv/bin/python -m bench.eval_locomo_answers --embedder local \\
        --work /tmp/memserver-locomo-answers [--limit 20] [--json out.json] [--show-misses]

``--work`` may be a copy of a set ``eval_locomo.py`` built (same layout,
``<work>/<embedder>/<conversation>``); the run writes there (the index, the database).
"""

from __future__ import annotations

import calendar
import contextlib
import datetime as dt
import json
import os
import re
import string
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from bench.eval_locomo import (
    CATEGORIES,
    Conversation,
    Question,
    arguments,
    bm25_index,
    built,
    load,
    note_path,
    session_of,
    session_start,
    tokens,
    work_root,
)
from memserver.clients.config import load_settings
from read_agent.connection import AgentPool, make_llm, memory_target
from read_agent.tools.citations import extract_citations

REPO = Path(__file__).resolve().parents[1]

_CITATION = re.compile(r"\s*\[[^\]]+\]")
# the read agent's label after a line's words: "(direct: source/x.md, by Ana)", "(inferred)"
_LABEL = re.compile(r"\s*\((?:direct(?::[^()]*)?|inferred)\)\s*$")
# "- 2023-05-07 (said on 2023-05-08) · Caroline: " before what a line quotes
_LINE_HEAD = re.compile(r"^(?:- )?(?:Later: )?(?:[^·]{1,60} · )?(?:[A-Z][\w'’-]*: )?")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_MONTHS = {calendar.month_name[i].lower(): i for i in range(1, 13)}
_MONTH = "(" + "|".join(_MONTHS) + ")"
_DAY_MONTH_YEAR = re.compile(rf"(?:on )?(\d{{1,2}}) {_MONTH},? (\d{{4}})")
_MONTH_DAY_YEAR = re.compile(rf"(?:on )?{_MONTH} (\d{{1,2}}),? (\d{{4}})")
_MONTH_YEAR = re.compile(rf"(?:in )?{_MONTH}[,.]? ?(\d{{4}})")
SHOWN_WORDS = 5  # a line this long that is a run of a turn's words quotes the turn


# --------------------------------------------------------------------------- scoring


def normalize(text: str) -> str:
    """LoCoMo's answer normalisation: lowercase, no punctuation, no articles."""
    text = "".join(c for c in text.lower() if c not in string.punctuation)
    return " ".join(_ARTICLES.sub(" ", text).split())


def f1(prediction: str, gold: str) -> float:
    """Token F1 of ``prediction`` against ``gold`` (both normalised)."""
    predicted, wanted = normalize(prediction).split(), normalize(gold).split()
    common = sum(min(predicted.count(w), wanted.count(w)) for w in set(predicted))
    if not common:
        return 0.0
    precision, recall = common / len(predicted), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def gold_date(answer: str) -> str | None:
    """The day (``2023-05-07``) or month (``2023-06``) a gold answer is, or None when it
    is something else ("The week before 9 June 2023", "2022", "her mother")."""
    text = " ".join(answer.lower().replace("`", "").split())
    if found := _DAY_MONTH_YEAR.fullmatch(text):
        day, month, year = int(found[1]), _MONTHS[found[2]], int(found[3])
    elif found := _MONTH_DAY_YEAR.fullmatch(text):
        month, day, year = _MONTHS[found[1]], int(found[2]), int(found[3])
    elif found := _MONTH_YEAR.fullmatch(text):
        return f"{int(found[2]):04d}-{_MONTHS[found[1]]:02d}"
    else:
        return None
    return dt.date(year, month, day).isoformat()


def words_of(text: str) -> str:
    return " ".join(tokens(text))


def said(line: str) -> str:
    """An answer line's quoted words: no bullet, date, speaker, label or citation."""
    return words_of(_LINE_HEAD.sub("", _LABEL.sub("", _CITATION.sub("", line).strip())))


def shows(line: str, turn: str) -> bool:
    """Whether an answer line quotes ``turn`` (see the module docstring)."""
    quoted, whole = said(line), words_of(turn)
    if not quoted or not whole:
        return False
    if f" {whole} " in f" {quoted} ":
        return True
    return len(quoted.split()) >= SHOWN_WORDS and f" {quoted} " in f" {whole} "


def evidence_lines(answer: str) -> list[str]:
    lines = answer.splitlines()
    return lines[:1] + [line for line in lines[1:] if line.startswith("- ")]


@dataclass(frozen=True)
class Scored:
    cited: bool
    cited_first: bool
    shown: bool
    f1: float
    date_lead: bool | None  # None: the gold answer is no day or month
    date_any: bool | None


def score(q: Question, conv: Conversation, answer: str, cited: Sequence[str]) -> Scored:
    lead = _CITATION.sub("", answer.splitlines()[0] if answer else "")
    turns = [conv.turns[e] for e in q.evidence]
    shown = any(shows(line, turn) for line in evidence_lines(answer) for turn in turns)
    day = gold_date(q.answer) if q.category == "temporal" else None
    first = extract_citations(answer)[:1]
    return Scored(
        cited=any(session_of(c) in q.sessions for c in cited),
        cited_first=any(session_of(c) in q.sessions for c in first),
        shown=shown,
        f1=f1(lead, q.answer),
        date_lead=None if day is None else day in lead,
        date_any=None if day is None else day in answer,
    )


# --------------------------------------------------------------------------- baseline


def baseline(conv: Conversation) -> list[tuple[str, str]]:
    """For each question of ``conv``: (answer line, citation) of the BM25 baseline."""
    order, index = bm25_index(conv)
    out = []
    for q in conv.questions:
        asked = tokens(q.text)
        scores = index.scores(asked)
        top = order[max(range(len(order)), key=lambda i: scores[i])]
        when, note = conv.notes[top]
        best, weight = "", -1.0
        for line in note.split("\n---\n", 1)[-1].splitlines():
            speaker, _, text = line.partition(": ")
            for sentence in _SENTENCE.split(text):
                held = set(tokens(sentence)) & set(asked)
                value = sum(index.idf.get(w, 0.0) for w in held)
                if value > weight:
                    best, weight = f"{speaker}: {sentence}", value
        cite = f"source/{note_path(top)}"
        out.append((f"- {session_start(when).date().isoformat()} · {best} [{cite}]", cite))
    return out


# --------------------------------------------------------------------------- the agent


@contextlib.contextmanager
def no_model_environment() -> Iterator[dict[str, str]]:
    """The environment without LLM_* and MEMORY_* variables while in the block (the
    stdio server the agent spawns inherits it), and that environment."""
    saved = dict(os.environ)
    for key in [k for k in os.environ if k.startswith(("LLM_", "MEMORY_"))]:
        del os.environ[key]
    try:
        yield dict(os.environ)
    finally:
        os.environ.clear()
        os.environ.update(saved)


async def ask_all(
    kb: Path, config: Path, questions: Sequence[str], now: dt.datetime, *, model: bool = False
) -> list[dict[str, Any]]:
    """Every question through the read agent over one stdio server: without a model, or
    with the one the environment's LLM_* variables name (``model``)."""
    with contextlib.nullcontext(dict(os.environ)) if model else no_model_environment() as env:
        settings = load_settings(config, env)
        pool = AgentPool(
            memory_target(settings, kb, str(config)), make_llm(settings, enabled=model)
        )
        rows = []
        await pool.start()
        try:
            async with pool.agent() as agent:
                for q in questions:
                    began = time.perf_counter()
                    answer = await agent.ask(q, now=now)
                    rows.append(
                        {
                            "answer": answer.text,
                            "cited": [c.id for c in answer.citations],
                            "mode": answer.mode,
                            "ms": (time.perf_counter() - began) * 1000,
                        }
                    )
        finally:
            await pool.stop()
            pool.close()
    return rows


# --------------------------------------------------------------------------- report


def table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Per category and system: cited, shown, mean F1, and the gold date's place."""
    lines = [
        "| category | n | system | cited | cited@1 | shown | F1 | date@1 | date@any |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for category in [*CATEGORIES.values(), None]:
        mine = [r for r in rows if category is None or r["category"] == category]
        if not mine:
            continue
        for system in ("agent", "baseline"):
            s = [r[system] for r in mine]
            n = len(s)
            dated = [x for x in s if x["date_lead"] is not None]
            cells = [
                f"{sum(x['cited'] for x in s) / n:.3f}",
                f"{sum(x['cited_first'] for x in s) / n:.3f}",
                f"{sum(x['shown'] for x in s) / n:.3f}",
                f"{sum(x['f1'] for x in s) / n:.3f}",
            ]
            if dated:
                cells += [
                    f"{sum(x['date_lead'] for x in dated) / len(dated):.3f} (n={len(dated)})",
                    f"{sum(x['date_any'] for x in dated) / len(dated):.3f}",
                ]
            else:
                cells += ["", ""]
            lines.append(f"| {category or 'all'} | {n} | {system} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__.split("\n\n")[0], "/tmp/memserver-locomo-answers")
    parser.add_argument("--limit", type=int, help="the first N questions of each conversation")
    parser.add_argument("--show-misses", action="store_true", help="answers not showing evidence")
    parser.add_argument("--json", type=Path, help="write every question's answer and scores here")
    args = parser.parse_args(argv)

    if not args.data.is_file():
        raise SystemExit(f"no data at {args.data}: pass --data PATH/locomo-dev.json")
    if args.work.resolve().is_relative_to(REPO):
        raise SystemExit(f"--work {args.work} is inside the repository: pass a directory outside")
    conversations = [
        c for c in load(args.data, args.chat_format) if not args.only or c.name in args.only
    ]
    for conv in conversations:
        conv.questions = conv.questions[: args.limit]
    now = dt.datetime.fromisoformat(args.now)
    root, config = work_root(args.work, args.embedder)
    began = time.perf_counter()
    rows: list[dict[str, Any]] = []
    for conv in conversations:
        with built(root, conv, args.embedder):
            pass
        asked = anyio.run(ask_all, root / conv.name, config, [q.text for q in conv.questions], now)
        for q, got, (line, cite) in zip(conv.questions, asked, baseline(conv), strict=True):
            rows.append(
                {
                    "conversation": conv.name,
                    "category": q.category,
                    "q": q.text,
                    "gold": q.answer,
                    "evidence": list(q.evidence),
                    "sessions": sorted(q.sessions),
                    **got,
                    "baseline_answer": line,
                    "agent": vars(score(q, conv, got["answer"], got["cited"])),
                    "baseline": vars(score(q, conv, line, [cite])),
                }
            )
    ms = sorted(r["ms"] for r in rows)
    print(
        f"# {len(rows)} questions over {len(conversations)} conversations, embedder "
        f"{args.embedder}, now {args.now}; {time.perf_counter() - began:.0f} s, "
        f"p50 {ms[len(ms) // 2]:.0f} ms an answer\n"
    )
    print(table(rows))
    modes: dict[str, int] = {}
    for r in rows:
        modes[r["mode"]] = modes.get(r["mode"], 0) + 1
    print(f"\nanswer modes: {modes}")
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    for r in rows if args.show_misses else ():
        if not r["agent"]["shown"]:
            head = "\n    ".join(r["answer"].splitlines()[:4])
            print(
                f"\nMISS {r['conversation']} {r['category']} cited={r['agent']['cited']} "
                f"{r['q']!r} gold={r['gold']!r} evidence={r['evidence']}\n    {head}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
