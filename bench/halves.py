"""Every set tuned on is split into a tuning half and a validation half, fixed by id.

``halves(ids)`` ranks a set's ids by the SHA-256 of their text (a question's number, an
OrgMemBench id, a LoCoMo question's key) and gives the first half to tuning, the rest to
validation: the same split on every machine and in every run, decided before any miss
is read, and balanced. A rewording belongs to its original's half. Read misses on the
tuning half only; keep a change only if the validation half does not fall.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

TUNE = "tune"
VALIDATE = "validate"


def _key(item_id: object) -> str:
    return hashlib.sha256(str(item_id).encode("utf-8")).hexdigest()


def halves(ids: Iterable[object]) -> dict[str, str]:
    """``{str(id): "tune" | "validate"}`` for a whole set (ids compared as text)."""
    ranked = sorted({str(i) for i in ids}, key=_key)
    cut = (len(ranked) + 1) // 2
    return {i: (TUNE if n < cut else VALIDATE) for n, i in enumerate(ranked)}
