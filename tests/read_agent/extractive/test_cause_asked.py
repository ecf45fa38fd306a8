"""A question asking what caused something ("what broke the uploads?") asks for a cause:
the cause meaning's words are its focus, so a record's "Root cause:" or a sentence
saying "because" ranks with the sentences holding more of the question's other words,
though it holds none of them ("what broke" is never written in the note)."""

from __future__ import annotations

from read_agent.extractive.evidence import Evidence, score
from read_agent.extractive.ranking import ordered
from read_agent.reading import Context, Wants, read
from read_agent.reading.lexicon import lexicon

QUESTION = "What broke the nightly batch upload of shipment files?"
ISSUE = Evidence(
    "Issue: the nightly batch upload of shipment files fails after three attempts.",
    "a",
    "",
    None,
    "section",
)
CAUSE = Evidence(
    "Root cause: the token service returned 500 during a database lock.", "a", "", None, "section"
)
OTHER = Evidence("Shipment volumes grew by a third this quarter.", "b", "", None, "section")
ASIDE = Evidence("Files are uploaded by the nightly job.", "b", "", None, "section")


def _ranked(question: str, *pieces: Evidence) -> list[Evidence]:
    reading = read(question, Context())
    scored = [(round(c, 3), v, p) for p in pieces for v, c in [score(p, reading)]]
    return [p for p in ordered(scored, reading) if score(p, reading)[1] > 0]


def test_a_question_of_what_broke_something_asks_for_its_cause() -> None:
    assert read(QUESTION, Context()).focus == ("broke",)
    assert read("What was the root cause of the outage?", Context()).focus == ("cause",)
    cause = lexicon().meaning("cause")
    assert cause is not None and cause.asked and "шалтгаан" in cause.words


def test_the_cause_ranks_before_sentences_holding_one_other_word_asked() -> None:
    ranked = _ranked(QUESTION, OTHER, ASIDE, CAUSE, ISSUE)
    assert ranked[0] is ISSUE  # it holds the most words asked
    assert ranked.index(CAUSE) < ranked.index(OTHER)
    # without the cause asked, the root cause holds no word of the question
    assert CAUSE not in _ranked("When did the nightly batch upload of shipment files fail?", CAUSE)


WHY = Evidence(
    "Why: per-seat pricing says nothing about crews sharing tablets.", "c", "", None, "section"
)


def test_a_why_question_asks_for_a_cause_in_either_language() -> None:
    # "why" says no word of the cause, yet asks for it: a sentence saying "because",
    # "Root cause:" or "Why:" is preferred among those holding the words asked, though no
    # sentence has to say one (the cause is no term, no focus, no topic)
    for question in ("Why did we drop per-seat pricing?", "Яагаад үнийн загвараа өөрчилсөн бэ?"):
        reading = read(question, Context())
        assert reading.unsaid == ("cause",), reading
        assert "cause" not in (*reading.terms, *reading.focus, *reading.topic), reading
    seats = Evidence("Per-seat pricing is simple to explain.", "d", "", None, "section")
    ranked = _ranked("Why did we drop per-seat pricing?", OTHER, seats, WHY, ASIDE)
    assert ranked[:2] == [WHY, seats], ranked
    # a price it names is its topic, not the answer's type: a cause is asked, no figure
    assert read("Why did Globex ask for per-shipment pricing?", Context()).wants == Wants.WHAT
    assert read("What is the per-shipment price?", Context()).wants == Wants.AMOUNT
    # a question naming the cause is read as before
    assert read("What was the root cause of the outage?", Context()).terms.count("cause") == 1
