"""Session recall on real conversations: LoCoMo's development half, through kb_query.

Reads ``../shared/data/locomo-dev/locomo-dev.json`` where it lies (never copied into the
repository) and builds one knowledge base per conversation as the data's README says:
each session becomes one note in ``source/`` (frontmatter ``date:`` = the session's
date, body = ``Speaker: text`` lines). Every question of categories 1 (multi-hop),
2 (temporal) and 4 (single-hop) with evidence is asked as is through the real MCP
``kb_query`` (``memserver serve --stdio``, ``include_sources: true``); a question is a hit
at k when a session holding one of its evidence turns is among the first k distinct
sources. Beside it, over the same notes:

* ``bm25``: BM25 (Okapi, k1 1.5, b 0.75, a negative idf floored at 0.25 of the mean idf,
  as rank_bm25 does) over whole sessions (the session's date and time as LoCoMo writes it,
  then its turns), ``\\w+`` tokens lowercased, no stemming: the baseline of the data's
  README, whose figures it reproduces;
* ``keyword``, ``note``, ``vector``: the same index and pipeline with one source arm
  alone (sentence keywords, the system's BM25 over whole notes, sentence vectors);
* ``kb_brief``: the sessions the evidence of a ``kb_brief`` on the question cites, in
  order (``--no-brief`` leaves it out).

Every table is given for all questions and for each half of ``bench/halves.py`` (a
question's id is ``<conversation>:<its index in the conversation's qa list>``): misses
are read on the tuning half only (``bench/README.md``).

It also counts the questions that got 0-1 (and fewer than 3) results from kb_query. The
knowledge bases live in ``--work`` (outside the repository) and are kept between runs: a
note is rewritten only when its text changes, so the reindex embeds only what changed.

    .venv/bin/python -m bench.eval_locomo --embedder hash            # a few minutes
    .venv/bin/python -m bench.eval_locomo --embedder local --show-misses --json out.json

``--show-misses`` lists the misses of the tuning half only.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import datetime as dt
import json
import math
import re
import shutil
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.halves import HALVES, TUNING, half
from memserver.clients.embed import LOCAL_ENGINES, make_embedder
from memserver.clients.mcp import open_stdio
from memserver.search.pipeline import Searcher, SearchRequest
from memserver.store.knowledge_base import KnowledgeBase

REPO = Path(__file__).resolve().parents[1]

DATA = REPO.parent / "shared" / "data" / "locomo-dev" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 4: "single-hop"}
KS = (1, 3, 5)
NOW = "2026-12-01T12:00:00+00:00"  # after every conversation; fixed so runs compare
SCHEMA = """\
timezone: UTC
folders:
  - name: notes
    type: note
    description: Notes written from the conversations.
"""
_SESSION = re.compile(r"session_(\d+)")
_EVIDENCE = re.compile(r"D(\d+):\d+")  # one turn; "D8:6; D9:17" and "D:11:26" are malformed
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Question:
    id: str  # "<conversation>:<index in its qa list>": fixes its half (bench/halves.py)
    conversation: str
    category: str
    text: str
    sessions: frozenset[int]  # sessions holding an evidence turn
    answer: str = ""  # LoCoMo's gold answer
    evidence: tuple[str, ...] = ()  # the evidence turns' dia_ids ("D1:3")


@dataclass
class Conversation:
    name: str
    notes: dict[int, tuple[str, str]] = field(default_factory=dict)  # session -> (when, note)
    questions: list[Question] = field(default_factory=list)
    turns: dict[str, str] = field(default_factory=dict)  # dia_id -> the turn's text


def session_start(value: str) -> dt.datetime:
    """``1:56 pm on 8 May, 2023`` -> 2023-05-08 13:56."""
    return dt.datetime.strptime(" ".join(value.split()), "%I:%M %p on %d %B, %Y")


# How a session's turns are written: as the data's README says (``Speaker: text``), or
# as a WhatsApp export would (``08/05/2023, 13:56 - Speaker: text``, a minute a turn).
CHAT_FORMATS = ("plain", "whatsapp")


def turn_line(chat: str, start: dt.datetime, i: int, speaker: str, text: str) -> str:
    if chat == "whatsapp":
        return f"{(start + dt.timedelta(minutes=i)):%d/%m/%Y, %H:%M} - {speaker}: {text}"
    return f"{speaker}: {text}"


def note_path(session: int) -> str:
    return f"session-{session:02d}.md"


def session_of(source_id: str) -> int | None:
    """The session of ``source/session-NN.md`` (a citation may drop the ``.md``)."""
    found = re.search(r"session-(\d+)(?:\.md)?$", source_id)
    return int(found.group(1)) if found else None


def load(path: Path, chat: str = "plain") -> list[Conversation]:
    out = []
    for item in json.loads(path.read_text(encoding="utf-8")):
        conv = Conversation(item["sample_id"])
        talk = item["conversation"]
        for key, turns in talk.items():
            found = _SESSION.fullmatch(key)
            if found is None or not turns:
                continue
            when = talk[f"{key}_date_time"]
            start = session_start(when)
            conv.turns.update({str(t["dia_id"]): t["text"] for t in turns if t.get("dia_id")})
            body = "\n".join(
                turn_line(chat, start, i, t["speaker"], t["text"]) for i, t in enumerate(turns)
            )
            note = f"---\ndate: {start.date().isoformat()}\n---\n{body}\n"
            conv.notes[int(found.group(1))] = (when, note)
        for index, qa in enumerate(item["qa"]):
            category = CATEGORIES.get(qa.get("category", 0))
            turns = [
                (int(m.group(1)), e)
                for e in (str(e).strip() for e in qa.get("evidence") or ())
                if (m := _EVIDENCE.fullmatch(e))
            ]
            evidence = {n for n, _ in turns} & set(conv.notes)
            if category and evidence:
                conv.questions.append(
                    Question(
                        f"{conv.name}:{index}",
                        conv.name,
                        category,
                        qa["question"],
                        frozenset(evidence),
                        str(qa.get("answer", "")),
                        tuple(e for _, e in turns if e in conv.turns),
                    )
                )
        out.append(conv)
    return out


def write_kb(kb: Path, conv: Conversation) -> None:
    """The KB's schema and notes; a file is rewritten only when its text differs."""
    source = kb / "source"
    source.mkdir(parents=True, exist_ok=True)
    files = {kb / "schema.yaml": SCHEMA}
    files |= {source / note_path(n): text for n, (_, text) in conv.notes.items()}
    for target, text in files.items():
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    for stale in set(source.glob("*.md")) - set(files):
        stale.unlink()


