"""A question of several parts ("who leads it now, since when, and what may they
decide?") is read part by part: the question is cut at its commas and joining words, a
stretch without an asking word belongs to the part before it, and a part without words
of its own ("since when") adds none."""

from __future__ import annotations

import pytest

from read_agent.reading import Context, read


def parts(question: str) -> tuple[tuple[str, ...], ...]:
    return read(question, Context()).parts


def test_each_part_has_its_own_words() -> None:
    got = parts(
        "Who leads the usage metering project now, since when, and what may the lead decide?"
    )
    assert got == (("leads", "usage", "metering", "project", "lead"), ("leads", "lead", "decide"))


def test_a_stretch_without_an_asking_word_joins_the_part_before_it() -> None:
    got = parts("What did we agree on pricing and packaging, and who signed the contract?")
    assert got == (("agree", "pricing", "packaging"), ("signed", "contract"))


def test_mongolian_parts() -> None:
    got = parts("Номин Трейдтэй хийсэн сүүлийн уулзалт хэзээ болсон бэ, юу шийдсэн бэ?")
    assert len(got) == 2 and got[1] == ("шийдсэн",)


@pytest.mark.parametrize(
    "question",
    [
        "What is our pricing and packaging?",
        "Who owns the Mongolian Localization project?",
        "When was the pilot review, and since when?",
    ],
)
def test_one_part_is_no_parts(question: str) -> None:
    assert parts(question) == ()
