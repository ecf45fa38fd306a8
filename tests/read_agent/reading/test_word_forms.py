"""One word in its forms, and a name said in another order: an English verb's bare form
and its past are one word ("settle", "settled"), a noun and its verb of one stem too
("price", "pricing"); a page's title of several words said in another order with only
stop words between them stands where those words do."""

from __future__ import annotations

import pytest

from memserver.kb.schema import load_schema
from read_agent.reading import Context, Subject, read
from read_agent.reading.lexicon import same, tokens
from read_agent.reading.read import name_spans
from tests.fixtures.server import EXAMPLE_KB

SCHEMA = load_schema(EXAMPLE_KB / "schema.yaml")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("settle", "settled"),
        ("decide", "decided"),
        ("agree", "agreed"),
        ("price", "pricing"),
        ("charge", "charging"),
        ("close", "closes"),
    ],
)
def test_a_silent_e_does_not_part_a_word_from_its_forms(a: str, b: str) -> None:
    assert same(a, b) and same(b, a)


@pytest.mark.parametrize(("a", "b"), [("use", "us"), ("the", "th"), ("settle", "setting")])
def test_short_and_other_words_stay_apart(a: str, b: str) -> None:
    assert not same(a, b)


def test_a_title_said_in_another_order_stands_where_its_words_do() -> None:
    q = tokens("who sat in on the review of the globex pilot")
    assert name_spans(q, ["Globex pilot review"]) == [range(5, 10)]
    # the contiguous name is found as before, and a name's words spread among other
    # topical words are no name
    assert name_spans(tokens("the globex pilot review notes"), ["Globex pilot review"]) == [
        range(1, 4)
    ]
    assert (
        name_spans(tokens("a review of pricing for the globex pilot"), ["Globex pilot review"])
        == []
    )


def test_a_name_s_words_in_another_order_hide_the_shorter_name_inside_them() -> None:
    review = ("meetings/2026-10-14-globex-pilot-review", "Globex pilot review", "meetings")
    globex = ("companies/globex", "Globex", "companies")
    subjects = [Subject(*review), Subject(*globex)]
    reading = read(
        "Who sat in on the review of the Globex pilot?",
        Context(schema=SCHEMA, subjects=subjects),
    )
    assert [s.id for s in reading.subjects] == [review[0]]
    assert reading.field is not None and reading.field.name == "attendees"


def test_the_topic_leaves_out_the_words_of_a_kind_of_page() -> None:
    reading = read("Which rates did we settle on?", Context(schema=SCHEMA))
    assert "decisions" in reading.meant
    assert reading.topic == ("rates",) and "settle" in reading.terms
    meeting = read("What was our meeting on fleet telemetry?", Context(schema=SCHEMA))
    assert set(meeting.topic) == {"fleet", "telemetry"}


def test_a_mongolian_question_word_is_no_topic() -> None:
    # "хэд" (how much, how many) asks for a figure; it names nothing
    reading = read("Пилотын төлбөр хэд вэ?", Context(schema=SCHEMA))
    assert "хэд" not in reading.terms and "төлбөр" in reading.terms


def test_a_phrase_asking_for_a_figure_is_no_topic() -> None:
    reading = read("How large is the monthly minimum?", Context(schema=SCHEMA))
    assert reading.terms == ("monthly", "minimum")
    # a figure's own word is the topic
    assert "price" in read("What is the price?", Context(schema=SCHEMA)).terms
