"""Company memory that keeps the truth: OrgMemBench's Helix Logistics, notes to answers.

Reads a tier of OrgMemBench where it lies (``../shared/data/orgmem-small/`` by default,
``--data`` for another tier of the same shape; never copied into the repository) and
builds one knowledge base from it, in ``--work``:

* every artefact becomes one note ``source/<slot_id>.md`` (a few slot ids name two
  artefacts of different events; the later one in the index is ``<slot_id>--<event>``,
  and the gold ids mean the first): frontmatter ``slot_id``,
  ``date`` (as the data's README dates it: the event's ``occurred_at``, else the first
  ``YYYY-MM-DD`` of the artefact's first 300 characters, else ``YYYY-Qn`` as the
  quarter's first day, else ``YYYY-MM`` as the month's first day), ``author`` (the
  persona's name) and ``genre``; the body is the artefact without its HTML metadata
  comment (benchmark metadata, among it the testimony type that C5 questions ask for);
* the schema is ``bench/orgmem_schema.yaml`` (people, teams, customers, decisions,
  policies, incidents, projects, meetings);
* the notes become pages with ``ingest-agent --kb DIR --rules`` (no model).

Each question is then measured twice.

**Evidence** (the artefacts the gold answer rests on), among the first k distinct notes:
hit@5, hit@10 (one of them there) and cover@10 (the share of them there), for

* ``kb_query``: the MCP tool with ``include_sources`` (``memserver serve --stdio``), the
  notes of its source results in order;
* ``kb_query+pages``: the same results, each page standing for the notes in its
  ``sources`` (the evidence a reader of the pages can reach);
* ``kb_brief``: the tool of that name when the server has one (the notes its evidence
  cites, in order), else "n/a";
* ``bm25``: BM25 over whole notes (``bench/eval_locomo.py``'s);
* ``keyword``, ``note``, ``vector``: the same index with one source arm alone (sentence
  keywords, the system's BM25 over whole notes, sentence vectors).

The questions are the tier's and ours (``bench/orgmem_questions.yaml``, ``--questions``;
``--no-ours`` leaves ours out). Every table is given for all questions and for each
half of ``bench/halves.py`` (by question id); ``--show-misses`` lists the tuning half's
misses only (``bench/README.md``).

``--rewordings`` also asks the three rewordings of each of the tier's questions in
``bench/rewordings/<tier>.yaml``, each scored with its original's gold answer and gold
artefacts exactly as the original is, and in its original's half; the tables above stay
the originals', and a last one gives the key facts the agent states for the originals
and for their rewordings, per category, with the gap in points.

**Answers**: the read agent's answer without a model (and with the model of
``LLM_BASE_URL``/``LLM_MODEL`` when set), and beside it BM25's top three notes, each cut
at 2,000 characters, scored by the share of the gold answer's key facts they state (ISO
dates in any spelling, numbers with units, people's names: ``bench/orgmem_scoring.py``).

    nice -n 10 .venv/bin/python -m bench.eval_orgmem [--embedder local|hash] \\
        [--data DIR] [--work /tmp/memserver-orgmem] [--fresh] [--show-misses] [--json out.json] \\
        [--rewordings]

The knowledge base in ``--work`` is kept: a second run re-ingests only changed notes
(``--fresh`` starts over; a changed schema always does).
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
import yaml

from bench import orgmem_scoring as scoring
from bench.eval_answers import ingest
from bench.eval_locomo import BM25, SINGLE_ARMS, one_arm, stdio_command, tokens, work_root
from bench.eval_locomo_answers import ask_all
from bench.halves import HALVES, TUNING, half
from memserver.clients.embed import make_embedder
from memserver.clients.mcp import open_stdio
from memserver.kb.frontmatter import frontmatter_end, load_yaml
from memserver.search.pipeline import Searcher
from memserver.store.knowledge_base import KnowledgeBase

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "orgmem-small"
SCHEMA = Path(__file__).with_name("orgmem_schema.yaml")
OURS = Path(__file__).with_name("orgmem_questions.yaml")
REWORDINGS = Path(__file__).with_name("rewordings")
NOW = "2026-12-01T12:00:00+00:00"  # after every artefact; fixed so runs compare
CATEGORIES = {
    "C1": "supersession",
    "C2": "provenance",
    "C3": "as-of",
    "C4": "audit replay",
    "C5": "justification",
    "C6": "contradiction",
    "F": "fact",  # ours only: one fact looked up
}
ANSWER_CHARS = 2_000
BASELINE_NOTES = 3
HEAD_CHARS = 300
_METADATA = re.compile(r"\A\s*<!--.*?-->\s*", re.DOTALL)
_FULL = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_QUARTER = re.compile(r"(\d{4})[-\s]?Q([1-4])", re.IGNORECASE)
_MONTH = re.compile(r"(\d{4})-(\d{2})(?!\d)")


@dataclass(frozen=True)
class Artefact:
    slot_id: str  # unique: the data's slot id, with ``--<event>`` on its second use
    date: str | None
    author: str | None
    genre: str
    body: str

    def note(self) -> str:
        """The note as it lands in ``source/``."""
        front: dict[str, Any] = {"slot_id": self.slot_id}
        if self.date:
            front["date"] = self.date
        if self.author:
            front["author"] = self.author
        front["genre"] = self.genre
        head = yaml.safe_dump(front, sort_keys=False, allow_unicode=True)
        return f"---\n{head}---\n\n{self.body.strip()}\n"


@dataclass(frozen=True)
class OrgQuestion:
    id: str
    category: str
    text: str
    gold: Mapping[str, Any]
    evidence: tuple[str, ...]
    variant: int = 0  # 0: the question as asked; 1-3: a rewording of it (same id)


@dataclass
class Tier:
    name: str
    artefacts: list[Artefact] = field(default_factory=list)
    questions: list[OrgQuestion] = field(default_factory=list)
    people: frozenset[str] = frozenset()


# --------------------------------------------------------------------------- the data


def artefact_date(event_day: str | None, raw: str) -> str | None:
    """The event's day, else the first date of the first 300 characters (a full date,
    else a quarter's first day, else a month's first day), as the data's README says."""
    if event_day:
        return event_day[:10]
    head = raw[:HEAD_CHARS]
    if found := _FULL.search(head):
        return "-".join(found.groups())
    if found := _QUARTER.search(head):
        return f"{found[1]}-{3 * int(found[2]) - 2:02d}-01"
    if found := _MONTH.search(head):
        return f"{found[1]}-{found[2]}-01"
    return None


