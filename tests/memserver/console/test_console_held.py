"""Accepting and rejecting, in the console, a change the ingest agent held back.

Each test writes a decision, then the held version the way the ingest agent writes it
(``kb_put_page`` over MCP with the page kept as it was, an Open Question per held
change, the proposals as ``unresolved`` conflicts rows noted ``review: ...`` and a
``review`` reason), and decides one of the proposals over real HTTP.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace

from memserver.kb.page import Page
from memserver.store.reviews import Conflict
from tests.memserver.console.conftest import ConsoleServer, csrf_of

SOURCE = "slack/vendors/2026-11-01.md"
WHYS = {
    "rationale": "a change to the accepted decision (its rationale: “Pricing is free.”)",
    "## Decision": "a change to the accepted decision (its Decision section)",
}
PROPOSED = {"rationale": "Pricing is free.", "## Decision": "Acme Track is free forever."}


def question(field: str) -> str:
    return f"Review: {SOURCE} proposes {WHYS[field]}; held back until a person checks it"


@dataclass(frozen=True)
class Held:
    page_id: str
    version: int  # the held version (the page as it was, plus the Open Questions)
    rows: dict[str, int]  # field -> conflict id


def held_decision(server: ConsoleServer) -> Held:
    """An accepted decision (with decided_by, a link into people) and two held changes."""
    kb = server.kb()
    page = Page(
        title=f"Seat pricing {uuid.uuid4().hex[:8]}",
        type="decision",
        fields={"date": "2026-07-15", "status": "accepted", "decided_by": ["Maria Chen"]},
        sections={"Decision": "$49 per user per month.", "Context": "Asked by Acme."},
    )
    first = kb.put_page("decisions", page, None)
    held = {
        "title": page.title,
        "type": "decision",
        "fields": {**page.fields, "decided_by": ["Maria Chen"]},
        "sections": dict(page.sections),
        "open_questions": [question(field) for field in WHYS],
    }
    rows = [
        {"field": field, "old_value": None, "new_value": PROPOSED[field], "old_source": None,
         "new_source": SOURCE, "status": "unresolved", "note": f"review: {SOURCE} proposes {why}"}
        for field, why in WHYS.items()
    ]  # fmt: skip
    put = server.call(
        server.ingest_secret,
        "kb_put_page",
        {"id": first.id, "page": held, "base_version": first.version, "conflicts": rows,
         "review": "; ".join(f"{SOURCE} proposes {why}" for why in WHYS.values())},
    )  # fmt: skip
    listed = server.kb_reviews().conflicts(None)
    ids = {c.field: c.id for c in listed if c.page_id == first.id}
    assert set(ids) == set(WHYS)
    return Held(first.id, put["version"], ids)


def decide(server: ConsoleServer, secret: str, held: Held, field: str, action: str) -> str:
    """POST accept/reject for one held row as the review list offers it; the response."""
    with server.signed_in(secret) as client:
        listing = client.get("/ui/review")
        assert f"/conflicts/{held.rows[field]}/{action}" in listing.text
        response = client.post(
            f"/ui/conflicts/{held.rows[field]}/{action}",
            data={"csrf": csrf_of(listing.text), "base_version": str(held.version)},
        )
    return f"{response.status_code} {response.text}"


def disagreement(server: ConsoleServer) -> int:
    """An unresolved conflict that is no held change (two sources disagree): its id."""
    put = server.kb().put_page(
        "companies",
        Page(title=f"Initech {uuid.uuid4().hex[:8]}", type="company"),
        None,
        conflicts=[{"field": "status", "old_value": "prospect", "new_value": "customer",
                    "old_source": "a.md", "new_source": "b.md", "status": "unresolved"}],
    )  # fmt: skip
    return next(c.id for c in server.kb_reviews().conflicts(None) if c.page_id == put.id)


def row(server: ConsoleServer, conflict_id: int) -> Conflict:
    return server.kb_reviews().conflict(conflict_id, None)


def test_accepting_a_held_field_sets_it_in_a_new_version(console_server: ConsoleServer) -> None:
    held = held_decision(console_server)
    name, secret = console_server.token("decisions", write=True, name="accepter")
    assert decide(console_server, secret, held, "rationale", "accept").startswith("303")

    stored = console_server.kb().get_page(held.page_id)
    assert stored.version == held.version + 1
    assert stored.page.fields["rationale"] == "Pricing is free."
    assert "rationale: Pricing is free." in console_server.kb().get_version(
        held.page_id, stored.version
    )
    assert stored.page.fields["decided_by"] == ("Maria Chen",)  # hidden from the token, kept
    assert stored.page.sections["Decision"] == "$49 per user per month."
    assert stored.page.open_questions == (question("## Decision"),)
    accepted = row(console_server, held.rows["rationale"])
    assert accepted.status == "resolved"
    assert f"[accepted by {name} in version {stored.version}]" in (accepted.note or "")
    assert row(console_server, held.rows["## Decision"]).status == "unresolved"


def test_accepting_a_held_section_replaces_it(console_server: ConsoleServer) -> None:
    held = held_decision(console_server)
    _, secret = console_server.token("*", write=True, name="accepter")
    assert decide(console_server, secret, held, "## Decision", "accept").startswith("303")

    stored = console_server.kb().get_page(held.page_id)
    assert stored.version == held.version + 1
    assert stored.page.sections["Decision"] == "Acme Track is free forever."
    assert stored.page.sections["Context"] == "Asked by Acme."
    assert "rationale" not in stored.page.fields
    assert stored.page.open_questions == (question("rationale"),)


def test_rejecting_a_held_change_only_drops_its_question(console_server: ConsoleServer) -> None:
    held = held_decision(console_server)
    before = console_server.kb().get_page(held.page_id).page
    name, secret = console_server.token("*", write=True, name="rejecter")
    assert decide(console_server, secret, held, "## Decision", "reject").startswith("303")

    after = console_server.kb().get_page(held.page_id).page
    assert after.sections == before.sections and after.fields == before.fields
    assert after.open_questions == (question("rationale"),)
    rejected = row(console_server, held.rows["## Decision"])
    assert rejected.status == "resolved" and f"[rejected by {name}" in (rejected.note or "")


def test_a_second_accept_is_refused_and_writes_nothing(console_server: ConsoleServer) -> None:
    held = held_decision(console_server)
    _, secret = console_server.token("*", write=True, name="twice")
    conflict_id = held.rows["rationale"]
    with console_server.signed_in(secret) as client:
        listing = client.get("/ui/review")
        form = {"csrf": csrf_of(listing.text), "base_version": str(held.version)}
        first = client.post(f"/ui/conflicts/{conflict_id}/accept", data=form)
        version = console_server.kb().get_page(held.page_id).version
        form["base_version"] = str(version)
        again = client.post(f"/ui/conflicts/{conflict_id}/accept", data=form)
        rejected = client.post(f"/ui/conflicts/{conflict_id}/reject", data=form)
        plain = client.post(f"/ui/conflicts/{disagreement(console_server)}/accept", data=form)
    assert first.status_code == 303
    assert plain.status_code == 400 and "not a change the ingest agent held" in plain.text
    assert again.status_code == 409 and "already decided" in again.text
    assert rejected.status_code == 409 and "nothing was written" in rejected.text
    assert console_server.kb().get_page(held.page_id).version == version


def test_an_accept_on_a_page_changed_since_is_refused(console_server: ConsoleServer) -> None:
    held = held_decision(console_server)
    kb = console_server.kb()
    stored = kb.get_page(held.page_id)
    folder, slug = held.page_id.split("/", 1)
    edited = replace(stored.page, sections={**stored.page.sections, "Context": "Asked twice."})
    kb.put_page(folder, edited, stored.version, slug=slug, note="someone else's edit")
    _, secret = console_server.token("*", write=True, name="late")
    answer = decide(console_server, secret, held, "rationale", "accept")

    assert answer.startswith("409") and "changed since" in answer
    assert kb.get_page(held.page_id).version == held.version + 1
    assert "rationale" not in kb.get_page(held.page_id).page.fields
    assert row(console_server, held.rows["rationale"]).status == "unresolved"


def test_tokens_that_may_not_write_the_folder_cannot_decide(
    console_server: ConsoleServer,
) -> None:
    held = held_decision(console_server)
    conflict_id = held.rows["rationale"]
    _, reader = console_server.token("decisions", name="reader")
    _, other = console_server.token("people", write=True, name="other-writer")
    answers = []
    for secret in (reader, other):
        with console_server.signed_in(secret) as client:
            listing = client.get("/ui/review")
            assert f"/conflicts/{conflict_id}/" not in listing.text
            form = {"csrf": csrf_of(listing.text), "base_version": str(held.version)}
            answers.append(client.post(f"/ui/conflicts/{conflict_id}/accept", data=form))
    assert answers[0].status_code == 403 and "read-only" in answers[0].text
    assert answers[1].status_code == 404  # out of its scope: as if there were no such row
    assert console_server.kb().get_page(held.page_id).version == held.version
    assert row(console_server, conflict_id).status == "unresolved"
