"""A question's words matched loosely against a sentence's words."""

from __future__ import annotations

from read_agent.extractive.question import same_word


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
