"""`memserver neighbors ID` and `memserver resolve NAME`: the typed graph from the shell.

Both run as the trusted admin (every folder); ``--folders`` narrows the scope the same
way a token would, so a scoped view can be checked from the command line.
"""

from __future__ import annotations

import argparse
from collections.abc import Collection

from memserver.commands.common import comma_list, open_kb
from memserver.errors import UserError
from memserver.terminal.output import console, print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this area's subcommands to the `memserver` parser."""
    near = sub.add_parser(
        "neighbors",
        help="typed links from and to a page (attended, reports_to, mentions ...)",
        description="List the typed edges around a page, up to two hops. An edge is shown "
        "only when both of its pages are in the folders given by --folders (default all).",
    )
    near.add_argument("id", help="page id folder/slug, e.g. people/alice-chen")
    near.add_argument("--verbs", help="only these edge types, comma-separated")
    near.add_argument(
        "--direction", choices=("in", "out", "both"), default="both", help="default: both"
    )
    near.add_argument("--depth", type=int, default=1, help="1 (default) or 2 hops")
    near.add_argument("--folders", help="scope: only these folders, comma-separated")
    near.add_argument("--json", action="store_true", help="print JSON")
    near.set_defaults(func=run_neighbors)

    res = sub.add_parser(
        "resolve",
        help="find the page for a name (exact slug, alias, title, fuzzy, semantic)",
        description="Rank the pages a name may mean, each with why it matched, and a "
        "verdict: exists, probable or new. Dated folders match only --date when given.",
    )
    res.add_argument("name", nargs="+", help="the name, e.g. Bob or 'Bob Martinez'")
    res.add_argument("--folder", help="look only in this folder")
    res.add_argument("--date", help="YYYY-MM-DD, for pages of dated folders (meetings ...)")
    res.add_argument("--limit", type=int, default=5, help="at most this many candidates")
    res.add_argument("--folders", help="scope: only these folders, comma-separated")
    res.add_argument("--json", action="store_true", help="print JSON")
    res.set_defaults(func=run_resolve)


def _folders(value: str | None) -> Collection[str] | None:
    folders = comma_list(value)
    if folders is None:
        return None
    if not folders:
        raise UserError(
            f"--folders {value!r} names no folder", "give folder names, comma-separated"
        )
    return set(folders)


def run_neighbors(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from memserver.graph.neighbors import neighbors
    from memserver.store.records import split_id

    split_id(args.id)
    verbs = comma_list(args.verbs)
    folders = _folders(args.folders)
    with open_kb(args) as kb:
        edges = neighbors(kb.db, args.id, folders, verbs, args.direction, args.depth)
    if args.json:
        print_json(
            {
                "id": args.id,
                "direction": args.direction,
                "depth": args.depth,
                "edges": [e.to_dict() for e in edges],
            }
        )
        return 0
    if not edges:
        console.print(f"{escape(args.id)}: no edges", highlight=False)
    for e in edges:
        indent = "  " * (e.depth - 1)
        console.print(
            f"{indent}{escape(e.from_id)} [bold]--{escape(e.verb)}-->[/] {escape(e.to_id)}"
            f"  [dim]{escape(e.from_title)} -> {escape(e.to_title)}"
            f" ({escape(', '.join(e.origins))})[/]",
            highlight=False,
        )
    return 0


def run_resolve(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from memserver.graph.resolve import advice, resolve

    if not 1 <= args.limit <= 50:
        raise UserError(f"--limit {args.limit} is out of range", "use 1 to 50")
    name = " ".join(args.name)
    folders = _folders(args.folders)
    with open_kb(args) as kb:
        result = resolve(
            kb.db,
            kb.embedder,
            name,
            folders,
            args.folder,
            args.date,
            args.limit,
            schema=kb.schema,
        )
    if args.json:
        print_json({**result.to_dict(), "advice": advice(result)})
        return 0
    flag = " [yellow]ambiguous[/]" if result.ambiguous else ""
    console.print(
        f"[bold]{escape(result.name)}[/]: [bold]{result.verdict}[/]{flag}", highlight=False
    )
    if result.degraded:
        console.print(f"[yellow]degraded[/] {', '.join(result.degraded)}", highlight=False)
    for i, c in enumerate(result.candidates, 1):
        day = c.effective_date.isoformat() if c.effective_date else "-"
        console.print(
            f"{i:>2}. {escape(c.id)}  {c.why} {c.score:.2f}  [dim]{escape(c.title)} {day}[/]",
            highlight=False,
        )
    console.print(f"[dim]{escape(advice(result))}[/]", highlight=False)
    return 0
