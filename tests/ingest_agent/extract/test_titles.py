"""Titles say what a page holds: never a code, a label, a date, an amount or markup alone."""

from __future__ import annotations

import datetime as dt

import pytest

from ingest_agent.extract.note import content_title, is_identifier, tidy_title
from ingest_agent.extract.rules import RulesExtractor
from ingest_agent.records import Source
from memserver.kb.schema import load_schema
from tests.fixtures.server import EXAMPLE_KB


@pytest.mark.parametrize(
    ("title", "code"),
    [
        ("EMG P01 F1 0", True),
        ("ATM meeting sprint planning 202210 0006", True),
        ("CUST C 0002 2021Q3", True),
        ("INC-0042", True),
        ("Incident: Database migration failure — INC-2022-09-15-01", False),
        ("Product roadmap review (Q1 2027)", False),
        ("Heron pricing v2.1", False),
        ("Globex go-live retro", False),
    ],
)
def test_a_code_is_told_from_words(title: str, code: bool) -> None:
    assert is_identifier(title) is code


def test_a_title_loses_markup_clock_times_and_what_does_not_close() -> None:
    assert tidy_title("<!-- Slide number: 3 --> Territory [09:00:12] plan") == "Territory plan"
    assert (
        tidy_title("“The investigation found the root cause")
        == "The investigation found the root cause"
    )
    assert tidy_title("We’ve got the audit") == "We’ve got the audit"
    long = "Adopt a new policy limiting logs to 90 days, superseding the previous one of the team for all"
    assert tidy_title(long) == "Adopt a new policy limiting logs to 90 days"


def test_a_code_title_gives_way_to_the_banner_or_the_first_sentence() -> None:
    banner = ["[MEETING: board meeting] Leadership — 2023-05-08", "", "**Attendees**: Ann"]
    assert content_title(banner) == "Board meeting — Leadership"
    bare = [
        "[meeting_notes] 2020-06-19",
        "**Attendees:** Maya Patel (CEO)",
        "- Maya: “We need to decide on the API rollout.”",
    ]
    assert content_title(bare, ["meeting"]) == "We need to decide on the API rollout"


def test_decision_titles_keep_what_was_decided() -> None:
    schema = load_schema(EXAMPLE_KB / "schema.yaml")
    note = (
        "---\ntitle: Sprint planning\ndate: 2026-10-01\nattendees: [Ann Lee]\n---\n\n"
        "## Decisions\n\n"
        "- **Security**: Daniel will run static analysis on all new code before merge.\n"
        "- **CI/CD**: Miguel will push the image to staging.\n"
    )
    source = Source("meetings/2026-10-01-sprint.md", note, "h", dt.date(2026, 10, 1))
    titles = {
        d.title for d in RulesExtractor(schema).extract(source).drafts if d.folder == "decisions"
    }
    assert titles == {
        "Security: Daniel will run static analysis on all new code before merge",
        "CI/CD: Miguel will push the image to staging",
    }
    chat = (
        "---\ntitle: '#deals'\ndate: 2026-12-04\ngenre: chat\n---\n\n**Bataa Dorj** 09:15\n"
        "Globex launch pricing: we agreed to an 850₮ discount yesterday, for three months.\n"
    )
    source = Source("slack/deals.md", chat, "h", dt.date(2026, 12, 4))
    known = {"globex": ("companies", "Globex")}
    [decision] = [
        d
        for d in RulesExtractor(schema).extract(source, known=known).drafts
        if d.folder == "decisions"
    ]
    assert decision.title == "Globex: 850₮ discount"  # whose, what; no "yesterday"
