"""`memserver review`: what waits for a person, in the terminal (the console's review view).

Flagged changes (page versions written for review: the ingest agent flags what a model
proposed that its source cannot justify) and conflicts (unresolved rows: sources that
disagree, and the values the agent held back), newest first; beside them the latest
updates (superseded rows: a newer source replaced a value), which are history, not
disagreements. ``--json`` lists both, each row with its ``kind`` (``conflict`` or
``update``). Decide them in the web console (``/ui/review``).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from memserver.commands.common import open_kb
from memserver.terminal.output import console, print_json

if TYPE_CHECKING:
    from memserver.store.reviews import Conflict


UPDATES_SHOWN = 20


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `review` to the `memserver` parser."""
    review = sub.add_parser(
        "review",
        help="what waits for a person: flagged changes and unresolved conflicts",
        description="List the changes flagged for review (written, listed until someone "
        "decides in the web console) and the conflicts: facts two sources disagree on, "
        "waiting for a person (unresolved rows). Updates (a newer source replaced an older "
        "value: superseded rows) are history, not conflicts: they are listed apart, the "
        f"newest {UPDATES_SHOWN}.",
    )
    review.add_argument("--json", action="store_true", help="print JSON")
    review.set_defaults(func=run_review)


def conflict_json(c: Conflict) -> dict[str, Any]:
    """One conflicts row, saying which it is: ``conflict`` (sources disagree, unresolved:
    waits for a person) or ``update`` (superseded: a newer fact replaced an older one)."""
    return {
        "id": c.id,
        "kind": "conflict" if c.status == "unresolved" else "update",
        "page_id": c.page_id,
        "field": c.field,
        "old_value": c.old_value,
        "new_value": c.new_value,
        "old_source": c.old_source,
        "new_source": c.new_source,
        "status": c.status,
        "note": c.note,
        "created_at": c.created_at.isoformat(),
    }


def run_review(args: argparse.Namespace) -> int:
    from rich.table import Table

    from memserver.store.reviews import Reviews

    with open_kb(args, check_embedding=False) as kb:
        reviews = Reviews(kb.db)
        flagged, conflicts = reviews.pending(None), reviews.conflicts(None)
        updates = reviews.conflicts(None, status=("superseded",), limit=UPDATES_SHOWN)
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
                "conflicts": [conflict_json(c) for c in conflicts],
                "updates": [conflict_json(c) for c in updates],
            }
        )
        return 0
    changes = Table(title=f"{len(flagged)} flagged changes")
    for column in ("id", "page", "version", "why", "by"):
        changes.add_column(column)
    for r in flagged:
        changes.add_row(str(r.id), r.page_id, str(r.version), r.reason, r.flagged_by)
    console.print(changes)
    table = Table(title=f"{len(conflicts)} open conflicts (sources disagree: decide which holds)")
    for column in ("id", "page", "field", "one side", "source", "other side", "source", "why"):
        table.add_column(column)
    for c in conflicts:
        table.add_row(
            str(c.id),
            c.page_id,
            c.field,
            _value(c.old_value),
            c.old_source or "",
            _value(c.new_value),
            c.new_source or "",
            c.note or "",
        )
    console.print(table)
    history = Table(
        title=f"{len(updates)} latest updates (history: a newer source replaced a value)"
    )
    for column in ("page", "field", "was", "now", "source"):
        history.add_column(column)
    for c in updates:
        history.add_row(
            c.page_id, c.field, _value(c.old_value), _value(c.new_value), c.new_source or ""
        )
    console.print(history)
    return 0


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
