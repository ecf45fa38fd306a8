"""What the rules extractor writes when it meets a corpus: counted on the pages, no model.

Builds a knowledge base from a corpus, ingests it with ``ingest-agent --kb DIR --rules``
and reads every page written:

* **titles that are names or labels**: a page of any folder but the people's whose title
  is a person's name (a people page's title or alias, or a persona of the corpus); any
  page whose title is a label alone ("Decision", "Attendees:", a field or section name of
  the schema), an identifier ("EMG P01 F1 0": a file's code), a transcript's time stamp,
  a date, an amount or markup with no words of its own ("2026-11-26)", "<!-- Slide
  number: 3 -->", "850₮"); an event's page (a folder with a date: meetings, decisions,
  incidents ...) whose title its note writes as a label ("**Security**: ..."), and a
  person's page whose name its note writes as a step of a numbered list ("3. **Docker
  Image** – ...");
* **header lines in timelines**: timeline entries that are a mail's header lines
  (``From:``, ``To:``, ``Subject:`` ... in the languages of
  :mod:`memserver.convert.message_words`) or a chat line's frame alone;
* **decisions without a decider**: pages of the decisions folder whose deciders field is
  empty.

Corpora: ``example`` (``example_kb``) and ``orgmem`` (an OrgMemBench tier, written as
``bench/eval_orgmem.py`` writes it: one note an artefact, ``bench/orgmem_schema.yaml``).
Every count is also given for two fixed halves of the notes (by a hash of the note's
path; a page counts in the half of its first source): the ``tune`` half is the one whose
misses may be read while changing the extractor, the ``check`` half is only counted.

    nice -n 10 .venv/bin/python -m bench.ingest_quality --corpus example
    nice -n 10 .venv/bin/python -m bench.ingest_quality --corpus orgmem [--data DIR] \\
        [--work /tmp/memserver-quality] [--embedder hash|local] [--show 10] [--json out.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import this_checkout
from ingest_agent.extract.decisions import DECIDERS, decision_folder, named_field
from ingest_agent.extract.note import is_identifier
from ingest_agent.names import norm
from memserver.kb.genres import ALL_HEADERS
from memserver.kb.page import Page, parse_page
from memserver.kb.schema import Schema, load_schema

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
EXAMPLE = ROOT / "example_kb"
ORGMEM = ROOT.parent / "shared" / "data" / "orgmem-small"
HALVES = ("tune", "check")
# Labels a note writes before a value: a title that is only one of these says nothing.
LABELS = frozenset(
    {"decision", "decisions", "outcome", "result", "resolution", "date", "when", "who",
     "participants", "attendees", "present", "owner", "owners", "status", "reason", "why",
     "rationale", "context", "summary", "notes", "note", "agenda", "action items", "actions",
     "next steps", "update", "updates", "background", "subject", "from", "to", "cc",
     "decided by", "approved by", "alternatives", "options", "шийдвэр", "огноо", "оролцогчид"}
)  # fmt: skip
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}")
_CLOCK = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b")
LABEL_WORDS = 4  # a label is short: a longer title a note writes before a colon is a sentence
_AMOUNT = re.compile(r"[$€£₮]\s?\d[\d,.]*\s?[kmKM]?|\d[\d,.]*\s?(?:[$€£₮%]|[kmKM]\b)")
_MARKUP = re.compile(r"<!--|-->|^[)\]}>:;,.|*#-]")
_CHAT_FRAME = re.compile(
    r"^(?:\*\*[^*:]{1,60}\*\*|[^\W\d][\w .'’-]{0,60})\s+(?:\d{4}-\d{2}-\d{2}\s+)?\d{1,2}:\d{2}$"
)


@dataclass
class Counts:
    """What was counted, in all and per half, with examples."""

    pages: dict[str, int] = field(default_factory=lambda: dict.fromkeys(("all", *HALVES), 0))
    found: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    def add(self, what: str, half: str, example: str) -> None:
        for key in ("all", half):
            self.found.setdefault(what, {}).setdefault(key, []).append(example)

    def count(self, what: str, half: str = "all") -> int:
        return len(self.found.get(what, {}).get(half, []))


def half_of(path: str) -> str:
    """The fixed half a note belongs to (by its path)."""
    return HALVES[hashlib.sha256(path.encode("utf-8")).digest()[0] % 2]


def person_names(pages: Mapping[str, Page], people: str | None, extra: Sequence[str]) -> set[str]:
    names = {norm(n) for n in extra}
    for pid, page in pages.items():
        if people and pid.startswith(f"{people}/"):
            names |= {norm(n) for n in (page.title, *page.aliases)}
    return {n for n in names if len(n.split()) >= 2}


def label_words(schema: Schema) -> set[str]:
    """The labels of this knowledge base: the common ones and its field and section names."""
    out = set(LABELS)
    for spec in schema.folders:
        out |= {norm(f.name.replace("_", " ")) for f in spec.fields}
        out |= {norm(s) for s in spec.sections}
    return out


def title_fault(
    title: str,
    names: set[str],
    labels: set[str],
    sources: Sequence[str] = (),
    person: bool = False,
) -> str | None:
    """Why a title says nothing of its own (None when it does); ``sources``: the texts of
    the notes the page comes from (a title they write as a label is one); ``person``: the
    page is a person's (a name before a colon is a speaker there, only a bold lead with a
    colon or dash is a label)."""
    key = norm(title)
    if key in names:
        return "a person's name"
    if key.rstrip(":") in labels or (key.split(":")[0] in labels and not key.split(":", 1)[1:]):
        return "a label"
    if len(key.split()) <= LABEL_WORDS and any(_labelled(title, t, person) for t in sources):
        return "a label of its note"
    if is_identifier(title):
        return "an identifier"
    if _CLOCK.search(title):
        return "a transcript's frame"
    if _MARKUP.search(title.strip()) or title.count("(") != title.count(")"):
        return "markup or a fragment"
    words = re.findall(r"[^\W\d_]{2,}", _AMOUNT.sub(" ", _DATE.sub(" ", title)))
    if not words:
        return "a date or an amount"
    return None


def _labelled(title: str, text: str, person: bool = False) -> bool:
    """Whether ``text`` writes ``title`` as a label: ``**Security**:``, ``Security:`` at a
    line's start, ``3. **Docker Image** –``. For a person's page only the last (a step of
    a numbered list): a name before a colon is who speaks, a bold name and a dash a
    roster's line."""
    name = re.escape(title.strip())
    if person:
        step = rf"(?mi)^[ \t]*\d+[.)][ \t]*\*\*{name}\*\*[ \t]*[–—-]"
        return re.search(step, text) is not None
    shapes = rf"\*\*{name}\*\*[ \t]*[:–—-]|\*\*{name}:\*\*|{name}:"
    return re.search(rf"(?mi)^[ \t]*(?:[-*+]|\d+[.)])?[ \t]*(?:{shapes})", text) is not None


