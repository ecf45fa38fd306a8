"""The review lists: flagged changes, conflicts and open questions, scoped by folder."""

from __future__ import annotations

import dataclasses

import pytest

from memserver.errors import NotFoundError, UserError
from memserver.kb.page import Page
from memserver.store.knowledge_base import KnowledgeBase
from memserver.store.reviews import Reviews


def person(title: str, summary: str = "Works at Acme.") -> Page:
    return Page(title=title, type="person", sections={"Summary": summary})


def company(title: str) -> Page:
    return Page(title=title, type="company", sections={"Summary": f"{title} is a customer."})


def test_a_flagged_write_is_listed_with_its_reason_and_the_version_it_replaced(
    kb: KnowledgeBase,
) -> None:
    first = kb.put_page("people", person("Alice Chen"), None, written_by="ingest")
    second = kb.put_page(
        "people",
        person("Alice Chen", "Now CTO."),
        first.version,
        written_by="ingest",
        review="reverses her role",
    )
    kb.put_page("people", person("Bob Stone"), None)  # not flagged
    pending = Reviews(kb.db).pending(None)
    assert [(r.page_id, r.version, r.base_version, r.reason, r.flagged_by) for r in pending] == [
        (second.id, second.version, first.version, "reverses her role", "ingest")
    ]
    assert pending[0].title == "Alice Chen" and not pending[0].stale


def test_review_lists_keep_to_the_callers_folders(kb: KnowledgeBase) -> None:
    flagged = kb.put_page("companies", company("Globex"), None, review="new customer?")
    reviews = Reviews(kb.db)
    assert reviews.pending({"people"}) == []
    with pytest.raises(NotFoundError):
        reviews.get(reviews.pending(None)[0].id, {"people"})
    with pytest.raises(NotFoundError):
        reviews.decide(reviews.pending(None)[0].id, "accepted", by="x", folders={"people"})
    assert reviews.pending({"companies"})[0].page_id == flagged.id


def test_a_change_is_decided_once(kb: KnowledgeBase) -> None:
    kb.put_page("people", person("Carol White"), None, review="one source only")
    reviews = Reviews(kb.db)
    review = reviews.pending(None)[0]
    with pytest.raises(UserError, match="not a decision"):
        reviews.decide(review.id, "maybe", by="ana", folders=None)
    decided = reviews.decide(review.id, "accepted", by="ana", folders=None)
    assert (decided.status, decided.decided_by) == ("accepted", "ana")
    with pytest.raises(UserError, match="already accepted by ana"):
        reviews.decide(review.id, "rejected", by="ben", folders=None)
    assert reviews.pending(None) == []


def test_a_change_written_over_is_marked_stale(kb: KnowledgeBase) -> None:
    first = kb.put_page("people", person("Dan Gray"), None, review="check")
    kb.put_page("people", person("Dan Gray", "Moved to sales."), first.version)
    assert Reviews(kb.db).pending(None)[0].stale


def test_conflicts_are_listed_and_resolved_within_scope(kb: KnowledgeBase) -> None:
    conflict = {"field": "role", "old_value": "CTO", "new_value": "CEO", "status": "unresolved"}
    kb.put_page("people", person("Eve Black"), None, conflicts=[conflict])
    reviews = Reviews(kb.db)
    found = reviews.conflicts(None)
    assert [(c.page_id, c.field, c.old_value, c.new_value) for c in found] == [
        ("people/eve-black", "role", "CTO", "CEO")
    ]
    assert reviews.conflicts({"companies"}) == []
    with pytest.raises(NotFoundError):
        reviews.resolve_conflict(found[0].id, note="asked her", folders={"companies"})
    reviews.resolve_conflict(found[0].id, note="asked her", folders=None)
    assert reviews.conflicts(None) == []
    with pytest.raises(NotFoundError):
        reviews.resolve_conflict(found[0].id, note="again", folders=None)


def test_open_questions_are_read_off_the_pages(kb: KnowledgeBase) -> None:
    page = dataclasses.replace(person("Finn Moss"), open_questions=("Which team is he on?",))
    kb.put_page("people", page, None)
    kb.put_page("people", person("Gus Hale"), None)
    found = Reviews(kb.db).open_questions(None)
    assert [(q.page_id, q.questions) for q in found] == [
        ("people/finn-moss", ("Which team is he on?",))
    ]
    assert Reviews(kb.db).open_questions({"companies"}) == []
