"""Output helpers shared by every subcommand: JSON for scripts, rich for people."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from rich.console import Console

T = TypeVar("T")

console = Console()


def print_json(value: Any) -> None:
    """Print exactly one JSON object on stdout (dates and paths become strings)."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n")


def progress(items: Iterable[T], total: int, label: str) -> Iterator[T]:
    """Yield ``items`` with a rich progress bar on a terminal, silently otherwise."""
    if not sys.stderr.isatty():
        yield from items
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        for item in items:
            yield item
            bar.advance(task)
