"""Which earlier record a correction names, and what it does to both pages: an amended
decision, a revised root cause; an ambiguous reference changes nothing. No server."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

from ingest_agent.pages.reversals import (
    best_match,
    pending_question,
    pending_refs,
    reversed_page,
    revised_page,
    revising_page,
)
from ingest_agent.records import DecisionRef
from memserver.kb.page import Page, TimelineEntry, validate_page
from memserver.kb.schema import load_schema

SCHEMA = load_schema(Path(__file__).parents[1] / "data" / "company" / "schema.yaml")
DECISIONS = SCHEMA.folder("decisions")
INCIDENTS = SCHEMA.folder("incidents")
D = dt.date


def decision(title: str, day: dt.date, **fields: object) -> Page:
    return Page(
        title=title,
        type="decision",
        fields={"decided_on": day.isoformat(), "status": "accepted", **fields},
        sources=(f"{day}.md",),
        sections={"Decision": f"{title}, as first written."},
    )


PAGES = {
    "decisions/2021-04-15-pivot-to-an-api-first-architecture": decision(
        "Pivot to an API-first architecture", D(2021, 4, 15)
    ),
    "decisions/2021-04-15-update-product-roadmap": decision(
        "Update product roadmap and pursue a funding round", D(2021, 4, 15)
    ),
    "decisions/2021-06-18-prototype-a-restful-endpoint": decision(
        "Prototype a RESTful endpoint for shipment status", D(2021, 6, 18)
    ),
    "decisions/2021-06-18-build-a-graphql-schema": decision(
        "Build a GraphQL schema for analytics", D(2021, 6, 18)
    ),
}


def amended(on: dt.date | None, words: str) -> DecisionRef:
    return DecisionRef(
        "decisions", "Amend the roadmap", D(2022, 5, 10), None, on, words, "amended",
        "", "meetings/2022-05-10-audit.md",
    )  # fmt: skip


def test_an_amendment_names_the_page_of_its_day_that_the_notes_words_fit_best() -> None:
    said = amended(
        D(2021, 4, 15), "the 2021-04-15 record documents a pivot to an API‑first architecture"
    )
    assert (
        best_match(said, PAGES, DECISIONS)
        == "decisions/2021-04-15-pivot-to-an-api-first-architecture"
    )
    # "prototyping" is the word "Prototype" of the title
    said = amended(D(2021, 6, 18), "the 2021-06-18 note had us prototyping a RESTful API")
    assert best_match(said, PAGES, DECISIONS) == "decisions/2021-06-18-prototype-a-restful-endpoint"


def test_an_ambiguous_or_thin_or_undated_amendment_names_no_page() -> None:
    # both pages of that day say as much of it: no link rather than a wrong one
    said = amended(
        D(2021, 6, 18), "the 2021-06-18 prototype of the shipment status and analytics schema"
    )
    two = {
        "decisions/a": decision("Prototype shipment status", D(2021, 6, 18)),
        "decisions/b": decision("Prototype analytics schema", D(2021, 6, 18)),
    }
    assert best_match(said, two, DECISIONS) is None
    # one word in common is no fit; another day's page is none either; no day, no page
    assert best_match(amended(D(2021, 4, 15), "the roadmap record"), PAGES, DECISIONS) is None
    assert (
        best_match(amended(D(2021, 4, 16), "pivot API-first architecture"), PAGES, DECISIONS)
        is None
    )
    assert best_match(amended(None, "pivot to an API-first architecture"), PAGES, DECISIONS) is None


def test_an_amended_decision_keeps_its_text_and_a_replaced_one_keeps_its_status() -> None:
    old_id = "decisions/2021-04-15-pivot-to-an-api-first-architecture"
    old = PAGES[old_id]
    said = amended(D(2021, 4, 15), "pivot API-first architecture")
    page = reversed_page(old, DECISIONS, said, "decisions/2022-05-10-amend-the-roadmap")
    assert (page.fields["status"], page.fields["superseded_by"]) == (
        "amended",
        "decisions/2022-05-10-amend-the-roadmap",
    )
    assert page.sections == old.sections and said.source in page.sources
    [entry] = page.timeline
    assert entry.date == D(2022, 5, 10) and entry.source == said.source
    assert entry.text.startswith("Amended by the decision “Amend the roadmap”")
    assert validate_page(page, DECISIONS) == []
    replaced = dataclasses.replace(
        old, fields={**old.fields, "status": "reversed", "superseded_by": "decisions/x"}
    )
    page = reversed_page(replaced, DECISIONS, said, "decisions/2022-05-10-amend-the-roadmap")
    assert (page.fields["status"], page.fields["superseded_by"]) == ("reversed", "decisions/x")
    assert len(page.timeline) == 1  # the amendment is told all the same


OUTAGE = Page(
    title="Load balancer outage",
    type="incident",
    fields={"date": "2021-05-22", "status": "resolved"},
    sources=("incident-2021-05-22.md",),
    sections={"Summary": "A two-hour outage; the load balancer was misconfigured."},
)


def revised(earlier: str = "load balancer misconfiguration") -> DecisionRef:
    return DecisionRef(
        "incidents", "Postmortem of the outage", D(2022, 6, 15), None, D(2021, 5, 22),
        "the 2021-05-22 outage load balancer", "revised", "misconfigured DNS record",
        "postmortem.md", earlier=earlier,
    )  # fmt: skip


def test_a_revised_root_cause_is_rewritten_and_the_earlier_one_kept_dated_with_both_sources() -> (
    None
):
    ref = revised()
    assert best_match(ref, {"incidents/2021-05-22-load-balancer-outage": OUTAGE}, INCIDENTS) == (
        "incidents/2021-05-22-load-balancer-outage"
    )
    page = revised_page(OUTAGE, INCIDENTS, ref, "incidents/2022-06-15-postmortem")
    assert page.fields["root_cause"] == "misconfigured DNS record"
    assert page.sources == ("incident-2021-05-22.md", "postmortem.md")
    later, earlier = sorted(page.timeline, key=lambda e: e.date, reverse=True)
    assert (later.date, later.source) == (D(2022, 6, 15), "postmortem.md")
    assert "incidents/2022-06-15-postmortem" in later.text and "load balancer" in later.text
    # the cause believed before: on the incident's day, cited to the note that says so
    assert (earlier.date, earlier.source) == (D(2021, 5, 22), "postmortem.md")
    assert page.sections == OUTAGE.sections and validate_page(page, INCIDENTS) == []
    assert revised_page(page, INCIDENTS, ref, "incidents/2022-06-15-postmortem") == page
    # a cause the page held is the one kept, cited to the page's own source
    held = dataclasses.replace(OUTAGE, fields={**OUTAGE.fields, "root_cause": "bad LB config"})
    page = revised_page(held, INCIDENTS, revised(earlier=""), "incidents/2022-06-15-postmortem")
    [kept] = [e for e in page.timeline if e.date == D(2021, 5, 22)]
    assert "bad LB config" in kept.text and kept.source == "incident-2021-05-22.md"


def test_a_revision_waits_on_the_postmortem_page_and_links_back_when_matched() -> None:
    ref = revised()
    waiting = Page(
        title="Postmortem of the outage",
        type="incident",
        fields={"date": "2022-06-15"},
        open_questions=(pending_question(ref),),
    )
    [back] = pending_refs("incidents/2022-06-15-postmortem", waiting, INCIDENTS)
    assert back == ref  # every part of it survives the wait
    linked = revising_page(
        waiting, INCIDENTS, "incidents/2021-05-22-lb", "Load balancer outage", back
    )
    assert linked.open_questions == () and linked.fields["root_cause"] == "misconfigured DNS record"
    [entry] = linked.timeline
    assert entry == TimelineEntry(
        D(2022, 6, 15),
        "Revises the root cause of “Load balancer outage” (incidents/2021-05-22-lb) of "
        "2021-05-22: misconfigured DNS record",
        "postmortem.md",
    )
