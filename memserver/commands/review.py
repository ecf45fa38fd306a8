"""`memserver conflicts`: the review list (unresolved conflicts and held-back changes)."""

from __future__ import annotations

import argparse
import json

from memserver.commands.common import open_kb
from memserver.commands.output import console, print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `conflicts` to the `memserver` parser."""
    conflicts = sub.add_parser(
        "conflicts",
        help="the review list: sources that disagree, changes held back for a person",
        description="List unresolved conflicts, newest first: facts two sources of the same "
        "date disagree on, and changes the ingest agent wrote as drafts for review (a page "
        "in a folder the router did not pick, a decision that would be superseded or "
        "reversed by a source whose frontmatter does not say so).",
    )
    conflicts.add_argument("--all", action="store_true", help="also superseded and resolved ones")
    conflicts.add_argument("--json", action="store_true", help="print JSON")
    conflicts.set_defaults(func=run_conflicts)


def run_conflicts(args: argparse.Namespace) -> int:
    from rich.table import Table

    from memserver.store.conflicts import list_conflicts

    with open_kb(args, check_embedding=False) as kb:
        rows = list_conflicts(kb.db, open_only=not args.all)
    if args.json:
        print_json({"conflicts": [row.as_dict() for row in rows]})
        return 0
    table = Table(title=f"{len(rows)} {'conflicts' if args.all else 'open conflicts'}")
    for column in ("id", "page", "field", "current", "proposed", "source", "status", "why"):
        table.add_column(column)
    for row in rows:
        table.add_row(
            str(row.id),
            row.page_id,
            row.field,
            json.dumps(row.old_value, ensure_ascii=False),
            json.dumps(row.new_value, ensure_ascii=False),
            row.new_source or "",
            row.status,
            row.note or "",
        )
    console.print(table)
    return 0
