"""Corrections a note states, read by the rules extractor (no model): a later record
that amends, clarifies or revises an earlier one.

Two kinds, each a :class:`~ingest_agent.records.DecisionRef` the agent matches to the
earlier page and records on both (:mod:`ingest_agent.pages.reversals`):

- **an amended decision** (status ``amended``): a decision of the note whose own words
  say it corrects an earlier record ("Update the 2026-07-15 pricing decision to correct
  the earlier misunderstanding"), or, when none does, a sentence of the note that says
  so and names the earlier record ("this clarification supersedes the July 2026
  decision"), which then belongs to the note's first decision;
- **a revised root cause** (status ``revised``): a note whose own page is an incident
  (a postmortem) saying what the root cause of an earlier incident was after all ("The
  actual root cause of the 2026-10-02 tracking outage was an expired certificate, not a
  database overload").

The earlier record is named by a day: the earliest the sentence gives before the newer
record's day ("during the 2026-11-05 review they clarified that the 2026-09-08
disagreement ..." corrects the record of 2026-09-08), else the only such day the whole
note mentions (a correction note names the record it corrects, "Review of the
2026-07-15 decision record"). Without a day there is no
reference: a correction that names nothing changes nothing. The words that pick the
earlier page among those of that day are those of every sentence of the note naming
that day (:mod:`ingest_agent.extract.correction_words` reads the cues).
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from ingest_agent.extract import correction_words as cues
from ingest_agent.extract.dates import day_mentions
from ingest_agent.extract.page_builds import PageBuild
from ingest_agent.extract.text import sentences
from ingest_agent.records import AMENDED, REVISED, DecisionRef, Source, cause_field
from memserver.kb.page import as_date
from memserver.kb.schema import FolderSpec, Schema

CONTEXT_CHARS = 600  # of the note's words about the earlier day, kept with the reference


def amendment(
    folder: FolderSpec,
    source: Source,
    build: PageBuild,
    decision_text: str,
    note_text: str,
    tz: ZoneInfo,
    *,
    whole_note: bool = False,
) -> DecisionRef | None:
    """The earlier decision ``build`` amends: from a cue in its own words, or with
    ``whole_note`` from a sentence of the note that names the earlier record."""
    assert folder.date_field is not None
    day = as_date(build.fields.get(folder.date_field)) or source.doc_date
    for sentence in sentences(decision_text if not whole_note else note_text):
        if cues.correction(sentence) is None:
            continue
        named = _days_before(sentence, day, source.doc_date, tz)
        if whole_note and not named and not cues.names_earlier(sentence):
            continue
        on = min(named) if named else _only_day(note_text, day, source.doc_date, tz)
        if on is None:
            continue
        why = build.fields.get("rationale")
        return DecisionRef(
            folder.name, build.title, day, None, on,
            context(note_text, sentence, on, source.doc_date, tz), AMENDED,
            str(why or ""), source.path,
        )  # fmt: skip
    return None


def revisions(
    schema: Schema, source: Source, primary: PageBuild | None, note_text: str
) -> list[DecisionRef]:
    """The earlier incident whose root cause the note's own incident page revises."""
    if primary is None or cause_field(primary.folder) is None:
        return []
    folder = primary.folder
    assert folder.date_field is not None
    day = as_date(primary.fields.get(folder.date_field)) or source.doc_date
    for sentence in sentences(note_text):
        cause = cues.revised_cause(sentence)
        if cause is None or not cause.now:
            continue
        named = _days_before(sentence, day, source.doc_date, schema.tz)
        on = min(named) if named else _only_day(note_text, day, source.doc_date, schema.tz)
        if on is None:
            continue
        words = context(note_text, sentence, on, source.doc_date, schema.tz)
        ref = DecisionRef(
            folder.name, primary.title, day, None, on, words, REVISED, cause.now, source.path,
            earlier=cause.before,
        )  # fmt: skip
        return [ref]
    return []


def context(note_text: str, sentence: str, on: dt.date, doc_date: dt.date, tz: ZoneInfo) -> str:
    """The words naming the earlier record: the note's sentences naming its day (the
    sentence of the correction among them when it does; its other words are what holds
    now, not what held then)."""
    said = []
    for other in dict.fromkeys([sentence, *sentences(note_text)]):
        if any(m.day == on for m in day_mentions(other, doc_date, tz)):
            said.append(other)
    text = " ".join(s.replace("“", "").replace("”", "").replace(";", ",") for s in said)
    return text[:CONTEXT_CHARS]


def _days_before(sentence: str, day: dt.date, doc_date: dt.date, tz: ZoneInfo) -> list[dt.date]:
    """The days ``sentence`` writes out before ``day`` (not deadlines), in order; a
    relative day ("yesterday" in a chat line) names no record."""
    return [
        m.day
        for m in day_mentions(sentence, doc_date, tz)
        if m.end > 0 and m.day < day and not m.deadline
    ]


def _only_day(note_text: str, day: dt.date, doc_date: dt.date, tz: ZoneInfo) -> dt.date | None:
    """The one day before ``day`` that the note names anywhere (None for none or two)."""
    found: set[dt.date] = set()
    for sentence in sentences(note_text):
        found.update(_days_before(sentence, day, doc_date, tz))
    return found.pop() if len(found) == 1 else None
