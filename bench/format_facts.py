"""Every format read as well as markdown: the same 20 facts written once as a markdown note
and once in each format a team drops in (PDF, Word, slides, a web page, an e-mail, a
meeting transcript, a Slack export), each read by the rules extractor (no model), and
the share of the facts the pages then hold right.

For each format a fresh knowledge base gets example_kb's schema, the same seed notes in
markdown (a team note, two customer meetings, two project briefs: the pages the facts
are about) and then the facts' file, written by the format's own library (fpdf2 with
justified lines, python-docx, python-pptx, the standard library's ``email`` with lines
wrapped at 72 columns, a WebVTT file of one cue a fact, a Slack export of one message a
fact). ``ingest-agent --kb DIR --rules`` reads them; each fact is then checked on the page
it is about (a field's value, a timeline entry's words, a decision's title).

The facts are split into two fixed halves (odd and even numbers): misses may be read on
the odd half while changing the extractor, the even half is only counted.

    nice -n 10 .venv/bin/python -m bench.format_facts [--work DIR] [--formats md,pdf,...]
"""

from __future__ import annotations

import argparse
import datetime as dt
import email.utils
import json
import shutil
import sys
import tempfile
import textwrap
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from bench.ingest_quality import ingest_rules
from ingest_agent.names import norm
from memserver.kb.page import Page, parse_page

ROOT = Path(__file__).resolve().parents[1]
SAID_BY = "Ada Park"
DAY = dt.date(2026, 2, 10)


@dataclass(frozen=True)
class Fact:
    """One sentence and what the page it is about must hold after it is read."""

    number: int
    sentence: str
    page: str  # page id
    field: str | None = None  # the field and its value, or
    value: Any = None
    timeline: str | None = None  # words a timeline entry holds, or
    decision: str | None = None  # words of a decision's title

    @property
    def half(self) -> str:
        return "tune" if self.number % 2 else "check"

    def holds(self, pages: dict[str, Page]) -> bool:
        if self.decision is not None:
            return any(
                pid.startswith("decisions/") and norm(self.decision) in norm(p.title)
                for pid, p in pages.items()
            )
        page = pages.get(self.page)
        if page is None:
            return False
        if self.timeline is not None:
            return any(norm(self.timeline) in norm(e.text) for e in page.timeline)
        value = page.fields.get(self.field or "")
        if isinstance(value, list | tuple):
            return norm(str(self.value)) in {norm(str(v)) for v in value}
        if isinstance(self.value, int | float) and isinstance(value, int | float):
            return float(value) == float(self.value)
        return value is not None and norm(str(value)) == norm(str(self.value))


FACTS = (
    Fact(1, "Gil Ortiz joins as Data Engineer.", "people/gil-ortiz", "role", "Data Engineer"),
    Fact(2, "Gil Ortiz reports to Cara Diaz.", "people/gil-ortiz", "reports_to", "Cara Diaz"),
    Fact(3, "Hana Ito joins as Support Lead.", "people/hana-ito", "role", "Support Lead"),
    Fact(4, "Hana Ito reports to Ada Park.", "people/hana-ito", "reports_to", "Ada Park"),
    Fact(5, "Ben Cole has been promoted to Sales Director.", "people/ben-cole", "role",
         "Sales Director"),
    Fact(6, "Ben Cole now reports to Cara Diaz.", "people/ben-cole", "reports_to", "Cara Diaz"),
    Fact(7, "Orbit Freight is now a customer.", "companies/orbit-freight", "status", "customer"),
    Fact(8, "Orbit Freight's annual contract value is $84,000.", "companies/orbit-freight",
         "contract_value", 84000),
    Fact(9, "Orbit Freight's renewal date is 2027-02-28.", "companies/orbit-freight",
         "renewal_date", "2027-02-28"),
    Fact(10, "Eli Moss now owns the Orbit Freight account.", "companies/orbit-freight",
         "account_owner", "Eli Moss"),
    Fact(11, "Lumen Retail is now a partner.", "companies/lumen-retail", "status", "partner"),
    Fact(12, "Lumen Retail's annual contract value is $36,000.", "companies/lumen-retail",
         "contract_value", 36000),
    Fact(13, "Atlas Rollout due date moves to 2026-04-30.", "projects/atlas-rollout", "due_date",
         "2026-04-30"),
    Fact(14, "Beacon App status: paused.", "projects/beacon-app", "status", "paused"),
    Fact(15, "Fay Lin now owns Beacon App.", "projects/beacon-app", "owner", "Fay Lin"),
    Fact(16, "Atlas Rollout start date is 2026-02-02.", "projects/atlas-rollout", "start_date",
         "2026-02-02"),
    Fact(17, "Orbit Freight signed the contract on 2026-02-09.", "companies/orbit-freight",
         timeline="signed the contract"),
    Fact(18, "Lumen Retail's renewal date is 2026-12-31.", "companies/lumen-retail",
         "renewal_date", "2026-12-31"),
    Fact(19, "We decided to move Beacon App to the Q3 release train.", "",
         decision="Beacon App to the Q3 release train"),
    Fact(20, "Dev Shah is the new Head of Support at Lumen Retail.", "people/dev-shah", "role",
         "Head of Support"),
)  # fmt: skip

