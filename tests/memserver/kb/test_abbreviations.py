"""Abbreviations and the words they stand for, compared alike by the search and the read
agent: each direction, the words' endings, the short words joining a phrase, and no
abbreviation from words that only share a phrase's start."""

from __future__ import annotations

from memserver.kb.abbreviations import (
    abbreviated,
    shortened,
    spelled_in,
    spelled_out,
    spoken,
    stands_for,
    with_words,
)
from memserver.kb.words import words


def test_an_abbreviation_stands_for_its_phrases_in_both_languages() -> None:
    assert ("chief", "operating", "officer") in stands_for("coo")
    assert ("гүйцэтгэх", "захир") in stands_for("ceo")
    assert stands_for("globex") == ()


def test_a_text_spells_out_an_abbreviation_in_any_order_with_endings() -> None:
    assert spelled_out("coo", {"karen", "chief", "operating", "officers"})
    assert spelled_out("ceo", {"globex", "ийн", "гүйцэтгэх", "захирлын"})
    assert not spelled_out("coo", {"chief", "executive", "officer"})
    assert not spelled_out("chief", {"chief"})


def test_the_words_of_a_phrase_asked_point_at_its_abbreviation() -> None:
    shorts = spelled_in(("globex", "chief", "operating", "officer"))
    assert shorts == {"chief": ("coo",), "operating": ("coo",), "officer": ("coo",)}
    # two of a phrase's three words are not the phrase
    assert spelled_in(("chief", "officer")) == {}
    assert ("eta", ("estimated", "time", "arrival")) in abbreviated(
        ["estimated", "time", "arrival", "rollout"]
    )


def test_a_run_spelling_a_phrase_in_order_becomes_its_abbreviation() -> None:
    asked = words("who owns the globex estimated time of arrival rollout")
    assert shortened(asked) == ["who", "owns", "the", "globex", "eta", "rollout"]
    assert shortened(words("who is the vice president of operations"))[3] == "vp"
    # out of order, or broken by another word, it stays as written
    assert shortened(words("officer chief operating")) == ["officer", "chief", "operating"]
    assert shortened(words("chief sales and operating officer"))[0] == "chief"


def test_a_text_s_abbreviation_also_says_its_phrase_s_own_words() -> None:
    said = spoken(words("tom becker role cto and co founder"))
    assert {"technology", "technical", "cto", "becker"} <= said
    # every chief's title says "chief" and "officer": no word of one of them alone
    assert not {"chief", "officer"} & said
    assert spoken(words("globex warehouse")) == {"globex", "warehouse"}


def test_the_abbreviations_holding_a_word_in_either_language() -> None:
    assert {"ceo", "coo", "cto"} <= set(with_words(["chief"]))
    assert "ceo" in with_words(["захирал"]) and "vp" in with_words(["president"])
    assert with_words(["warehouse"]) == ()


def test_a_team_s_working_abbreviations_are_spelled_out() -> None:
    # "her first PR" answers "her first pull request"; "GA" is general availability
    assert spelled_in(("sofia", "first", "pull", "request")) == {
        "pull": ("pr",),
        "request": ("pr",),
    }
    assert spelled_out("ga", {"general", "availability", "slipped"})
