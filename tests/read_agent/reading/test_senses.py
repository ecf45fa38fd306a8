"""A word said inside a meaning's phrase of several words, that alone would say another
meaning, means the phrase: "charge" of "in charge" is found by "own" or "leads", never
by a price's words. A question asking who leads, runs or is in charge of a thing finds
the verb in a role at the head of it too ("Procurement Manager", "VP", "CTO")."""

from __future__ import annotations

from memserver.kb.schema import load_schema
from memserver.kb.words import words
from read_agent.extractive.question import matched
from read_agent.reading import Context, Subject, read
from tests.fixtures.server import EXAMPLE_KB

SCHEMA = load_schema(EXAMPLE_KB)


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


def test_a_word_said_of_a_person_takes_the_meaning_it_has_for_one() -> None:
    """ "paid" of a person asks a salary (the thing asked: the focus), found by the
    salary's words and not by itself ("a paid pilot"), nor by a word sharing only a start
    with one of them ("company" is not "compensation"); of a company it keeps its sense."""
    alex = Subject("people/alex-kim", "Alex Kim", "people")
    reading = read("What is Alex Kim's pay?", Context(schema=SCHEMA, subjects=[alex]))
    senses = reading.sense_of
    assert "salary" in senses["pay"] and "pay" not in senses["pay"]
    assert "pay" in reading.focus
    assert (
        matched(["pay"], words("globex signed the paid pilot, they pay monthly"), senses) == set()
    )
    assert matched(["pay"], words("company: globex"), senses) == set()
    assert matched(["pay"], words("her salary is private"), senses) == {"pay"}
    # a name the index could not tell apart, of people's pages, is a person too
    unclear = read("What is Alex paid?", Context(schema=SCHEMA, unclear=["people"]))
    assert "paid" in unclear.sense_of
    globex = Subject("companies/globex", "Globex", "companies")
    priced = read(
        "How much did Globex pay for the pilot?", Context(schema=SCHEMA, subjects=[globex])
    )
    assert "pay" not in priced.sense_of


def test_a_worry_is_found_by_the_concerns_a_note_writes() -> None:
    said = words("IT (not present) has concerns about the cloud-only option")
    assert matched(["worried"], said) == {"worried"}
    assert matched(["worried"], words("the counter runs in shadow mode")) == set()