# --------------------------------------------------------------------------- BM25


def tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class BM25:
    """Okapi BM25 as rank_bm25's ``BM25Okapi`` computes it (k1 1.5, b 0.75, a negative
    idf replaced by 0.25 x the mean idf)."""

    def __init__(self, docs: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tf = [collections.Counter(d) for d in docs]
        self.lengths = [len(d) for d in docs]
        self.avg = sum(self.lengths) / max(1, len(docs))
        df: collections.Counter[str] = collections.Counter()
        for counts in self.tf:
            df.update(counts.keys())
        n = len(docs)
        idf = {w: math.log(n - f + 0.5) - math.log(f + 0.5) for w, f in df.items()}
        floor = 0.25 * (sum(idf.values()) / max(1, len(idf)))
        self.idf = {w: v if v >= 0 else floor for w, v in idf.items()}

    def scores(self, query: Sequence[str]) -> list[float]:
        out = []
        for counts, length in zip(self.tf, self.lengths, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / self.avg)
            out.append(
                sum(
                    self.idf.get(w, 0.0) * counts[w] * (self.k1 + 1) / (counts[w] + norm)
                    for w in query
                    if w in counts
                )
            )
        return out


def bm25_index(conv: Conversation) -> tuple[list[int], BM25]:
    """BM25 over the whole sessions of ``conv``, and the session of each document."""
    order = sorted(conv.notes)
    docs = [tokens(f"{when}\n{body(note)}") for when, note in (conv.notes[n] for n in order)]
    return order, BM25(docs)


def bm25_rankings(conv: Conversation) -> list[list[int]]:
    """For each question of ``conv``, its sessions ranked by BM25 over whole sessions."""
    order, index = bm25_index(conv)
    out = []
    for q in conv.questions:
        scores = index.scores(tokens(q.text))
        out.append([order[i] for i in sorted(range(len(order)), key=lambda i: -scores[i])])
    return out


def body(note: str) -> str:
    """A note without its frontmatter."""
    return note.split("\n---\n", 1)[-1]


# --------------------------------------------------------------------------- systems


def work_root(
    work: Path, embedder: str, engine: str | None = None, *, fresh: bool = False
) -> tuple[Path, Path]:
    """``work/<embedder>[-<engine>]`` (made; emptied first when ``fresh``, so every text
    is embedded again) and its config, which names the embedder."""
    root = work / (f"{embedder}-{engine}" if engine else embedder)
    if fresh and root.exists():
        shutil.rmtree(root)
    config = root / "config.yaml"
    root.mkdir(parents=True, exist_ok=True)
    engine_line = f"  engine: {engine}\n" if engine else ""
    config.write_text(f"embedding:\n  provider: {embedder}\n{engine_line}", encoding="utf-8")
    return root, config


@contextlib.contextmanager
def built(
    root: Path, conv: Conversation, embedder: str, engine: str | None = None
) -> Iterator[KnowledgeBase]:
    """The conversation's knowledge base under ``root``, written and reindexed (only what
    changed), open while in the block; its size and indexing time are printed."""
    kb_dir = root / conv.name
    write_kb(kb_dir, conv)
    options = {"engine": engine} if engine else {}
    embedder_ = make_embedder(embedder, **options)
    with KnowledgeBase.open(kb_dir, embedder=embedder_, database_url=None) as kb:
        cpu = time.process_time()
        report = kb.reindex()
        print(
            f"{conv.name}: {len(conv.notes)} sessions, {len(conv.questions)} questions, "
            f"{report.sources_indexed} notes indexed ({report.seconds:.0f} s, "
            f"{time.process_time() - cpu:.0f} CPU-s in this process)",
            file=sys.stderr,
        )
        yield kb


def sessions_of(results: Iterable[Mapping[str, Any]]) -> list[int]:
    """Distinct sessions among source results, in order."""
    out: list[int] = []
    for result in results:
        session = session_of(str(result.get("id", "")))
        if session is not None and session not in out:
            out.append(session)
    return out


def stdio_command(kb: Path, config: Path) -> list[str]:
    """``memserver serve --stdio --trusted`` over ``kb`` with this run's ``config``."""
    return [
        sys.executable,
        "-m",
        "memserver.cli",
        "--kb",
        str(kb),
        "--config",
        str(config),
        "serve",
        "--stdio",
        "--trusted",
    ]


async def ask_mcp(
    kb: Path, config: Path, questions: Sequence[Question], now: str, *, brief: bool = False
) -> list[dict[str, Any]]:
    """Every question through kb_query (and kb_brief with ``brief``) over a stdio MCP
    session with a trusted server."""
    command = stdio_command(kb, config)
    rows = []
    async with open_stdio(kb, trusted=True, command=command, timeout=120) as client:
        for q in questions:
            began = time.perf_counter()
            found = await client.call(
                "kb_query", {"question": q.text, "include_sources": True, "now": now}
            )
            results = found.get("results", [])
            row = {
                "sessions": sessions_of(results),
                "count": len(results),
                "window": (found.get("time") or {}).get("window"),
                "ms": (time.perf_counter() - began) * 1000,
            }
            if brief:
                got = await client.call("kb_brief", {"question": q.text, "now": now})
                cited = [{"id": str(e.get("source") or "")} for e in got.get("evidence") or ()]
                row["brief"] = sessions_of(cited)
            rows.append(row)
    return rows


# The source arms measured alone: the name a table gives each, and the pipeline's arm.
SINGLE_ARMS = {"keyword": "source_keyword", "note": "source_note", "vector": "source_vector"}


def one_arm(
    searcher: Searcher, text: str, now: dt.datetime, arm: str = "source_vector"
) -> list[dict[str, Any]]:
    """The results of ``text`` through the search pipeline with one source arm alone."""
    request = SearchRequest(text, now=now, include_sources=True, arms={arm}, route=False)
    return [r.to_dict() for r in searcher.search(request).results]


def vector_only(searcher: Searcher, text: str, now: dt.datetime) -> list[dict[str, Any]]:
    """The results of ``text`` through the search pipeline with the source vector arm alone."""
    return one_arm(searcher, text, now, "source_vector")


def ask_arms(
    searcher: Searcher, questions: Sequence[Question], now: dt.datetime
) -> dict[str, list[list[int]]]:
    """For each single arm (SINGLE_ARMS), the sessions it ranks for each question."""
    return {
        name: [sessions_of(one_arm(searcher, q.text, now, arm)) for q in questions]
        for name, arm in SINGLE_ARMS.items()
    }


def first_hit(ranked: Sequence[int], answers: frozenset[int]) -> int | None:
    for i, session in enumerate(ranked, 1):
        if session in answers:
            return i
    return None


def table(rows: Sequence[Mapping[str, Any]], systems: Sequence[str]) -> str:
    """Session R@1 / R@3 / R@5 per category, one cell per system (n/a when it did not
    run)."""
    head = "| system | " + " | ".join(
        f"{c} (n={sum(1 for r in rows if r['category'] == c)})" for c in CATEGORIES.values()
    )
    lines = [head + " | all |", "|---|" + "---|" * (len(CATEGORIES) + 1)]
    for system in systems:
        cells = []
        if any(system not in r for r in rows):
            lines.append(f"| {system} | " + " | ".join(["n/a"] * (len(CATEGORIES) + 1)) + " |")
            continue
        for category in [*CATEGORIES.values(), None]:
            ranks = [r[system] for r in rows if category is None or r["category"] == category]
            n = max(1, len(ranks))
            cells.append(
                " / ".join(
                    f"{sum(1 for x in ranks if x is not None and x <= k) / n:.3f}" for k in KS
                )
            )
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def arguments(description: str, work: str) -> argparse.ArgumentParser:
    """The options every LoCoMo benchmark takes: the data, the work directory (default
    ``work``), the embedder, the reference time and which conversations."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--work", type=Path, default=Path(work))
    parser.add_argument("--embedder", choices=("hash", "local"), default="hash")
    parser.add_argument(
        "--engine", choices=LOCAL_ENGINES, help="the local embedder's engine (default: onnx)"
    )
    parser.add_argument("--now", default=NOW, help="the reference time of the questions")
    parser.add_argument("--only", nargs="*", help="these conversations (e.g. conv-26)")
    parser.add_argument(
        "--chat-format", choices=CHAT_FORMATS, default="plain", help="how turns are written"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__.split("\n\n")[0], "/tmp/memserver-locomo")
    parser.add_argument("--no-vector", action="store_true", help="skip the single-arm runs")
    parser.add_argument("--no-brief", action="store_true", help="skip kb_brief")
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument("--json", type=Path, help="write every question's outcome here")
    parser.add_argument(
        "--fresh", action="store_true", help="empty the work directory first: embed every text"
    )
    args = parser.parse_args(argv)

    if not args.data.is_file():
        raise SystemExit(f"no data at {args.data}: pass --data PATH/locomo-dev.json")
    conversations = [
        c for c in load(args.data, args.chat_format) if not args.only or c.name in args.only
    ]
    now = dt.datetime.fromisoformat(args.now)
    root, config = work_root(args.work, args.embedder, args.engine, fresh=args.fresh)
    began = time.perf_counter()
    rows: list[dict[str, Any]] = []
    for conv in conversations:
        with built(root, conv, args.embedder, args.engine) as kb:
            single: dict[str, list[list[int]]] = {}
            if not args.no_vector:
                searcher = Searcher.for_kb(kb, route=False)
                single = ask_arms(searcher, conv.questions, now)
                searcher.close()
        asked = asyncio.run(
            ask_mcp(root / conv.name, config, conv.questions, args.now, brief=not args.no_brief)
        )
        for i, (q, mcp, bm) in enumerate(
            zip(conv.questions, asked, bm25_rankings(conv), strict=True)
        ):
            row = {
                "id": q.id,
                "half": half(q.id),
                "conversation": conv.name,
                "category": q.category,
                "q": q.text,
                "answers": sorted(q.sessions),
                "sessions": len(conv.notes),
                "kb_query": first_hit(mcp["sessions"], q.sessions),
                "bm25": first_hit(bm, q.sessions),
                "top": mcp["sessions"][:5],
                "bm25_top": bm[:5],
                "count": mcp["count"],
                "window": mcp["window"],
                "ms": round(mcp["ms"], 1),
            }
            if "brief" in mcp:
                row["kb_brief"] = first_hit(mcp["brief"], q.sessions)
            for name, ranked in single.items():
                row[name] = first_hit(ranked[i], q.sessions)
            rows.append(row)
    systems = ["kb_query", "kb_brief", "bm25", *SINGLE_ARMS]
    print(
        f"# {len(rows)} questions over {len(conversations)} conversations, embedder "
        f"{args.embedder}, now {args.now}; {time.perf_counter() - began:.0f} s\n"
    )
    for part in (None, *HALVES):
        mine = [r for r in rows if part is None or r["half"] == part]
        print(f"Session R@1 / R@3 / R@5, {part or 'all'} ({len(mine)} questions)\n")
        print(table(mine, systems) + "\n")
    few = [r for r in rows if r["count"] <= 1]
    short = [r for r in rows if r["count"] < 3 and r["sessions"] >= 3]
    ms = sorted(r["ms"] for r in rows)
    print(
        f"\nkb_query: {len(few)} questions with 0-1 results, {len(short)} with fewer than 3 "
        f"(conversations of 3+ sessions); p50 {ms[len(ms) // 2]:.0f} ms"
    )
    if args.show_misses:
        for r in rows:
            if r["half"] != TUNING:
                continue  # the validation half's misses are not read (bench/README.md)
            if r["kb_query"] is None or r["kb_query"] > 5:
                print(
                    f"MISS {r['conversation']} {r['category']:10} rank={r['kb_query']} "
                    f"bm25={r['bm25']} {r['q']!r} want={r['answers']} top={r['top']} "
                    f"n={r['count']}"
                )
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
