"""kb_brief's answer read once into types: what is malformed is read as absent or as a
list of one, so no answer path checks a type again."""

from __future__ import annotations

from read_agent.tools.wire import Brief, Subject


def test_a_brief_is_read_into_its_parts() -> None:
    brief = Brief.parse(
        {
            "subjects": [
                {
                    "id": "decisions/per-seat",
                    "title": "Per-seat pricing",
                    "status": "reversed",
                    "deciders": ["Maria Lopez"],
                    "superseded_by": ["decisions/usage"],
                    "current": {"price": "$49"},
                    "earlier": [{"field": "status", "value": "accepted", "valid_to": "2026-10-07"}],
                    "changed_since": [{"field": "status", "to": "reversed", "date": "2026-10-07"}],
                }
            ],
            "evidence": [{"text": "We settle on $49.", "label": "direct", "page": "decisions/x"}],
            "conflicts": [{"field": "price", "sides": [{"value": 49, "source": "a.md"}]}],
        }
    )
    (subject,) = brief.subjects
    assert subject.superseded_by == ("decisions/usage",) and subject.deciders == ("Maria Lopez",)
    assert subject.current == {"price": "$49"}
    assert subject.earlier[0].valid_to == "2026-10-07"
    assert subject.changed_since[0].to == "reversed"
    assert brief.evidence[0].label == "direct" and brief.evidence[0].source is None
    assert brief.conflicts[0].sides[0].value == 49


def test_what_is_malformed_is_read_as_absent_or_as_a_list_of_one() -> None:
    brief = Brief.parse(
        {
            "subjects": ["not an object", {"id": "a", "superseded_by": "b", "current": "text"}],
            "evidence": None,
            "conflicts": {"field": "x"},
        }
    )
    assert brief.subjects == (Subject("a", "", superseded_by=("b",)),)
    assert brief.evidence == () and brief.conflicts[0].field == "x"
    assert Brief.parse(None) == Brief()
