"""The closest answer written in the other script: "How many drivers took part in the
Nomin Trade pilot?" is answered by "12 машин, 15 жолооч оролцоно." Words cannot match
across scripts, so when no sentence holds half the words asked, the embedder (the
multilingual one the knowledge base is indexed with) compares the question's words with
every sentence that gives the value asked for (a count, a figure, a day). Only where its
nearest is one whose words the question's could never match does it lead: a sentence in
the question's own script that holds few of its words was rightly passed over."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from memserver.kb.words import is_cyrillic, words
from read_agent.extractive.evidence import Evidence, days_said
from read_agent.extractive.question import matched
from read_agent.reading import Reading, Wants
from read_agent.reading.fields import Embed

TYPED = (Wants.COUNT, Wants.AMOUNT, Wants.WHEN)  # the answers a sentence gives or not
COMPARED = 12  # at most this many sentences are embedded


def in_other_script(
    reading: Reading,
    answers: Sequence[Evidence],
    said_of: Callable[[Evidence], bool],
    embed: Embed | None,
) -> Evidence | None:
    """Of ``answers`` (the sentences giving the type of value asked, in the ranker's
    order), the one nearest the question's words in meaning, when it is written wholly
    in the other script and said of the subject asked about; else None."""
    if embed is None or reading.wants not in TYPED or not reading.terms:
        return None
    cyrillic = [is_cyrillic(t) for t in reading.terms]
    if len(set(cyrillic)) != 1:
        return None  # the question mixes scripts: its words match either
    asks_cyrillic = cyrillic[0]
    shown = [
        p
        for p in answers
        if p.kind != "source"  # what a note says is quoted below, never put forward
        and (not reading.subjects or said_of(p))
        and (reading.wants != Wants.WHEN or days_said(p.text))
    ][:COMPARED]
    if not shown:
        return None
    # the words asked that no sentence in the question's own script says: what the
    # other script must say ("trucks took part", not the "pilot" English lines say too)
    own_script = [p for p in shown if not _other_script(p, asks_cyrillic)]
    held = {t for p in own_script for t in matched(reading.terms, words(p.text))}
    missing = [t for t in reading.terms if t not in held] or list(reading.terms)
    query, vectors = embed(" ".join(missing), [p.text for p in shown])
    scores = [float(np.dot(query, v)) for v in vectors]
    nearest = shown[max(range(len(shown)), key=lambda i: scores[i])]
    return nearest if _other_script(nearest, asks_cyrillic) else None


def _other_script(piece: Evidence, asks_cyrillic: bool) -> bool:
    """Whether every word of the piece is written in the script the question is not."""
    said = [w for w in words(piece.text) if w.isalpha()]
    return bool(said) and not any(is_cyrillic(w) == asks_cyrillic for w in said)
