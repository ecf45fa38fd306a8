"""A company question answered from kb_brief without a model: which questions are such
questions (English and Mongolian, reworded), and the lines a brief becomes."""

from __future__ import annotations

import re
from dataclasses import replace

from read_agent.extractive.brief_reply import (
    brief_lines,
    ranked,
)
from read_agent.extractive.line import DIRECT, INFERRED, Line
from read_agent.tools.wire import Brief, Subject

_LINE = re.compile(r"^- \d{4}-\d{2}-\d{2} · .+ \((?:direct[^)]*|inferred)\) \[[^\]]+\]$")


def quoted(day: str, text: str, page: str, source: str = "", said: str | None = None) -> Line:
    return Line(text, day, (page,), DIRECT, source, said=said)


def inferred(day: str, text: str, page: str) -> Line:
    return Line(text, day, (page,), INFERRED)


BRIEF = {
    "subjects": [
        {
            "id": "decisions/2026-07-15-per-seat",
            "title": "Per-seat pricing",
            "folder": "decisions",
            "date": "2026-07-15",
            "status": "reversed",
            "current": {"decided_on": "2026-07-15", "rationale": "simple to explain"},
            "earlier": [
                {
                    "field": "status",
                    "value": "accepted",
                    "valid_from": "2026-07-15",
                    "valid_to": "2026-10-07",
                    "replaced_by": "reversed",
                    "source": "pricing-review.md",
                    "reason": "Reversed by the pricing review",
                }
            ],
            "deciders": ["Maria Lopez", "Alex Kim"],
            "supersedes": [],
            "superseded_by": ["decisions/2026-10-07-usage"],
            "changed_since": [],
        },
        {
            "id": "decisions/2026-10-07-usage",
            "title": "Usage-based pricing",
            "folder": "decisions",
            "date": "2026-10-07",
            "status": "accepted",
            "current": {"alternatives": ["per-truck"]},
            "earlier": [],
            "deciders": ["Tom Becker"],
            "supersedes": ["decisions/2026-07-15-per-seat"],
            "superseded_by": [],
            "changed_since": [],
        },
        {
            "id": "decisions/2026-11-18-nomin-price",
            "title": "Nomin Trade: 900 per delivery",
            "folder": "decisions",
            "date": "2026-11-18",
            "status": "accepted",
            "current": {"company": "Nomin Trade"},
            "earlier": [],
            "deciders": [],
            "supersedes": [],
            "superseded_by": [],
            "changed_since": [],
        },
    ],
    "conflicts": [
        {
            "page": "companies/initech",
            "field": "contract_value",
            "sides": [{"value": "120000", "source": "a.md"}, {"value": "96000", "source": "b.md"}],
            "recorded": "2026-10-20",
        }
    ],
    "evidence": [
        {
            "text": "We reverse the per-seat decision.",
            "label": "direct",
            "date": "2026-10-07",
            "source": "meetings/pricing-review.md",
            "page": "decisions/2026-10-07-usage",
            "author": "Maria Lopez",
        },
        {
            "text": "Nomin pays 900 per delivery.",
            "label": "direct",
            "date": "2026-11-18",
            "source": "meetings/nomin.md",
            "page": "decisions/2026-11-18-nomin-price",
        },
        {"text": "a timeline line", "label": "inferred", "date": "2026-10-07", "source": None},
    ],
}


def test_a_brief_becomes_dated_cited_labelled_lines_what_holds_first() -> None:
    def other_customer(subject: Subject) -> bool:
        return "company" in subject.current

    briefed = brief_lines(Brief.parse(BRIEF), other_customer, disputed=True)
    said, evidence = [x.render() for x in briefed.said], [x.render() for x in briefed.quotes]
    assert briefed.answers
    assert briefed.said[0].date == "2026-10-20" and briefed.said[0].label == INFERRED
    assert said[0].startswith("- 2026-10-20 · The sources disagree on contract value: 120000")
    assert "96000 (b.md)" in said[0]
    assert said[1].startswith("- 2026-10-07 · Usage-based pricing: accepted; decided by Tom Becker")
    assert "replaced “Per-seat pricing” of 2026-07-15" in said[1]
    per_seat = next(x for x in said if x.startswith("- 2026-07-15 · Per-seat pricing"))
    assert "reversed; decided by Maria Lopez, Alex Kim" in per_seat
    assert "replaced by “Usage-based pricing” of 2026-10-07" in per_seat
    assert "decided on" not in per_seat  # the line's own date says it
    earlier = next(x for x in said if "Earlier status" in x)
    assert earlier.startswith("- 2026-10-07 · ") and "Reversed by the pricing review" in earlier
    assert not [x for x in said if "Nomin" in x]  # another customer's own price left out
    assert evidence == [
        "- 2026-10-07 · We reverse the per-seat decision. (direct: source/meetings/"
        "pricing-review.md, by Maria Lopez) [decisions/2026-10-07-usage]"
    ]
    for line in [*said, *evidence]:
        assert _LINE.match(line), line
    undisputed, _, answers = brief_lines(Brief.parse(BRIEF), other_customer)
    assert answers  # a decision with its status  # the conflict is on no subject
    assert undisputed == briefed.said[1:]
    alone, _, _ = brief_lines(Brief(Brief.parse(BRIEF).subjects[2:3]), other_customer)
    assert alone and "Nomin" in alone[0].text  # nothing else to say: kept

    meeting = {"id": "meetings/x", "title": "Vendor review", "current": {"kind": "prospect"}}
    bare = brief_lines(Brief.parse({"subjects": [meeting]}))
    assert bare.said and not bare.answers  # a page's bare fields answer nothing


