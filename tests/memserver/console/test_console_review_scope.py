"""Review in the console for tokens with limited folders, and decisions taken twice.

Rejecting a flagged decision with a ``decisions`` token brings back the version before
it whole (with ``decided_by``, which that token never sees); rejecting a change someone
already accepted is refused and writes nothing; open questions are redacted for a
``people,meetings`` token as MCP results are.
"""

from __future__ import annotations

import html
import uuid
from dataclasses import replace

from memserver.kb.page import Page
from tests.memserver.console.conftest import ConsoleServer, csrf_of


def _decision(server: ConsoleServer, tag: str) -> tuple[str, int]:
    """A decision with decided_by and a people source, then a change flagged for review."""
    kb = server.kb()
    page = Page(
        title=f"Usage pricing {tag}",
        type="decision",
        fields={"date": "2026-08-01", "status": "accepted", "decided_by": ["Maria Chen"]},
        sources=("notes/a.md", "people/maria-chen.md", "notes/b.md"),
        sections={"Decision": "Priced by usage.", "Context": "See [[people/maria-chen]]."},
    )
    first = kb.put_page("decisions", page, None)
    changed = replace(page, sections={**page.sections, "Decision": "Priced per seat."})
    kb.put_page("decisions", changed, first.version, slug=first.id.split("/")[1], review="why?")
    return first.id, first.version


def test_a_scoped_reject_brings_back_the_whole_earlier_version(
    console_server: ConsoleServer,
) -> None:
    page_id, before = _decision(console_server, uuid.uuid4().hex[:8])
    kb = console_server.kb()
    original = kb.get_version(page_id, before)
    review = next(r for r in console_server.kb_reviews().pending(None) if r.page_id == page_id)
    _, secret = console_server.token("decisions", write=True, name="decider")
    with console_server.signed_in(secret) as client:
        listing = client.get("/ui/review")
        rejected = client.post(
            f"/ui/review/{review.id}/reject",
            data={"csrf": csrf_of(listing.text), "base_version": str(review.version)},
        )
    assert rejected.status_code == 303, rejected.text
    stored = kb.get_page(page_id)
    assert stored.version == review.version + 1
    assert stored.markdown == original  # decided_by and the people source are back
    assert stored.page.fields["decided_by"] == ("Maria Chen",)


def test_rejecting_an_accepted_change_is_refused_and_writes_nothing(
    console_server: ConsoleServer,
) -> None:
    page_id, _ = _decision(console_server, uuid.uuid4().hex[:8])
    kb = console_server.kb()
    review = next(r for r in console_server.kb_reviews().pending(None) if r.page_id == page_id)
    _, secret = console_server.token("*", write=True, name="reviewer")
    with console_server.signed_in(secret) as client:
        listing = client.get("/ui/review")
        form = {"csrf": csrf_of(listing.text), "base_version": str(review.version)}
        accepted = client.post(f"/ui/review/{review.id}/accept", data=form)
        rejected = client.post(f"/ui/review/{review.id}/reject", data=form)
        edited = client.get(f"/ui/review/{review.id}/edit")
    assert accepted.status_code == 303
    assert rejected.status_code == 409 and edited.status_code == 409
    assert "was already accepted" in rejected.text and "nothing was written" in rejected.text
    assert kb.get_page(page_id).version == review.version
    assert console_server.kb_reviews().get(review.id, None).status == "accepted"


def test_open_questions_in_review_are_redacted_for_a_scoped_token(
    console_server: ConsoleServer,
) -> None:
    tag = uuid.uuid4().hex[:8]
    page_id, _ = _decision(console_server, tag)
    title = f"Usage pricing {tag}"
    kb = console_server.kb()
    person = Page(
        title=f"Quinn Asker {tag}",
        type="person",
        open_questions=(f"Is “{title}” ({page_id}) reversed?",),
    )
    kb.put_page("people", person, None)
    _, secret = console_server.token("people,meetings", name="asker")
    with console_server.signed_in(secret) as client:
        listing = client.get("/ui/review")
    assert listing.status_code == 200
    assert "Is [redacted] reversed?" in listing.text
    assert page_id not in listing.text and title not in listing.text


def test_searched_for_shows_the_callers_words_whether_a_hidden_page_has_them_or_not(
    console_server: ConsoleServer,
) -> None:
    """The console's "searched for" is no existence oracle: a hidden page's title and a
    title no page has come back alike, as the person typed them."""
    tag = uuid.uuid4().hex[:6]
    _, admin = console_server.token("*", write=True, name="admin")
    title = f"Lease the Harbor warehouse {tag}"
    console_server.call(
        admin,
        "kb_put_page",
        {
            "folder": "decisions",
            "page": {"title": title, "fields": {"date": "2026-11-18", "status": "accepted"}},
        },
    )
    _, secret = console_server.token("people,meetings", name="searcher")
    shown: list[str] = []
    with console_server.signed_in(secret) as client:
        for name in (title, f"Lease the Harbor silo {tag}"):
            page = client.get("/ui/", params={"q": f"[[{name}]]"})
            assert page.status_code == 200
            start = page.text.index("searched for “") + len("searched for “")
            said = html.unescape(page.text[start : page.text.index("”", start)])
            shown.append(said.replace(name, "NAME"))
    assert shown == ["[[NAME]]", "[[NAME]]"]
