"""Corrections read by the rules extractor: a later record amending, clarifying or
revising an earlier one, named by its day. English and Mongolian, reworded; a negated
or unnamed correction is none."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from ingest_agent.extract import correction_words as cues
from ingest_agent.extract.rules import RulesExtractor
from ingest_agent.records import DecisionRef, Source
from memserver.kb.schema import load_schema

SCHEMA = load_schema(Path(__file__).parents[1] / "data" / "company" / "schema.yaml")
RULES = RulesExtractor(SCHEMA)


def refs(path: str, day: dt.date, text: str) -> list[DecisionRef]:
    return list(RULES.extract(Source(path, text, "0" * 64, day), (), {}).reversals)


def test_correction_cues_are_read_in_both_languages_and_a_negated_one_is_none() -> None:
    for said in (
        "Update the 2021-04-15 decision record to correct the earlier misunderstanding.",
        "Maya and Arjun agreed to amend the roadmap.",
        "They clarified that the 2021-06-18 disagreement was a miscommunication.",
        "Previously we believed we had agreed on two prototypes.",
        "As of today the correct account is that we chose a hybrid.",
        "2021-04-15-ны шийдвэрийг засварлав.",
        "Өмнөх тохиролцоог залруулж, шинэ журам баталлаа.",
        "Өмнө нь бид хоёр загвар туршина гэж үзэж байсан.",
    ):
        assert cues.correction(said) is not None, said
    for said in (
        "We did not amend the roadmap.",
        "We might revise the plan next quarter.",
        "Issue a memo to the team clarifying the change.",
        "The outage lasted two hours.",
    ):
        assert cues.correction(said) is None, said
    assert cues.names_earlier("this clarification supersedes the earlier 2021 decision")
    assert cues.names_earlier("өмнөх шийдвэрийг өөрчиллөө")
    assert not cues.names_earlier("we agreed to a hybrid API strategy")


def test_only_a_sentence_s_first_thousand_characters_are_read() -> None:
    """A note of one long unpunctuated line is read in linear time: a cue past the cut
    is not seen (ordinary sentences are far shorter)."""
    filler = "the load balancer issue was discussed again " * 30  # 1,320 characters
    assert cues.correction(f"We amended the record; {filler}") is not None
    assert cues.correction(f"{filler} and we amended the record") is None
    cause = "The actual root cause was a misconfigured DNS record"
    assert cues.revised_cause(cause) is not None
    assert cues.revised_cause(f"{filler} {cause}") is None


def test_a_revised_root_cause_is_read_with_the_cause_believed_before() -> None:
    cases = {
        "The actual root cause of the 2021-05-22 outage was a misconfigured DNS record, "
        "not a load balancer misconfiguration.": (
            "misconfigured DNS record",
            "load balancer misconfiguration",
        ),
        "Previously we believed the load balancer was the culprit on 2021-05-22, but as of "
        "today the DNS record misconfiguration is the root cause.": (
            "DNS record misconfiguration",
            "load balancer",
        ),
        "The postmortem concluded that an expired certificate was the root cause, and the "
        "previously suspected disk failure was ruled out.": (
            "expired certificate",
            "disk failure",
        ),
        "2021-05-22-ны тасалдлын жинхэнэ шалтгаан нь DNS бичлэгийн буруу тохиргоо байсан, "
        "ачаалал тэнцвэржүүлэгчийн алдаа гэсэн таамаг үгүйсгэгдсэн.": (
            "DNS бичлэгийн буруу тохиргоо",
            "ачаалал тэнцвэржүүлэгчийн алдаа",
        ),
    }
    for said, (now, before) in cases.items():
        assert cues.revised_cause(said) == cues.Cause(now, before), said
    # a cause stated the first time, or a doubt, revises nothing
    assert cues.revised_cause("The root cause was a disk failure.") is None
    assert cues.revised_cause("The outage was caused by a disk failure.") is None


AMENDING = """---
title: Roadmap audit
type: meeting
date: 2022-05-10
---

## Discussion
- Arjun noted that the 2021-04-15 record documents the decision as a pivot to an API‑first
  architecture.

