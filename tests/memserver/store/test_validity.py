"""What held when: validity intervals kept on every page write and rebuilt from versions."""

from __future__ import annotations

import datetime as dt

from memserver.kb.page import Page
from memserver.store import validity
from memserver.store.knowledge_base import KnowledgeBase

JUNE = "updates/2026-06-26-weekly-update.md"
AUGUST = "updates/2026-08-28-weekly-update.md"


def person(role: str, sources: tuple[str, ...], location: str | None = "Ulaanbaatar") -> Page:
    fields = {"role": role, "email": "saraa@acme.example"}
    if location:
        fields["location"] = location
    return Page(title="Saraa Validity", type="person", fields=fields, sources=sources)


def rows(kb: KnowledgeBase, page_id: str) -> list[dict[str, object]]:
    with kb.db.connection() as conn:
        found = validity.history_of(conn, [page_id]).get(page_id, [])
    return [r.to_dict() for r in found]


def test_a_changed_value_closes_the_old_one_at_the_new_notes_date(kb: KnowledgeBase) -> None:
    first = kb.put_page("people", person("Engineer", (JUNE,)), None)
    kb.put_page("people", person("CTO", (JUNE, AUGUST), location=None), first.version)
    history = {(r["field"], r["value"]): r for r in rows(kb, first.id)}
    old, new = history[("role", "Engineer")], history[("role", "CTO")]
    assert (old["valid_from"], old["valid_to"], old["recorded_at"]) == (
        "2026-06-26",
        "2026-08-28",
        "2026-06-26",
    )
    assert old["source"] == JUNE and old["ended_source"] == AUGUST and old["ended_version"] == 2
    assert (new["valid_from"], new["valid_to"], new["source"]) == ("2026-08-28", None, AUGUST)
    # unchanged values stay open from their first note; a dropped one is closed, not lost
    email = history[("email", "saraa@acme.example")]
    assert (email["valid_from"], email["valid_to"]) == ("2026-06-26", None)
    place = history[("location", "Ulaanbaatar")]
    assert place["valid_to"] == "2026-08-28" and place["ended_version"] == 2
    assert len(rows(kb, first.id)) == 4


def test_a_rebuild_from_the_versions_gives_the_same_history(kb: KnowledgeBase) -> None:
    first = kb.put_page("people", person("Analyst", (JUNE,)), None)
    second = kb.put_page("people", person("Lead", (JUNE, AUGUST)), first.version)
    kb.put_page("people", person("Analyst", (JUNE, AUGUST)), second.version)  # no new note
    before = rows(kb, first.id)
    assert kb.rebuild_history(everything=True) >= 1
    assert rows(kb, first.id) == before
    with kb.db.connection() as conn, conn.transaction():
        conn.execute("DELETE FROM field_values WHERE page_id = %s", (first.id,))
        conn.execute("DELETE FROM field_history_pages WHERE page_id = %s", (first.id,))
    kb.reindex()  # a lagging page is replayed
    assert rows(kb, first.id) == before
    roles = [(r["value"], r["valid_from"], r["valid_to"]) for r in before if r["field"] == "role"]
    today = dt.datetime.now(dt.UTC).date()
    # the third write brought no note: the write's day is when it was learned
    assert roles[-1][0] == "Analyst" and roles[-1][2] is None
    assert [r for r in before if r["value"] == "Analyst"][-1]["recorded_at"] == today.isoformat()


def test_as_of_reads_the_value_that_held_and_was_known_then() -> None:
    day = dt.date
    old = validity.Interval("status", "accepted", day(2026, 7, 15), day(2026, 10, 7),
                            day(2026, 7, 15), "a.md", 1, 2, "b.md")  # fmt: skip
    new = validity.Interval("status", "reversed", day(2026, 10, 7), None,
                            day(2026, 10, 7), "b.md", 2)  # fmt: skip
    assert validity.as_of([old, new], day(2026, 8, 1))["status"].value == "accepted"
    assert validity.as_of([old, new], day(2026, 10, 7))["status"].value == "reversed"
    assert validity.as_of([old, new], day(2026, 7, 1)) == {}
    assert validity.changed_since([old, new], day(2026, 8, 1)) == [new]


def test_notes_out_of_order_never_end_a_value_before_it_began() -> None:
    day = dt.date
    current = {"role": validity.Interval("role", "CTO", day(2026, 8, 1), None, day(2026, 8, 1),
                                         "late.md", 1)}  # fmt: skip
    earlier = validity.Learned(2, {"role": "CEO"}, day(2026, 3, 1), day(2026, 3, 1), "early.md")
    closed, opened = validity.step(current, earlier)
    assert closed[0].valid_to == day(2026, 8, 1) and opened[0].value == "CEO"
