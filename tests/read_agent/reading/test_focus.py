"""The kind of thing a question asks for, when it names one ("what revenue share did
...", "which port was ...", "хэдэн ачааны машинтай вэ"): the words between a word that
asks for a thing by its kind and the word that closes the kind's name, as the language
files list them; never a name, a folder, a value of a field, an order or a kind of
question."""

from __future__ import annotations

import pytest

from memserver.kb.schema import load_schema
from read_agent.reading import Context, Subject, read
from tests.fixtures.server import EXAMPLE_KB

SCHEMA = load_schema(EXAMPLE_KB / "schema.yaml")
GLOBEX = Subject("companies/globex", "Globex", "companies")
NOMIN = Subject("companies/номин-трейд", "Номин Трейд", "companies")
NAMES = {GLOBEX.id: ["Globex"], NOMIN.id: ["Номин Трейд", "Nomin Trade"]}


def focus(question: str, *subjects: Subject) -> tuple[str, ...]:
    return read(question, Context(schema=SCHEMA, subjects=subjects, names=NAMES)).focus


@pytest.mark.parametrize(
    ("question", "subjects", "expected"),
    [
        ("What revenue share did we agree with Globex?", (GLOBEX,), ("revenue", "share")),
        ("Which port did the firewall rule block?", (), ("port",)),
        ("How many seats did we quote Globex?", (GLOBEX,), ("seats",)),
        # "date" says the answer's type (when), not the kind
        ("What renewal date does the Initech contract have?", (), ("renewal",)),
        ("Номин Трейд хэдэн ачааны машинтай вэ?", (NOMIN,), ("ачааны", "машинтай")),
        # a name is the subject, not the kind
        ("Which Globex contract did we sign?", (GLOBEX,), ("contract",)),
    ],
)
def test_the_kind_asked_for_is_read(
    question: str, subjects: tuple[Subject, ...], expected: tuple[str, ...]
) -> None:
    assert focus(question, *subjects) == expected


@pytest.mark.parametrize(
    ("question", "subjects"),
    [
        # asked by what it did, not by its kind: nothing closes a kind's name ("what
        # broke ...", a cause, is asked for: tests/read_agent/extractive/test_cause_asked.py)
        ("What slowed the batch uploads in July?", ()),
        ("Which customer pays 900₮ per delivery?", ()),
        # a folder, a value of a field, a kind of question, the answer's type
        ("What meetings did we have last week?", ()),
        ("Which customers did we meet in October?", ()),
        ("Which decisions did we make in October?", ()),
        ("What time is the Globex meeting?", (GLOBEX,)),
        # a frame word right after "what"
        ("What is the price in the Globex contract?", (GLOBEX,)),
        ("How much did the Globex pilot cost?", (GLOBEX,)),
    ],
)
def test_no_kind_is_read_where_none_is_named(question: str, subjects: tuple[Subject, ...]) -> None:
    assert focus(question, *subjects) == ()


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which customer pays 900₮ per delivery?", "companies"),  # a value of a field
        ("What company signed in August?", "companies"),
        ("Which meeting decided usage-based pricing?", "meetings"),
        ("Ямар компани сард 4,000 хүргэлт хийдэг вэ?", "companies"),
        # the kind is not what is asked for: a figure of it, or no kind at all
        ("What price did the customer agree?", None),
        ("Which port did the firewall rule block?", None),
    ],
)
def test_the_folder_of_the_page_asked_for_by_its_kind_is_read(
    question: str, expected: str | None
) -> None:
    assert read(question, Context(schema=SCHEMA)).which == expected