def without_metadata(raw: str) -> str:
    """The artefact's text without the HTML comment it opens with."""
    return _METADATA.sub("", raw, count=1)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def load_tier(data: Path) -> Tier:
    events = json.loads((data / "events_dates.json").read_text(encoding="utf-8"))
    personas = json.loads((data / "personas.json").read_text(encoding="utf-8"))
    tier = Tier(data.name, people=frozenset(str(p["name"]) for p in personas.values()))
    seen: set[str] = set()
    for row in _jsonl(data / "corpus_index.jsonl"):
        raw = (data / row["path"]).read_text(encoding="utf-8")
        event = events.get(row.get("event_id") or "") or {}
        author = personas.get(row.get("author") or "") or {}
        name = row["slot_id"]
        if name in seen:  # a slot id used twice: the later artefact is another event's
            name = f"{name}--{row.get('event_id') or Path(row['path']).parent.name}"
        seen.add(name)
        tier.artefacts.append(
            Artefact(
                name,
                artefact_date(event.get("occurred_at"), raw),
                author.get("name"),
                str(row.get("genre") or "note"),
                without_metadata(raw),
            )
        )
    for row in _jsonl(data / "benchmark.jsonl"):
        tier.questions.append(
            OrgQuestion(
                row["id"],
                row["category"],
                row["text"],
                row["ground_truth_answer"],
                tuple(row["evidence_artefact_ids"]),
            )
        )
    return tier


