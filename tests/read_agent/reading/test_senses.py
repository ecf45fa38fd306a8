"""A word said inside a meaning's phrase of several words, that alone would say another
meaning, means the phrase: "charge" of "in charge" is found by "own" or "leads", never
by a price's words. A question asking who leads, runs or is in charge of a thing finds
the verb in a role at the head of it too ("Procurement Manager", "VP", "CTO")."""

from __future__ import annotations

from memserver.kb.words import words
from read_agent.extractive.question import matched
from read_agent.reading import read


def test_a_word_inside_a_meaning_s_phrase_takes_the_meaning_s_words() -> None:
    senses = dict(read("Who is in charge of the Globex rollout?").senses)
    assert "own" in senses["charge"] and "leads" in senses["charge"]
    assert "rollout" not in senses  # a word outside the phrase keeps its own sense
    # the same word alone is itself: "what do we charge?" asks a price
    assert "charge" not in dict(read("How much do we charge Globex?").senses)
    # a phrase's word that says nothing else alone keeps its own sense
    assert dict(read("What is Initech's annual contract value?").senses) == {}


def test_a_term_with_senses_is_found_by_them_and_not_by_its_synonyms() -> None:
    senses = dict(read("Who is in charge of the Globex rollout?").senses)
    owned = words("priya will own the globex rollout end to end")
    priced = words("the pricing of the globex rollout is per shipment")
    assert matched(["charge", "rollout"], owned, senses) == {"charge", "rollout"}
    assert matched(["charge", "rollout"], priced, senses) == {"rollout"}
    # without senses "charge" is a price's word ("charge" ~ "pricing")
    assert matched(["charge", "rollout"], priced) == {"charge", "rollout"}


def test_who_runs_a_part_of_a_company_is_found_in_a_role_at_its_head() -> None:
    senses = dict(read("Who runs procurement at Initech?").senses)
    assert matched(["runs", "procurement"], words("procurement manager"), senses) == {
        "runs",
        "procurement",
    }
    # a chief's abbreviation is a role at the head of something: "CTO"
    senses = dict(read("Who heads technology?").senses)
    assert matched(["heads"], words("cto and co founder"), senses) == {"heads"}
    # in Mongolian: "хариуцдаг" (is responsible for) in "IT менежер"
    senses = dict(read("Номин Трейдийн мэдээллийн технологийг хэн хариуцдаг вэ?").senses)
    assert "менежер" in senses["хариуцдаг"]
    # a role's rank is no answer to what a question asks but who: "what does Priya run?"
    assert "manager" not in dict(read("What does Priya run?").senses).get("run", ())
    assert matched(["runs"], words("procurement manager")) == set()
