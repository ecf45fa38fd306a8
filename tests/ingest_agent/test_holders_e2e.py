"""One-holder roles through a real memory server, without a model: a note naming a new one
holder ends the earlier holder's claim when it is clear, holds it for a person when it is
not, and changes nothing when it names no organisation."""

from __future__ import annotations

from memserver.kb.manifest import Manifest
from tests.ingest_agent.conftest import Ingest, IngestServer
from tests.ingest_agent.test_decisions_e2e import conflicts, page, run, write

DEMO = "meetings/2026-09-01-globex-demo.md"
ROSTER = "meetings/2026-09-05-globex-sync.md"
NEWS = "updates/2026-10-01-globex-news.md"


def roster(server: IngestServer, ingest: Ingest, role: str) -> None:
    write(
        server,
        DEMO,
        "---\ntitle: Globex demo\ndate: 2026-09-01\ncompany: Globex\nattendees: [Alex Kim]\n---\n\n"
        "The demo went well.\n",
    )
    write(
        server,
        ROSTER,
        "---\ntitle: Globex sync\ndate: 2026-09-05\ncompany: Globex\n"
        "attendees: [Karen Lee, Alex Kim]\n---\n\n"
        f"Present: Karen Lee ({role}, Globex) and Alex Kim.\n",
    )
    for path in (DEMO, ROSTER):
        run(ingest, server, path)
    assert page(server, "people/karen-lee").fields == {"role": role, "company": "Globex"}


def test_a_new_one_holder_ends_the_earlier_claim(
    small_server: IngestServer, ingest: Ingest
) -> None:
    roster(small_server, ingest, "COO")
    write(small_server, NEWS, "# Globex news\n\nMarcus Hale is Globex's new COO since Monday.\n")
    run(ingest, small_server, NEWS)
    karen = page(small_server, "people/karen-lee")
    assert karen.fields == {"company": "Globex"} and not karen.open_questions
    assert [(str(e.date), e.source) for e in karen.timeline if "“COO” ended" in e.text] == [
        ("2026-10-01", NEWS)
    ]
    assert conflicts(small_server, "people/karen-lee")[-1][:3] == ("role", "COO", None)
    assert page(small_server, "people/marcus-hale").fields == {"role": "COO", "company": "Globex"}


def test_a_role_held_among_other_words_waits_for_a_person(
    small_server: IngestServer, ingest: Ingest
) -> None:
    roster(small_server, ingest, "Interim COO")
    write(small_server, NEWS, "# Globex news\n\nMarcus Hale is Globex's new COO since Monday.\n")
    run(ingest, small_server, NEWS)
    karen = page(small_server, "people/karen-lee")
    assert karen.fields["role"] == "Interim COO"  # kept until a person decides
    [question] = karen.open_questions
    assert question.startswith(f"Review: {NEWS} proposes that Karen Lee's role “Interim COO” ends")
    [held] = [r for r in conflicts(small_server, "people/karen-lee") if r[5] == "unresolved"]
    assert held[:3] == ("role", "Interim COO", None)
    with small_server.kb().db.connection() as conn:
        flagged = conn.execute(
            "SELECT page_id FROM page_reviews WHERE status = 'pending'"
        ).fetchall()
    assert ("people/karen-lee",) in flagged


def test_a_one_holder_without_an_organisation_changes_no_one(
    small_server: IngestServer, ingest: Ingest
) -> None:
    roster(small_server, ingest, "COO")
    # an organisation no page is: which one's COO ended cannot be known
    write(small_server, NEWS, "# News\n\nMarcus Hale is the new COO at Hale Industries.\n")
    run(ingest, small_server, NEWS)
    assert page(small_server, "people/karen-lee").fields == {"role": "COO", "company": "Globex"}
    [entry] = [e for e in Manifest(small_server.paths).entries() if e.path == NEWS]
    assert any("names no organisation" in r for r in entry.reasons), entry.reasons
