"""`memserver init`: what a stack of containers needs before its services start.

The one-shot ``init`` service of docker-compose.yml runs it on every ``docker compose up``:
it seeds an empty knowledge base from an example (first start only), migrates the
database and writes the agents' tokens and the read agent's API key into a secrets
folder (mode 0600), reusing those already there while the database still accepts them.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from memserver.errors import UserError
from memserver.kb.layout import KBPaths
from memserver.terminal.output import print_json

INGEST_TOKEN = "ingest"
READ_TOKEN = "read"
# What seeding does not take from the example (a run of the example in place).
_NOT_SEEDED = (".memserver", "knowledge", "manifest.json")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `init` to the `memserver` parser."""
    init = sub.add_parser(
        "init",
        help="prepare a deployment: seed the KB, migrate, write tokens and the agent key",
        description="Seed the knowledge base (--kb) from --seed when it has no schema.yaml, "
        "apply the database migrations, and write an ingest token (ingest.token, write), a "
        "read token (read.token) and the read agent's API key (read-agent.key) into "
        "--secrets, reusing those the database still accepts. Safe to run on every start.",
    )
    init.add_argument("--secrets", required=True, metavar="DIR", help="where the secrets go")
    init.add_argument(
        "--seed", metavar="DIR", help="a knowledge base to copy into an empty --kb (first start)"
    )
    init.add_argument("--json", action="store_true", help="print what was done as JSON")
    init.set_defaults(func=run_init)


def seed_kb(target: Path, seed: Path | None) -> bool:
    """Copy ``seed`` into ``target`` when ``target`` has no schema.yaml; whether it did."""
    if (target / "schema.yaml").is_file():
        return False
    if seed is None:
        raise UserError(
            f"no schema.yaml in {target}",
            "put a knowledge base there, or pass --seed DIR to copy one in on first start",
        )
    if not (seed / "schema.yaml").is_file():
        raise UserError(f"no schema.yaml in the seed {seed}", "pass --seed a knowledge base")
    target.mkdir(parents=True, exist_ok=True)
    shutil.copytree(seed, target, ignore=shutil.ignore_patterns(*_NOT_SEEDED), dirs_exist_ok=True)
    return True


def run_init(args: argparse.Namespace) -> int:
    from memserver.clients.config import load_settings
    from memserver.db.database import Database, redact_url
    from memserver.server.tokens import TokenStore
    from memserver.up.agent_key import KEY_FILE, ensure_agent_key
    from memserver.up.tokens import ensure_token, private_dir

    kb = Path(args.kb)
    seeded = seed_kb(kb, Path(args.seed) if args.seed else None)
    settings = load_settings(args.config)
    secrets = private_dir(Path(args.secrets))
    with Database.open(KBPaths.of(kb), settings.database_url, migrate=False) as db:
        applied = db.migrate()
        store = TokenStore(db)
        ensure_token(store, secrets, INGEST_TOKEN, write=True)
        ensure_token(store, secrets, READ_TOKEN, write=False)
        url = redact_url(db.url)
    ensure_agent_key(secrets, env={})  # always the file: the read agent reads it there
    files = [f"{INGEST_TOKEN}.token", f"{READ_TOKEN}.token", KEY_FILE]
    if args.json:
        print_json(
            {
                "kb": str(kb),
                "seeded": seeded,
                "database": url,
                "migrations_applied": applied,
                "secrets": [str(secrets / name) for name in files],
            }
        )
        return 0
    if seeded:
        print(f"seeded {kb} from {args.seed}")
    print(f"{url}: " + (f"applied {', '.join(applied)}" if applied else "up to date"))
    print(f"secrets in {secrets}: {', '.join(files)} (the read agent's clients send {KEY_FILE})")
    return 0