def our_questions(path: Path, slot_ids: Sequence[str]) -> list[OrgQuestion]:
    """Our questions (``bench/orgmem_questions.yaml``); a gold artefact the tier does not
    hold is an error that names it."""
    known = set(slot_ids)
    out = []
    for row in yaml.safe_load(path.read_text(encoding="utf-8"))["questions"]:
        missing = [e for e in row["evidence"] if e not in known]
        if missing:
            raise SystemExit(f"{path}: {row['id']} names artefacts the tier lacks: {missing}")
        gold = {"answer": row.get("answer") or ""}
        out.append(
            OrgQuestion(
                row["id"],
                row["category"],
                " ".join(row["question"].split()),
                gold,
                tuple(row["evidence"]),
            )
        )
    return out


FIRST_SET = 3  # rewordings of each question in a tier's first set (``<tier>.yaml``)


def reworded(paths: Sequence[Path], questions: Sequence[OrgQuestion]) -> list[OrgQuestion]:
    """A question per rewording in each of ``paths`` (``{id: [text, ...]}``, the sets in
    the order they were written): its original's id, category, gold answer and gold
    artefacts, its text, ``variant`` 1, 2, ... numbered on through the sets. An id the
    questions lack is an error that names it."""
    by_id = {q.id: q for q in questions if not q.variant}
    out: list[OrgQuestion] = []
    taken: dict[str, int] = {}
    for path in paths:
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        if missing := [i for i in spec if i not in by_id]:
            raise SystemExit(f"{path}: rewordings of questions the tier lacks: {missing}")
        for i, texts in spec.items():
            for text in texts:
                taken[i] = taken.get(i, 0) + 1
                out.append(replace(by_id[i], text=" ".join(str(text).split()), variant=taken[i]))
    return out


def write_kb(kb: Path, tier: Tier) -> None:
    """The schema and one note an artefact; a changed schema starts the knowledge base
    over, a note is rewritten only when its text changes."""
    schema = SCHEMA.read_text(encoding="utf-8")
    if (kb / "schema.yaml").is_file() and (kb / "schema.yaml").read_text("utf-8") != schema:
        shutil.rmtree(kb)
    source = kb / "source"
    source.mkdir(parents=True, exist_ok=True)
    (kb / "schema.yaml").write_text(schema, encoding="utf-8")
    notes = {source / f"{a.slot_id}.md": a.note() for a in tier.artefacts}
    for path, text in notes.items():
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    for stale in set(source.glob("*.md")) - set(notes):
        stale.unlink()


# --------------------------------------------------------------------------- evidence


class NoteNames:
    """Finds the notes (slot ids) a result names: a source id, a page's sources."""

    def __init__(self, kb: Path, slot_ids: Sequence[str]) -> None:
        self.kb = kb
        alternatives = "|".join(re.escape(s) for s in sorted(slot_ids, key=len, reverse=True))
        self.pattern = re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])")

    def named(self, value: Any) -> list[str]:
        """The notes ``value`` (any JSON) names, in order of first mention."""
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return scoring.distinct(self.pattern.findall(text))

    def page_sources(self, page_id: str) -> list[str]:
        """The notes in a page's ``sources`` frontmatter (none when it has no file)."""
        path = self.kb / "knowledge" / f"{page_id}.md"
        if not path.is_file():
            return []
        lines = path.read_text(encoding="utf-8").split("\n")
        end = frontmatter_end(lines) if lines[:1] == ["---"] else None
        front = load_yaml("\n".join(lines[1:end])) if end else None
        return self.named((front or {}).get("sources") or [])

    def ranked(self, results: Sequence[Mapping[str, Any]], pages: bool) -> list[str]:
        """The notes of ``results`` in order: source results, and with ``pages`` the
        sources of each page result in its place."""
        out: list[str] = []
        for result in results:
            rid = str(result.get("id", ""))
            if rid.startswith("source/"):
                out.extend(self.named(rid))
            elif pages:
                out.extend(self.page_sources(rid))
        return scoring.distinct(out)


