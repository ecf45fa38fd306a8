"""`memserver migrate | reindex | stats | get | history | restore`: the index and page history."""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable, Iterator
from typing import Any

from memserver.commands.common import open_kb
from memserver.terminal.output import console, print_json, progress
from memserver.terminal.progress import EmbeddingProgress


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this area's subcommands to the `memserver` parser."""
    migrate = sub.add_parser(
        "migrate",
        help="apply pending database migrations",
        description="Create the index tables (or bring them up to date) in the knowledge "
        "base's database: the embedded PostgreSQL, or DATABASE_URL / database_url.",
    )
    migrate.add_argument("--json", action="store_true", help="print JSON")
    migrate.set_defaults(func=run_migrate)

    reindex = sub.add_parser(
        "reindex",
        help="rebuild the index from knowledge/ and source/",
        description="Index every page whose file changed (all with --force, and all after "
        "an upgrade that cuts pages or sources into chunks differently), drop pages whose "
        "files are gone, index raw sources (redacted) and embed stale rows. Pages that do "
        "not fit the schema are reported and skipped. Exit 1 if any page was skipped.",
    )
    reindex.add_argument(
        "--force",
        action="store_true",
        help="re-index every page and source, and switch the index to the configured "
        "embedding model (needed after changing it)",
    )
    reindex.add_argument("--json", action="store_true", help="print the report as JSON")
    reindex.set_defaults(func=run_reindex)

    stats = sub.add_parser("stats", help="index sizes: pages per folder, rows, stale rows, model")
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.set_defaults(func=run_stats)

    get = sub.add_parser("get", help="print a page (markdown, or JSON with --json)")
    get.add_argument("page", metavar="FOLDER/SLUG")
    get.add_argument("--json", action="store_true", help="print JSON")
    get.set_defaults(func=run_get)

    history = sub.add_parser("history", help="list every stored version of a page")
    history.add_argument("page", metavar="FOLDER/SLUG")
    history.add_argument("--json", action="store_true", help="print JSON")
    history.set_defaults(func=run_history)

    restore = sub.add_parser(
        "restore", help="write an old version of a page again, as its newest version"
    )
    restore.add_argument("page", metavar="FOLDER/SLUG")
    restore.add_argument("--version", type=int, required=True, help="the version to restore")
    restore.add_argument("--json", action="store_true", help="print JSON")
    restore.set_defaults(func=run_restore)


def run_migrate(args: argparse.Namespace) -> int:
    from memserver.clients.config import load_settings
    from memserver.db.database import Database, redact_url
    from memserver.kb.layout import KBPaths

    settings = load_settings(args.config)
    with Database.open(KBPaths.of(args.kb), settings.database_url, migrate=False) as db:
        applied = db.migrate()
        names = db.applied_migrations()
        url = redact_url(db.url)
    if args.json:
        print_json({"database": url, "applied": applied, "migrations": names})
    elif applied:
        print(f"{url}: applied {', '.join(applied)}")
    else:
        print(f"{url}: up to date ({len(names)} migrations)")
    return 0


class _Bar:
    """Feeds ``reindex``'s ``on_progress(done, total)`` into ``output.progress``."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.ticks: Iterator[int] | None = None
        self.shown = 0

    def __call__(self, done: int, total: int) -> None:
        if self.ticks is None:
            self.ticks = progress(itertools.count(), total, self.label)
            next(self.ticks)  # opens the bar at 0
        while self.shown < done:
            next(self.ticks)
            self.shown += 1

    def close(self) -> None:
        close = getattr(self.ticks, "close", None)
        if close is not None:
            close()


def _embedded(bar: _Bar, shown: Callable[[int, int], object] | None, done: int, total: int) -> None:
    """The files are indexed when embedding starts: their bar goes, the vectors' comes."""
    bar.close()
    if shown is not None:
        shown(done, total - done)


