"""A model's values checked against the note: what the note does not state is dropped."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from ingest_agent.llm.grounding import About, Grounds
from memserver.kb.schema import FieldSpec

NOTE = """\
# Globex carrier review

Attendees: Alice Chen, Bob Martinez. Dana Whitfield could not join.

- Bob said Globex will pay $120,000 a year, starting next Monday.
- Alice is the account manager; she lives in Austin.
- Contact: ops@globex.example
"""
DAY = dt.date(2026, 11, 19)  # a Thursday
ATTENDEES = FieldSpec("attendees", "links", folder="people")
ROLE = FieldSpec("role", "string")
AMOUNT = FieldSpec("amount", "number")
DUE = FieldSpec("due", "date")
EMAIL = FieldSpec("email", "string")
STATUS = FieldSpec("status", "enum", values=("open", "done"))


def grounds(known: tuple[str, ...] = (), resolved: tuple[str, ...] = ()) -> Grounds:
    return Grounds(NOTE, DAY, ZoneInfo("UTC"), known, resolved)


def test_names_the_note_writes_pass_and_the_rest_are_dropped_and_listed() -> None:
    verdict = grounds().check(
        ATTENDEES, ["Alice Chen", "Bob Martinez", "Karen Lee"], "pages[0].fields.attendees"
    )
    assert verdict.value == ["Alice Chen", "Bob Martinez"]
    assert verdict.dropped == (
        "pages[0].fields.attendees['Karen Lee']: 'Karen Lee' names no one the note names",
    )
    # a first name stands for the one known page of that name
    known = grounds(known=("Alice Chen", "Bob Martinez", "Bob Stone"))
    assert known.names("Alice Chen")
    assert not known.names("Alice Walker")
    assert known.names("Bob Martinez")  # written in full
    # a name the note resolves to an existing page (by its aliases) passes too
    assert grounds(resolved=("Globex Corporation",)).names("Globex Corporation")


def test_dates_numbers_and_text_must_be_stated() -> None:
    g = grounds()
    assert g.check(DUE, "2026-11-23", "due").value == "2026-11-23"  # next Monday
    assert g.check(DUE, DAY.isoformat(), "due").value == DAY.isoformat()  # the note's date
    late = g.check(DUE, "2026-12-24", "due")
    assert late.value is None and "a date the note does not state" in late.dropped[0]
    assert g.check(AMOUNT, 120000, "amount").value == 120000
    assert g.check(AMOUNT, 125000, "amount").value is None
    assert g.check(EMAIL, "ops@globex.example", "email").value == "ops@globex.example"
    assert g.check(EMAIL, "sales@globex.example", "email").value is None
    assert g.check(ROLE, "Account Manager", "role").value == "Account Manager"
    assert g.check(ROLE, "Chief Technology Officer", "role").value is None
    assert g.check(STATUS, "done", "status").value == "done"  # a choice, not a quote


def test_an_entitys_value_must_stand_next_to_its_name() -> None:
    g = grounds()
    kept, dropped = g.fields(
        {"role": ROLE}, {"role": "account manager"}, "people/Alice Chen", About(("Alice Chen",))
    )
    assert kept == {"role": "account manager"} and dropped == []
    kept, dropped = g.fields(
        {"role": ROLE},
        {"role": "account manager"},
        "people/Dana Whitfield",
        About(("Dana Whitfield",)),
    )
    assert kept == {}
    assert dropped == [
        "people/Dana Whitfield.fields.role: 'account manager' is not stated next to "
        "'Dana Whitfield'"
    ]


def test_the_notes_own_fields_are_not_statements_about_the_people_it_lists() -> None:
    # seen with a 1.5B model: Globex, the meeting's company, as each attendee's company
    note = (
        "---\ntitle: Globex intro call\ncompany: Globex\nattendees: [Bob Martinez, Alice Chen]\n"
        "---\n\nBob Martinez is Director of Operations at Globex.\n\nAlice walked him through it.\n"
    )
    g = Grounds(note, DAY, ZoneInfo("UTC"))
    company = FieldSpec("company", "link", folder="companies")
    assert g.check(company, "Globex", "bob", About(("Bob Martinez",))).value == "Globex"
    assert g.check(company, "Globex", "alice", About(("Alice Chen",))).value is None


def test_a_link_to_the_page_itself_is_dropped() -> None:
    """A small model filled "reports to" on Bob's page with Bob: named in the note, and
    next to his name, but never a value of his own page."""
    manager = FieldSpec("reports_to", "link", folder="people", verb="reports_to")
    kept, dropped = grounds().fields(
        {"reports_to": manager}, {"reports_to": "bob martinez"}, "people/Bob", BOB
    )
    assert kept == {}
    assert dropped == ["people/Bob.fields.reports_to: 'bob martinez' is the page itself"]


BOB = About(("Bob Martinez",), "people")
MANAGER = FieldSpec("reports_to", "link", folder="people", verb="reports_to")
EMPLOYER = FieldSpec("company", "link", folder="companies", verb="works_at")
PEOPLE = ["Joanna Price", "Alex Novak", "Priya Shah", "Alex Kim", "Bob Martinez", "Karen Lee"]
RIVALS = {
    "people": frozenset(n.casefold() for n in PEOPLE),
    "companies": frozenset({"initech", "globex"}),
}
WORDING = {"reports_to": ("reports to", "reporting to"), "works_at": ("works at", "joined")}
# the wording of example_kb's notes, where a 1.5B model's fill went wrong
STATED = """# Initech check-in