def is_header_line(text: str) -> bool:
    """A mail header line ("From: Ann <a@b> To: ...") or a chat line's frame alone."""
    head = re.match(r"^\s*\**([^\W\d][\w -]{0,20}?)\**\s*:", text)
    if head is not None and " ".join(head.group(1).split()).casefold() in ALL_HEADERS:
        return True
    return _CHAT_FRAME.match(text.strip()) is not None


def measure(kb: Path, personas: Sequence[str] = ()) -> Counts:
    """The counts over the pages of an ingested knowledge base."""
    schema = load_schema(kb / "schema.yaml")
    pages = {
        f"{file.parent.name}/{file.stem}": parse_page(file.read_text("utf-8"), str(file))
        for file in sorted((kb / "knowledge").rglob("*.md"))
    }
    people = next(
        (f.folder for spec in schema.folders for f in spec.fields if f.verb == "attended"),
        "people" if "people" in schema.folder_names else None,
    )
    names = person_names(pages, people, personas)
    labels = label_words(schema)
    decisions = decision_folder(schema)
    deciders = named_field(decisions, DECIDERS, ("links", "link")) if decisions else None
    counts = Counts()
    notes: dict[str, str] = {}

    def note(path: str) -> str:
        if path not in notes:
            file = kb / "source" / path
            notes[path] = file.read_text("utf-8", "replace") if file.suffix == ".md" else ""
        return notes[path]

    for pid, page in pages.items():
        folder = schema.folder(pid.split("/", 1)[0])
        half = half_of(page.sources[0]) if page.sources else HALVES[0]
        counts.pages["all"] += 1
        counts.pages[half] += 1
        # every page's title: a person's name is wrong only outside the people's folder
        others = names if folder.name != people else set()
        # a company's or project's name is often written as a line's subject ("Globex: ...")
        event = bool(folder.date_field) or folder.name == people
        texts = [note(s) for s in page.sources] if event else []
        fault = title_fault(page.title, others, labels, texts, folder.name == people)
        if fault is not None:
            counts.add("titles that are names or labels", half, f"{pid}: {fault}")
        for entry in page.timeline:
            if is_header_line(entry.text):
                counts.add("header lines in timelines", half, f"{pid}: {entry.text[:120]}")
        if (
            decisions is not None
            and deciders is not None
            and folder.name == decisions.name
            and not page.fields.get(deciders.name)
        ):
            counts.add("decisions without a decider", half, f"{pid}")
    return counts


