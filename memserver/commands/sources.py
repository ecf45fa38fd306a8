"""`memserver scan` and `memserver source reset`: the ledger of source/ and its index."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from memserver.commands.common import open_kb
from memserver.errors import UserError
from memserver.kb.layout import KBPaths
from memserver.terminal.output import console, print_json

if TYPE_CHECKING:
    from memserver.index.sources import SourcesReport
    from memserver.kb.manifest import SourceEntry


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this area's subcommands to the `memserver` parser."""
    scan = sub.add_parser(
        "scan",
        help="hash source/, update manifest.json and index the raw sources",
        description="Scan source/ at any depth, hash every file and reconcile manifest.json "
        "(pending, updated, ingested, failed, removed), then bring the source index in line: "
        "new and changed notes are searchable at once (`search --include-sources`), removed "
        "ones leave it.",
    )
    scan.add_argument("--json", action="store_true", help="print counts and every source as JSON")
    scan.add_argument(
        "--no-index",
        action="store_true",
        help="only update manifest.json (no database needed); the index catches up on the "
        "next scan, `source_pending` or `reindex`",
    )
    scan.set_defaults(func=run_scan)

    source = sub.add_parser("source", help="manage the ledger of raw sources (reset)")
    actions = source.add_subparsers(dest="source_command", metavar="ACTION", required=True)
    reset = actions.add_parser(
        "reset",
        help="queue sources again for the ingest agent (failed or ingested ones)",
        description="Queue sources again: every failed one with --failed, or the PATHs given "
        "(relative to source/). A file that still cannot be read stays failed, with why.",
    )
    reset.add_argument("paths", nargs="*", metavar="PATH", help="sources under source/")
    reset.add_argument("--failed", action="store_true", help="every source marked failed")
    reset.add_argument("--json", action="store_true", help="print the sources as JSON")
    reset.set_defaults(func=run_source_reset)


def run_scan(args: argparse.Namespace) -> int:
    from rich.table import Table

    from memserver.clients.config import load_settings
    from memserver.kb.manifest import Manifest, Status

    settings = load_settings(args.config)
    result = Manifest(KBPaths.of(args.kb), settings.source_max_bytes).scan()
    report = None
    if not args.no_index:
        with open_kb(args, settings) as kb:
            report = kb.index_sources(list(result.entries))
    if args.json:
        print_json(
            {
                "counts": dict(result.counts),
                "sources": [e.to_dict() for e in result.entries],
                "index": _report_dict(report) if report is not None else None,
            }
        )
        return 0
    table = Table(title=f"{len(result.entries)} sources")
    table.add_column("status")
    table.add_column("count", justify="right")
    for status, count in result.counts.items():
        table.add_row(status, str(count))
    console.print(table)
    for entry in result.entries:
        if entry.status is Status.FAILED:
            _line(f"failed: {entry.path}: {entry.error}")
    if report is not None:
        _line(
            f"index: {report.indexed} indexed, {report.unchanged} unchanged, "
            f"{report.removed} removed"
            + (f"; degraded: {', '.join(report.degraded)}" if report.degraded else "")
        )
    return 0


def _report_dict(report: SourcesReport) -> dict[str, Any]:
    return {
        "indexed": report.indexed,
        "unchanged": report.unchanged,
        "removed": report.removed,
        "chunks": report.chunks,
        "unreadable": [{"path": p, "error": e} for p, e in report.unreadable],
        "degraded": list(report.degraded),
    }


def _line(text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def run_source_reset(args: argparse.Namespace) -> int:
    from memserver.clients.config import load_settings
    from memserver.kb.manifest import Manifest, Status

    if args.failed == bool(args.paths):
        raise UserError(
            "say which sources to reset",
            "pass --failed (every failed source) or one or more PATHs under source/, not both",
        )
    manifest = Manifest(KBPaths.of(args.kb), load_settings(args.config).source_max_bytes)
    if args.failed:
        paths = [e.path for e in manifest.scan().entries if e.status is Status.FAILED]
    else:
        paths = list(args.paths)
    entries: list[SourceEntry] = [manifest.reset(path) for path in paths]
    still = [e for e in entries if e.status is Status.FAILED]
    if args.json:
        print_json({"reset": [e.to_dict() for e in entries], "still_failed": len(still)})
        return 1 if still else 0
    print(f"{len(entries) - len(still)} queued again for the ingest agent")
    for entry in still:
        _line(f"still failed: {entry.path}: {entry.error}")
    return 1 if still else 0