## Decisions
- Update the 2021-04-15 decision record to correct the earlier misunderstanding.
- Issue a memo to the teams clarifying the change.
"""


def test_an_amending_decision_names_the_earlier_record_by_its_day_with_the_notes_words() -> None:
    [ref] = refs("meetings/2022-05-10-audit.md", dt.date(2022, 5, 10), AMENDING)
    assert (ref.status, ref.on, ref.day) == ("amended", dt.date(2021, 4, 15), dt.date(2022, 5, 10))
    assert ref.title.startswith("Update the 2021-04-15 decision record")
    assert "pivot" in ref.words and "API" in ref.words  # what the note says of that day


def test_a_note_that_says_it_clarifies_an_earlier_decision_amends_it_with_its_first() -> None:
    note = (
        "---\ntitle: API strategy clarification\ntype: meeting\ndate: 2022-07-20\n---\n\n"
        "## Discussion\n- The original note from 2021-06-18 had us prototyping both, but that "
        "was a misinterpretation of the spec.\n- This clarification supersedes the earlier "
        "decision.\n\n## Decisions\n- Adopt a hybrid API strategy.\n- Communicate the change "
        "to the engineering team.\n"
    )
    [ref] = refs("meetings/2022-07-20-api.md", dt.date(2022, 7, 20), note)
    assert (ref.status, ref.on, ref.title) == (
        "amended",
        dt.date(2021, 6, 18),
        "Adopt a hybrid API strategy",
    )
    # "we believed we decided ..." restates the earlier belief: no decision of that day
    said = "We believed we decided to prototype both approaches. We agreed to adopt a hybrid."
    found = RULES.extract(
        Source("m.md", f"---\ntype: meeting\ndate: 2022-07-20\n---\n\n{said}\n", "0" * 64,
               dt.date(2022, 7, 20)), (), {},
    )  # fmt: skip
    titles = [d.title for d in found.drafts if d.folder == "decisions"]
    assert titles == ["Adopt a hybrid"]


def test_a_mongolian_amendment_and_what_names_no_earlier_day_or_denies_it() -> None:
    note = (
        "---\ntitle: Үнийн хурал\ntype: meeting\ndate: 2026-05-12\n---\n\n"
        "## Шийдвэрүүд\n- **Тогтмол төлбөрийн шийдвэрийг засварлав**: 2026-02-01-ний сар "
        "бүрийн тогтмол төлбөрийн шийдвэрт нэмэлт өөрчлөлт оруулав.\n"
    )
    [ref] = refs("meetings/2026-05-12-une.md", dt.date(2026, 5, 12), note)
    assert (ref.status, ref.on) == ("amended", dt.date(2026, 2, 1))
    assert "тогтмол" in ref.words
    for decisions in (
        "- Amend the roadmap to show the analytics platform.",  # no earlier day named
        "- We did not amend the 2021-04-15 decision record; the pivot stands.",
    ):
        note = (
            f"---\ntitle: Sync\ntype: meeting\ndate: 2022-05-10\n---\n\n## Decisions\n{decisions}\n"
        )
        assert refs("meetings/sync.md", dt.date(2022, 5, 10), note) == [], decisions


POSTMORTEM = """---
title: "Postmortem: 2021-05-22 outage, corrected root cause"
type: incident
date: 2022-06-15
---

## Summary
When the 2021-05-22 outage was first resolved, the working theory was a load balancer
misconfiguration.

## Root Cause
The actual root cause of the 2021-05-22 outage was a misconfigured DNS record, not a load
balancer misconfiguration.
"""


def test_a_postmortem_revises_the_root_cause_of_the_incident_of_the_day_it_names() -> None:
    [ref] = refs("incidents/pm.md", dt.date(2022, 6, 15), POSTMORTEM)
    assert (ref.status, ref.folder, ref.on) == ("revised", "incidents", dt.date(2021, 5, 22))
    assert (ref.reason, ref.earlier) == (
        "misconfigured DNS record",
        "load balancer misconfiguration",
    )
    assert "load balancer" in ref.words
    # a meeting note saying the same revises nothing by itself: no incident page of its own
    meeting = POSTMORTEM.replace("type: incident", "type: meeting")
    assert refs("meetings/pm.md", dt.date(2022, 6, 15), meeting) == []
