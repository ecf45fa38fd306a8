"""The tuning and validation halves of an evaluation set, fixed by each question's id.

Two splits, both by the SHA-256 of the id, the same on every machine and in every run
(``bench/README.md``: misses are read on the tuning half only; a change is kept only
when the validation half does not fall):

- :func:`half`: the first byte of the hash names the half (even: ``tuning``, odd:
  ``validation``). It does not depend on the order of the set or on which other
  questions it holds, so a question never changes halves: OrgMemBench, LoCoMo and our
  own questions use it.
- :func:`halves`: a whole small set ranked by the hash, its first half tuning. Balanced
  to within one question: the example's 30 questions and their rewordings
  (``bench/rewordings``) were split so before :func:`half` existed, and misses were
  read on that split's tuning half, so it stays theirs.

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


def _digest(question_id: object) -> bytes:
    return hashlib.sha256(str(question_id).encode("utf-8")).digest()


def half(question_id: str) -> str:
    """``tuning`` or ``validation``: the half of the question with this id."""
    return TUNING if _digest(question_id)[0] % 2 == 0 else VALIDATION


def split(items: Iterable[T], key: Callable[[T], str]) -> dict[str, list[T]]:
    """``items`` by half (``key`` gives an item's id), each in the given order."""
    out: dict[str, list[T]] = {name: [] for name in HALVES}
    for item in items:
        out[half(key(item))].append(item)
    return out


def halves(ids: Iterable[object]) -> dict[str, str]:
    """``{str(id): "tuning" | "validation"}`` for a whole small set, balanced: its ids
    (compared as text) ranked by their hash, the first half tuning."""
    ranked = sorted({str(i) for i in ids}, key=lambda i: _digest(i).hex())
    cut = (len(ranked) + 1) // 2
    return {i: (TUNING if n < cut else VALIDATION) for n, i in enumerate(ranked)}


def main(argv: Sequence[str] | None = None) -> int:
    for question_id in sys.argv[1:] if argv is None else argv:
        print(f"{question_id}\t{half(question_id)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
