"""A question's words matched loosely against a sentence's words."""

from __future__ import annotations

from read_agent.extractive.question import (
    BEFORE_CHANGE,
    attendance,
    claim_of,
    reference_date,
    same_word,
)


def test_words_with_other_endings_are_the_same_word() -> None:
    assert same_word("decided", "decisions") and same_word("renew", "renewal")
    assert not same_word("pricing", "prince")


def test_an_irregular_past_is_the_same_word_as_its_verb() -> None:
    assert same_word("go", "went") and same_word("gone", "went") and same_word("meet", "met")
    assert same_word("buy", "bought") and not same_word("go", "got")


def test_a_name_in_the_other_script_is_the_same_word() -> None:
    assert same_word("прия", "priya") and same_word("глобекстэй", "globex")
    assert same_word("софиятай", "sofia") and same_word("alice", "алистай")
    # both in one script, too short to be sure, or sounding otherwise: not the same
    assert not same_word("прия", "priority") and not same_word("томтой", "tom")
    assert not same_word("долоо", "dollar")


def test_attendance_in_other_words_is_written_as_the_schema_s_verb() -> None:
    assert attendance("who was at the Initech call?", "attended", False) == (
        "who attended the Initech call?"
    )
    assert attendance("Who took part in the review?", "attended", False) == (
        "Who attended the review?"
    )
    assert attendance("Уулзалтад хэн оролцсон бэ?", "attended", False) == (
        "Уулзалтад хэн attended бэ?"
    )
    assert attendance("Тэр гэртээ суусан уу?", "attended", False) is None  # sat at home
    assert attendance("хуралд хэн суусан бэ?", "attended", False) == "хуралд хэн attended бэ?"
    assert attendance("Who joined Globex?", "attended", False) is None
    assert attendance("Who joined the review?", "attended", True) == "Who attended the review?"
    assert attendance("What was the price?", "attended", True) is None


def test_a_claim_is_read_from_what_supports_and_evidence_questions() -> None:
    assert claim_of("What supports the switch to usage-based pricing?") == (
        "the switch to usage-based pricing"
    )
    assert claim_of("What is the evidence that Globex signed?") == "Globex signed"
    assert claim_of("Which evidence supports that Bob was promoted?") == "Bob was promoted"
    assert claim_of("Үнэ өссөн гэдгийг юу нотолж байна?") == "Үнэ өссөн"
    assert claim_of("What did we decide about pricing?") is None


def test_the_day_a_question_asks_the_state_at() -> None:
    august = {"start": "2026-08-01T00:00:00+08:00", "end": "2026-09-01T00:00:00+08:00"}
    assert reference_date("What was our pricing in August?", {}, august) == "2026-08-31"
    assert reference_date("What did we think in August?", {}, august) == "2026-08-31"
    assert reference_date("pricing", {"phrase": "as of 2026-08"}, august) == "2026-08-31"
    assert reference_date("үнэ 8-р сарын байдлаар", {}, august) == "2026-08-31"
    assert reference_date("What happened in August?", {}, august) is None
    # what the answer would have been then is the state then
    for question in (
        "What would your answer have been on 2026-08-31?",
        "What would you have said if asked in August?",
        "Tell me about pricing, as you would have answered if asked on 2026-08-31.",
    ):
        assert reference_date(question, {}, august) == "2026-08-31", question
    assert reference_date("What was the price before the change?", {}, None) == BEFORE_CHANGE
    assert reference_date("Үнэ өмнө нь ямар байсан бэ?", {}, None) == BEFORE_CHANGE
