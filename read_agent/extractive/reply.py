"""The shape of an extractive answer: a direct first line (when the pages answer
plainly), the evidence lines, the days a window holds, and degraded reasons in words."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from read_agent.extractive.evidence import Change

HEADER = (
    "Extractive answer (no language model): the sentences below are quoted from the pages "
    "(direct: a note states it; inferred: the memory's pages)."
)
NO_ANSWER = "The knowledge base has no answer to this question (the search found no pages)."
MIN_REPEAT = 40  # characters a line must say to count as repeated inside a longer one
NO_SENTENCE = "The knowledge base has no sentence that answers this directly."
NOTES = {
    "ingest_in_progress": "the knowledge base is still being ingested; newer notes may be "
    "missing from this answer",
    "embedding_pending": "some pages are not embedded yet; matches by meaning may be missing",
    "embedding_fallback_hash": "the server runs the hash embedder (words only), so matches "
    "by meaning may be missing",
    "no_llm": "",
    "llm_unavailable": "the language model did not answer, so this answer is extractive",
    "llm_timeout": "the language model did not answer in time",
    "budget_exceeded": "the token budget is spent, so this answer is extractive",
}


@dataclass
class Reply:
    """An answer's lead, its evidence lines and the window it covered (if any)."""

    lead: str | None = None
    lines: list[str] = field(default_factory=list)
    window: str | None = None
    firm: bool = False  # the lead is what was asked (a page's field or section): it stays

    def text(self, notes: Sequence[str]) -> str:
        out = [self.lead] if self.lead else []
        out.append(HEADER if not self.window else f"{HEADER} Dates: {self.window}.")
        lead = _said(self.lead) if self.lead else None
        kept: list[tuple[str, str]] = []  # (what it says, the line)
        for line in self.lines:  # the same sentence copied onto two pages is said once;
            said = _said(line)  # one quoting another ("Hi Maya, <it>") takes its place
            if said == lead or any(said in old for old, _ in kept):
                continue
            inside = [i for i, (old, _) in enumerate(kept) if len(old) > MIN_REPEAT and old in said]
            if inside:
                kept[inside[0]] = (said, line)
                kept = [x for i, x in enumerate(kept) if i not in inside[1:]]
            else:
                kept.append((said, line))
        out += [line for _, line in kept]
        out.extend(f"Note: {n}." for n in notes if n)
        return "\n".join(out)


def _said(line: str) -> str:
    """A line without its bullet, date and citation: what it says."""
    text = re.sub(r"\s*\[[^\]]+\]$", "", line.removeprefix("- "))
    text = re.sub(r"\s*\((?:direct|inferred)[^)]*\)$", "", text)
    return " ".join(re.sub(r"^(?:Later: )?\d{4}-\d{2}-\d{2} · ", "", text).split()).lower()


def not_found(subjects: Sequence[str], words: Sequence[str], closest: bool) -> str:
    """The lead when no sentence answers: that plainly, then what was searched for (the
    subjects the question names; its other words), then whether the closest follow."""
    asked = "; ".join(x for x in (", ".join(subjects), ", ".join(words)) if x)
    searched = f" Searched for: {asked}." if asked else ""
    return NO_SENTENCE + searched + (" The closest:" if closest else "")


def notes_for(reasons: Sequence[Any], progress: str | None = None) -> list[str]:
    """Degraded reasons as words for the end of an answer (routing fallbacks and the
    answer's own mode are not news to the reader); ``progress`` is how far ingest is
    ("12/28 notes ingested", from ``kb_query``'s ``ingest``)."""
    out = []
    for reason in dict.fromkeys(str(r) for r in reasons):
        note = NOTES.get(reason, f"the search reported {reason}")
        if reason == "ingest_in_progress" and progress:
            note = (
                f"the knowledge base is still being ingested ({progress}); newer notes may "
                "be missing from this answer"
            )
        if note and not reason.startswith("routing_"):
            out.append(note)
    return out


def ingesting(result: Mapping[str, Any]) -> str | None:
    """``12/28 notes ingested`` while a ``kb_query`` result says ingest is running (or
    "notes are being ingested" for a caller not shown the counts), else None."""
    if "ingest_in_progress" not in (result.get("degraded") or ()):
        return None
    progress = result.get("ingest")
    summary = progress.get("summary") if isinstance(progress, Mapping) else None
    return summary if isinstance(summary, str) and summary else "notes are being ingested"


def not_yet(progress: str) -> str:
    """The answer when nothing was found while ingest is still running."""
    return (
        "The knowledge base has no answer to this question yet: ingest is still running "
        f"({progress}). Ask again when it has finished."
    )


def since(change: Change | None) -> str:
    if change is None:
        return ""
    when = f"since {change.date}; " if change.date else ""
    return f" ({when}before: {change.old})"


def clean(text: str) -> str:
    return " ".join(re.sub(r"\s*\[source: [^\]]*\]\s*$", "", text).split())
