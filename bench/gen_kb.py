"""Generate a realistic knowledge base of N pages, deterministic for a seed.

The pages follow ``example_kb/schema.yaml`` (people, companies, projects, meetings,
decisions) and look like what the ingest agent writes: people with roles, employers and
managers; companies with status, contract value, renewal date and invoices
(``INV-2025-0412``); projects with owners, teams and due dates; meetings over two
years with attendees, a company, a project, decisions and action items (ticket ids such
as ``OPS-1234``); decisions that supersede older ones. Every link field names a page
that exists, so the graph is fully wired. Optional raw sources (meeting notes, some
with ``<private>`` spans) exercise source indexing.

Library use (search benchmarks reuse the ground truth in ``GeneratedKB.pages``)::

    from bench.gen_kb import generate_kb
    kb = generate_kb(Path("/tmp/kb"), pages=1000, seed=7, sources=50)
    meetings = [p for p in kb.pages if p.folder == "meetings"]
    meetings[0].facts   # {"date": ..., "attendees": [...], "company": ..., ...}

Command line::

    .venv/bin/python -m bench.gen_kb /tmp/kb --pages 1000 --seed 7 [--sources 50]
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import random
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memserver.kb.layout import KBPaths
from memserver.kb.page import Page, TimelineEntry, check_page, page_slug, render_page
from memserver.kb.schema import Schema, load_schema

REPO = Path(__file__).resolve().parents[1]

SCHEMA = REPO / "example_kb" / "schema.yaml"
START = dt.date(2024, 7, 1)
DAYS = 730  # two years of meetings and decisions
# Share of pages per folder (the rest are meetings).


def _words(text: str) -> list[str]:
    return text.split()


SHARES = {"people": 0.20, "companies": 0.06, "projects": 0.08, "decisions": 0.16}

FIRST = _words(
    """Alice Bob Carol David Emma Frank Grace Henry Irene Jack Karen Liam Maria Noah
Olivia Paul Quinn Rachel Sam Tina Umar Vera Will Xenia Yusuf Zoe Priya Tom Alex Nina Omar
Lena Marco Sofia Hugo Ines Kenji Aiko Ravi Meera Lucas Chloe Ivan Olga Pavel Anna Diego
Lucia Ahmed Fatima Bataa Enkhtuya Bold Saraa Tuvshin Oyun Ganzorig Nomin Temuulen Anu"""
)
LAST = _words(
    """Chen Martinez Shah Becker Kim Novak Smith Johnson Garcia Müller Rossi Dubois
Tanaka Sato Patel Singh Ivanova Petrov Silva Costa Nguyen Tran Cohen Levi Okafor Mensah
Larsen Berg Kowalski Nowak Horvat Popescu Ganbaatar Batbayar Dorj Erdene Munkh Tsogt
Bayar Sukh Jensen Hansen Moreau Laurent Romano Ferrari Yilmaz Demir Haddad Farah Reyes
Cruz Wong Lee Park Choi Ito Suzuki Das Rao"""
)
CYRILLIC = ["Энхтуяа Ганбаатар", "Бат-Эрдэнэ Дорж", "Сарангэрэл Бат", "Тэмүүлэн Очир"]
COMPANY_A = _words(
    """Globex Initech Umbrella Hooli Vandelay Stark Wayne Acorn Birch Cedar Delta
Falcon Granite Harbor Ibex Juniper Kestrel Lumen Maple Nimbus Orion Pioneer Quartz Raven
Summit Tundra Unity Vertex Willow Zenith Altai Gobi Khangai Steppe Orkhon Selenge Tuul
Nomin Erdenet Borealis Cobalt Ember Frontier Helix Ironwood Jade Keystone Lotus Meridian
Northwind Onyx Polar Redwood Sierra Titan Urban Vista"""
)
COMPANY_B = _words(
    """Logistics Trade Systems Foods Mining Bank Energy Motors Labs Group Holdings
Retail Pharma Telecom Freight Farms Textiles Cargo Airlines Steel"""
)
INDUSTRIES = _words(
    """logistics retail mining banking energy manufacturing telecom agriculture
pharmaceuticals construction food-distribution airlines"""
)
CITIES = _words(
    """Ulaanbaatar Denver Aurora Pueblo Berlin Warsaw Seoul Tokyo Austin Toronto
