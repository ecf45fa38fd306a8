"""A question for how many of something wants a count, not a price: "how many",
"хэдэн"; "хэдэн төгрөг" (how many tögrög) is a price, "хэдэнд" (at what time) a time,
though "хэдэн" reads as "хэдэнд" with an ending."""

from __future__ import annotations

import pytest

from read_agent.reading import Context, Wants, read


@pytest.mark.parametrize(
    ("question", "wants"),
    [
        ("How many drivers joined the app in wave one?", Wants.COUNT),
        ("What is the number of dispatchers at Nomin Trade?", Wants.COUNT),
        ("Номин Трейд хэдэн ачааны машинтай вэ?", Wants.COUNT),
        ("Пилотын төлбөр хэдэн төгрөг вэ?", Wants.AMOUNT),
        ("How much did the Globex pilot cost?", Wants.AMOUNT),
        ("Уулзалт хэдэнд болох вэ?", Wants.WHEN),
        ("When is the Nomin Trade contract meeting?", Wants.WHEN),
    ],
)
def test_the_answer_type(question: str, wants: Wants) -> None:
    assert read(question, Context()).wants is wants
