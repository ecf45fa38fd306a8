"""Conventions shared by the command-line programs (memserver, read-agent, ingest-agent).

Each program runs its work through ``run_translating_errors`` so that the user sees
one line, never a traceback: a ``UserError`` (a mistake the user can fix) exits 2, any
other memory system error exits 1, Ctrl-C exits 130. ``add_config_option`` and
``configure_logging`` give memserver and read-agent the same ``--config`` and ``-v``;
``parse_interval`` reads ``--watch`` the same way for ``memserver up`` and ingest-agent.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from collections.abc import Callable

from memserver.errors import MemoryError_, UserError

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

MAX_INTERVAL_SECONDS = 24 * 3600
_INTERVAL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def run_translating_errors(
    prog: str,
    run: Callable[[], int],
    *,
    failed_label: str = "failed: ",
    stopped: str | None = None,
) -> int:
    """``run()``'s exit code, or the code of the error it raised after one line on stderr.

    Lines read ``<prog>: error: <error>`` for a ``UserError`` and
    ``<prog>: <failed_label><error>`` for another ``MemoryError_``. On Ctrl-C,
    ``<prog>: <stopped>`` is printed when ``stopped`` is given.
    """
    try:
        return run()
    except UserError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError_ as exc:
        print(f"{prog}: {failed_label}{exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        if stopped is not None:
            print(f"{prog}: {stopped}", file=sys.stderr)
        return EXIT_INTERRUPTED


def add_config_option(parser: argparse.ArgumentParser) -> None:
    """``--config config.yaml``, defaulting to ``$MEMORY_CONFIG``."""
    parser.add_argument(
        "--config",
        default=os.environ.get("MEMORY_CONFIG"),
        help="config.yaml (default: $MEMORY_CONFIG)",
    )


def configure_logging(verbose: bool) -> None:
    """Warnings and errors on stderr; every debug detail with ``verbose``."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def parse_interval(text: str, option: str = "--watch") -> float:
    """``60s``, ``5m``, ``1h``, ``500ms`` or plain seconds -> seconds (0.1 s to 24 h)."""
    match = _INTERVAL.match(text)
    if match is None:
        raise UserError(f"cannot read the duration {text!r}", "write e.g. 60s, 5m or 1h")
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if not 0.1 <= seconds <= MAX_INTERVAL_SECONDS:
        raise UserError(f"{option} {text} is out of range", "poll between every 0.1s and every 24h")
    return seconds
