"""`memserver up`: the memory server, the read agent and the ingest agent, in one command."""

from __future__ import annotations

import argparse
from pathlib import Path

from memserver.terminal.program import parse_interval
from memserver.up.runner import DEFAULT_ADDR, DEFAULT_AGENT_ADDR, DEFAULT_WATCH


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `up` to the `memserver` parser."""
    parser = sub.add_parser(
        "up",
        help="run everything: database, memory server, ingest agent, read agent",
        description="Start (or adopt) the embedded PostgreSQL (or use DATABASE_URL), migrate, "
        "index what changed, create an ingest and a read token (kept in "
        "<kb>/.memserver/tokens/), then run the memory server (MCP over HTTP), the read "
        "agent's HTTP endpoint and the ingest agent in watch mode, and print how to use "
        "them, then the ingest agent's progress (a bar and a line per note). Logs go to "
        "<kb>/.memserver/logs/. Ctrl-C stops everything. Without "
        "LLM_BASE_URL/LLM_MODEL the agents run without a model (rules extractor, "
        "extractive answers).",
    )
    parser.add_argument(
        "--addr",
        default=DEFAULT_ADDR,
        help=f"HOST:PORT of the memory server (default {DEFAULT_ADDR})",
    )
    parser.add_argument(
        "--agent-addr",
        default=DEFAULT_AGENT_ADDR,
        help=f"HOST:PORT of the read agent's HTTP endpoint (default {DEFAULT_AGENT_ADDR})",
    )
    parser.add_argument(
        "--watch",
        default=DEFAULT_WATCH,
        metavar="DURATION",
        help=f"how often the ingest agent looks for new sources (default {DEFAULT_WATCH})",
    )
    parser.add_argument("--no-ingest", action="store_true", help="do not run the ingest agent")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the banner and the ingest progress as JSON lines (for scripts)",
    )
    parser.add_argument(
        "--embedder",
        choices=("local", "hash"),
        default=None,
        help="override the configured embedding provider: local (multilingual-e5-small, "
        "the default) or hash (instant start, lexical quality; the index must be rebuilt "
        "with `reindex --force` to switch)",
    )
    parser.set_defaults(func=run_up_command)


def run_up_command(args: argparse.Namespace) -> int:
    from memserver.up.runner import UpOptions, run_up

    if not args.no_ingest:
        parse_interval(args.watch)  # the ingest agent's --watch, refused before anything starts
    options = UpOptions(
        kb=Path(args.kb),
        config=args.config,
        addr=args.addr,
        agent_addr=args.agent_addr,
        watch=args.watch,
        ingest=not args.no_ingest,
        embedder=args.embedder,
        json_lines=args.json,
    )
    return run_up(options, verbose=args.verbose)