async def ask_mcp(
    kb: Path, config: Path, questions: Sequence[OrgQuestion], names: NoteNames
) -> tuple[list[dict[str, Any]], bool]:
    """Every question through kb_query (and kb_brief when the server has it): the notes
    each names in order; whether kb_brief exists."""
    command = stdio_command(kb, config)
    rows = []
    async with open_stdio(kb, trusted=True, command=command, timeout=300) as client:
        brief = "kb_brief" in await client.tool_names()
        for q in questions:
            began = time.perf_counter()
            found = await client.call(
                "kb_query", {"question": q.text, "include_sources": True, "now": NOW}
            )
            ms = (time.perf_counter() - began) * 1000
            results = found.get("results", [])
            row: dict[str, Any] = {
                "kb_query": names.ranked(results, pages=False),
                "kb_query+pages": names.ranked(results, pages=True),
                "count": len(results),
                "ms": round(ms, 1),
            }
            if brief:
                got = await client.call("kb_brief", {"question": q.text, "now": NOW})
                row["kb_brief"] = brief_notes(got, names)
            rows.append(row)
    return rows, brief


def brief_notes(brief: Mapping[str, Any], names: NoteNames) -> list[str]:
    """The notes a kb_brief cites in its evidence, in order (a quote's note, or the
    note an inferred line names)."""
    return scoring.distinct(
        n for item in brief.get("evidence") or () for n in names.named(item.get("source") or "")
    )


def bm25_ranked(tier: Tier) -> list[list[str]]:
    """For each question, every note ranked by BM25 over whole notes."""
    order = [a.slot_id for a in tier.artefacts]
    index = BM25([tokens(a.note()) for a in tier.artefacts])
    out = []
    for q in tier.questions:
        scores = index.scores(tokens(q.text))
        out.append([order[i] for i in sorted(range(len(order)), key=lambda i: -scores[i])])
    return out


def evidence_scores(ranked: Sequence[str], gold: Sequence[str]) -> dict[str, Any]:
    return {
        "hit@5": scoring.hit_at(ranked, gold, 5),
        "hit@10": scoring.hit_at(ranked, gold, 10),
        "cover@10": scoring.cover_at(ranked, gold, 10),
        "top": list(ranked[:10]),
    }


# --------------------------------------------------------------------------- answers


def answer_scores(q: OrgQuestion, answer: str, people: frozenset[str]) -> dict[str, Any]:
    facts = scoring.key_facts(q.gold, people)
    found = scoring.facts_found(facts, answer[:ANSWER_CHARS], people)
    return {
        "facts": len(facts),
        "found": [str(f) for f in found],
        "missed": [str(f) for f in facts if f not in found],
        "share": len(found) / len(facts) if facts else None,
    }


def bm25_dump(tier: Tier, ranked: Sequence[str]) -> str:
    """BM25's top three notes as written, one after the other, cut at 2,000 characters."""
    notes = {a.slot_id: a.note() for a in tier.artefacts}
    return "\n\n".join(notes[s] for s in ranked[:BASELINE_NOTES])[:ANSWER_CHARS]


# --------------------------------------------------------------------------- report


def _mean(values: Sequence[float]) -> str:
    return f"{sum(values) / len(values):.2f}" if values else "n/a"


def category_table(
    rows: Sequence[Mapping[str, Any]],
    systems: Sequence[str],
    cell: Callable[[Sequence[Mapping[str, Any]], str], str],
) -> str:
    """One line a category (and one for all), one ``cell(rows, system)`` a system."""
    lines = [
        "| category | n | " + " | ".join(systems) + " |",
        "|---|---|" + "---|" * len(systems),
    ]
    for code in [*CATEGORIES, None]:
        mine = [r for r in rows if code is None or r["category"] == code]
        if mine:
            name = f"{code} {CATEGORIES[code]}" if code else "all"
            cells = " | ".join(cell(mine, system) for system in systems)
            lines.append(f"| {name} | {len(mine)} | {cells} |")
    return "\n".join(lines)


