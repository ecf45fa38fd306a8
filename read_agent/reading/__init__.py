"""The one reading of a question: what it asks, typed, read once and by meaning.

``read(question, context)`` returns a :class:`~read_agent.reading.model.Reading`: the
subject pages (the search's title and alias matches, names in either script, or the
conversation's earlier subject; not one said only inside a longer subject's name), the schema field or section asked about (matched by
the field's own words and the lexicon's meanings, the answer's type, and an embedder for
what the words leave open: :mod:`read_agent.reading.fields`), the kinds of question
(decision, change, as of, evidence, agreement ...), the answer's type (when, who, how
much), time (the search's reading of it, by :mod:`memserver.timeparse`) and the topical
words. Every answer path takes the reading; nothing downstream reads the question's
words to decide what it asks.

Each language's words are data in ``lang/<code>.yaml`` (:mod:`read_agent.reading.lexicon`):
a third language is one more file. Nothing here is keyed to how one question is worded.
It imports the page model and schema (``memserver.kb``) and nothing of the extractive
answer.
"""

from read_agent.reading.model import FieldAsked, Kind, Reading, Subject, Wants
from read_agent.reading.read import (
    BEFORE_CHANGE,
    Context,
    name_candidates,
    name_spans,
    read,
    section_of,
    topical,
)

__all__ = [
    "BEFORE_CHANGE",
    "Context",
    "FieldAsked",
    "Kind",
    "Reading",
    "Subject",
    "Wants",
    "name_candidates",
    "name_spans",
    "read",
    "section_of",
    "topical",
]
