"""The shape of an extractive answer: a direct first line (when the pages answer
plainly), the evidence lines, the days a window holds, and degraded reasons in words."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from memserver.kb.words import STOPWORDS, words
from read_agent.extractive.evidence import Change
from read_agent.extractive.line import CLOSEST, Line
from read_agent.reading.lexicon import en_stem
from read_agent.tools.wire import Found

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

    lead: Line | None = None
    lines: list[Line] = field(default_factory=list)
    window: str | None = None
    firm: bool = False  # the lead is what was asked (a page's field or section): it stays

    def digest(self, notes: Sequence[str] = ()) -> Digest:
        """The answer as shown: the same sentence copied onto two pages is said once, and
        one quoting another ("Hi Maria, <it>") takes its place, the closest sentence as
        the lead too (a raw note's line never leads: then the page's closest sentence
        does, and the note's line is among the others); a line a quoted lead holds is
        not said again, nor one every word and day of which the lines above it said
        (:func:`_new_to_the_reader`); ``notes`` end it."""
        first, lines = self.lead, list(self.lines)
        if first is not None and first.tag == CLOSEST and len(first.says()) > MIN_REPEAT:
            holder = next((x for x in lines if first.says() in x.says()), None)
            if holder is not None and not holder.from_note():
                first, lines = replace(holder, tag=CLOSEST), [x for x in lines if x is not holder]
        lead = first.says() if first else ""
        quoted = lead if first is not None and first.label is not None else ""
        kept: list[tuple[str, Line]] = []  # (what it says, the line)
        for line in lines:
            said = line.says()
            if said == lead or (len(said) > MIN_REPEAT and said in quoted):
                continue
            if any(said in old for old, _ in kept):
                continue
            inside = [i for i, (old, _) in enumerate(kept) if len(old) > MIN_REPEAT and old in said]
            if inside:
                kept[inside[0]] = (said, line)
                kept = [x for i, x in enumerate(kept) if i not in inside[1:]]
            else:
                kept.append((said, line))
        shown = _new_to_the_reader(first if quoted else None, [line for _, line in kept])
        return Digest(first, shown, self.window, tuple(f"{n}." for n in notes if n))

    def text(self, notes: Sequence[str] = ()) -> str:
        return self.digest(notes).text()

    def leads_with(self, words: str) -> bool:
        """Whether the lead, as shown, starts with ``words`` (a disagreement, no sentence)."""
        return self.lead is not None and self.lead.render(bullet=False).startswith(words)


def _new_to_the_reader(lead: Line | None, lines: Sequence[Line]) -> tuple[Line, ...]:
    """``lines`` without those that tell the reader nothing new: every word and day a
    plain line says (its topical words, its numbers, its date) the quoted lead or a line
    above it already said, as a decision's "decided on: 2021-04-15" under the decision said
    with its day, or a reply quoting the mail above it. A line with a tag ("Later") or
    with pages inside it (a listing) says how things relate: it stays."""
    said: set[str] = _told(lead) if lead is not None else set()
    out = []
    for line in lines:
        told = _told(line)
        if told and told <= said and not line.tag and not line.parts:
            continue
        said |= told
        out.append(line)
    return tuple(out)


def _told(line: Line) -> set[str]:
    """A line's topical words (a light stem of each), numbers and days."""
    text = " ".join(x for x in (line.date, line.said, line.words()) if x)
    return {en_stem(w) for w in words(text) if w not in STOPWORDS and (len(w) > 2 or w.isdigit())}


@dataclass(frozen=True)
class Digest:
    """An extractive answer as it is shown: the lead, the lines kept, the window and the
    notes (whole sentences). :meth:`text` is the one text of it the CLI and HTTP show;
    :meth:`as_dict` the same objects as JSON, which the console renders itself. A bare
    answer (``quoted`` False: "no answer") is its lead alone, without the header."""

    lead: Line | None
    lines: tuple[Line, ...] = ()
    window: str | None = None
    notes: tuple[str, ...] = ()
    quoted: bool = True

    def text(self) -> str:
        out = [self.lead.render(bullet=False)] if self.lead else []
        if self.quoted:
            out.append(HEADER if not self.window else f"{HEADER} Dates: {self.window}.")
        out += [line.render() for line in self.lines]
        out.extend(f"Note: {n}" for n in self.notes)
        return "\n".join(out)

    def noted(self, note: str) -> Digest:
        """The same answer with one more note (a whole sentence) at its end."""
        return replace(self, notes=(*self.notes, note))

    def as_dict(self) -> dict[str, Any]:
        """``lead``, ``lines`` (each as :meth:`read_agent.extractive.line.Line.as_dict`),
        ``window`` and ``notes``."""
        return {
            "lead": self.lead.as_dict() if self.lead else None,
            "lines": [line.as_dict() for line in self.lines],
            "window": self.window,
            "notes": list(self.notes),
        }

    def evidence(self) -> list[dict[str, str | None]]:
        """The labelled, cited lines as records (``date``, ``text``, ``label``: direct or
        inferred, ``source``: the note that states it, ``author``, ``page``: the citation)."""
        shown = [self.lead] if self.lead else []
        return [
            {
                "date": x.date,
                "text": x.text,
                "label": x.label,
                "source": x.note() or None,
                "author": x.author or None,
                "page": x.cited[0],
            }
            for x in [*shown, *self.lines]
            if x.label and x.cited
        ]


def bare(sentence: str) -> Digest:
    """An answer that is one sentence: no page answers, or the search failed."""
    return Digest(Line(sentence), quoted=False)


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


def ingesting(result: Found) -> str | None:
    """``12/28 notes ingested`` while a ``kb_query`` result says ingest is running (or
    "notes are being ingested" for a caller not shown the counts), else None."""
    if "ingest_in_progress" not in result.degraded:
        return None
    return result.ingest or "notes are being ingested"


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