def evidence_cell(rows: Sequence[Mapping[str, Any]], system: str) -> str:
    """hit@5 / hit@10 / cover@10, or n/a when the system did not run."""
    got = [r["evidence"].get(system) for r in rows]
    if any(g is None for g in got):
        return "n/a"
    return " / ".join(_mean([float(g[m]) for g in got]) for m in ("hit@5", "hit@10", "cover@10"))


def _shares(rows: Sequence[Mapping[str, Any]], system: str) -> list[float]:
    """The share of key facts each row's answer states (rows whose gold has none left out)."""
    shares = [r["answers"][system]["share"] for r in rows if system in r["answers"]]
    return [x for x in shares if x is not None]


def answer_cell(rows: Sequence[Mapping[str, Any]], system: str) -> str:
    """The mean share of key facts stated (questions whose gold has none left out)."""
    return _mean(_shares(rows, system))


REWORDING_COLUMNS = ("originals", "rewordings", "gap (points)")


def rewording_cell(rows: Sequence[Mapping[str, Any]], column: str) -> str:
    """The agent's key facts for the originals, for the rewordings (each mean with its
    count), or the originals' minus the rewordings' in points."""
    originals = _shares([r for r in rows if not r.get("variant")], "agent")
    rewordings = _shares([r for r in rows if r.get("variant")], "agent")
    if column == "originals":
        return f"{_mean(originals)} ({len(originals)})"
    if column == "rewordings":
        return f"{_mean(rewordings)} ({len(rewordings)})"
    if not originals or not rewordings:
        return "n/a"
    return f"{100 * (sum(originals) / len(originals) - sum(rewordings) / len(rewordings)):+.1f}"


def rewording_report(rows: Sequence[Mapping[str, Any]]) -> str:
    """Originals beside their rewordings, for all questions and on each half (a
    rewording is in its original's half); questions without rewordings left out."""
    asked = {r["id"] for r in rows if r.get("variant")}
    paired = [r for r in rows if r["id"] in asked]
    out = []
    for part in (None, *HALVES):
        mine = [r for r in paired if part is None or r["half"] == part]
        out.append(
            f"Key facts stated by the agent, originals and rewordings, {part or 'all'} "
            "(n: both; each cell: mean (questions))\n"
        )
        out.append(category_table(mine, REWORDING_COLUMNS, rewording_cell) + "\n")
    out.append(set_summary(paired))
    return "\n".join(out)


def set_summary(rows: Sequence[Mapping[str, Any]]) -> str:
    """Each set of rewordings apart (the first: variants up to ``FIRST_SET``): its mean
    key facts and gap to the originals, all and on each half."""
    lines = ["Rewording sets apart: mean key facts (questions), gap to the originals in points"]
    for name, keep in (
        ("first set", lambda v: 0 < v <= FIRST_SET),
        ("second set", lambda v: v > FIRST_SET),
    ):
        cells = []
        for part in (None, *HALVES):
            mine = [r for r in rows if part is None or r["half"] == part]
            originals = _shares([r for r in mine if not r.get("variant")], "agent")
            shares = _shares([r for r in mine if keep(r.get("variant") or 0)], "agent")
            if not shares or not originals:
                continue
            gap = 100 * (sum(originals) / len(originals) - sum(shares) / len(shares))
            cells.append(f"{part or 'all'} {_mean(shares)} ({len(shares)}), gap {gap:+.1f}")
        if cells:
            lines.append(f"- {name}: " + "; ".join(cells))
    return "\n".join(lines) + "\n"


