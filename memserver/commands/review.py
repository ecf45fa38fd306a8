"""`memserver review`: what waits for a person, in the terminal (the console's review view).

Flagged changes (page versions written for review: the ingest agent flags what a model
proposed that its source cannot justify) and unresolved conflicts (sources that disagree,
and the values the agent held back), newest conflicts first. Decide them in the web
console (``/ui/review``).
"""

from __future__ import annotations

import argparse
import json

from memserver.commands.common import open_kb
from memserver.terminal.output import console, print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `review` to the `memserver` parser."""
    review = sub.add_parser(
        "review",
        help="what waits for a person: flagged changes and unresolved conflicts",
        description="List the changes flagged for review (written, listed until someone "
        "decides in the web console) and the unresolved conflicts: facts two sources of the "
        "same date disagree on, and changes the ingest agent held back (a page in a folder "
        "the router did not pick, a decision superseded or reversed by a source whose "
        "frontmatter does not say so).",
    )
    review.add_argument("--json", action="store_true", help="print JSON")
    review.set_defaults(func=run_review)


def run_review(args: argparse.Namespace) -> int:
    from rich.table import Table

    from memserver.store.reviews import Reviews

    with open_kb(args, check_embedding=False) as kb:
        reviews = Reviews(kb.db)
        flagged, conflicts = reviews.pending(None), reviews.conflicts(None)
    if args.json:
        print_json(
            {
                "flagged": [
                    {
                        "id": r.id,
                        "page_id": r.page_id,
                        "version": r.version,
                        "reason": r.reason,
                        "flagged_by": r.flagged_by,
                        "created_at": r.created_at.isoformat(),
                    }
                    for r in flagged
                ],
                "conflicts": [
                    {
                        "id": c.id,
                        "page_id": c.page_id,
                        "field": c.field,
                        "old_value": c.old_value,
                        "new_value": c.new_value,
                        "new_source": c.new_source,
                        "status": c.status,
                        "note": c.note,
                        "created_at": c.created_at.isoformat(),
                    }
                    for c in conflicts
                ],
            }
        )
        return 0
    changes = Table(title=f"{len(flagged)} flagged changes")
    for column in ("id", "page", "version", "why", "by"):
        changes.add_column(column)
    for r in flagged:
        changes.add_row(str(r.id), r.page_id, str(r.version), r.reason, r.flagged_by)
    console.print(changes)
    table = Table(title=f"{len(conflicts)} open conflicts")
    for column in ("id", "page", "field", "current", "proposed", "source", "why"):
        table.add_column(column)
    for c in conflicts:
        table.add_row(
            str(c.id),
            c.page_id,
            c.field,
            json.dumps(c.old_value, ensure_ascii=False),
            json.dumps(c.new_value, ensure_ascii=False),
            c.new_source or "",
            c.note or "",
        )
    console.print(table)
    return 0
