"""Which subjects of a brief have their supersession chain followed: the first, and those
saying two or more of the question's words; one there for a single word (the company's
name) brings no replacements to take the evidence's place. No server."""

from __future__ import annotations

from memserver.server.brief import Subject, chain_starts


def subject(page_id: str, title: str) -> Subject:
    return Subject(
        id=page_id, title=title, folder="decisions", date="2022-05-01", status="accepted",
        current={}, earlier=[], deciders=[], supersedes=[], superseded_by=[], sources=[],
    )  # fmt: skip


def test_a_chain_is_followed_from_the_first_subject_and_those_saying_the_question() -> None:
    question = "What is Helix's current data retention policy and what did it replace?"
    picked = [
        subject("decisions/a", "Adopt a data retention policy of 90 days"),
        subject("decisions/b", "Helix would pivot to an API-first architecture"),
        subject("decisions/c", "Keep customer data for 90 days under the retention policy"),
    ]
    assert chain_starts(question, picked) == {"decisions/a", "decisions/c"}
    # the first is followed whatever it says
    assert chain_starts("Why?", picked[1:2]) == {"decisions/b"}
    assert chain_starts(question, []) == set()