SEED = {
    "team/2026-01-05-team.md": (
        "---\ntitle: Team, January 2026\ndate: 2026-01-05\n---\n\n# Team, January 2026\n\n"
        "- Ada Park — Head of Sales.\n- Ben Cole — Account Executive; reports to Ada Park.\n"
        "- Cara Diaz — CTO.\n- Eli Moss — Account Manager; reports to Ada Park.\n"
        "- Fay Lin — Product Manager; reports to Cara Diaz.\n"
        "- Dev Shah — Support Engineer.\n"
    ),
    "meetings/2026-01-06-orbit-kickoff.md": (
        "---\ntitle: Orbit Freight kickoff\ndate: 2026-01-06\ncompany: Orbit Freight\n"
        "attendees: [Ada Park, Ben Cole]\nkind: prospect\n---\n\n# Orbit Freight kickoff\n\n"
        "Orbit Freight wants live tracking for 40 trucks.\n"
    ),
    "meetings/2026-01-07-lumen-intro.md": (
        "---\ntitle: Lumen Retail intro\ndate: 2026-01-07\ncompany: Lumen Retail\n"
        "attendees: [Ada Park, Eli Moss]\nkind: prospect\n---\n\n# Lumen Retail intro\n\n"
        "Lumen Retail runs twelve stores.\n"
    ),
    "projects/atlas-rollout.md": (
        "---\ntitle: Atlas Rollout\nstatus: active\nowner: Cara Diaz\ndue_date: 2026-03-31\n"
        "date: 2026-01-08\n---\n\n# Atlas Rollout\n\nRoll the tracker out to Orbit Freight.\n"
    ),
    "projects/beacon-app.md": (
        "---\ntitle: Beacon App\nstatus: active\nowner: Cara Diaz\ndate: 2026-01-08\n---\n\n"
        "# Beacon App\n\nThe driver app.\n"
    ),
}
TITLE = "Account and team update"


def write_md(path: Path) -> Path:
    body = "\n\n".join(f.sentence for f in FACTS)
    path = path.with_suffix(".md")
    path.write_text(f"---\ntitle: {TITLE}\ndate: {DAY}\n---\n\n# {TITLE}\n\n{body}\n", "utf-8")
    return path


def write_pdf(path: Path) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_author(SAID_BY)
    pdf.set_title(TITLE)
    pdf.set_creation_date(dt.datetime.combine(DAY, dt.time(9), tzinfo=dt.UTC))
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    for first in range(0, len(FACTS), 4):  # paragraphs of four facts, justified and wrapped
        text = " ".join(f.sentence for f in FACTS[first : first + 4])
        pdf.multi_cell(w=120, text=text, align="J", new_x="LMARGIN", new_y="NEXT")
        pdf.ln(3)
    path = path.with_suffix(".pdf")
    pdf.output(str(path))
    return path


def write_docx(path: Path) -> Path:
    import docx

    document = docx.Document()
    document.core_properties.author = SAID_BY
    document.core_properties.title = TITLE
    document.core_properties.created = dt.datetime.combine(DAY, dt.time(9))
    document.add_heading(TITLE, level=1)
    for fact in FACTS:
        document.add_paragraph(fact.sentence)
    path = path.with_suffix(".docx")
    document.save(str(path))
    return path


def write_pptx(path: Path) -> Path:
    from pptx import Presentation

    deck = Presentation()
    deck.core_properties.author = SAID_BY
    deck.core_properties.title = TITLE
    deck.core_properties.created = dt.datetime.combine(DAY, dt.time(9))
    for first in range(0, len(FACTS), 5):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Update ({DAY})"
        body = slide.placeholders[1].text_frame
        body.text = FACTS[first].sentence
        for fact in FACTS[first + 1 : first + 5]:
            body.add_paragraph().text = fact.sentence
    path = path.with_suffix(".pptx")
    deck.save(str(path))
    return path


def write_html(path: Path) -> Path:
    paragraphs = "".join(f"<p>{f.sentence}</p>" for f in FACTS)
    page = (
        f'<html><head><title>{TITLE}</title><meta name="author" content="{SAID_BY}">'
        f'<meta name="date" content="{DAY}"></head><body><h1>{TITLE}</h1>{paragraphs}'
        "</body></html>"
    )
    path = path.with_suffix(".html")
    path.write_text(page, "utf-8")
    return path


