"""A question of several parts each of which names a different field of its subject's
page asks for the page's fields: its profile answers, not one field of it."""

from __future__ import annotations

from memserver.kb.schema import load_schema
from read_agent.reading import Context, Kind, Subject, read
from tests.fixtures.server import EXAMPLE_KB

SCHEMA = load_schema(EXAMPLE_KB / "schema.yaml")
NOVAK = Subject("people/alex-novak", "Alex Novak", "people")
GLOBEX = Subject("companies/globex", "Globex", "companies")


def _read(question: str, subject: Subject) -> tuple[bool, str | None]:
    reading = read(question, Context(schema=SCHEMA, subjects=[subject]))
    return reading.is_(Kind.PROFILE), reading.field.name if reading.field else None


def test_two_parts_naming_two_fields_ask_the_profile() -> None:
    asked = "Which company employs Alex Novak, and in what role?"
    assert _read(asked, NOVAK) == (True, None)
    assert _read("Who is Alex Novak's manager and what is his title?", NOVAK) == (True, None)


def test_one_field_or_a_part_naming_none_asks_no_profile() -> None:
    # one field (the second part names none of its own)
    assert _read("Who does Alex Novak report to, and since when?", NOVAK) == (False, "reports_to")
    # both parts name the same field: its value and the day it changed
    said = _read("What is Globex's status, and when did it become a customer?", GLOBEX)
    assert said == (False, "status")
    # a part naming a topic no field says
    assert not _read("What is Alex Novak's role, and what did he ask for?", NOVAK)[0]
