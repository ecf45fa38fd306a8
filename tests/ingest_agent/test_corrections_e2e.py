"""Corrections through a real memory server, without a model: a later note amending a
decision or revising an incident's root cause is linked to the earlier page, in either
order of ingestion, in English and Mongolian; an ambiguous reference links nothing."""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from memserver.kb.page import Page
from tests.ingest_agent.conftest import Ingest, IngestServer, serve_kb

SCHEMA = Path(__file__).parent / "data" / "company" / "schema.yaml"


@pytest.fixture
def company(tmp_path: Path, pg_url: str) -> Iterator[IngestServer]:
    """A knowledge base of the tests' company schema (decisions, incidents), no notes."""
    kb_dir = tmp_path / "company"
    (kb_dir / "source").mkdir(parents=True)
    shutil.copy(SCHEMA, kb_dir / "schema.yaml")
    with serve_kb(kb_dir, pg_url) as server:
        yield server


def write(server: IngestServer, path: str, text: str) -> None:
    file = server.paths.source / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")


def run(ingest: Ingest, server: IngestServer, *paths: str) -> None:
    for path in paths:
        status, summary = ingest(server, "--file", path)
        assert status == 0 and summary["ingested"] == 1, summary


def page(server: IngestServer, page_id: str) -> Page:
    found: Page = server.kb().get_page(page_id).page
    return found


def page_id(server: IngestServer, folder: str, title: str) -> str:
    """The id of the page titled ``title`` (or the one page whose title starts so)."""
    listed, _ = server.kb().list_pages(folder=folder)
    titles = {p.id: page(server, p.id).title for p in listed}
    exact = [pid for pid, t in titles.items() if t == title]
    [found] = exact or [pid for pid, t in titles.items() if t.startswith(title)]
    return str(found)


PIVOT = "meetings/2021-04-15-pivot.md"
AUDIT = "meetings/2022-05-10-audit.md"
PIVOT_ID = "decisions/2021-04-15-pivot-to-an-api-first-architecture"
HIRE_ID = "decisions/2021-04-15-hire-two-backend-engineers"


def pivot_and_audit(server: IngestServer) -> None:
    write(
        server,
        PIVOT,
        "---\ntitle: Pivot meeting\ntype: meeting\ndate: 2021-04-15\n---\n\n## Decisions\n"
        "- Pivot to an API-first architecture.\n- Hire two backend engineers.\n",
    )
    write(
        server,
        AUDIT,
        "---\ntitle: Decision audit\ntype: meeting\ndate: 2022-05-10\n---\n\n## Discussion\n"
        "- The 2021-04-15 record describes the pivot as an API-first architecture; what we "
        "agreed was a cloud analytics platform.\n\n## Decisions\n"
        "- Update the 2021-04-15 decision record to correct the earlier misunderstanding.\n",
    )


@pytest.mark.parametrize("order", ["earlier first", "correction first"])
def test_an_amendment_links_the_decision_of_the_day_it_names_in_either_order(
    company: IngestServer, ingest: Ingest, order: str
) -> None:
    pivot_and_audit(company)
    run(ingest, company, *((PIVOT, AUDIT) if order == "earlier first" else (AUDIT, PIVOT)))
    amend_id = page_id(company, "decisions", "Update the 2021-04-15 decision record")
    old, new = page(company, PIVOT_ID), page(company, amend_id)
    assert (old.fields["status"], old.fields["superseded_by"]) == ("amended", amend_id)
    assert new.fields["supersedes"] == PIVOT_ID
    assert "API-first" in old.sections["Decision"]  # what was first believed stays
    [entry] = [e for e in old.timeline if e.source == AUDIT]
    assert entry.date == dt.date(2022, 5, 10) and amend_id in entry.text
    assert AUDIT in old.sources and not new.open_questions
    assert page(company, HIRE_ID).fields["status"] == "accepted"  # the other of that day


def test_a_mongolian_amendment_read_before_the_decision_is_linked_when_it_arrives(
    company: IngestServer, ingest: Ingest
) -> None:
    older = "meetings/2026-02-01-une.md"
    later = "meetings/2026-05-12-une.md"
    write(
        company,
        later,
        "---\ntitle: Үнийн хурал\ntype: meeting\ndate: 2026-05-12\n---\n\n## Шийдвэрүүд\n"
        "- **Тогтмол төлбөрийг засварлав**: 2026-02-01-ний сар бүрийн тогтмол төлбөрийн "
        "шийдвэрт нэмэлт өөрчлөлт оруулж, жижиг харилцагчид хагас төлбөр төлнө.\n",
    )
    write(
        company,
        older,
        "---\ntitle: Үнийн хурал\ntype: meeting\ndate: 2026-02-01\n---\n\n## Шийдвэрүүд\n"
        "- **Сар бүрийн тогтмол төлбөр**: сар бүр 2,000,000 төгрөг.\n"
        "- **Хүргэлтийн бүс**: Дархан хот нэмэгдэнэ.\n",
    )
    run(ingest, company, later)
    new_id = page_id(company, "decisions", "Тогтмол төлбөрийг засварлав")
    waiting = page(company, new_id)
    assert "supersedes" not in waiting.fields and len(waiting.open_questions) == 1
    run(ingest, company, older)
    old_id = page_id(company, "decisions", "Сар бүрийн тогтмол төлбөр")
    old, new = page(company, old_id), page(company, new_id)
    assert new.fields["supersedes"] == old_id and not new.open_questions
    assert (old.fields["status"], old.fields["superseded_by"]) == ("amended", new_id)
    assert "2,000,000" in old.sections["Decision"]
    other = page(company, page_id(company, "decisions", "Хүргэлтийн бүс"))
    assert other.fields["status"] == "accepted"