Present: Joanna Price (VP Supply Chain, Initech), Alex Novak (Procurement Manager,
Initech — reports to Joanna), Priya Shah and Alex Kim from our side.

Bob Martinez is Director of Operations at Globex. He runs 40 trucks and reports to
Karen Lee, their COO.

Alex presented the new usage-based model: at Globex's volume it is $2,400 a month.
Priya showed the webhook design; Globex IT accepted it.

Alex Kim takes over the renewal from Priya so Priya can focus on Globex. Alex Novak from
Initech procurement asked for the SOC 2 report.
"""


def related(page: str, spec: FieldSpec, value: str) -> bool:
    g = Grounds(STATED, DAY, ZoneInfo("UTC"))
    about = About((page, page.split()[0]), "people", RIVALS, WORDING)
    return g.check(spec, value, "x", about).value == value


def test_a_link_value_must_be_stated_with_its_relation_not_only_near() -> None:
    # stated: a company right after the name, a manager after the verb's wording
    assert related("Joanna Price", EMPLOYER, "Initech")
    assert related("Alex Novak", EMPLOYER, "Initech")
    assert related("Alex Novak", MANAGER, "Joanna Price")
    assert related("Bob Martinez", EMPLOYER, "Globex")
    assert related("Bob Martinez", MANAGER, "Karen Lee")
    # what the model wrote: the relation turned round, a neighbour in a list, a
    # company of another clause, a company named after someone else
    assert not related("Karen Lee", MANAGER, "Bob Martinez")
    assert not related("Joanna Price", MANAGER, "Alex Novak")
    assert not related("Alex Kim", EMPLOYER, "Initech")
    assert not related("Alex Kim", EMPLOYER, "Globex")
    assert not related("Priya Shah", EMPLOYER, "Globex")
    assert not related("Priya Shah", EMPLOYER, "Initech")
    assert not related("Alex Kim", EMPLOYER, "Initech")  # "Alex" of "Alex Novak from Initech"
    # a value must be one of the pages the note names in the link's folder
    g = Grounds(STATED, DAY, ZoneInfo("UTC"))
    verdict = g.check(MANAGER, "VP Supply Chain", "x", About(("Alex Novak",), "people", RIVALS))
    assert verdict.value is None
    assert verdict.dropped == ("x: 'VP Supply Chain' is no people page the note names",)
    verdict = g.check(MANAGER, "Alex Kim", "x", About(("Priya Shah",), "people", RIVALS, WORDING))
    assert verdict.dropped == ("x: 'Alex Kim' is not stated as 'Priya Shah''s reports_to",)


def test_an_entitys_date_must_stand_next_to_its_name_however_it_is_written() -> None:
    # seen with a 1.5B model: another company's meeting day as Nomin Trade's renewal date
    g = grounds()
    kept, _ = g.fields({"due": DUE}, {"due": "2026-11-23"}, "companies/Globex", About(("Globex",)))
    assert kept == {"due": "2026-11-23"}  # "starting next Monday", next to "Globex"
    kept, dropped = g.fields(
        {"due": DUE}, {"due": "2026-11-23"}, "people/Dana Whitfield", About(("Dana Whitfield",))
    )
    assert kept == {}
    assert dropped == [
        "people/Dana Whitfield.fields.due: '2026-11-23' is not stated next to 'Dana Whitfield'"
    ]


def test_a_meetings_links_must_be_pages_the_note_names_and_not_the_meeting() -> None:
    """Seen with a 1.5B model under `make up`: the intro call's project was "Globex intro
    call" (the meeting itself) and a project "Acme Track" appeared from nowhere."""
    project = FieldSpec("project", "link", folder="projects")
    rivals = {"projects": frozenset({"globex eta rollout"}), "meetings": frozenset()}
    call = About(("Globex carrier review",), "meetings", rivals, entity=False)
    note = NOTE + "\nPart of the Globex ETA Rollout. Acme Track was mentioned.\n"
    g = Grounds(note, DAY, ZoneInfo("UTC"))
    assert g.check(project, "Globex ETA Rollout", "p", call).value == "Globex ETA Rollout"
    assert g.check(project, "Globex carrier review", "p", call).dropped == (
        "p: 'Globex carrier review' is the page itself",
    )
    assert g.check(project, "Acme Track", "p", call).dropped == (
        "p: 'Acme Track' is no projects page the note names",
    )
    # the meeting's own date is the note's: not checked against a name
    assert g.check(DUE, DAY.isoformat(), "d", call).value == DAY.isoformat()


