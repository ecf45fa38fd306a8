"""The team's own organisation and the head of a whole one, read from a question and
from a role: "who runs Acme Logistics?" asks of our organisation (the schema's
``organisation``) and names no part of it, so a role whose every word heads ("CEO",
"гүйцэтгэх захирал") answers it; "who runs procurement?" names a part ("Procurement
Manager" answers)."""

from __future__ import annotations

import pytest

from memserver.kb.schema import load_schema
from read_agent.reading import Context, Subject, read
from read_agent.reading.lexicon import lexicon
from read_agent.reading.roles import heads_whole, role_words
from tests.fixtures.server import EXAMPLE_KB

SCHEMA = load_schema(EXAMPLE_KB)
GLOBEX = Subject("companies/globex", "Globex", "companies")


@pytest.mark.parametrize(
    ("role", "heads"),
    [
        ("CEO", True),
        ("CEO and co-founder", True),
        ("President", True),
        ("Гүйцэтгэх захирал", True),
        ("CTO and co-founder", False),
        ("COO", False),
        ("Head of Product", False),
        ("VP Supply Chain", False),
        ("Country Manager, Mongolia", False),
        ("Номин Трейдийн логистикийн захирал", False),
    ],
)
def test_a_role_heads_a_whole_organisation_when_every_word_of_it_heads(
    role: str, heads: bool
) -> None:
    assert heads_whole(role, lexicon()) is heads


def test_our_organisation_is_read_by_its_names_and_by_our_company() -> None:
    for question in ("Who runs Acme Logistics?", "Манай компанийг хэн удирддаг вэ?"):
        reading = read(question, Context(schema=SCHEMA))
        assert reading.ours and reading.whole, question
        assert len(reading.terms) == 1, reading.terms  # the verb alone: not "acme", "company"
    # "our" with no subject named asks of us; with a company named, of it
    assert read("Who is our CEO?", Context(schema=SCHEMA)).ours
    named = read("Who is our contact at Globex?", Context(schema=SCHEMA, subjects=[GLOBEX]))
    assert not named.ours
    # without the schema's organisation its name is only words of the question
    assert "acme" in read("Who runs Acme Logistics?").terms


def test_the_head_of_a_whole_is_asked_only_when_no_part_is_named() -> None:
    assert read("Who leads Globex?", Context(schema=SCHEMA, subjects=[GLOBEX])).whole
    assert not read("Who leads sales?", Context(schema=SCHEMA)).whole
    assert not read("Who heads technology at our company?", Context(schema=SCHEMA)).whole
    assert not read("What does Globex sell?", Context(schema=SCHEMA, subjects=[GLOBEX])).whole


def test_a_role_is_searched_by_the_part_asked_and_its_holders_abbreviations() -> None:
    part = read("Who heads technology at our company?", Context(schema=SCHEMA))
    assert role_words(part, lexicon()) == ["technology", "cto"]
    whole = read("Who runs Acme Logistics?", Context(schema=SCHEMA))
    found = role_words(whole, lexicon())
    assert "ceo" in found and "cto" not in found and "runs" not in found


def test_another_folder_s_link_to_the_subject_is_asked_by_its_verb() -> None:
    works = read("Who works at Globex?", Context(schema=SCHEMA, subjects=[GLOBEX]))
    assert works.field is not None
    assert (works.field.folder, works.field.name, works.field.inward) == ("people", "company", True)
    # its meaning's other words ("company") do not ask it, nor a question not asking who
    for question in ("Who is the CEO of the company Globex?", "When did Globex join us?"):
        other = read(question, Context(schema=SCHEMA, subjects=[GLOBEX]))
        assert other.field is None or other.field.folder == "companies", question


@pytest.mark.parametrize(
    ("question", "valued"),
    [
        ("Which companies are customers?", ("companies", "status", "customer")),
        ("Who are our customers?", ("companies", "status", "customer")),
        ("How many projects are active?", ("projects", "status", "active")),
        # "customer" is a meeting's kind too: meetings are listed when named
        ("Which meetings were with customers?", ("meetings", "kind", "customer")),
        # something else asked, a window, or a value of dated pages only, unnamed
        ("Which customer pays 900₮ per delivery?", None),
        ("Which of our customers renew in 2027?", None),
        ("What was reversed?", None),
    ],
)
def test_pages_asked_for_by_a_value_of_their_field(
    question: str, valued: tuple[str, str, str] | None
) -> None:
    assert read(question, Context(schema=SCHEMA)).valued == valued
    # a page named: its own value is asked, not a list
    assert read("Is Globex a customer?", Context(schema=SCHEMA, subjects=[GLOBEX])).valued is None
