"""A "who" question that names a role is answered by the person whose page holds that
role at the company asked about: a person's field holding every word asked, on a page
that names the company, leads (the role's words matched across English and Mongolian
by the glossary)."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_the_person_holding_the_role_asked_for_leads(example: IngestServer) -> None:
    first = lines(ask(example, "Who is Globex's VP of Operations?"))[0]
    assert first.startswith("2026-09-21 · Bob Martinez — role: VP of Operations"), first


def test_a_role_holder_at_another_company_does_not_lead(example: IngestServer) -> None:
    # Batbayar Dorj is a Country Manager, of no page naming Nomin Trade: not its manager
    first = lines(ask(example, "Who is the IT manager at Nomin Trade?"))[0]
    assert not first.startswith("Batbayar Dorj — role:"), first


def test_a_role_spelled_out_finds_the_person_whose_page_abbreviates_it(
    example: IngestServer,
) -> None:
    first = lines(ask(example, "Who is Globex's chief operating officer?"))[0]
    assert first.startswith("Karen Lee — role: COO"), first
    # "гүйцэтгэх захирал" (executive director) is the Mongolian for a CEO
    first = lines(ask(example, "Globex-ийн гүйцэтгэх захирал хэн бэ?"))[0]
    assert "Dana Whitfield" in first and "CEO" in first, first


def test_a_thing_named_with_an_abbreviation_is_found_by_its_words(example: IngestServer) -> None:
    # the project is titled "Globex ETA Rollout"
    first = lines(ask(example, "Who owns the Globex estimated time of arrival rollout?"))[0]
    assert "owner: Priya Shah" in first, first


def test_who_is_in_charge_is_answered_by_who_owns_it(example: IngestServer) -> None:
    first = lines(ask(example, "Who is in charge of the Globex rollout?"))[0]
    assert "Priya will own the Globex rollout" in first, first


def test_who_runs_a_part_of_a_company_is_the_person_whose_role_heads_it(
    example: IngestServer,
) -> None:
    # "runs" is in no role: a role at the head of procurement ("Manager") holds it
    first = lines(ask(example, "Who runs procurement at Initech?"))[0]
    assert "Alex Novak (Procurement Manager" in first or "Alex Novak — role:" in first, first
    # "удирддаг" (manages) our sales: the Head of Sales, across the languages
    first = lines(ask(example, "Манай борлуулалтыг хэн удирддаг вэ?"))[0]
    assert "Alex Kim — role: Head of Sales" in first, first


def test_the_head_of_a_whole_organisation_is_the_role_that_names_no_part(
    example: IngestServer,
) -> None:
    # Bob Martinez (VP of Operations) and Karen Lee (COO) head parts of Globex
    first = lines(ask(example, "Who leads Globex?"))[0]
    assert first.startswith("Dana Whitfield — role: CEO"), first


def test_our_organisation_is_answered_by_our_people_not_another_company_s(
    example: IngestServer,
) -> None:
    # Dana Whitfield is a CEO too, of Globex; the schema names Acme Logistics as ours
    for question in (
        "Who is our CEO?",
        "Who runs Acme Logistics?",
        "Манай компанийг хэн удирддаг вэ?",
    ):
        first = lines(ask(example, question))[0]
        assert first.startswith("Maria Lopez — role: CEO"), (question, first)
    # no word of the question is in "Tom Becker — role: CTO": a search of people's roles
    first = lines(ask(example, "Who heads technology at our company?"))[0]
    assert first.startswith("Tom Becker — role: CTO"), first


def test_who_works_at_a_company_lists_the_people_whose_link_names_it(
    example: IngestServer,
) -> None:
    # a link of people's pages to companies ("company", verb works_at) read from its
    # other end, as "who reports to" reads people's link to people
    first = lines(ask(example, "Who works at Globex?"))[0]
    assert first.startswith("Works at Globex: "), first
    assert all(n in first for n in ("Bob Martinez", "Dana Whitfield", "Karen Lee")), first
    assert "decisions/" not in first  # a decision's company is no one's employer
