"""Follow-ups without a model: pronouns, elliptic questions and a missing subject from the
previous turn."""

from __future__ import annotations

from read_agent.reading.conversation import (
    Prior,
    Turn,
    prior_ids,
    prior_question,
    rewrite,
    then_as_of,
)

BOB = Prior("people/bob-martinez", "Bob Martinez", ("Bob",), person=True)
GLOBEX = Prior("companies/globex", "Globex")
MEETING = Prior(
    "meetings/2026-11-12-globex-integration-review",
    "Globex integration review",
    linked=("Bob Martinez", "Globex"),
)


def test_a_pronoun_is_the_person_or_thing_the_previous_answer_cited() -> None:
    assert rewrite("and who does he report to?", "Who is Bob?", [GLOBEX, BOB]) == (
        "Who does Bob Martinez report to?"
    )
    assert rewrite("and his manager?", None, [BOB]) == "Bob Martinez's manager?"
    assert rewrite("Тэр хэнд тайлагнадаг вэ?", None, [BOB]) == "Bob Martinez хэнд тайлагнадаг вэ?"
    assert rewrite("Түүний албан тушаал?", None, [BOB]) == "Bob Martinez албан тушаал?"
    assert rewrite("when did it become a customer?", None, [BOB, GLOBEX]) == (
        "When did Globex become a customer?"
    )
    # no person among the previous pages: nothing to resolve "he" with
    assert rewrite("who does he report to?", None, [GLOBEX]) is None
    # a question that names its own entity is not a follow-up
    assert rewrite("what is his role, Alex Kim's?", None, [BOB]) is None


def test_an_elliptic_question_repeats_the_previous_one_with_the_new_name() -> None:
    asked = "When was the latest meeting with Globex?"
    for question in ("what about Initech?", "and Initech?", "Харин Initech?", "Initech-ийн хувьд?"):
        assert rewrite(question, asked, [MEETING]) == (
            "When was the latest meeting with Initech?"
        ), question
    assert rewrite("and Alice?", "Who does Bob report to?", [BOB]) == "Who does Alice report to?"
    # nothing of the previous turn is named in the previous question: left as asked
    assert rewrite("what about Initech?", "What happened last week?", [BOB]) is None
    assert rewrite("What is Initech's contract value?", asked, [MEETING]) is None


def test_the_previous_turn_is_read_from_the_history() -> None:
    history = [
        Turn("user", "Who is Bob?"),
        Turn("assistant", "Bob Martinez — role: VP [people/bob-martinez]\n- x [companies/globex]"),
    ]
    assert prior_ids(history) == ["people/bob-martinez", "companies/globex"]
    assert prior_question(history) == "Who is Bob?"
    assert prior_ids([]) == [] and prior_question([]) is None
    assert rewrite("and who does he report to?", None, []) is None


def test_there_and_a_clause_without_a_subject_are_the_place_the_previous_answer_cited() -> None:
    meeting = Prior(
        "meetings/2026-10-20-initech-renewal-call", "Initech renewal call", linked=("Initech",)
    )
    previous = "who attended the Initech meeting in October?"
    assert (
        rewrite("and what was decided there?", previous, [meeting])
        == "What was decided at Initech renewal call?"
    )
    assert rewrite("тэнд юу шийдсэн бэ?", previous, [meeting]) == (
        "Initech renewal call юу шийдсэн бэ?"
    )
    # Not a place: "there" that only says something exists.
    assert rewrite("was there a follow-up?", previous, [meeting]) is None
    # A clause after "and" names nothing of its own: asked of the place the answer cited.
    assert rewrite("and what was decided?", previous, [meeting]) == (
        "Initech renewal call: What was decided?"
    )
    assert rewrite("Харин юу шийдсэн бэ?", previous, [meeting]) == (
        "Initech renewal call: Юу шийдсэн бэ?"
    )
    # with no place among the previous pages, a clause stays as asked
    assert rewrite("and what was decided?", previous, [BOB]) is None
    # A name after "and" is still an elliptic question.
    assert rewrite("and Globex?", previous, [meeting]) == (
        "who attended the Globex meeting in October?"
    )


def test_then_is_the_day_the_previous_answer_led_with() -> None:
    history = [
        Turn("user", "What is our current pricing?"),
        Turn("assistant", "2026-07-15 · Acme Track is priced per seat. [decisions/x]\n- more"),
    ]
    assert then_as_of("what was the price then?", history) == "what was the price as of 2026-07-15?"
    # nothing of its own to ask about: the previous question, as of that day
    for bare in ("what did we think then?", "Тэр үед юу гэж бодож байсан бэ?"):
        assert then_as_of(bare, history) == "What is our current pricing as of 2026-07-15?"
    assert then_as_of("and then what?", history) is None
    assert then_as_of("what happened?", history) is None
    undated = [Turn("user", "Who is Bob?"), Turn("assistant", "Bob Martinez — role: VP")]
    assert then_as_of("what did we think then?", undated) is None
