"""schema.yaml: the meta-schema, semantic checks, every problem at once with line and fix."""

from __future__ import annotations

import zoneinfo
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from memserver.errors import NotFoundError, SchemaError
from memserver.kb.layout import KBPaths
from memserver.kb.schema import (
    FIELD_TYPES,
    load_schema,
    meta_schema,
    parse_schema,
    schema_from_view,
)

REPO = Path(__file__).resolve().parents[3]

SEED_EXAMPLE = """\
timezone: Asia/Ulaanbaatar
rules: |                                  # global ingestion rules
  - Only record facts stated in the source.
folders:
  - name: people
    type: person
    description: People.
  - name: meetings                        # -> knowledge/meetings/
    type: meeting
    description: Meetings, calls and syncs
    slug: "{date}-{title}"                # file name template
    date_field: date                      # the page's effective date
    recency_halflife_days: 60             # search freshness decay (0 = evergreen)
    source_boost: 1.0                     # ranking prior
    fields:
      - {name: attendees, type: links, folder: people, verb: attended}
      - {name: status, type: enum, values: [planned, done]}
    sections: [Summary, Discussion, Decisions, Action Items]
    timeline: false
    rules: |
      - The date field is the day the meeting happened.
    link_verbs:                           # typed edges inferred from prose
      - {verb: reports_to, to: people, patterns: ["reports to"]}
"""


def problems_of(text: str) -> dict[str, tuple[str, int | None, str]]:
    with pytest.raises(SchemaError) as caught:
        parse_schema(text)
    return {p.location: (p.message, p.line, p.fix) for p in caught.value.problems}


def test_meta_schema_is_a_valid_json_schema_and_the_root_schema_yaml() -> None:
    jsonschema.Draft202012Validator.check_schema(meta_schema())
    root = yaml.safe_load((REPO / "schema.yaml").read_text(encoding="utf-8"))
    assert root == meta_schema()
    field_type = meta_schema()["$defs"]["field"]["properties"]["type"]
    assert tuple(field_type["enum"]) == FIELD_TYPES


def test_example_kb_schema_validates(example_kb: KBPaths) -> None:
    schema = load_schema(example_kb.root)
    assert {"people", "companies", "meetings", "decisions", "projects"} <= set(schema.folder_names)
    assert schema.tz == zoneinfo.ZoneInfo(schema.timezone)
    for folder in schema.folders:
        for spec in folder.fields:
            if spec.type in ("link", "links"):
                assert spec.folder in schema.folder_names


def test_seed_example_format_loads_with_defaults_and_implicit_date_field() -> None:
    schema = parse_schema(SEED_EXAMPLE)
    people, meetings = schema.folder("people"), schema.folder("meetings")
    assert people.slug == "{title}" and people.timeline and people.source_boost == 1.0
    assert people.recency_halflife_days == 0 and people.fields == ()
    assert meetings.slug == "{date}-{title}" and not meetings.timeline
    assert meetings.recency_halflife_days == 60
    date = meetings.field("date")
    assert date is not None and date.type == "date" and date.required
    assert meetings.field_names == ("date", "attendees", "status")
    attendees = meetings.field("attendees")
    assert attendees is not None and attendees.folder == "people" and attendees.verb == "attended"
    status = meetings.field("status")
    assert status is not None and status.values == ("planned", "done")
    assert meetings.link_verbs[0].patterns == ("reports to",)
    assert schema.rules.startswith("- Only record facts")


def test_timezone_defaults_to_utc() -> None:
    schema = parse_schema("folders:\n  - {name: notes, type: note, description: Notes.}\n")
    assert schema.timezone == "UTC"


def test_unknown_folder_names_the_valid_ones() -> None:
    with pytest.raises(NotFoundError, match="people, meetings"):
        parse_schema(SEED_EXAMPLE).folder("persons")


BROKEN = """\
timezone: Mars/Olympus
folders:
  - name: people
    type: person
    description: People
    nmae: typo
  - name: people
    type: Meeting
    description: ""
    slug: "{date}-{titel}"
    date_field: status
    recency_halflife_days: -1
    source_boost: 0
    fields:
      - {name: attendees, type: links, verb: attended}
      - {name: status, type: enum}
      - {name: boss, type: link, folder: persons}
      - {name: title, type: strng}
      - {name: flag, type: enum, values: [yes, no]}
    sections: [Summary, Timeline]
    link_verbs:
      - {verb: reports_to, to: peple, patterns: []}
"""