def show_misses(rows: Sequence[Mapping[str, Any]]) -> str:
    out = []
    for r in rows:
        if r["half"] != TUNING:
            continue  # the validation half's misses are not read (bench/README.md)
        ev, agent = r["evidence"]["kb_query"], r["answers"]["agent"]
        if ev["hit@10"] and ev["cover@10"] == 1 and not agent["missed"]:
            continue
        head = "\n    | ".join(r["answer"][:600].splitlines())
        brief = r["evidence"].get("kb_brief")
        briefed = f"kb_brief top {brief['top']} (cover {brief['cover@10']:.2f}); " if brief else ""
        variant = f" rewording {r['variant']}" if r.get("variant") else ""
        out.append(
            f"\nMISS {r['id']}{variant} {r['category']} {r['q']!r}\n"
            f"  gold notes {r['gold_notes']}\n"
            f"  kb_query top {ev['top']} (cover {ev['cover@10']:.2f}); {briefed}"
            f"bm25 top {r['evidence']['bm25']['top'][:5]}\n"
            f"  agent missed {agent['missed']} (bm25 dump missed "
            f"{r['answers']['bm25 top 3']['missed']})\n    | {head}"
        )
    return "\n".join(out)


# --------------------------------------------------------------------------- running


def uptime() -> str:
    out = subprocess.run(["uptime"], capture_output=True, text=True, check=False)
    return out.stdout.strip()


