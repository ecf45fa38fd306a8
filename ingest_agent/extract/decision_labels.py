"""A Decisions section written as one labelled record, read without a model::

    ## Decision
    - **Date:** 2026-10-07 (pricing review)
    - **Participants:** Maria Lopez & Alex Kim
    - **Outcome:** Usage-based pricing replaces per-seat pricing.
    - **Reason:** Warehouse crews share logins, so seats say nothing of use.

is one decision (its outcome), decided on that date by those people, for that reason,
not four decisions titled "Date", "Participants", "Outcome" and "Reason". A section is
such a record when an item is labelled as the outcome and another with one of the other
labels below; the labels are read bold or plain, English and Mongolian.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ingest_agent.names import norm

OUTCOME = frozenset(
    {"outcome", "decision", "decided", "resolution", "result", "final decision", "шийдвэр"}
)
DAY = frozenset({"date", "decided on", "decision date", "when", "огноо"})
WHO = frozenset(
    {"participants", "decided by", "approved by", "deciders", "decision makers",
     "approvers", "шийдвэр гаргасан", "оролцогчид"}
)  # fmt: skip
WHY = frozenset(
    {"reason", "reasons", "rationale", "why", "driver", "drivers", "deciding factor",
     "because", "шалтгаан"}
)  # fmt: skip
ALTERNATIVES = frozenset(
    {"alternatives", "alternatives considered", "options", "options considered", "considered",
     "хувилбарууд"}
)  # fmt: skip
_LABELS = OUTCOME | DAY | WHO | WHY | ALTERNATIVES
_BOLD = re.compile(r"^\*\*(?P<label>[^*]{1,40}?)\s*:?\s*\*\*\s*:?\s*(?P<value>.*)$")
_PLAIN = re.compile(r"^(?P<label>[^:*]{1,40}):\s+(?P<value>.+)$")
_IDS = re.compile(r"\s*\((?:[A-Z]{1,3}[‐-―-]\d+[^)]*)\)")  # "Alex Kim (P-0012)"
_LIST = re.compile(r"\s*(?:;|,|\bor\b|\bvs\.?\b)\s*", re.IGNORECASE)


@dataclass
class Record:
    """The labelled values of a decision record (plain text, as written)."""

    outcome: str
    day: str = ""
    who: str = ""
    why: str = ""
    alternatives: list[str] = field(default_factory=list)
    rest: list[str] = field(default_factory=list)  # the section's other items

    @property
    def attribution(self) -> str:
        """The deciders in words the deciders reader knows ("Decided by X & Y")."""
        return f"Decided by {self.who.rstrip(' .')}." if self.who else ""


def label_of(item: str) -> tuple[str, str] | None:
    """(label, value) of a labelled item when the label is a decision record's."""
    match = _BOLD.match(item.strip()) or _PLAIN.match(item.strip())
    if match is None:
        return None
    label = norm(match.group("label").replace("*", ""))
    return (label, match.group("value").strip()) if label in _LABELS else None


def record(items: Sequence[str]) -> Record | None:
    """The record the section's items are, or None when they are not one."""
    labelled = [(raw, label_of(raw)) for raw in items]
    found = {got[0]: got[1] for _, got in labelled if got is not None}
    outcome = next((found[k] for k in found if k in OUTCOME and found[k]), None)
    if outcome is None or len(found) < 2:
        return None
    out = Record(outcome=_plain(outcome))
    for label, value in found.items():
        value = _plain(value)
        if label in DAY:
            out.day = value
        elif label in WHO:
            out.who = _IDS.sub("", value)
        elif label in WHY:
            out.why = value.rstrip(" .")
        elif label in ALTERNATIVES:
            out.alternatives = [a.strip(" .") for a in _LIST.split(value) if a.strip(" .")]
    out.rest = [_plain(raw) for raw, got in labelled if got is None]
    return out


def _plain(text: str) -> str:
    return " ".join(text.replace("**", "").split())
