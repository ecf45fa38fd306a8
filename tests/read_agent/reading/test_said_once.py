"""Words a question says in passing that read as what it asks: "date" and "огноо" ask
when in a question of one piece; "profile" asks who or what its subject is; "ёстой" (must) is its frame; each word
of a phrase whose meaning is one word everywhere ("kick off") is found by that meaning's
words; a word the search read as a subject's name is no topic the field leaves
unexplained; nor is a tense said in several words ("going to")."""

from __future__ import annotations

from dataclasses import replace

from memserver.kb.schema import load_schema
from memserver.kb.words import words
from read_agent.extractive.question import matched
from read_agent.extractive.routes import who_or_what
from read_agent.reading import Context, Subject, Wants, read
from tests.fixtures.server import EXAMPLE_KB

SCHEMA = load_schema(EXAMPLE_KB / "schema.yaml")
INITECH = Subject("companies/initech", "Initech", "companies")
NOVAK = Subject("people/alex-novak", "Alex Novak", "people")
LOCALIZATION = Subject("projects/mongolian-localization", "Mongolian Localization", "projects")
NAMES = {LOCALIZATION.id: ["Mongolian Localization", "Монгол хэлний хувилбар"]}


def test_a_date_asked_for_is_a_when_in_either_language() -> None:
    english = read("What was the start date of the Nomin Trade pilot?")
    assert english.wants is Wants.WHEN and "date" not in english.terms
    mongolian = read(
        "Initech-ийн гэрээний сунгалтын огноо хэзээ вэ?",
        Context(schema=SCHEMA, subjects=[INITECH]),
    )
    assert mongolian.wants is Wants.WHEN and "огноо" not in mongolian.terms
    assert mongolian.field is not None and mongolian.field.name == "renewal_date"
    # among several things asked, the date is one of them: a topic, not the answer's type
    several = read("Walk me through the policy: its predecessor, the date of the switch and why.")
    assert several.wants is Wants.WHAT and "date" in several.terms


def test_a_profile_asks_who_or_what_the_subject_is() -> None:
    # nothing but the subject is asked: its profile answers (routes.who_or_what)
    reading = read("Give me a profile of Alex Novak.", Context(schema=SCHEMA, subjects=[NOVAK]))
    assert reading.terms == () and reading.field is None
    assert who_or_what(reading, [object()])  # type: ignore[list-item]


def test_each_word_of_a_phrase_of_one_meaning_is_found_by_its_words() -> None:
    senses = dict(read("When did we kick off the pilot with Nomin Trade?").senses)
    assert "start" in senses["kick"] and "эхэлсэн" in senses["off"]
    said = words("пилот 2026-10-12-ны өдөр эхэлсэн")
    assert matched(["kick", "off", "pilot"], said, senses) == {"kick", "off", "pilot"}
    # without the phrase the word is itself
    assert "kick" not in dict(read("Who will kick the ball?").senses)


def test_words_the_search_read_as_a_name_leave_the_field_asked() -> None:
    # the entity index resolved "Монгол хэлний локалчлал" to the project; its name here
    # is not the page's title nor its alias word for word
    question = "Монгол хэлний локалчлал хэзээ дуусах ёстой вэ?"
    context = Context(schema=SCHEMA, subjects=[LOCALIZATION], names=NAMES)
    searched = {"terms": ["локалчлал", "дуусах", "ёстой"], "folders": ["projects"]}
    reading = read(question, replace(context, intent=searched))
    assert reading.field is not None and reading.field.name == "due_date"
    # without the search's reading, three words stay unexplained: no field
    assert read(question, context).field is None


def test_a_clause_of_frame_words_is_no_part_of_the_claim() -> None:
    reading = read(
        "Walk me through the records of the firewall outage of May 2022, saying for each"
        " whether it is direct testimony or an inference."
    )
    assert reading.claim == "records of the firewall outage of May 2022"
    # a clause with a topic of its own stays
    assert read("What supports the switch, and the price of $0.45?").claim is not None
    assert "$0" in (read("What supports the switch, and the price of $0.45?").claim or "")


def test_a_tense_of_several_words_is_frame() -> None:
    # "going to" and "used to" say when, not what: no topic word, no word the field leaves
    ahead = read(
        "When is the Mongolian Localization going to be ready?",
        Context(schema=SCHEMA, subjects=[LOCALIZATION], names=NAMES),
    )
    assert ahead.terms == ("ready",), ahead.terms
    assert ahead.field is not None and ahead.field.name == "due_date"
    assert "used" not in read("Who used to own the Mongolian localization?").terms