def run_reindex(args: argparse.Namespace) -> int:
    with open_kb(args, check_embedding=not args.force) as kb:
        bar = _Bar("reindex")
        # On a terminal a second bar follows the vectors (rate, time left); else quiet.
        embedding = EmbeddingProgress(sys.stderr, terminal=sys.stderr.isatty())
        shown = embedding.update if embedding.terminal else None
        try:
            report = kb.reindex(
                force=args.force,
                on_progress=bar,
                on_embedding=lambda done, total: _embedded(bar, shown, done, total),
            )
        finally:
            bar.close()
            embedding.close()
    if args.json:
        print_json(report.to_dict())
        return 1 if report.failed else 0
    rate = report.indexed / report.seconds if report.seconds > 0 else 0.0
    print(
        f"pages: {report.indexed} indexed, {report.unchanged} unchanged, "
        f"{report.removed} removed, {len(report.failed)} skipped; "
        f"sources: {report.sources_indexed} indexed, {report.sources_unchanged} unchanged, "
        f"{report.sources_removed} removed; {report.embedded} stale rows embedded; "
        f"{report.seconds:.1f}s ({rate:.0f} pages/s)"
    )
    for failed in report.failed:
        print(f"skipped {failed.path}:")
        for problem in failed.problems:
            print(f"  - {problem}")
    for path, error in report.sources_unreadable:
        print(f"source not indexed: {path}: {error}")
    if report.degraded:
        print(f"degraded: {', '.join(report.degraded)}")
    return 1 if report.failed else 0


def run_stats(args: argparse.Namespace) -> int:
    from rich.table import Table

    with open_kb(args, check_embedding=False) as kb:
        stats = kb.stats()
    if args.json:
        print_json(stats)
        return 0
    emb = stats["embedding"]
    console.print(
        f"{stats['kb']}: {stats['pages']} pages, {stats['page_versions']} versions, "
        f"{stats['open_conflicts']} open conflicts; embedding {emb['model']} ({emb['dims']} dims)"
    )
    table = Table()
    table.add_column("table")
    table.add_column("rows", justify="right")
    table.add_column("stale", justify="right")
    for name, count in stats["tables"].items():
        table.add_row(name, str(count), str(stats["stale"].get(name, "")))
    console.print(table)
    for folder, count in stats["folders"].items():
        console.print(f"  {folder}: {count} pages")
    return 0


def run_get(args: argparse.Namespace) -> int:
    with open_kb(args, check_embedding=False) as kb:
        stored = kb.get_page(args.page)
    if args.json:
        print_json(_stored_dict(stored))
    else:
        print(stored.markdown, end="")
    return 0


def _stored_dict(stored: Any) -> dict[str, Any]:
    return {
        "id": stored.id,
        "folder": stored.folder,
        "slug": stored.slug,
        "version": stored.version,
        "effective_date": stored.effective_date,
        "updated_at": stored.updated_at,
        "page": stored.page.to_dict(),
        "markdown": stored.markdown,
    }


def run_history(args: argparse.Namespace) -> int:
    from rich.table import Table

    with open_kb(args, check_embedding=False) as kb:
        versions = kb.history(args.page)
    if args.json:
        print_json(
            {
                "id": args.page,
                "versions": [
                    {
                        "version": v.version,
                        "created_at": v.created_at,
                        "written_by": v.written_by,
                        "content_hash": v.content_hash,
                    }
                    for v in versions
                ],
            }
        )
        return 0
    table = Table(title=args.page)
    for column in ("version", "created at", "written by", "sha256"):
        table.add_column(column)
    for v in versions:
        table.add_row(
            str(v.version),
            v.created_at.isoformat(timespec="seconds"),
            v.written_by,
            v.content_hash[:12],
        )
    console.print(table)
    return 0


def run_restore(args: argparse.Namespace) -> int:
    with open_kb(args) as kb:
        result = kb.restore(args.page, args.version, written_by="cli")
    if args.json:
        print_json(
            {
                "id": result.id,
                "version": result.version,
                "created": result.created,
                "degraded": list(result.degraded),
                "path": result.path,
            }
        )
    else:
        print(f"{result.id}: version {args.version} restored as version {result.version}")
    return 0