Singapore Darkhan Erdenet Chicago Madrid Lyon"""
)
ROLES = """Account Executive|Sales Engineer|VP of Operations|Director of Operations|
Dispatcher|Head of Finance|CFO|CTO|Product Manager|Engineering Manager|Support Lead|
Data Analyst|Customer Success Manager|Warehouse Manager|Procurement Lead|COO|CEO|
Software Engineer|QA Engineer|Marketing Manager""".replace("\n", "").split("|")
AREAS = """ETA Rollout|Usage Metering|Mongolian Localization|Driver App Redesign|
Invoice Automation|Warehouse Tablets|Route Optimisation|Fleet Telematics|SSO Integration|
Customer Portal|Billing Migration|Data Warehouse|Cold Chain Monitoring|API v2|
Onboarding Revamp|Fuel Reporting|Dock Scheduling|Returns Handling|Mobile Offline Mode|
Carbon Reporting""".replace("\n", "").split("|")
MEETING_KINDS = [
    ("weekly sync", "internal"),
    ("quarterly review", "customer"),
    ("intro call", "prospect"),
    ("demo", "prospect"),
    ("pilot kickoff", "customer"),
    ("integration review", "customer"),
    ("renewal prep", "customer"),
    ("pricing review", "internal"),
    ("roadmap review", "internal"),
    ("one-on-one", "one_on_one"),
    ("incident review", "internal"),
    ("contract negotiation", "customer"),
]
TOPICS = """ETA accuracy|driver adoption|invoice disputes|tablet shared logins|coverage gaps on
the highway stretch|per-seat pricing|volume discounts|SSO rollout|data retention|the
renewal timeline|weekly feedback from dispatchers|API rate limits|late deliveries|fuel
surcharges|the Mongolian interface|support response times|warehouse scanning|the pilot
success criteria|GPS drift|customer notifications""".replace("\n", " ").split("|")
DECISION_VERBS = [
    "Adopt",
    "Switch to",
    "Pause",
    "Extend",
    "Approve",
    "Drop",
    "Standardise on",
    "Move",
]
DECISION_OBJECTS = """per-seat pricing|a 30-day pilot|weekly check-ins|the shared tablet
login|annual invoicing|the v2 API|Mongolian as a launch language|SMS notifications|a
dedicated support channel|quarterly business reviews|usage-based billing|the Denver
warehouse first""".replace("\n", " ").split("|")


@dataclass(frozen=True)
class GenPage:
    """One generated page and the facts a benchmark can ask about."""

    id: str
    folder: str
    slug: str
    title: str
    date: dt.date | None
    page: Page
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GeneratedKB:
    paths: KBPaths
    pages: tuple[GenPage, ...]
    sources: tuple[str, ...]  # paths relative to source/
    seed: int

    def by_folder(self, folder: str) -> list[GenPage]:
        return [p for p in self.pages if p.folder == folder]


def _counts(total: int) -> dict[str, int]:
    counts = {folder: max(1, int(total * share)) for folder, share in SHARES.items()}
    counts["meetings"] = max(1, total - sum(counts.values()))
    return counts


def _day(rng: random.Random) -> dt.date:
    return START + dt.timedelta(days=rng.randrange(DAYS))


def _sentence(rng: random.Random, *parts: str) -> str:
    return rng.choice(parts)


class _Builder:
    def __init__(self, schema: Schema, rng: random.Random) -> None:
        self.schema = schema
        self.rng = rng
        self.pages: list[GenPage] = []
        self.slugs: set[str] = set()
        self.ticket = itertools.count(1000)
        self.invoice = itertools.count(1)

    def add(self, folder: str, page: Page, date: dt.date | None, facts: dict[str, Any]) -> GenPage:
        spec = self.schema.folder(folder)
        check_page(page, spec)
        slug = page_slug(page, spec)
        page_id = f"{folder}/{slug}"
        if page_id in self.slugs:
            raise ValueError(f"duplicate page {page_id}")
        self.slugs.add(page_id)
        made = GenPage(page_id, folder, slug, page.title, date, page, facts)
        self.pages.append(made)
        return made

    def ticket_id(self) -> str:
        return f"{self.rng.choice(['OPS', 'ENG', 'FIN', 'SUP'])}-{next(self.ticket)}"

    def invoice_id(self, day: dt.date) -> str:
        return f"INV-{day.year}-{next(self.invoice):04d}"


def _people_names(rng: random.Random, n: int) -> list[str]:
    names = [f"{a} {b}" for a in FIRST for b in LAST]
    rng.shuffle(names)
    names = CYRILLIC + names
    extra = 0
    while len(names) < n:  # beyond the name space: middle initials
        extra += 1
        names += [f"{a} {chr(64 + extra % 26 or 26)}. {b}" for a in FIRST for b in LAST]
    return names[:n]


def _company_names(rng: random.Random, n: int) -> list[str]:
    names = [f"{a} {b}" for a in COMPANY_A for b in COMPANY_B]
    rng.shuffle(names)
    out = names[:n]
    k = 2
    while len(out) < n:
        out += [f"{name} {k}" for name in names[: n - len(out)]]
        k += 1
    return out


def generate_pages(total: int, seed: int = 7, schema: Schema | None = None) -> list[GenPage]:
    """``total`` pages (about 20% people, 6% companies, 8% projects, 16% decisions, the
    rest meetings), the same for the same seed."""
    schema = schema or load_schema(SCHEMA)
    rng = random.Random(seed)
    counts = _counts(total)
    b = _Builder(schema, rng)
    companies = _company_names(rng, counts["companies"])
    people = _people_names(rng, counts["people"])
    employer = {p: rng.choice(companies) for p in people}
    manager: dict[str, str] = {}
    for i, person in enumerate(people):
        if i >= 3 and rng.random() < 0.8:
            manager[person] = people[rng.randrange(max(1, i // 4))]
    role = {p: rng.choice(ROLES) for p in people}
    owners = {c: rng.choice(people) for c in companies}
    projects = []
    for i in range(counts["projects"]):
        company = companies[i % len(companies)]
        area = AREAS[(i // len(companies)) % len(AREAS)]
        suffix = (
            f" {i // (len(companies) * len(AREAS)) + 1}" if i >= len(companies) * len(AREAS) else ""
        )
        projects.append((f"{company} {area}{suffix}", company))
    project_names = [name for name, _ in projects]

    # meetings first: people's timelines record the meetings they attended
    attended: dict[str, list[tuple[dt.date, str]]] = {p: [] for p in people}
    meeting_titles: set[tuple[dt.date, str]] = set()
    for _ in range(counts["meetings"]):
        day = _day(rng)
        company = rng.choice(companies)
        what, kind = rng.choice(MEETING_KINDS)
        title = f"{company} {what}"
        n = 2
        while (day, title) in meeting_titles:
            title = f"{company} {what} {n}"
            n += 1
        meeting_titles.add((day, title))
        who = rng.sample(people, k=min(len(people), rng.randint(2, 6)))
        project = rng.choice(project_names) if rng.random() < 0.6 else None
        topics = rng.sample(TOPICS, k=3)
        tickets = [b.ticket_id() for _ in range(rng.randint(1, 3))]
        due = day + dt.timedelta(days=rng.randint(3, 21))
        summary = (
            f"{title[0].upper()}{title[1:]} on {day.isoformat()} with {', '.join(who[:-1])} and "
            f"{who[-1]}. The main topics were {topics[0]}, {topics[1]} and {topics[2]}. "
            f"{who[0]} led the meeting; {company} was represented by "
            f"{rng.choice(who)}."
        )
        discussion = "\n".join(
            f"- {rng.choice(who)} raised {topic}: "
            + _sentence(
                rng,
                f"numbers from {rng.choice(CITIES)} look better than last month.",
                f"it blocks the rollout in {rng.choice(CITIES)} until {due.isoformat()}.",
                f"the team agreed to revisit it at the next {what}.",
                f"{company} wants a written proposal with costs in USD.",
                "nobody had data yet; an analysis was requested.",
            )
            for topic in topics
        )
        decisions = f"- {rng.choice(DECISION_VERBS)} {rng.choice(DECISION_OBJECTS)} for {company}."
        actions = "\n".join(
            f"- {ticket}: {rng.choice(who)} to follow up on {rng.choice(topics)} by {due.isoformat()}."
            for ticket in tickets
        )
        fields: dict[str, Any] = {
            "date": day.isoformat(),
            "attendees": who,
            "company": company,
            "kind": kind,
            "status": "done",
        }
        if project:
            fields["project"] = project
        page = Page(
            title=title,
            type="meeting",
            fields=fields,
            sources=(
                f"meetings/{day.year}/{day.isoformat()}-{title.lower().replace(' ', '-')}.md",
            ),
            sections={
                "Summary": summary,
                "Discussion": discussion,
                "Decisions": decisions,
                "Action Items": actions,
            },
        )
        made = b.add(
            "meetings",
            page,
            day,
            {
                "date": day,
                "attendees": who,
                "company": company,
                "project": project,
                "kind": kind,
                "tickets": tickets,
                "topics": topics,
            },
        )
        for person in who:
            attended[person].append((day, made.title))

    for person in people:
        company = employer[person]
        history = sorted(attended[person], reverse=True)[:8]
        timeline = [
            TimelineEntry(day, f"Attended the {title}.", f"meetings/{day.isoformat()}.md")
            for day, title in history
        ]
        promoted = _day(rng)
        timeline.append(TimelineEntry(promoted, f"Became {role[person]} at {company}."))
        first = person.split()[0]
        fields = {
            "role": role[person],
            "company": company,
            "email": f"{first.lower()}@{company.split()[0].lower()}.example",
            "location": rng.choice(CITIES),
        }
        if person in manager:
            fields["reports_to"] = manager[person]
        boss = f" and reports to {manager[person]}" if person in manager else ""
        page = Page(
            title=person,
            type="person",
            fields=fields,
            aliases=(first,) if rng.random() < 0.3 else (),
            sections={
                "Summary": f"{person} is {role[person]} at {company}{boss}. Based in "
                f"{fields['location']}; attended {len(attended[person])} meetings with us.",
                "Role": f"Since {promoted.isoformat()}, {person} works as {role[person]}, "
                f"responsible for {rng.choice(TOPICS)} and {rng.choice(TOPICS)}.",
            },
            timeline=tuple(timeline),
        )
        b.add(
            "people",
            page,
            None,
            {
                "role": role[person],
                "company": company,
                "reports_to": manager.get(person),
                "meetings": len(attended[person]),
                "promoted": promoted,
            },
        )

    for company in companies:
        status = rng.choice(["prospect", "customer", "customer", "partner", "churned"])
        value = rng.randrange(20, 400) * 1000
        renewal = _day(rng) + dt.timedelta(days=365)
        invoices = []
        for _ in range(rng.randint(0, 4) if status == "customer" else 0):
            day = _day(rng)
            invoices.append((day, b.invoice_id(day), rng.randrange(5, 90) * 500))
        timeline = [
            TimelineEntry(day, f"Invoice {inv} for ${amount:,} sent; due in 30 days.")
            for day, inv, amount in invoices
        ]
        timeline.append(TimelineEntry(_day(rng), f"Status became {status}."))
        page = Page(
            title=company,
            type="company",
            fields={
                "industry": rng.choice(INDUSTRIES),
                "status": status,
                "website": f"https://{company.split()[0].lower()}.example",
                "headquarters": rng.choice(CITIES),
                "contract_value": value,
                "renewal_date": renewal.isoformat(),
                "account_owner": owners[company],
            },
            sections={
                "Summary": f"{company} is a {status} in {rng.choice(INDUSTRIES)}, "
                f"headquartered in {rng.choice(CITIES)}.",
                "Contract": f"Annual contract value {value} USD, renewal on "
                f"{renewal.isoformat()}. Account owner: {owners[company]}.",
            },
            timeline=tuple(timeline),
        )
        b.add(
            "companies",
            page,
            None,
            {
                "status": status,
                "contract_value": value,
                "renewal_date": renewal,
                "invoices": [inv for _, inv, _ in invoices],
                "account_owner": owners[company],
            },
        )

    for name, company in projects:
        start = _day(rng)
        due = start + dt.timedelta(days=rng.randint(30, 240))
        owner = rng.choice(people)
        team = rng.sample(people, k=min(len(people), rng.randint(2, 5)))
        status = rng.choice(["planned", "active", "active", "paused", "done"])
        page = Page(
            title=name,
            type="project",
            fields={
                "status": status,
                "owner": owner,
                "company": company,
                "team": team,
                "start_date": start.isoformat(),
                "due_date": due.isoformat(),
            },
            sections={
                "Summary": f"{name} for {company}, owned by {owner}.",
                "Goals": f"- Improve {rng.choice(TOPICS)}.\n- Ship before {due.isoformat()}.",
                "Status": f"{status.capitalize()}; tracked in {b.ticket_id()}.",
                "Risks": f"- {rng.choice(TOPICS).capitalize()} may slip the due date.",
            },
            timeline=(
                TimelineEntry(start, f"Project started; owner {owner}."),
                TimelineEntry(
                    start + dt.timedelta(days=rng.randint(1, 29)),
                    f"Due date set to {due.isoformat()}.",
                ),
            ),
        )
        b.add(
            "projects",
            page,
            None,
            {"owner": owner, "company": company, "team": team, "status": status, "due_date": due},
        )

    previous: dict[str, str] = {}
    decision_rows = []
    for _ in range(counts["decisions"]):
        decision_rows.append((_day(rng), rng.choice(project_names)))
    titles_used: set[tuple[dt.date, str]] = set()
    for day, project in sorted(decision_rows):
        company = dict(projects)[project]
        title = f"{rng.choice(DECISION_VERBS)} {rng.choice(DECISION_OBJECTS)} for {project}"
        n = 2
        while (day, title) in titles_used:
            title = f"{title} ({n})"
            n += 1
        titles_used.add((day, title))
        deciders = rng.sample(people, k=min(len(people), rng.randint(1, 3)))
        fields = {
            "date": day.isoformat(),
            "status": "accepted",
            "decided_by": deciders,
            "project": project,
            "company": company,
        }
        earlier = previous.get(project)
        if earlier is not None:
            fields["supersedes"] = earlier
        page = Page(
            title=title,
            type="decision",
            fields=fields,
            sections={
                "Context": f"{project} for {company}: {rng.choice(TOPICS)} kept coming up.",
                "Decision": f"{title}, decided by {', '.join(deciders)} on {day.isoformat()}.",
                "Consequences": f"Tracked as {b.ticket_id()}; affects {project}.",
            },
            timeline=(TimelineEntry(day, f"Decided by {', '.join(deciders)}."),),
        )
        made = b.add(
            "decisions",
            page,
            day,
            {"date": day, "project": project, "decided_by": deciders, "supersedes": earlier},
        )
        previous[project] = made.title
    return b.pages


def _source_text(rng: random.Random, page: GenPage) -> str:
    private = (
        "\n<private>Salary discussion: not for the record.</private>\n"
        if rng.random() < 0.2
        else ""
    )
    facts = page.facts
    return (
        f"---\ntitle: {page.title}\ndate: {facts['date'].isoformat()}\n---\n\n"
        f"# {page.title}\n\nPresent: {', '.join(facts['attendees'])}.\n\n"
        + "\n".join(f"- {t}" for t in facts["topics"])
        + private
        + f"\n\nNext steps: {', '.join(facts['tickets'])}.\n"
    )


def generate_kb(
    root: Path | str,
    pages: int = 1000,
    seed: int = 7,
    sources: int = 0,
    *,
    schema_path: Path = SCHEMA,
) -> GeneratedKB:
    """Write a knowledge base (schema.yaml, knowledge/, source/) under ``root`` (replaced)."""
    paths = KBPaths.of(root)
    if paths.root.exists():
        shutil.rmtree(paths.root)
    paths.source.mkdir(parents=True)
    shutil.copyfile(schema_path, paths.schema)
    schema = load_schema(paths.schema)
    made = generate_pages(pages, seed, schema)
    for page in made:
        target = paths.page_path(page.folder, page.slug)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_page(page.page, schema.folder(page.folder)), encoding="utf-8")
    rng = random.Random(seed + 1)
    meetings = [p for p in made if p.folder == "meetings"]
    written: list[str] = []
    for page in meetings[:sources]:
        rel = f"meetings/{page.date.year if page.date else 'undated'}/{page.slug}.md"
        target = paths.source / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_source_text(rng, page), encoding="utf-8")
        written.append(rel)
    return GeneratedKB(paths, tuple(made), tuple(written), seed)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="knowledge base directory to (re)create")
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--sources", type=int, default=0, help="raw meeting notes to add")
    args = parser.parse_args(argv)
    kb = generate_kb(args.out, args.pages, args.seed, args.sources)
    counts: dict[str, int] = {}
    for page in kb.pages:
        counts[page.folder] = counts.get(page.folder, 0) + 1
    print(f"{len(kb.pages)} pages in {kb.paths.knowledge} ({counts}), {len(kb.sources)} sources")
    return 0


if __name__ == "__main__":
    sys.exit(main())
