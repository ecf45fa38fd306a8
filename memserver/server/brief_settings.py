"""The brief's settings (:mod:`memserver.server.brief`, :mod:`memserver.server.brief_evidence`),
one frozen object: the same for all data (``bench/README.md``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BriefSettings:
    default_budget: int = 1_500  # tokens (characters / 4, as the search counts them)
    max_budget: int = 6_000
    min_budget: int = 200
    # The search a brief is built from returns this many results at most: pages and
    # notes each have half of it (search.kinds.quotas), so the pages weighed as subjects
    # are as many as a search of pages alone returns (the balanced mode's 20).
    search_limit: int = 40
    # ... of whose notes the first this many are quoted (a search's share of notes):
    # more would push the subjects' own timeline lines out of the budget.
    search_notes: int = 10
    max_subjects: int = 3
    max_chain: int = 4  # pages a supersession chain adds beyond the subjects
    chain_words: int = 2  # of the question's words a subject says before its chain is followed
    candidates: int = 6  # the best page results weighed as subjects
    neighbour_events: int = 8  # events linking to entity results weighed when few events were found
    max_earlier: int = 3  # earlier values shown per subject, newest first
    max_reason_chars: int = 160
    sentences_per_note: int = 2  # the first subject's own notes; one from every other note
    max_sentence_chars: int = 300
    sibling_leads: int = 4  # the search's notes whose same-day notes follow them


BRIEF = BriefSettings()