def test_every_schema_problem_is_reported_at_once_with_line_and_fix() -> None:
    found = problems_of(BROKEN)
    expected_lines = {
        "timezone": 1,  # unknown time zone
        "folders[0].nmae": 6,  # unknown key
        "folders[1].name": 7,  # duplicate folder name
        "folders[1].type": 8,  # pattern
        "folders[1].description": 9,  # empty
        "folders[1].slug": 10,  # {titel} is not a field
        "folders[1].date_field": 11,  # not a date field
        "folders[1].recency_halflife_days": 12,  # below 0
        "folders[1].source_boost": 13,  # not > 0
        "folders[1].fields[0]": 15,  # links without folder
        "folders[1].fields[1]": 16,  # enum without values
        "folders[1].fields[2].folder": 17,  # unknown folder
        "folders[1].fields[3].name": 18,  # reserved name
        "folders[1].fields[3].type": 18,  # unknown type
        "folders[1].fields[4].values[0]": 19,  # YAML yes -> boolean
        "folders[1].sections[1]": 20,  # reserved section
        "folders[1].link_verbs[0].patterns": 22,  # empty list
        "folders[1].link_verbs[0].to": 22,  # unknown folder
    }
    assert {loc: line for loc, (_, line, _) in found.items() if loc in expected_lines} == (
        expected_lines
    )
    assert found and all(fix for _, (_, _, fix) in found.items())
    assert "did you mean 'name'" in found["folders[0].nmae"][2]
    assert "did you mean 'string'" in found["folders[1].fields[3].type"][2]
    assert "did you mean 'title'" in found["folders[1].slug"][2]
    assert "did you mean 'people'" in found["folders[1].link_verbs[0].to"][2]
    assert 'quote it: "yes"' in found["folders[1].fields[4].values[0]"][2]
    assert "already used by folders[0]" in found["folders[1].name"][0]


@pytest.mark.parametrize(
    ("snippet", "location", "words"),
    [
        (
            "    fields:\n      - {name: who, type: link}\n",
            "folders[0].fields[0]",
            "needs the folder",
        ),
        (
            "    fields:\n      - {name: who, type: links, folder: nowhere}\n",
            "folders[0].fields[0].folder",
            "unknown folder 'nowhere'",
        ),
        (
            "    fields:\n      - {name: k, type: enum, values: []}\n",
            "folders[0].fields[0].values",
            "needs its allowed values",
        ),
        ('    slug: "{when}-{title}"\n', "folders[0].slug", "{when} is not a field"),
        ('    slug: "{date}-{title}"\n', "folders[0].slug", "no date_field"),
        ("    slug: fixed\n", "folders[0].slug", "no placeholder"),
        ('    slug: "../{title}"\n', "folders[0].slug", "would leave the folder"),
        (
            "    date_field: role\n    fields:\n      - {name: role, type: string}\n",
            "folders[0].date_field",
            "names a string field",
        ),
        ("    sections: [Summary, Summary]\n", "folders[0].sections[1]", "listed twice"),
        (
            "    fields:\n      - {name: a, type: string}\n      - {name: a, type: text}\n",
            "folders[0].fields[1].name",
            "declared twice",
        ),
        ("    timeline: sometimes\n", "folders[0].timeline", "expected true or false"),
        ("    source_boost: -2\n", "folders[0].source_boost", "greater than 0"),
    ],
)
def test_each_semantic_error_names_its_location(snippet: str, location: str, words: str) -> None:
    text = "folders:\n  - name: notes\n    type: note\n    description: Notes.\n" + snippet
    found = problems_of(text)
    assert location in found, found
    assert words in found[location][0]
    assert found[location][2], "every problem says what to write instead"
    line = found[location][1]
    assert line is not None and line >= 2


def test_date_placeholder_uses_a_date_field_with_another_name() -> None:
    schema = parse_schema(
        "folders:\n  - name: events\n    type: event\n    description: Events.\n"
        '    slug: "{date}-{title}"\n    date_field: held_on\n'
    )
    held = schema.folder("events").field("held_on")
    assert held is not None and held.type == "date"


def test_unknown_timezone_suggests_a_close_name() -> None:
    found = problems_of(
        "timezone: Asia/Ulaanbatar\nfolders:\n  - {name: a, type: a, description: A}\n"
    )
    assert "Asia/Ulaanbaatar" in found["timezone"][2]


def test_reserved_folder_and_missing_keys() -> None:
    found = problems_of("folders:\n  - name: source\n    type: doc\n  - {}\n")
    assert "reserved" in found["folders[0].name"][0]
    assert found["folders[0].description"][0] == "missing required key 'description'"
    assert {"folders[1].name", "folders[1].type", "folders[1].description"} <= set(found)


