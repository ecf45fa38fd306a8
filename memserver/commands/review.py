"""`memserver review`: what waits for a person, in the terminal (the console's review view).

Flagged changes (page versions written for review: the ingest agent flags what a model
proposed that its source cannot justify) and conflicts (unresolved rows: sources that
disagree, and the values the agent held back), newest first; beside them the latest
updates (superseded rows: a newer source replaced a value), which are history, not
disagreements. ``--json`` lists both, each row with its ``kind`` (``conflict`` or
``update``). Decide them in the web console (``/ui/review``); a change the ingest agent
held back (an unresolved row whose note starts ``review:``) can also be decided here:
``memserver review accept ID`` applies it to the page as it is now (a new version),
``memserver review reject ID`` leaves the page as it is; both take its Open Question off
the page and mark the row resolved (``memserver.store.held``).
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
    actions = review.add_subparsers(dest="action", metavar="{accept,reject}")
    for name, what in (
        ("accept", "apply a held change to its page (a new version) and mark it resolved"),
        ("reject", "drop a held change: the page keeps its content, loses the Open Question"),
    ):
        decide = actions.add_parser(name, help=what, description=what[0].upper() + what[1:])
        decide.add_argument("id", type=int, help="the conflict id `memserver review` lists")
        decide.add_argument("--by", default="cli", help="who decides (recorded on the row)")
        decide.add_argument("--json", action="store_true", help="print JSON")
        decide.set_defaults(func=run_decide, accept=name == "accept")


def conflict_json(c: Conflict) -> dict[str, Any]:
    """One conflicts row, saying which it is: ``conflict`` (sources disagree, unresolved:
    waits for a person) or ``update`` (superseded: a newer fact replaced an older one;
    resolved: a conflict settled, by a later source or a person)."""
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
        updates = reviews.conflicts(None, status=("superseded", "resolved"), limit=UPDATES_SHOWN)
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
        title=f"{len(updates)} latest updates (history: a newer source replaced a value or "
        "settled a conflict)"
    )
    for column in ("page", "field", "was", "now", "source"):
        history.add_column(column)
    for c in updates:
        now = f"settled: {c.note}" if c.status == "resolved" else _value(c.new_value)
        history.add_row(c.page_id, c.field, _value(c.old_value), now, c.new_source or "")
    console.print(history)
    return 0


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def run_decide(args: argparse.Namespace) -> int:
    """Accept or reject one held change (UserError, nothing written, once it is decided)."""
    from memserver.store.held import applied, require_open, without_question
    from memserver.store.reviews import Reviews

    decision = "accepted" if args.accept else "rejected"
    with open_kb(args, check_embedding=False) as kb:
        reviews = Reviews(kb.db)
        row = reviews.conflict(args.id, None)
        require_open(row)
        stored = kb.get_page(row.page_id)
        shared = reviews.open_notes(row.page_id, besides=row.id)
        page = applied(stored.page, row, shared) if args.accept else stored.page
        page = without_question(page, row, shared)
        version = stored.version
        if page != stored.page:
            version = kb.put_page(
                row.folder,
                page,
                stored.version,
                written_by=args.by,
                slug=row.page_id.split("/", 1)[1],
                note=f"held change {row.id} {decision}",
            ).version
        reviews.settle_held(row.id, decision, by=args.by, folders=None, version=version)
    if args.json:
        print_json({"id": row.id, "page_id": row.page_id, "decision": decision, "version": version})
    else:
        console.print(f"{decision} held change {row.id} to {row.page_id} ({row.field}): v{version}")
    return 0