def test_a_decision_sharing_no_word_of_the_question_does_not_lead() -> None:
    usage = BRIEF["subjects"][1]  # type: ignore[index]
    asked = brief_lines(
        Brief.parse({"subjects": [usage]}), question="What did the vendor review decide?"
    )
    assert asked.said and not asked.answers
    assert brief_lines(Brief.parse({"subjects": [usage]}), question="What was our pricing?").answers


def test_lines_saying_more_of_the_question_and_its_day_come_first() -> None:
    lines = [
        quoted("2022-01-03", "Lunch menu changed.", "meetings/a", "source/a.md"),
        inferred("2022-02-01", "Retention of logs set to 90 days.", "policies/log-retention"),
        quoted("2022-05-31", "Audit of the log retention policy.", "meetings/b", "source/b.md"),
        inferred("2022-02-02", "Logs were rotated.", "policies/x"),
        inferred("2022-02-03", "Logs were archived.", "policies/y"),
    ]
    out = ranked(lines, "What was the log retention policy on 2022-05-31?")
    assert out[0] == lines[2]  # the day asked, and three words
    assert out[1] == lines[1]
    assert out[2:4] == lines[3:5]  # as much said: their order kept
    assert lines[0] not in out  # enough lines say something of it: the lunch goes
    # the day asked about may be given apart from the question ("as of March 2022")
    assert ranked(lines, "What did we know of lunch?", ["2022-05-31"])[:2] == [lines[2], lines[0]]
    # either language: "үнийн" is "pricing", "шийдвэр" is "decision"
    priced = [*lines, inferred("2022-03-01", "Pricing decision: per seat.", "decisions/p")]
    mn = ranked(priced, "Үнийн шийдвэр ямар байсан бэ?")
    assert mn[0] == priced[-1], mn


def test_asked_how_accounts_relate_a_note_s_own_words_come_first_at_equal_say() -> None:
    lines = [
        inferred("2021-05-22", "Earlier role of Omar Khaled: SRE", "people/omar-khaled"),
        quoted("2021-05-22", "@OmarKhaled: we had a 2-hour outage today.", "source/a.md"),
    ]
    question = "What did Omar Khaled say on 2021-05-22?"
    assert ranked(lines, question) == lines  # as much said: their order kept
    assert ranked(lines, question, quoted_first=True) == lines[::-1]


def test_asked_of_two_days_each_day_s_own_account_shows_early() -> None:
    later = "Luis Hernandez: the 2021-05-22 outage was DNS, not the load balancer."
    luis = "Luis Hernandez: Omar Khaled checked the DNS record."
    blamed = Line("Omar Khaled blamed the load balancer.", "2021-05-22", ("source/b.md",))
    lines = [
        quoted("2022-06-15", later, "incidents/pm", "source/pm.md"),
        quoted("2022-06-15", luis, "source/b.md"),
        quoted("2022-06-15", "Luis Hernandez: postmortem filed by Luis.", "source/c.md"),
        replace(blamed, said="2022-06-15"),
        quoted("2021-05-22", "Omar Khaled: a 2-hour outage, the load balancer.", "source/a.md"),
    ]
    question = "What did Luis Hernandez say on 2022-06-15, and Omar Khaled on 2021-05-22?"
    out = ranked(lines, question)
    assert out[0] == lines[1]  # the line saying the most of the question
    assert lines[4] in out[:3]  # what was said on 2021-05-22, not a later telling of it
    # one day asked: no account is pulled forward, and one saying nothing of it goes
    one_day = ranked(lines, "What did Luis Hernandez say on 2022-06-15?")
    assert lines[4] not in one_day
