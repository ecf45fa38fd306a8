"""OrgMemBench's artefacts as source notes of a knowledge base, for timing the ingest.

Each artefact of ``corpus_index.jsonl`` becomes ``source/<folder>/<slot_id>.md`` with
frontmatter ``date`` (its event's ``occurred_at`` from ``events_dates.json``; without an
event, the first date in its first 300 characters: ``YYYY-MM-DD``, else ``YYYY-Qn`` as the
quarter's first day, else ``YYYY-MM`` as the month's first day, as the benchmark's own
loader dates them) and ``author`` (the persona's name), and the artefact's text without
its metadata comment. The knowledge base takes example_kb's ``schema.yaml``. The data is
read in place and never copied into the repository.

    .venv/bin/python -m bench.orgmem_notes --data ../shared/data/orgmem-small --kb /tmp/orgmem-kb
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "orgmem-small"

_METADATA = re.compile(r"\A\s*<!--.*?-->\s*", re.DOTALL)
_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_QUARTER = re.compile(r"\b(\d{4})-Q([1-4])\b")
_MONTH = re.compile(r"\b(\d{4})-(\d{2})\b")


def artefact_date(text: str, event: str | None, events: dict[str, Any]) -> str | None:
    """The artefact's date as the benchmark's loader reads it (see the module docstring)."""
    if event and event in events:
        return str(events[event]["occurred_at"])[:10]
    head = text[:300]
    if day := _DAY.search(head):
        return day.group(0)
    if quarter := _QUARTER.search(head):
        return f"{quarter.group(1)}-{3 * int(quarter.group(2)) - 2:02d}-01"
    if month := _MONTH.search(head):
        return f"{month.group(1)}-{month.group(2)}-01"
    return None


def write_notes(data: Path, kb: Path, limit: int | None = None) -> int:
    """Write the knowledge base at ``kb`` (schema and notes); returns the number of notes."""
    events = json.loads((data / "events_dates.json").read_text("utf-8"))
    personas = json.loads((data / "personas.json").read_text("utf-8"))
    rows = [
        json.loads(line)
        for line in (data / "corpus_index.jsonl").read_text("utf-8").split("\n")
        if line
    ]
    (kb / "source").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "example_kb" / "schema.yaml", kb / "schema.yaml")
    for row in rows[:limit]:
        text = (data / row["path"]).read_text("utf-8")
        front = []
        if day := artefact_date(text, row.get("event_id"), events):
            front.append(f"date: {day}")
        if author := personas.get(row.get("author") or "", {}).get("name"):
            front.append(f"author: {json.dumps(author, ensure_ascii=False)}")
        folder = Path(row["path"]).parent.name
        note = kb / "source" / folder / f"{row['slot_id']}.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        body = _METADATA.sub("", text, count=1)
        note.write_text("---\n" + "\n".join(front) + "\n---\n\n" + body, "utf-8")
    return len(rows[:limit])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the orgmem-small directory")
    parser.add_argument("--kb", type=Path, required=True, help="the knowledge base to write")
    parser.add_argument("--limit", type=int, help="only the first N artefacts")
    args = parser.parse_args(argv)
    print(f"{write_notes(args.data, args.kb, args.limit)} notes under {args.kb / 'source'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
