"""The tuning and validation halves of an evaluation set, fixed by each question's id.

A question belongs to the half the first byte of the SHA-256 of its id names: even is
``tuning``, odd is ``validation``. The hash is the same on every machine and in every
run, and does not depend on the order of the set or on which other questions it holds,
so a question never changes halves (``bench/README.md``: misses are read on the tuning
half only; a change is kept only when the validation half does not fall).

    .venv/bin/python -m bench.halves Q-0001 conv-26:17   # the half of each id
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

TUNING = "tuning"
VALIDATION = "validation"
HALVES = (TUNING, VALIDATION)

T = TypeVar("T")


def half(question_id: str) -> str:
    """``tuning`` or ``validation``: the half of the question with this id."""
    first = hashlib.sha256(question_id.encode("utf-8")).digest()[0]
    return TUNING if first % 2 == 0 else VALIDATION


def split(items: Iterable[T], key: Callable[[T], str]) -> dict[str, list[T]]:
    """``items`` by half (``key`` gives an item's id), each in the given order."""
    out: dict[str, list[T]] = {name: [] for name in HALVES}
    for item in items:
        out[half(key(item))].append(item)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    for question_id in sys.argv[1:] if argv is None else argv:
        print(f"{question_id}\t{half(question_id)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
