"""Audit replay without a model: which questions ask what held on a past day and what
became of it (English and Mongolian, reworded), and the then -> now lines a brief asked
as of that day becomes."""

from __future__ import annotations

import re
from typing import Any

from read_agent.extractive.line import INFERRED
from read_agent.extractive.replay import replaced_ids, replay, subject_then
from read_agent.reading import read
from read_agent.tools.wire import Brief, Page

_LINE = re.compile(r"^- \d{4}-\d{2}-\d{2} · .+ \((?:direct[^)]*|inferred)\) \[[^\]]+\]$")
DAY = "2022-05-31"

# kb_brief asked as of 2022-05-31: what held then, and what changed after it
THEN = {
    "as_of": DAY,
    "subjects": [
        {
            "id": "decisions/2022-05-01-retain-logs-90-days",
            "title": "Retention of customer logs cut to 90 days",
            "folder": "decisions",
            "date": "2022-05-01",
            "status": "accepted",
            "current": {"decided_on": "2022-05-01", "rationale": "privacy audit"},
            "deciders": ["Arjun Mehta", "Maya Patel"],
            "supersedes": [],
            "superseded_by": [],
            "changed_since": [
                {"field": "status", "to": "reversed", "date": "2022-08-20", "source": "n2.md"},
                {
                    "field": "superseded_by",
                    "to": "decisions/2022-08-20-cloud-native",
                    "date": "2022-08-20",
                    "source": "n2.md",
                },
            ],
        },
        {
            "id": "policies/log-retention",
            "title": "Log retention policy",
            "folder": "policies",
            "date": "2022-05-01",
            "status": None,
            "current": {"retention_days": "90", "owner": "Maya Patel"},
            "deciders": [],
            "supersedes": [],
            "superseded_by": [],
            "changed_since": [
                # what it replaced, learned later, is no change of it
                {"field": "supersedes", "to": "policies/old", "date": "2022-06-01"},
                {"field": "retention_days", "to": "30", "date": "2023-01-10", "source": "n3.md"},
                {"field": "owner", "to": None, "date": "2023-02-01", "source": "n4.md"},
            ],
        },
        {
            "id": "decisions/2022-04-02-archive-to-cold-storage",
            "title": "Archive retention logs to cold storage",
            "folder": "decisions",
            "date": "2022-04-02",
            "status": "accepted",
            "current": {},
            "deciders": ["Omar Farah"],
            "supersedes": [],
            "superseded_by": [],
            "changed_since": [],
        },
        {
            "id": "meetings/2022-03-01-offsite",
            "title": "Team offsite",
            "folder": "meetings",
            "date": "2022-03-01",
            "current": {"attendees": ["Ravi Kumar"]},
            "changed_since": [],
        },
    ],
    "evidence": [
        {
            "text": "We keep customer logs 90 days, no longer.",
            "label": "direct",
            "date": "2022-05-01",
            "source": "n1.md",
            "page": "decisions/2022-05-01-retain-logs-90-days",
            "author": "Maya Patel",
        }
    ],
}
NOW = {
    "decisions/2022-08-20-cloud-native": Page.parse(
        {
            "id": "decisions/2022-08-20-cloud-native",
            "title": "Shift to cloud-native microservices",
            "effective_date": "2022-08-20",
            "fields": {"decided_by": ["Arjun Mehta", "Omar Farah"], "status": "accepted"},
            "sections": {"Decision": "Decommission the monolith by Q3 2023.\n\nMore later."},
        }
    )
}
QUESTION = (
    "What did you know about the log retention framework as of 2022-05-31? For each "
    "thing, is it still current or has it since been changed, and what replaced it?"
)


def test_each_thing_held_then_says_what_became_of_it_dated_cited() -> None:
    assert replaced_ids(Brief.parse(THEN).subjects, DAY) == ["decisions/2022-08-20-cloud-native"]
    assert (
        replaced_ids(Brief.parse(THEN).subjects, "2022-09-01") == []
    )  # replaced before that day: not since
    found = replay(Brief.parse(THEN), DAY, NOW, QUESTION)
    assert found is not None
    lead, shown = found
    assert shown and all(x.label == INFERRED and len(x.cited) == 1 for x in shown)
    lines = [x.render() for x in shown]
    assert lead.startswith(f"As of {DAY} ")  # the question's own day
    assert "2 have since changed or been replaced, 1 still holds" in lead
    for line in lines:
        assert _LINE.match(line), line
    assert not [x for x in lines if "offsite" in x]  # says nothing of the question
    kept = lines.index
    then = next(x for x in lines if "Then: Retention of customer logs" in x)
    replaced = lines[kept(then) + 1]  # what became of it follows it
    assert replaced.startswith(
        "- 2022-08-20 · Since then: reversed; replaced by “Shift to cloud-native microservices” "
        "(2022-08-20)"
    )
    assert "decided by Arjun Mehta, Omar Farah" in replaced
    assert "Decommission the monolith by Q3 2023. More later." in replaced
    assert "source/n2.md" in replaced and replaced.endswith("[decisions/2022-08-20-cloud-native]")
    assert "decided by Arjun Mehta, Maya Patel" in then  # who decided what held then
    policy = next(x for x in lines if "Then: Log retention policy" in x)
    assert "retention days: 90" in policy
    changed = lines[kept(policy) + 1]
    assert changed.startswith("- 2023-01-10 · Since then: retention days became 30")
    assert "retention days became 30 on 2023-01-10 (source/n3.md)" in changed
    assert "owner removed (source/n4.md)" in changed and "supersedes" not in changed
    archive = next(x for x in lines if "Then: Archive retention logs" in x)
    still = lines[kept(archive) + 1]
    assert still.startswith(f"- 2022-04-02 · Still current: nothing recorded after {DAY}")
    assert still.endswith("[decisions/2022-04-02-archive-to-cold-storage]")
    # the replacement not readable now: named by its id, still dated by its change
    unread = replay(Brief.parse(THEN), DAY, {}, QUESTION)
    assert unread is not None
    assert any(
        "reversed; replaced by “decisions/2022-08-20-cloud-native”" in x.text for x in unread.lines
    )