def build_example(work: Path) -> Path:
    kb = work / "example"
    if kb.exists():
        shutil.rmtree(kb)
    shutil.copytree(EXAMPLE, kb, ignore=shutil.ignore_patterns(".memserver", "knowledge"))
    return kb


def build_orgmem(work: Path, data: Path) -> tuple[Path, list[str]]:
    from bench.eval_orgmem import load_tier, write_kb

    tier = load_tier(data)
    kb = work / f"orgmem-{data.name}"
    if kb.exists():
        shutil.rmtree(kb)
    write_kb(kb, tier)
    return kb, sorted(tier.people)


def ingest(kb: Path, embedder: str) -> dict[str, Any]:
    """``ingest-agent --kb DIR --rules`` (the embedded server, the ``embedder``)."""
    config = kb.parent / f"config-{embedder}.yaml"
    config.write_text(f"embedding:\n  provider: {embedder}\n", encoding="utf-8")
    return ingest_rules(kb, config)


def ingest_rules(kb: Path, config: Path) -> dict[str, Any]:
    """``ingest-agent --kb DIR --rules --json`` with ``config`` (no model: the ``LLM_``
    and ``MEMORY_`` variables of this shell are left out), its JSON summary."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "MEMORY_"))}
    env["MEMORY_CONFIG"] = str(config)
    done = subprocess.run(
        [str(BIN / "ingest-agent"), "--kb", str(kb), "--rules", "--json"],
        capture_output=True,
        text=True,
        env=this_checkout(env),
        timeout=7200,
        check=False,
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"ingest-agent failed ({done.returncode}):\n{done.stderr[-2000:]}")
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def report(name: str, counts: Counts, show: int) -> str:
    lines = [
        f"{name}: {counts.pages['all']} pages ({counts.pages['tune']} tune / "
        f"{counts.pages['check']} check)",
        "| measure | all | tune half | check half |",
        "|---|---|---|---|",
    ]
    for what in (
        "titles that are names or labels",
        "header lines in timelines",
        "decisions without a decider",
    ):
        lines.append(
            f"| {what} | {counts.count(what)} | {counts.count(what, 'tune')} | "
            f"{counts.count(what, 'check')} |"
        )
    for what, found in counts.found.items():
        for example in found.get("tune", [])[:show]:  # misses are read on the tuning half
            lines.append(f"  tune · {what}: {example}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=("example", "orgmem"), default="example")
    parser.add_argument("--data", type=Path, default=ORGMEM, help="an OrgMemBench tier")
    parser.add_argument("--work", type=Path, help="where the knowledge base is built")
    parser.add_argument("--embedder", default="hash", choices=("hash", "local"))
    parser.add_argument("--show", type=int, default=10, help="examples of the tune half")
    parser.add_argument("--json", type=Path, help="write the counts and examples here")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="memserver-quality-"))
    work.mkdir(parents=True, exist_ok=True)
    personas: list[str] = []
    if args.corpus == "example":
        kb = build_example(work)
    else:
        kb, personas = build_orgmem(work, args.data)
    summary = ingest(kb, args.embedder)
    counts = measure(kb, personas)
    print(f"ingested {summary.get('ingested')} notes, {summary.get('failed')} failed")
    print(report(args.corpus, counts, args.show))
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {"pages": counts.pages, "found": counts.found}, indent=1, ensure_ascii=False
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