def write_eml(path: Path) -> Path:
    msg = EmailMessage()
    msg["Subject"] = TITLE
    msg["From"] = f"{SAID_BY} <ada@example.com>"
    msg["To"] = "Team <team@example.com>"
    msg["Date"] = email.utils.format_datetime(dt.datetime.combine(DAY, dt.time(9), dt.UTC))
    msg["Message-ID"] = "<facts-1@example.com>"
    wrapped = "\n\n".join(
        textwrap.fill(" ".join(f.sentence for f in FACTS[i : i + 4]), 72)
        for i in range(0, len(FACTS), 4)
    )
    msg.set_content(f"Hi team,\n\n{wrapped}\n\nBest,\n{SAID_BY}\nHead of Sales\n")
    path = path.with_suffix(".eml")
    path.write_bytes(msg.as_bytes())
    return path


def write_vtt(path: Path) -> Path:
    cues = []
    for i, fact in enumerate(FACTS):
        start, end = 2 * i, 2 * i + 1
        cues.append(
            f"00:00:{start:02d}.000 --> 00:00:{end:02d}.500\n<v {SAID_BY}>{fact.sentence}</v>"
        )
    path = path.parent / f"{DAY}-account-and-team-update.vtt"
    path.write_text("WEBVTT\n\n" + "\n\n".join(cues) + "\n", "utf-8")
    return path


def write_slack(path: Path) -> Path:
    export = path.parent / "export"
    (export / "updates").mkdir(parents=True)
    users = [{"id": "U1", "name": "ada", "real_name": SAID_BY}]
    (export / "users.json").write_text(json.dumps(users), "utf-8")
    (export / "channels.json").write_text(json.dumps([{"id": "C1", "name": "updates"}]), "utf-8")
    start = dt.datetime.combine(DAY, dt.time(2), dt.UTC)
    rows = [
        {"type": "message", "user": "U1", "ts": f"{(start + dt.timedelta(minutes=i)).timestamp():.6f}",
         "text": fact.sentence}
        for i, fact in enumerate(FACTS)
    ]  # fmt: skip
    (export / "updates" / f"{DAY}.json").write_text(json.dumps(rows), "utf-8")
    path = path.with_suffix(".zip")
    with zipfile.ZipFile(path, "w") as archive:
        for file in sorted(export.rglob("*")):
            if file.is_file():
                archive.write(file, f"export/{file.relative_to(export).as_posix()}")
    shutil.rmtree(export)
    return path


WRITERS: dict[str, Callable[[Path], Path]] = {
    "md": write_md,
    "pdf": write_pdf,
    "docx": write_docx,
    "pptx": write_pptx,
    "html": write_html,
    "eml": write_eml,
    "vtt": write_vtt,
    "slack": write_slack,
}


def build(work: Path, kind: str) -> Path:
    """A knowledge base with the seed notes and the facts in ``kind``'s format."""
    kb = work / kind
    if kb.exists():
        shutil.rmtree(kb)
    (kb / "source" / "updates").mkdir(parents=True)
    shutil.copy(ROOT / "example_kb" / "schema.yaml", kb / "schema.yaml")
    for rel, text in SEED.items():
        (kb / "source" / rel).parent.mkdir(parents=True, exist_ok=True)
        (kb / "source" / rel).write_text(text, "utf-8")
    WRITERS[kind](kb / "source" / "updates" / f"{DAY}-update")
    return kb


def read_pages(kb: Path) -> dict[str, Page]:
    return {
        f"{file.parent.name}/{file.stem}": parse_page(file.read_text("utf-8"), str(file))
        for file in sorted((kb / "knowledge").rglob("*.md"))
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, help="where the knowledge bases are built")
    parser.add_argument("--formats", default=",".join(WRITERS), help="comma-separated")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="memserver-formats-"))
    work.mkdir(parents=True, exist_ok=True)
    config = work / "config.yaml"
    config.write_text("embedding:\n  provider: hash\n", "utf-8")
    results: dict[str, dict[str, Any]] = {}
    print("| format | read right | share | tune half | check half | missed |")
    print("|---|---|---|---|---|---|")
    for kind in args.formats.split(","):
        began = time.perf_counter()
        kb = build(work, kind)
        summary = ingest_rules(kb, config)
        pages = read_pages(kb)
        right = [f for f in FACTS if f.holds(pages)]
        missed = [f.number for f in FACTS if f not in right]
        halves = {h: sum(1 for f in right if f.half == h) for h in ("tune", "check")}
        results[kind] = {
            "right": len(right),
            "missed": missed,
            "halves": halves,
            "failed": summary.get("failed"),
            "seconds": round(time.perf_counter() - began, 1),
        }
        print(
            f"| {kind} | {len(right)}/{len(FACTS)} | {len(right) / len(FACTS):.2f} | "
            f"{halves['tune']}/10 | {halves['check']}/10 | {', '.join(map(str, missed)) or '–'} |",
            flush=True,
        )
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