def test_a_question_in_mongolian_gets_the_same_replay() -> None:
    question = (
        "2022-05-31-ний байдлаар log retention-ий талаар юу мэдэж байсан бэ? Одоо ч хүчинтэй юу?"
    )
    assert read(question).since_then
    found = replay(Brief.parse(THEN), DAY, NOW, question)
    assert found is not None and found.lead.startswith(f"As of {DAY} ")
    assert any("replaced by “Shift to cloud-native microservices”" in x.text for x in found.lines)


def test_nothing_held_then_is_no_replay() -> None:
    assert replay(Brief.parse({"subjects": []}), DAY, NOW, QUESTION) is None


def test_a_page_the_question_names_is_replayed_from_its_view_on_the_day() -> None:
    view: dict[str, Any] = {  # kb_get_page(id, as_of=2026-09-01)
        "id": "people/bob-martinez",
        "title": "Bob Martinez",
        "folder": "people",
        "fields": {"reports_to": "Karen Lee", "role": "Director of Operations"},
        "as_of": {
            "date": "2026-09-01",
            "known": True,
            "changed_since": [
                {"field": "reports_to", "from": "Karen Lee", "to": "Dana Whitfield",
                 "date": "2026-09-21", "source": "meetings/globex-update.md"},
            ],
        },
    }  # fmt: skip
    bob = subject_then(Page.parse(view))
    assert bob is not None
    assert subject_then(Page.parse({**view, "as_of": {**view["as_of"], "known": False}})) is None
    meeting = {
        "id": "meetings/2026-07-22-globex-demo",
        "title": "Globex demo",
        "date": "2026-07-22",
        "current": {"attendees": ["Bob Martinez", "Karen Lee"], "date": "2026-07-22"},
        "changed_since": [],
    }
    question = "Who did Bob Martinez report to as of 2026-09-01, and is that still current?"
    found = replay(Brief.parse({"subjects": [meeting]}), "2026-09-01", {}, question, [bob])
    assert found is not None
    # the named page says the question's relation too ("reports to"): it comes first
    assert found.lines[0].render() == (
        "- 2026-09-01 · Then: Bob Martinez: reports to: Karen Lee; role: Director of "
        "Operations (inferred) [people/bob-martinez]"
    )
    assert found.lines[1].render() == (
        "- 2026-09-21 · Since then: reports to became Dana Whitfield on "
        "2026-09-21 (source/meetings/globex-update.md) (inferred) [people/bob-martinez]"
    )
    assert "1 has since changed or been replaced, 1 still holds" in found.lead


def test_what_a_kept_thing_replaced_is_kept_though_it_says_less_of_the_question() -> None:
    adopt = {
        "id": "decisions/adopt",
        "title": "Adopt a new data retention policy",
        "date": "2022-05-01",
        "status": "superseded",
        "superseded_by": ["decisions/retain"],
        "changed_since": [],
    }
    retain = {  # "retain" is not "retention": it says no word of the question
        "id": "decisions/retain",
        "title": "Helix will now retain customer logs for 90 days",
        "date": "2022-05-01",
        "status": "accepted",
        "supersedes": ["decisions/adopt"],
        "changed_since": [],
    }
    other = {
        "id": "decisions/api",
        "title": "Pivot to an API-first architecture",
        "date": "2021-04-15",
    }
    question = "What did you know about the data retention policy as of 2022-05-31? Still current?"
    found = replay(Brief.parse({"subjects": [adopt, other, retain]}), DAY, {}, question)
    assert found is not None
    cited = [page for line in found.lines for page in line.cited]
    assert "decisions/retain" in cited and "decisions/api" not in cited
    assert (
        found.lines[0].render().startswith("- 2022-05-01 · Then: Adopt a new data retention policy")
    )