def test_duplicate_yaml_keys_are_reported() -> None:
    found = problems_of("folders:\n  - name: a\n    type: a\n    description: A\n    type: b\n")
    assert "appears twice" in found["folders[0].type"][0]
    assert found["folders[0].type"][1] == 5


def test_yaml_syntax_error_gives_its_line() -> None:
    found = problems_of("folders:\n  - name: a\n    type: [unclosed\n    description: x\n")
    message, line, _ = found["schema.yaml"]
    assert "not valid YAML" in message and line is not None and line >= 3


@pytest.mark.parametrize("text", ["", "- a\n- b\n", "just text\n"])
def test_schema_that_is_not_a_mapping_is_refused(text: str) -> None:
    with pytest.raises(SchemaError):
        parse_schema(text)


def test_missing_schema_file_is_a_schema_error(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="does not exist"):
        load_schema(tmp_path)


def test_schema_error_message_lists_every_problem() -> None:
    with pytest.raises(SchemaError) as caught:
        parse_schema(BROKEN, "kb/schema.yaml")
    text = str(caught.value)
    assert text.startswith(f"kb/schema.yaml: {len(caught.value.problems)} schema problems:")
    assert text.count("\n  - ") == len(caught.value.problems)
    assert "(line 18)" in text


def test_to_dict_round_trips_through_the_validator() -> None:
    schema = parse_schema(SEED_EXAMPLE)
    again = parse_schema(yaml.safe_dump(schema.to_dict(), allow_unicode=True))
    assert again == schema


def test_a_name_slot_must_start_or_end_a_link_verb_pattern() -> None:
    good = SEED_EXAMPLE.replace(
        'patterns: ["reports to"]', 'patterns: ["reports to {name}", "{name} тайлагнадаг"]'
    )
    verb = parse_schema(good).folder("meetings").link_verbs[0]
    assert [(p.text, p.name_first) for p in verb.phrases] == [
        ("reports to", False),
        ("тайлагнадаг", True),
    ]
    bad = SEED_EXAMPLE.replace(
        'patterns: ["reports to"]', 'patterns: ["reports {name} to", "{name}"]'
    )
    found = problems_of(bad)
    where = "folders[1].link_verbs[0].patterns"
    assert set(found) == {f"{where}[0]", f"{where}[1]"}
    message, line, fix = found[f"{where}[0]"]
    assert "{name} must start or end it" in message and line == 23  # the patterns line
    assert '"{name} тайлагнадаг"' in fix


def test_a_kb_schema_view_reads_back_as_the_schema_it_was_made_from(example_kb: KBPaths) -> None:
    """What ``kb_schema`` sends (folders as dicts) is checked and built without YAML, and
    comes back as the same model; a view the meta-schema refuses names the problem."""
    schema = load_schema(example_kb.root)
    view: dict[str, Any] = {
        "timezone": schema.timezone,
        "rules": schema.rules,
        "folders": [f.to_dict() for f in schema.folders],
        "can_write": False,
    }
    back = schema_from_view(view)
    assert back.timezone == schema.timezone
    assert back.folders == schema.folders
    broken = {**view, "folders": [{**view["folders"][0], "fields": "not a list"}]}
    with pytest.raises(SchemaError) as caught:
        schema_from_view(broken)
    assert "fields" in str(caught.value)


def test_the_teams_own_organisation_is_read_checked_and_sent_with_the_view(
    example_kb: KBPaths,
) -> None:
    """``organisation`` names the team's own organisation: parsed, kept by ``to_dict``
    and by the ``kb_schema`` view; a schema without it has none; a malformed one names
    the problem."""
    schema = load_schema(example_kb.root)
    assert schema.organisation is not None
    assert schema.organisation.names == ("Acme Logistics", "Acme")
    again = parse_schema(yaml.safe_dump(schema.to_dict(), allow_unicode=True))
    assert again.organisation == schema.organisation  # (trust is not in to_dict)
    view = {
        "folders": [f.to_dict() for f in schema.folders],
        "organisation": schema.to_dict()["organisation"],
    }
    assert schema_from_view(view).organisation == schema.organisation
    assert parse_schema(SEED_EXAMPLE).organisation is None
    assert "organisation" not in parse_schema(SEED_EXAMPLE).to_dict()
    for bad in ("organisation: {aliases: [Acme]}\n", "organisation: {name: Acme, size: 3}\n"):
        with pytest.raises(SchemaError, match="organisation"):
            parse_schema(bad + SEED_EXAMPLE)
