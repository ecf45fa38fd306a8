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
