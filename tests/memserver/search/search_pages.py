"""Test helper for the search tests: a small knowledge base with known answers.

``search_world`` (module-scoped fixture) writes it through ``KnowledgeBase.put_page``
(hash embedder, its own database) and indexes three raw sources. Import the fixture
into a test module to use it. The ``hr`` folder holds pages that match most test
questions (names, invoice number, dates) so scope tests can show they never leak.

Reference time for every test: ``NOW`` (2026-11-20 12:00 in Asia/Ulaanbaatar).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memserver.clients.embed import HashEmbedder
from memserver.db.database import create_database, drop_database, with_database
from memserver.kb.page import Page, TimelineEntry
from memserver.search.pipeline import Searcher
from memserver.store.knowledge_base import KnowledgeBase

NOW = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=8)))

SCHEMA = """\
timezone: Asia/Ulaanbaatar
folders:
  - name: people
    type: person
    description: People, their roles and who they report to. Хүмүүс.
    fields:
      - {name: role, type: string}
      - {name: company, type: link, folder: companies, verb: works_at}
      - {name: reports_to, type: link, folder: people, verb: reports_to}
    sections: [Summary]
    link_verbs:
      - {verb: reports_to, to: people, patterns: ["reports to"]}
  - name: companies
    type: company
    description: Customers and partners. Компани.
    fields:
      - {name: status, type: string}
    sections: [Summary]
  - name: meetings
    type: meeting
    description: Meetings and calls on one date. Уулзалт, хурал.
    slug: "{date}-{title}"
    date_field: date
    recency_halflife_days: 60
    fields:
      - {name: date, type: date, required: true}
      - {name: attendees, type: links, folder: people, verb: attended}
      - {name: company, type: link, folder: companies, verb: about}
    sections: [Summary, Decisions]
    timeline: false
  - name: decisions
    type: decision
    description: Decisions with the day they were made. Шийдвэр.
    slug: "{date}-{title}"
    date_field: date
    recency_halflife_days: 180
    source_boost: 1.2
    fields:
      - {name: date, type: date, required: true}
    sections: [Decision]
    timeline: false
  - name: hr
    type: note
    description: Confidential HR notes.
    slug: "{date}-{title}"
    date_field: date
    fields:
      - {name: date, type: date, required: true}
      - {name: about, type: links, folder: people, verb: concerns}
    sections: [Note]
    timeline: false