def test_a_meetings_one_company_among_several_named_must_be_the_one_its_title_names() -> None:
    """Seen with a 1.5B model: the internal pricing review, which goes through Globex,
    Nomin Trade and Initech in turn, got the company "Initech"."""
    company = FieldSpec("company", "link", folder="companies")
    rivals = {"companies": frozenset({"globex", "nomin trade", "initech"})}
    review = (
        "---\ntitle: Pricing review\nkind: internal\n---\n# Pricing review\n\n"
        "- Globex: ~60 drivers.\n- Nomin Trade: 6 dispatchers.\n- Initech: 60 users.\n"
    )
    g = Grounds(review, DAY, ZoneInfo("UTC"))
    meeting = About(("Pricing review",), "meetings", rivals, entity=False)
    assert g.check(company, "Initech", "c", meeting).dropped == (
        "c: 'Initech' is one of 3 companies pages the note names, none in its title",
    )
    # The title, the heading or the frontmatter says which; one company named is that one.
    for head in ("---\ncompany: Initech\n---\n", "# Initech renewal call\n"):
        assert (
            Grounds(head + review, DAY, ZoneInfo("UTC"))
            .check(company, "Initech", "c", meeting)
            .value
            == "Initech"
        )
    # An inflected name in the title is that name ("Номин Трейдтэй": with Nomin Trade).
    mn = Grounds("# Номин Трейдтэй хийсэн уулзалт\n\nНомин Трейд, Globex.\n", DAY, ZoneInfo("UTC"))
    both = {"companies": frozenset({"номин трейд", "globex"})}
    first = About(("Номин Трейдтэй хийсэн уулзалт",), "meetings", both, entity=False)
    assert mn.check(company, "Номин Трейд", "c", first).value == "Номин Трейд"
    renewal = About(("Initech renewal call",), "meetings", rivals, entity=False)
    assert g.check(company, "Initech", "c", renewal).value == "Initech"
    one = {"companies": frozenset({"initech"})}
    alone = About(("Pricing review",), "meetings", one, entity=False)
    assert g.check(company, "Initech", "c", alone).value == "Initech"
    # A meeting's list of attendees is not one value to choose.
    people = {"people": frozenset({"alice chen", "bob martinez"})}
    attendees = About(("Globex carrier review",), "meetings", people, entity=False)
    assert grounds().check(ATTENDEES, ["Alice Chen", "Bob Martinez"], "a", attendees).value == [
        "Alice Chen",
        "Bob Martinez",
    ]


def test_each_item_of_a_list_is_checked_on_its_own() -> None:
    options = FieldSpec("alternatives", "list")
    note = "We compared per-seat, per-truck and per-shipment pricing; per-shipment won."
    checked = Grounds(note, DAY, ZoneInfo("UTC"), (), ()).check(
        options, ["per-seat", "per-truck", "flat yearly fee"], "pages[0].fields.alternatives"
    )
    assert checked.value == ["per-seat", "per-truck"]
    assert len(checked.dropped) == 1 and "flat yearly fee" in checked.dropped[0]
