"""`memserver token create|list|revoke` and `memserver audit`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.table import Table

from memserver.errors import UserError
from memserver.kb.layout import KBPaths
from memserver.terminal.output import console, print_json

if TYPE_CHECKING:
    from memserver.db.database import Database


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `token` and `audit` to the `memserver` parser."""
    token = sub.add_parser("token", help="create, list and revoke scoped access tokens")
    actions = token.add_subparsers(dest="token_command", metavar="ACTION", required=True)

    create = actions.add_parser(
        "create",
        help="create a token and print its secret (shown once)",
        description="Create a token scoped to folders, read-only unless --write. Prints the "
        "secret on stdout (only this once; only its SHA-256 is stored).",
    )
    create.add_argument("--name", required=True, help="a unique name, e.g. ingest or sales-bot")
    create.add_argument(
        "--folders",
        required=True,
        help="comma-separated schema folders, 'source' (raw sources, pipeline tools), or '*'",
    )
    create.add_argument("--write", action="store_true", help="allow writes (default read-only)")
    create.add_argument("--expires", help="expiry: a duration (30d, 12h) or an ISO date/time")
    create.add_argument("--json", action="store_true", help="print JSON with the secret")
    create.set_defaults(func=run_create)

    listing = actions.add_parser("list", help="list tokens with their scope and last use")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(func=run_list)

    revoke = actions.add_parser("revoke", help="revoke a token (its requests then get 401)")
    revoke.add_argument("--name", required=True, help="the token's name")
    revoke.set_defaults(func=run_revoke)

    audit = sub.add_parser("audit", help="show the audit log of tool calls")
    audit.add_argument("--since", help="only calls since: a duration back (1d, 12h) or ISO time")
    audit.add_argument("--token", help="only calls made with this token")
    audit.add_argument("--limit", type=int, default=None, help="only the newest N calls")
    audit.add_argument("--json", action="store_true", help="print JSON")
    audit.set_defaults(func=run_audit)


def _known_folders(paths: KBPaths) -> tuple[str, ...]:
    from memserver.kb.schema import load_schema

    if not paths.schema.is_file():
        raise UserError(
            f"no schema.yaml in {paths.root}", "pass --kb with a knowledge base directory"
        )
    return load_schema(paths.schema).folder_names


@contextmanager
def _database(args: argparse.Namespace) -> Iterator[Database]:
    """The knowledge base's index database (tokens and the audit log live there)."""
    from memserver.clients.config import load_settings
    from memserver.db.database import Database

    settings = load_settings(args.config)
    with Database.open(KBPaths.of(args.kb), settings.database_url, max_size=1) as db:
        yield db


def run_create(args: argparse.Namespace) -> int:
    from memserver.server.tokens import TokenStore, parse_instant

    paths = KBPaths.of(args.kb)
    expires = parse_instant(args.expires) if args.expires else None
    known = _known_folders(paths)
    with _database(args) as db:
        created = TokenStore(db).create(
            args.name, args.folders, write=args.write, expires=expires, known_folders=known
        )
    token = created.token
    if args.json:
        print_json(
            {
                "name": token.name,
                "secret": created.secret,
                "folders": list(token.folders),
                "write": token.write,
                "expires": token.expires.isoformat() if token.expires else None,
            }
        )
        return 0
    sys.stdout.write(created.secret + "\n")
    access = "read-write" if token.write else "read-only"
    until = f", expires {token.expires:%Y-%m-%d %H:%M} UTC" if token.expires else ""
    print(
        f"created token {token.name!r} ({access}, folders {','.join(token.folders)}{until}); "
        "the secret above is shown only once",
        file=sys.stderr,
    )
    return 0


def run_list(args: argparse.Namespace) -> int:
    from memserver.server.audit import AuditLog, UseWindow
    from memserver.server.tokens import TokenStore, utcnow

    with _database(args) as db:
        tokens = TokenStore(db).list()
        last_used = AuditLog(db).last_used_during(
            [UseWindow(t.name, t.created, t.revoked) for t in tokens]
        )
    now = utcnow()
    rows: list[dict[str, Any]] = []
    for token, used in zip(tokens, last_used, strict=True):
        rows.append(
            {
                **token.as_dict(),
                "last_used": used.isoformat() if used else None,
                "status": token.status(now),
            }
        )
    if args.json:
        print_json({"tokens": rows})
        return 0
    if not rows:
        console.print("no tokens yet; create one with `memserver token create`")
        return 0
    table = Table("name", "folders", "write", "created", "expires", "last used", "status")
    for row in rows:
        table.add_row(
            row["name"] + (f" (OAuth: {row['client']})" if row["client"] else ""),
            ",".join(row["folders"]),
            "yes" if row["write"] else "no",
            _short(row["created"]),
            _short(row["expires"]),
            _short(row["last_used"]),
            row["status"] + (f" {_short(row['revoked'])}" if row["revoked"] else ""),
        )
    console.print(table)
    return 0


def run_revoke(args: argparse.Namespace) -> int:
    from memserver.server.tokens import TokenStore

    with _database(args) as db:
        token = TokenStore(db).revoke(args.name)
    print(f"revoked token {token.name!r}", file=sys.stderr)
    return 0


def run_audit(args: argparse.Namespace) -> int:
    from memserver.server.audit import AuditLog
    from memserver.server.tokens import parse_instant

    since = parse_instant(args.since, past=True) if args.since else None
    with _database(args) as db:
        entries = AuditLog(db).query(since=since, token=args.token, limit=args.limit)
    if args.json:
        print_json({"entries": [e.as_dict() for e in entries]})
        return 0
    if not entries:
        console.print("no tool calls recorded for this filter")
        return 0
    table = Table("time", "token", "tool", "outcome", "ms", "args sha256")
    for e in entries:
        table.add_row(
            _short(e.time.isoformat(timespec="seconds")),
            e.token,
            e.tool,
            e.outcome,
            f"{e.duration_ms:.1f}",
            e.args_sha256[:12],
        )
    console.print(table)
    return 0


def _short(value: str | None) -> str:
    return value.replace("T", " ")[:19] if value else "-"