def run(args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    tier = load_tier(args.data)
    if not args.no_ours:
        tier.questions += our_questions(args.questions, [a.slot_id for a in tier.artefacts])
    if args.rewordings:
        path = REWORDINGS / f"{tier.name}.yaml"
        if not path.is_file():
            raise SystemExit(f"no rewordings of tier {tier.name}: {path} is missing")
        second = REWORDINGS / f"{tier.name}-2.yaml"  # written later, before its code
        paths = [path, *([second] if second.is_file() else [])]
        tier.questions += reworded(paths, tier.questions)
    root, config = work_root(args.work, args.embedder)
    kb = root / tier.name
    if args.fresh and kb.exists():
        shutil.rmtree(kb)
    write_kb(kb, tier)
    info: dict[str, Any] = {"tier": tier.name, "embedder": args.embedder, "now": NOW}
    info["load_start"] = uptime()
    began = time.perf_counter()
    summary = ingest(kb, config)
    sources = summary.get("sources") or []
    info["ingest"] = {
        "seconds": round(time.perf_counter() - began, 1),
        "notes": len(sources),
        "failed": sum(1 for s in sources if s.get("status") == "failed"),
        "pages": len(list((kb / "knowledge").rglob("*.md"))),
    }
    print(f"ingest: {info['ingest']} ({uptime()})", file=sys.stderr)
    now = dt.datetime.fromisoformat(NOW)
    names = NoteNames(kb, [a.slot_id for a in tier.artefacts])
    began = time.perf_counter()
    with KnowledgeBase.open(kb, embedder=make_embedder(args.embedder), database_url=None) as opened:
        opened.reindex()  # the vectors the ingest left to a background embedder
        info["reindex_seconds"] = round(time.perf_counter() - began, 1)
        searcher = Searcher.for_kb(opened, route=False)
        single = {
            name: [names.ranked(one_arm(searcher, q.text, now, arm), False) for q in tier.questions]
            for name, arm in SINGLE_ARMS.items()
        }
        searcher.close()
    asked, brief = anyio.run(ask_mcp, kb, config, tier.questions, names)
    texts = [q.text for q in tier.questions]
    answers = anyio.run(ask_all, kb, config, texts, now)
    info["questions_seconds"] = round(time.perf_counter() - began - info["reindex_seconds"], 1)
    with_model = None
    if os.environ.get("LLM_BASE_URL") and not args.no_model:
        with_model = anyio.run(functools.partial(ask_all, kb, config, texts, now, model=True))
    rows = []
    for i, (q, mcp, bm) in enumerate(zip(tier.questions, asked, bm25_ranked(tier), strict=True)):
        evidence: dict[str, dict[str, Any] | None] = {
            s: evidence_scores(mcp[s], q.evidence) for s in ("kb_query", "kb_query+pages")
        }
        evidence["kb_brief"] = evidence_scores(mcp["kb_brief"], q.evidence) if brief else None
        evidence["bm25"] = evidence_scores(bm, q.evidence)
        for name, ranked in single.items():
            evidence[name] = evidence_scores(ranked[i], q.evidence)
        answer = answers[i]["answer"][:ANSWER_CHARS]
        scored = {
            "agent": answer_scores(q, answer, tier.people),
            "bm25 top 3": answer_scores(q, bm25_dump(tier, bm), tier.people),
        }
        row: dict[str, Any] = {
            "id": q.id,
            "half": half(q.id),
            "variant": q.variant,
            "category": q.category,
            "q": q.text,
            "gold_notes": list(q.evidence),
            "evidence": evidence,
            "answer": answer,
            "mode": answers[i]["mode"],
            "answer_ms": round(answers[i]["ms"], 1),
            "kb_query_results": mcp["count"],
            "kb_query_ms": mcp["ms"],
        }
        if with_model is not None:
            row["model_answer"] = with_model[i]["answer"][:ANSWER_CHARS]
            scored["agent+model"] = answer_scores(q, row["model_answer"], tier.people)
        row["answers"] = scored
        rows.append(row)
    info["kb_brief"] = brief
    info["seconds"] = round(info["ingest"]["seconds"] + time.perf_counter() - began, 1)
    info["load_end"] = uptime()
    return rows, info


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="an OrgMemBench tier")
    parser.add_argument("--work", type=Path, default=Path("/tmp/memserver-orgmem"))
    parser.add_argument("--embedder", choices=("local", "hash"), default="local")
    parser.add_argument("--fresh", action="store_true", help="ingest every note again")
    parser.add_argument("--no-model", action="store_true", help="even when LLM_BASE_URL is set")
    parser.add_argument("--questions", type=Path, default=OURS, help="our questions (YAML)")
    parser.add_argument("--no-ours", action="store_true", help="the tier's questions only")
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument("--json", type=Path, help="write every question's outcome here")
    parser.add_argument(
        "--rewordings",
        action="store_true",
        help="also ask bench/rewordings/<tier>.yaml, scored with the originals' gold, "
        "and report originals and rewordings per category on each half",
    )
    args = parser.parse_args(argv)
    if not (args.data / "benchmark.jsonl").is_file():
        raise SystemExit(f"no OrgMemBench tier at {args.data}: pass --data DIR")
    if args.work.resolve().is_relative_to(REPO):
        raise SystemExit(f"--work {args.work} is inside the repository: pass a directory outside")
    every, info = run(args)
    rows = [r for r in every if not r["variant"]]  # the originals: every table but the last
    systems = ["kb_query", "kb_query+pages", "kb_brief", "bm25", *SINGLE_ARMS]
    print(
        f"# {len(rows)} questions ({len(every) - len(rows)} rewordings), tier {info['tier']}, "
        f"embedder {info['embedder']}, now {info['now']}; ingest {info['ingest']}; "
        f"reindex {info['reindex_seconds']:.0f} s, questions {info['questions_seconds']:.0f} s; "
        f"{info['seconds']:.0f} s in all\n"
        f"# load at start: {info['load_start']}\n# load at end:   {info['load_end']}\n"
    )
    answer_systems = ["agent", "bm25 top 3"] + (
        ["agent+model"] if "model_answer" in rows[0] else []
    )
    for part in (None, *HALVES):
        mine = [r for r in rows if part is None or r["half"] == part]
        print(
            f"Evidence, {part or 'all'} ({len(mine)} questions): hit@5 / hit@10 / cover@10 "
            "(kb_brief: n/a when the server has none)\n"
        )
        print(category_table(mine, systems, evidence_cell) + "\n")
    for part in (None, *HALVES):
        mine = [r for r in rows if part is None or r["half"] == part]
        print(f"Key facts stated, {part or 'all'} (answers cut at {ANSWER_CHARS:,} characters)\n")
        print(category_table(mine, answer_systems, answer_cell) + "\n")
    modes: dict[str, int] = {}
    for r in rows:
        modes[r["mode"]] = modes.get(r["mode"], 0) + 1
    print(f"\nanswer modes: {modes}")
    if args.rewordings:
        print("\n" + rewording_report(every))
    if args.show_misses:
        print(show_misses(every))
    if args.json:
        out = {"info": info, "questions": every}
        args.json.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
