"""The evidence order when a question asks for a thing by its kind ("which storage tier
did ..."): a sentence that names that kind and holds half the question's words comes
before one that holds more of the other words but names nothing of the kind."""

from __future__ import annotations

from read_agent.extractive.evidence import Evidence, names_focus, score
from read_agent.extractive.ranking import ordered
from read_agent.reading import Context, read

QUESTION = "Which storage tier did the nightly archive job write to?"
BUSY = Evidence(
    "The nightly archive job failed twice and the archive job was rewritten.",
    "a",
    "",
    None,
    "section",
)
KIND = Evidence("It wrote everything to the cold storage tier.", "a", "", None, "section")
BARE = Evidence("Prices per tier are on the storage page.", "b", "", None, "section")


def _ranked(question: str, *pieces: Evidence) -> list[Evidence]:
    reading = read(question, Context())
    scored = [(round(c, 3), v, p) for p in pieces for v, c in [score(p, reading)]]
    return ordered(scored, reading)


def test_the_sentence_naming_the_kind_comes_first() -> None:
    assert read(QUESTION, Context()).focus == ("storage", "tier")
    assert _ranked(QUESTION, BUSY, KIND) == [KIND, BUSY]


def test_the_kind_counts_twice_in_coverage() -> None:
    reading = read(QUESTION, Context())
    _, coverage = score(KIND, reading)
    # storage, tier (twice each) and write, of nightly, archive, job, write + the kind
    assert coverage == 5 / (len(reading.terms) + len(reading.focus))
    assert not names_focus(BUSY, reading)


def test_the_kind_alone_is_not_read_as_naming_it() -> None:
    # "storage" and "tier" but nothing else asked: the kind may be said of anything
    reading = read(QUESTION, Context())
    assert not names_focus(BARE, reading)
    assert names_focus(KIND, reading)


def test_without_a_kind_the_order_is_by_score() -> None:
    question = "When did the nightly archive job write to the storage tier?"
    assert read(question, Context()).focus == ()
    assert _ranked(question, BUSY, KIND)[0] is BUSY
