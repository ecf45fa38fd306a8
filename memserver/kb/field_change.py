"""A field's change as a timeline entry, written by the ingest agent's merge and read
back by the read agent, in one format: ``role changed from “A” to “B”``; a value that
ends without a new one (another person now holds a one-holder role): ``role “COO”
ended: Marcus Hale is now Globex's COO``.

``show`` is a field value as a person reads it (lists joined, 120000.0 as 120000).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_CHANGE = re.compile(r"^(\w+) changed from “(.*)” to “(.*)”$")


def show(value: Any) -> str:
    """A value as a person reads it: lists joined, 120000.0 as 120000."""
    if isinstance(value, list | tuple):
        return ", ".join(show(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return " ".join(str(value).split())


@dataclass(frozen=True)
class FieldChange:
    field: str
    old: str
    new: str

    def text(self) -> str:
        return f"{self.field} changed from “{self.old}” to “{self.new}”"


def change_text(field: str, old: Any, new: Any) -> str:
    """The timeline text of a field that changed from ``old`` to ``new``."""
    return FieldChange(field, show(old), show(new)).text()


def ended_text(field: str, old: Any, why: str) -> str:
    """The timeline text of a field whose value ``old`` ended (it is empty now), and why."""
    return f"{field} “{show(old)}” ended: {why}"


def read_change(text: str) -> FieldChange | None:
    """The change a timeline text records, or None when it records none."""
    m = _CHANGE.match(text)
    return FieldChange(m.group(1), m.group(2), m.group(3)) if m else None
