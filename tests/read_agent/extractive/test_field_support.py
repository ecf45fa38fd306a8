"""A field's answer says where the page belongs and which of its sentences state the
value; a relation whose field cannot hold the answer wanted does not answer."""

from __future__ import annotations

from memserver.kb.schema import parse_schema
from read_agent.extractive.evidence import Evidence
from read_agent.extractive.field_support import belongs, stating
from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines

SCHEMA = """
folders:
  - name: people
    type: person
    description: the person pages
    fields:
      - {name: role, type: string}
      - {name: company, type: link, folder: companies}
      - {name: reports_to, type: link, folder: people}
  - name: companies
    type: company
    description: the company pages
    fields:
      - {name: status, type: string}
  - name: projects
    type: project
    description: the project pages
    fields:
      - {name: owner, type: link, folder: people}
      - {name: company, type: link, folder: companies}
      - {name: team, type: links, folder: people}
"""


def test_the_page_belongs_where_its_single_link_to_another_folder_points() -> None:
    schema = parse_schema(SCHEMA)
    people, projects = schema.folders[0], schema.folders[2]
    fields = {"role": "COO", "company": "Globex", "reports_to": "Dana Whitfield"}
    # whom a person reports to places them as their company does
    assert belongs(schema, people, fields, "role") == "company: Globex; reports to: Dana Whitfield"
    assert belongs(schema, people, fields, "company") == "reports to: Dana Whitfield"
    assert belongs(schema, people, fields, "reports_to") == "company: Globex"
    held = {"owner": "Priya Shah", "company": "Globex", "team": ["Priya Shah", "Tom Becker"]}
    assert belongs(schema, projects, held, "owner") == "company: Globex"  # an owner is someone
    assert belongs(schema, people, {"role": "COO"}, "role") == ""


def _piece(text: str, kind: str = "timeline") -> Evidence:
    return Evidence(text, "people/alex-novak", "Alex Novak", "2026-10-20", kind)


def test_the_sentences_stating_a_value_hold_half_its_words_and_are_not_fields() -> None:
    pieces = [
        _piece("Alex Novak — role: Procurement Manager", "field"),
        _piece("role changed from “Buyer” to “Procurement Manager”"),
        _piece("Alex Novak from Initech procurement emailed me."),
        _piece("Renewal proposal sent to Joanna Price and Alex Novak."),
    ]
    assert [p.text for p in stating(pieces, "Procurement Manager")] == [
        "Alex Novak from Initech procurement emailed me."
    ]
    assert stating(pieces, "") == [] and stating(pieces, "Chief Risk Officer") == []


def test_a_field_answer_names_where_the_page_belongs(example: IngestServer) -> None:
    first = lines(ask(example, "What position does Karen Lee hold?"))[0]
    assert first == "Karen Lee — role: COO; company: Globex [people/karen-lee]"


def test_a_field_answer_quotes_where_a_note_states_the_value(example: IngestServer) -> None:
    said = lines(ask(example, "What is Alex Novak's role?"))
    # no company recorded: whom he reports to places him
    assert said[0] == (
        "Alex Novak — role: Procurement Manager; reports to: Joanna Price [people/alex-novak]"
    )
    assert any("Alex Novak from Initech procurement" in line for line in said[1:])


def test_a_relation_whose_field_cannot_say_when_does_not_answer_when(
    example: IngestServer,
) -> None:
    # "work on" is the team's verb; a team holds people, not the day work began
    first = lines(ask(example, "When did work on the Globex ETA rollout begin?"))[0]
    assert first.startswith("Globex ETA Rollout — start date: 2026-09-14"), first
    assert "team:" not in first


def test_another_folder_s_field_linking_to_the_subject_lists_its_pages(
    example: IngestServer,
) -> None:
    # a project's owner asked of a person: the projects whose owner is that person
    first = lines(ask(example, "Which project is Priya Shah the owner of?"))[0]
    assert first == (
        "Projects whose owner is Priya Shah: Globex ETA Rollout [projects/globex-eta-rollout]"
    )