"""

PUBLIC = ("people", "companies", "meetings", "decisions")


def person(title: str, role: str, summary: str, **fields: Any) -> tuple[str, Page]:
    timeline = fields.pop("timeline", ())
    aliases = fields.pop("aliases", ())
    return "people", Page(
        title=title,
        type="person",
        fields={"role": role, **fields},
        aliases=tuple(aliases),
        sections={"Summary": summary},
        timeline=tuple(TimelineEntry(dt.date.fromisoformat(d), t) for d, t in timeline),
    )


def meeting(
    day: str, title: str, attendees: list[str], summary: str, **extra: Any
) -> tuple[str, Page]:
    return "meetings", Page(
        title=title,
        type="meeting",
        fields={"date": day, "attendees": attendees, **extra},
        sections={"Summary": summary},
    )


def decision(day: str, title: str, text: str) -> tuple[str, Page]:
    return "decisions", Page(
        title=title, type="decision", fields={"date": day}, sections={"Decision": text}
    )


PAGES: list[tuple[str, Page]] = [
    person("Dana Whitfield", "CEO", "Dana Whitfield is the chief executive of Acme Logistics."),
    person(
        "Alice Chen",
        "Head of Product",
        "Alice Chen leads product at Acme and reports to Dana Whitfield.",
        reports_to="Dana Whitfield",
        timeline=[("2026-11-05", "Presented the roadmap at the November review.")],
    ),
    person(
        "Bob Martinez",
        "VP of Operations",
        "Bob Martinez runs operations at Globex, promoted in September 2026.",
        company="Globex",
        reports_to="Dana Whitfield",
        aliases=["Bob"],
        timeline=[
            ("2026-11-12", "Agreed the go-live date at the integration review."),
            ("2026-09-21", "Promoted to VP of Operations."),
        ],
    ),
    person(
        "Tom Becker",
        "Engineering Manager",
        "Tom Becker manages the backend team and reports to Alice Chen.",
        reports_to="Alice Chen",
    ),
    person(
        "Sofia Rossi",
        "Backend Engineer",
        "Sofia Rossi builds the metering service and reports to Tom Becker.",
        reports_to="Tom Becker",
    ),
    person(
        "Батбаяр Дорж",
        "Country Manager",
        "Батбаяр Дорж нь Монгол дахь борлуулалтыг хариуцдаг.",
        aliases=["Bataa", "Batbayar Dorj"],
    ),
    (
        "companies",
        Page(
            title="Globex",
            type="company",
            fields={"status": "customer"},
            sections={"Summary": "Globex is a Denver freight distributor running our pilot."},
            timeline=(
                TimelineEntry(dt.date(2026, 10, 27), "Invoice INV-2026-044 paid ($18,400)."),
                TimelineEntry(dt.date(2026, 10, 1), "Invoice INV-2026-044 sent for the pilot."),
            ),
        ),
    ),
    (
        "companies",
        Page(
            title="Номин Трейд",
            type="company",
            aliases=("Nomin Trade",),
            fields={"status": "customer"},
            sections={"Summary": "Номин Трейд бол Улаанбаатарын түгээлтийн компани."},
        ),
    ),
    meeting(
        "2026-07-08",
        "Roadmap review",
        ["Alice Chen", "Tom Becker"],
        "Alice Chen walked through the summer roadmap: metering and the driver app.",
    ),
    meeting(
        "2026-09-15",
        "Globex weekly check-in",
        ["Bob Martinez"],
        "Weekly check-in with Globex on the pilot: ETA accuracy improved.",
        company="Globex",
    ),
    meeting(
        "2026-11-05",
        "Roadmap review",
        ["Alice Chen"],
        "November roadmap review led by Alice Chen: localization moves to December.",
    ),
    meeting(
        "2026-11-12",
        "Globex integration review",
        ["Bob Martinez"],
        "Integration review with Globex; Alice Chen's roadmap was mentioned but she "
        "was not there. Go-live agreed for 2026-12-01.",
        company="Globex",
    ),
    meeting(
        "2026-12-03",
        "Globex go-live check",
        ["Bob Martinez"],
        "Planned: check the Globex go-live a few days after it starts.",
        company="Globex",
    ),
    meeting(
        "2026-11-18",
        "Номин Трейд гэрээний уулзалт",
        ["Батбаяр Дорж"],
        "Номин Трейдтэй 12 сарын гэрээ байгуулав.",
        company="Номин Трейд",
    ),
    decision(
        "2026-07-15",
        "Per-seat pricing",
        "We price per seat: $49 per user per month.",
    ),
    decision(
        "2026-10-07",
        "Usage-based pricing",
        "Pricing becomes usage-based: $0.45 per tracked shipment, reversing per-seat pricing.",
    ),
    (
        "hr",
        Page(
            title="Alice Chen compensation review",
            type="note",
            fields={"date": "2026-11-17", "about": ["Alice Chen", "Bob Martinez"]},
            sections={
                "Note": "Confidential: Alice Chen and Bob Martinez, Globex pricing, roadmap "
                "review, invoice INV-2026-044, meeting with Globex."
            },
        ),
    ),
]

SOURCES = {
    "notes/2026-11-16-call-with-bob.md": "# Call with Bob\n\nBob asked about the Globex "
    "go-live checklist and the warehouse tablets.\n",
    "notes/2026-10-02-invoice-followup.md": "# Invoice follow-up\n\nSent INV-2026-044 to "
    "Globex accounts payable in Zgorzelec.\n",
    "notes/2026-06-01-kickoff.md": "# Kickoff\n\nFirst notes about the driver app.\n",
}


@dataclass
class World:
    kb: KnowledgeBase
    searcher: Searcher
    ids: dict[str, str]  # title -> page id
    database_url: str

    def id(self, title: str, day: str | None = None) -> str:
        if day is not None:
            return self.ids[f"{title}@{day}"]
        return self.ids[title]


def build_world(kb_dir: Path, database_url: str) -> World:
    kb_dir.mkdir(parents=True)
    (kb_dir / "schema.yaml").write_text(SCHEMA, encoding="utf-8")
    for rel, text in SOURCES.items():
        path = kb_dir / "source" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    kb = KnowledgeBase.open(kb_dir, embedder=HashEmbedder(), database_url=database_url)
    ids: dict[str, str] = {}
    for folder, page in PAGES:
        result = kb.put_page(folder, page, None, written_by="test")
        ids[page.title] = result.id
        if "date" in page.fields:
            ids[f"{page.title}@{page.fields['date']}"] = result.id
    kb.manifest.scan()
    kb.reindex()
    return World(kb, Searcher.for_kb(kb, route=False), ids, database_url)


@pytest.fixture(scope="module")
def search_world(
    tmp_path_factory: pytest.TempPathFactory, pg_url: str, _db_template: str
) -> Iterator[World]:
    name = f"memsearch_{uuid.uuid4().hex[:12]}"
    create_database(pg_url, name, template=_db_template)
    url = with_database(pg_url, name)
    world = build_world(tmp_path_factory.mktemp("search") / "kb", url)
    try:
        yield world
    finally:
        world.searcher.close()
        world.kb.close()
        drop_database(pg_url, name)
