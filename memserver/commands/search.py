"""`memserver` subcommands for the search area: `timeparse`."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path

from rich.markup import escape

from memserver.commands.output import console, print_json
from memserver.errors import SchemaError, UserError
from memserver.schema import load_schema
from memserver.timeparse import parse_time, reference_time, zone


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


def parse_now(value: str | None) -> datetime | None:
    """A ``--now`` value as a datetime (a date alone means its midnight), or a UserError."""
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise UserError(
            f"--now {value!r} is not an ISO date or time",
            "write e.g. 2026-09-20 or 2026-09-20T15:00:00+08:00",
        ) from None


def kb_timezone(kb: str | None, explicit: str | None) -> str:
    """``--tz`` if given, else the timezone of ``kb``'s schema.yaml if it has one, else UTC.

    An invalid schema.yaml does not stop a read-only look at a question: it is reported
    on stderr and UTC is used (the repository root's schema.yaml is the meta-schema).
    """
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
    tz = kb_timezone(args.kb, args.tz)
    now = reference_time(parse_now(args.now), tz)
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