def test_an_amendment_two_decisions_of_that_day_fit_equally_links_neither(
    company: IngestServer, ingest: Ingest
) -> None:
    write(
        company,
        PIVOT,
        "---\ntitle: Pricing meeting\ntype: meeting\ndate: 2021-04-15\n---\n\n## Decisions\n"
        "- Pricing per seat for small fleets.\n- Pricing per shipment for large fleets.\n",
    )
    write(
        company,
        AUDIT,
        "---\ntitle: Pricing audit\ntype: meeting\ndate: 2022-05-10\n---\n\n## Decisions\n"
        "- Amend the 2021-04-15 pricing decision for fleets.\n",
    )
    run(ingest, company, PIVOT, AUDIT)
    listed, _ = company.kb().list_pages(folder="decisions")
    for found in listed:
        stored = page(company, found.id)
        assert stored.fields["status"] == "accepted", found.id
        assert "supersedes" not in stored.fields and "superseded_by" not in stored.fields


INCIDENT = "incidents/2021-05-22-outage.md"
POSTMORTEM = "incidents/2022-06-15-postmortem.md"


@pytest.mark.parametrize("order", ["earlier first", "correction first"])
def test_a_postmortem_revises_the_root_cause_of_the_incident_in_either_order(
    company: IngestServer, ingest: Ingest, order: str
) -> None:
    write(
        company,
        INCIDENT,
        "---\ntitle: Load balancer outage\ntype: incident\ndate: 2021-05-22\nstatus: resolved\n"
        "---\n\n## Summary\nA two-hour outage; the load balancer was misconfigured.\n",
    )
    write(
        company,
        POSTMORTEM,
        "---\ntitle: Postmortem of the 2021-05-22 outage\ntype: incident\ndate: 2022-06-15\n"
        "---\n\n## Root Cause\nThe actual root cause of the 2021-05-22 load balancer outage "
        "was a misconfigured DNS record, not a load balancer misconfiguration.\n",
    )
    both = (INCIDENT, POSTMORTEM)
    run(ingest, company, *(both if order == "earlier first" else reversed(both)))
    outage_id = page_id(company, "incidents", "Load balancer outage")
    pm_id = page_id(company, "incidents", "Postmortem")
    old, new = page(company, outage_id), page(company, pm_id)
    assert old.fields["root_cause"] == "misconfigured DNS record"
    assert set(old.sources) == {INCIDENT, POSTMORTEM}  # both sources cited
    assert "load balancer was misconfigured" in old.sections["Summary"]  # nothing blanked
    kept = [
        e for e in old.timeline if e.date == dt.date(2021, 5, 22) and "first understood" in e.text
    ]
    assert kept and "load balancer misconfiguration" in kept[0].text
    [revision] = [e for e in old.timeline if e.text.startswith("Root cause revised by")]
    assert (revision.date, revision.source) == (dt.date(2022, 6, 15), POSTMORTEM)
    assert pm_id in revision.text
    assert new.fields["root_cause"] == "misconfigured DNS record" and not new.open_questions
    assert any(outage_id in e.text for e in new.timeline)


def test_a_mongolian_postmortem_revises_the_incident_and_another_day_is_left_alone(
    company: IngestServer, ingest: Ingest
) -> None:
    write(
        company,
        "incidents/2026-03-03-tasaldal.md",
        "---\ntitle: Серверийн тасалдал\ntype: incident\ndate: 2026-03-03\n---\n\n"
        "## Summary\nСерверийн тасалдал хоёр цаг үргэлжилсэн.\n",
    )
    write(
        company,
        "incidents/2026-03-04-tasaldal.md",
        "---\ntitle: Серверийн тасалдал дахин\ntype: incident\ndate: 2026-03-04\n---\n\n"
        "## Summary\nДахин тасалдал гарсан.\n",
    )
    write(
        company,
        "incidents/2026-04-10-dun.md",
        "---\ntitle: Тасалдлын дүгнэлт\ntype: incident\ndate: 2026-04-10\n---\n\n"
        "## Root Cause\n2026-03-03-ны серверийн тасалдлын жинхэнэ шалтгаан нь гэрчилгээний "
        "хугацаа дууссан байсан, дискний алдаа гэсэн таамаг үгүйсгэгдсэн.\n",
    )
    run(
        ingest,
        company,
        "incidents/2026-04-10-dun.md",
        "incidents/2026-03-03-tasaldal.md",
        "incidents/2026-03-04-tasaldal.md",
    )
    old = page(company, page_id(company, "incidents", "Серверийн тасалдал"))
    assert old.fields["root_cause"] == "гэрчилгээний хугацаа дууссан"
    assert any("дискний алдаа" in e.text for e in old.timeline)
    other = page(company, page_id(company, "incidents", "Серверийн тасалдал дахин"))
    assert "root_cause" not in other.fields
    assert not page(company, page_id(company, "incidents", "Тасалдлын дүгнэлт")).open_questions
