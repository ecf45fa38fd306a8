"""`memserver` subcommands for the search area: `timeparse` and `search`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memserver.commands.common import comma_list, open_kb
from memserver.errors import SchemaError, UserError
from memserver.terminal.output import console, print_json
from memserver.timeparse.now import parse_now


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this area's subcommands to the `memserver` parser."""
    parser = sub.add_parser(
        "timeparse",
        help="show how a question's dates, ordering and recency words are understood",
        description="Parse the time phrases of a question deterministically (no LLM): the "
        "window [start, end) in the KB timezone, the ordering (newest/oldest), soft "
        "recency, and the question with those phrases removed.",
    )
    parser.add_argument("--now", help="reference time, ISO 8601 (default: the current time)")
    parser.add_argument(
        "--tz", help="timezone (default: `timezone` of the KB's schema.yaml, else UTC)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("text", nargs="+", metavar="TEXT", help="the question")
    parser.set_defaults(func=_timeparse)

    search = sub.add_parser(
        "search",
        help="search the knowledge base (time-aware hybrid retrieval)",
        description="Run a question through the search pipeline as kb_query does, with "
        "admin scope (all folders). Prints the parsed time, what was degraded and the "
        "ranked results with the rank each retrieval arm gave them.",
    )
    search.add_argument("--json", action="store_true", help="print one JSON object")
    search.add_argument("--now", help="reference time, ISO 8601 (default: the current time)")
    search.add_argument(
        "--mode", default="balanced", choices=("conservative", "balanced", "tokenmax")
    )
    search.add_argument("--folders", help="only these folders, comma-separated")
    search.add_argument("--limit", type=int, help="at most this many results")
    search.add_argument(
        "--include-sources", action="store_true", help="also search raw source notes"
    )
    search.add_argument(
        "--no-route", action="store_true", help="do not narrow folders with the router"
    )
    search.add_argument("query", nargs="+", metavar="QUERY", help="the question")
    search.set_defaults(func=_search)


def kb_timezone(kb: str | None, explicit: str | None) -> str:
    """``--tz`` if given, else the timezone of ``kb``'s schema.yaml if it has one, else UTC.

    An invalid schema.yaml does not stop a read-only look at a question: it is reported
    on stderr and UTC is used (the repository root's schema.yaml is the meta-schema).
    """
    from memserver.kb.schema import load_schema
    from memserver.timeparse.window import zone

    if explicit:
        return zone(explicit).key
    if kb and (Path(kb) / "schema.yaml").is_file():
        try:
            return load_schema(kb).timezone
        except SchemaError as exc:
            print(
                f"memserver: warning: {kb}/schema.yaml is not a valid KB schema "
                f"({len(exc.problems)} problems); using UTC (pass --tz to choose)",
                file=sys.stderr,
            )
    return "UTC"


def _timeparse(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from memserver.timeparse.parse import parse_time
    from memserver.timeparse.window import reference_time

    tz = kb_timezone(args.kb, args.tz)
    now = reference_time(parse_now(args.now, "--now"), tz)
    text = " ".join(args.text)
    parsed = parse_time(text, now=now, tz=tz)
    if args.json:
        print_json({"text": text, "timezone": tz, "now": now.isoformat(), **parsed.as_dict()})
        return 0
    window = parsed.window
    shown = (
        f"[{window.start.isoformat()}, {window.end.isoformat()})  from {parsed.phrase!r}"
        if window
        else "none"
    )
    rows = (
        ("text", text),
        ("now", f"{now.isoformat()} ({tz})"),
        ("window", shown),
        ("order", parsed.order or "none"),
        ("recency", "soft" if parsed.soft_recency else "none"),
        ("query", repr(parsed.query)),
    )
    for label, value in rows:
        console.print(f"[bold]{label:<8}[/] {escape(value)}", highlight=False)
    return 0


def _search(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from memserver.clients.config import load_settings
    from memserver.search.pipeline import Searcher, SearchRequest

    if args.limit is not None and not 1 <= args.limit <= 100:
        raise UserError(f"--limit {args.limit} is out of range", "use 1 to 100")
    settings = load_settings(args.config)
    now = parse_now(args.now, "--now")
    folders = comma_list(args.folders)
    with open_kb(args, settings) as kb:
        searcher = Searcher.for_kb(kb, settings, route=not args.no_route)
        try:
            response = searcher.search(
                SearchRequest(
                    question=" ".join(args.query),
                    folders=folders,
                    mode=args.mode,
                    limit=args.limit,
                    include_sources=args.include_sources,
                    now=now,
                    route=not args.no_route,
                )
            )
        finally:
            searcher.close()
    data = response.to_dict()
    if args.json:
        print_json(data)
        return 0
    window = data["time"]["window"]
    shown = f"[{window['start']}, {window['end']})" if window else "none"
    console.print(
        f"[bold]query[/] {escape(data['query'])!r}  [bold]window[/] {escape(shown)}  "
        f"[bold]order[/] {data['time']['order'] or 'none'}  [bold]mode[/] {data['mode']}  "
        f"{data['took_ms']:.0f} ms",
        highlight=False,
    )
    if data["degraded"]:
        console.print(f"[yellow]degraded[/] {', '.join(data['degraded'])}", highlight=False)
    if not data["results"]:
        console.print("no results")
    for i, result in enumerate(data["results"], 1):
        ranks = " ".join(f"{arm}:{rank}" for arm, rank in result["ranks"].items())
        console.print(
            f"{i:>2}. [bold]{escape(result['id'])}[/] {result['date'] or '-'} "
            f"score {result['score']:.3f}  [dim]{escape(ranks)}  "
            f"{escape(' '.join(result['labels']))}[/]",
            highlight=False,
        )
        snippet = " ".join(result["snippet"].split())[:160]
        console.print(f"    {escape(snippet)}", highlight=False)
    return 0
