"""The working copy ``make up`` runs on: kept between runs, made fresh only when asked.

``make up`` runs ``memserver up`` on a copy of ``example_kb/`` (under the git-ignored
``.memserver/``, so the repository's example stays pristine). The copy is made only when
it does not exist: pages written, notes added and the database of the last run are kept.
``make up-reset`` starts over from a fresh copy, refusing while a ``memserver up`` (or any
other process) still uses the copy's embedded PostgreSQL.

    python -m memserver.up.working_copy [--reset] TARGET EXAMPLE
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from memserver.db import pgserver
from memserver.errors import UserError
from memserver.kb.layout import KBPaths

# What a copy of the example does not take from it (a run of the example in place).
_NOT_COPIED = (".memserver", "knowledge", "manifest.json")


def prepare(target: Path, example: Path, *, reset: bool = False) -> str:
    """Make ``target`` a working copy of ``example`` unless it is one already (or
    ``reset``: start it over); returns the line that says which copy is used."""
    if target.exists() and not reset:
        return (
            f"using the existing working copy {target} (its pages, notes and database are "
            "kept; `make up-reset` starts from a fresh copy of example_kb/)"
        )
    if target.exists():
        _check_unused(target)
        shutil.rmtree(target)
        made = "a fresh working copy"
    else:
        made = "the working copy"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(example, target, ignore=shutil.ignore_patterns(*_NOT_COPIED))
    return f"created {made} {target} from {example}"


def _check_unused(target: Path) -> None:
    """UserError while a live process uses the copy's embedded server; an orphan left by
    a killed run is stopped."""
    pgdata = KBPaths.of(target).state / "pg"
    if pgdata.is_dir():
        pgserver.reap_orphans(pgdata)
    if pgserver.running_pid(pgdata) is not None:
        raise UserError(
            f"the working copy {target} is in use (its database is running)",
            "stop the `memserver up` that runs on it (Ctrl-C), then run `make up-reset` again",
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reset", action="store_true", help="start from a fresh copy")
    parser.add_argument("target", type=Path)
    parser.add_argument("example", type=Path)
    args = parser.parse_args(argv)
    try:
        print(f"make up: {prepare(args.target, args.example, reset=args.reset)}")
    except UserError as exc:
        print(f"make up: {exc.message}; {exc.hint}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
