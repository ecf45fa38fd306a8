"""The ``memserver`` admin CLI: a thin layer over the library.

Each area registers its subcommands from ``memserver/commands/<area>.py`` (a
``register(subparsers)`` function setting ``func`` on its parser). Errors are
translated here, once: a ``UserError`` prints one line and exits 2, any other
memory system error exits 1; neither prints a traceback (``memserver.terminal.program``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from memserver import __version__
from memserver.terminal.program import add_config_option, configure_logging, run_translating_errors

# Order is the order of `memserver --help`.
COMMAND_MODULES = (
    "core",
    "sources",
    "import_sources",
    "store",
    "review",
    "tokens",
    "serve",
    "search",
    "graph",
    "route",
    "up",
    "init",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memserver",
        description="Memory server and admin CLI for a schema-driven, time-aware company memory.",
    )
    parser.add_argument(
        "--kb",
        default=os.environ.get("MEMORY_KB", "."),
        help="knowledge base directory (holds schema.yaml, source/, knowledge/); "
        "default: $MEMORY_KB or the current directory",
    )
    add_config_option(parser)
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details")
    parser.add_argument("--version", action="version", version=f"memserver {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(f"memserver.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
    return run_translating_errors("memserver", lambda: args.func(args))


if __name__ == "__main__":
    sys.exit(main())
