"""kb_wakeup: what changed since a cursor, in the caller's folders only, and a cursor
that misses nothing while writers commit in any order.

Each test writes into ``example_kb`` on a database of its own and calls the tool the way
the server runs it (``MemoryServer.call_as``: scope checks, arguments, redaction of
out-of-scope references, the audit row).
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from memserver.errors import ToolErrorKind
from memserver.kb.layout import KBPaths
from memserver.kb.page import Page, TimelineEntry
from memserver.server.mcp_server import MemoryServer, build_server
from memserver.server.scope import Scope
from memserver.server.tools.base import MemoryToolError, Services
from memserver.store.knowledge_base import KnowledgeBase

WAIT = 30.0
EVERYTHING = Scope.trusted("admin")
PEOPLE_ONLY = Scope("people-reader", frozenset({"people"}), write=False, source=False)


@pytest.fixture
def server(kb: KnowledgeBase) -> Iterator[MemoryServer]:
    services = Services(paths=KBPaths.of(kb.paths.root), kb_opener=lambda: kb)
    yield build_server(services, fixed_scope=Scope.trusted())


def wakeup(server: MemoryServer, scope: Scope = EVERYTHING, **arguments: Any) -> dict[str, Any]:
    async def call() -> dict[str, Any]:
        with anyio.fail_after(WAIT):
            return await server.call_as(scope, "kb_wakeup", {"budget": 6000, **arguments})

    return anyio.run(call)


def person(name: str, summary: str = "Works on pricing.") -> Page:
    return Page(
        title=name,
        type="person",
        fields={"role": "Analyst"},
        sources=("team/roster.md",),
        sections={"Summary": summary},
        timeline=(TimelineEntry(dt.date(2026, 3, 1), "Joined.", "team/roster.md"),),
    )


def decision(title: str, status: str, decider: str, source: str = "notes/pricing.md") -> Page:
    return Page(
        title=title,
        type="decision",
        fields={"date": "2026-07-15", "status": status, "decided_by": [decider]},
        sources=(source,),
        sections={"Context": "Pricing review.", "Decision": f"{title}."},
        timeline=(TimelineEntry(dt.date(2026, 7, 15), f"{title}: {status}.", source),),
    )


def meeting(title: str, day: str, attendee: str) -> Page:
    return Page(
        title=title,
        type="meeting",
        fields={"date": day, "attendees": [attendee]},
        sources=("notes/sync.md",),
        sections={"Summary": f"{title} with {attendee}."},
    )


def ids(view: dict[str, Any]) -> list[str]:
    return [item["id"] for key in ("decisions", "pages") for item in view[key]]


def test_wakeup_says_what_changed_since_its_cursor_dated_and_cited(
    server: MemoryServer, kb: KnowledgeBase
) -> None:
    start = wakeup(server)
    assert start["counts"]["pages_created"] == 0 and start["cursor"].startswith("c1:")
    kb.put_page("people", person("Dana Pricer"), None)
    made = kb.put_page("decisions", decision("Per-seat pricing", "accepted", "Dana Pricer"), None)
    first = wakeup(server, since=start["cursor"])
    assert ids(first) == [made.id, "people/dana-pricer"]  # decisions first
    assert first["decisions"][0]["change"] == "created"
    assert first["decisions"][0]["status"] == "accepted"
    assert first["counts"]["pages_created"] == 2 and first["counts"]["pages_changed"] == 0

    kb.put_page(
        "decisions",
        decision("Per-seat pricing", "reversed", "Dana Pricer", "notes/reversal.md"),
        1,
        conflicts=[
            {
                "field": "rationale",
                "old_value": "seats",
                "new_value": "usage",
                "old_source": "notes/pricing.md",
                "new_source": "notes/reversal.md",
            }
        ],
        review="reversal taken from a chat message",
        note="notes/reversal.md",
    )
    kb.put_page("meetings", meeting("Pricing sync", "2026-07-20", "Dana Pricer"), None)
    second = wakeup(server, since=first["cursor"])
    reversed_ = second["decisions"][0]
    assert (reversed_["id"], reversed_["change"], reversed_["versions"]) == (
        made.id,
        "changed",
        [2, 2],
    )
    assert {
        "field": "status",
        "from": "accepted",
        "to": "reversed",
        "source": "notes/reversal.md",
    } in reversed_["fields"]
    assert ids(second) == [made.id, "meetings/2026-07-20-pricing-sync"]
    assert [(c["page"], c["field"], c["state"]) for c in second["conflicts"]] == [
        (made.id, "rationale", "opened")
    ]
    assert [(r["page"], r["state"]) for r in second["reviews"]] == [(made.id, "flagged")]
    assert [c["field"] for c in second["open_conflicts"]] == ["rationale"]
    assert [r["page"] for r in second["waiting_review"]] == [made.id]
    assert second["counts"] | {} == {
        "pages_created": 1,
        "pages_changed": 1,
        "conflicts_opened": 1,
        "conflicts_superseded": 0,
        "conflicts_closed": 0,
        "reviews_flagged": 1,
        "reviews_decided": 0,
        "open_conflicts": 1,
        "waiting_review": 1,
    }
    # Dana: linked from both changed pages
    assert second["active_subjects"][0]["id"] == "people/dana-pricer"
    text = second["text"]
    assert f"[{made.id}]" in text and "status: accepted -> reversed" in text
    assert "(dated 2026-07-15)" in text and second["cursor"] in text
    assert second["tokens"] <= 6000 and not second["truncated"]
    nothing = wakeup(server, since=second["cursor"])
    assert ids(nothing) == [] and nothing["counts"]["open_conflicts"] == 1


def test_a_small_budget_keeps_the_decisions_and_counts_what_it_left_out(
    server: MemoryServer, kb: KnowledgeBase
) -> None:
    start = wakeup(server)
    for n in range(30):
        kb.put_page("people", person(f"Person {n:02d}", "A long summary. " * 20), None)
    made = kb.put_page("decisions", decision("Usage pricing", "accepted", "Person 01"), None)
    brief = wakeup(server, since=start["cursor"], budget=300)
    assert [d["id"] for d in brief["decisions"]] == [made.id]
    assert brief["truncated"] and brief["tokens"] <= 300
    assert len(brief["pages"]) + brief["omitted"]["pages"] == 30
    assert brief["counts"]["pages_created"] == 31


def test_wakeup_never_shows_a_page_title_count_or_conflict_of_a_hidden_folder(
    server: MemoryServer, kb: KnowledgeBase
) -> None:
    start = wakeup(server)
    kb.put_page("people", person("Erin Visible"), None)
    secret = decision("Secret merger terms", "accepted", "Erin Visible")
    made = kb.put_page("decisions", secret, None, review="check the terms")
    kb.put_page(
        "decisions",
        decision("Secret merger terms", "reversed", "Erin Visible"),
        1,
        conflicts=[{"field": "status", "old_value": "accepted", "new_value": "reversed"}],
    )
    kb.put_page("meetings", meeting("Merger talk", "2026-07-21", "Erin Visible"), None)
    # the same window, seen with every folder: the hidden pages are there to leak
    full = wakeup(server, since=start["cursor"])
    assert made.id in ids(full) and full["open_conflicts"] and full["waiting_review"]

    seen = wakeup(server, PEOPLE_ONLY, since=start["cursor"])
    said = json.dumps(seen, ensure_ascii=False).casefold()
    for hidden in ("decisions/", "meetings/", "secret merger", "merger talk", "check the terms"):
        assert hidden not in said
    assert ids(seen) == ["people/erin-visible"]
    assert seen["counts"] == {
        "pages_created": 1,
        "pages_changed": 0,
        "conflicts_opened": 0,
        "conflicts_superseded": 0,
        "conflicts_closed": 0,
        "reviews_flagged": 0,
        "reviews_decided": 0,
        "open_conflicts": 0,
        "waiting_review": 0,
    }
    assert seen["conflicts"] == seen["open_conflicts"] == seen["reviews"] == []
    # Erin is linked from two hidden pages: those links do not make her "active"
    assert seen["active_subjects"] == []
    again = wakeup(server, PEOPLE_ONLY)  # the default window (the last 7 days)
    assert "secret merger" not in json.dumps(again).casefold() and ids(again) == ids(seen)


def test_a_cursor_misses_nothing_when_writers_commit_out_of_order(
    server: MemoryServer, kb: KnowledgeBase
) -> None:
    """A writes first and commits last: a cursor taken between B's commit and A's must
    still bring A (its change row is numbered before B's)."""
    start = wakeup(server)
    a_waiting, a_go = threading.Event(), threading.Event()

    def hold_a(step: str, page_id: str) -> None:
        if step == "staged" and page_id == "people/alpha-first":
            a_waiting.set()
            assert a_go.wait(WAIT)

    kb.write_step = hold_a
    writer = threading.Thread(target=kb.put_page, args=("people", person("Alpha First"), None))
    writer.start()
    try:
        assert a_waiting.wait(WAIT)
        kb.put_page("people", person("Beta Second"), None)  # commits while A is open
        middle = wakeup(server, since=start["cursor"])
        assert ids(middle) == ["people/beta-second"]
    finally:
        a_go.set()
        writer.join(WAIT)
    kb.write_step = None
    after = wakeup(server, since=middle["cursor"])
    assert ids(after) == ["people/alpha-first"]
    assert ids(wakeup(server, since=after["cursor"])) == []


def test_cursors_advancing_while_writers_run_see_every_write_exactly_once(
    server: MemoryServer, kb: KnowledgeBase
) -> None:
    writers, per_writer = 3, 8
    start = wakeup(server)
    done = threading.Event()
    failures: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for k in range(per_writer):
                kb.put_page("people", person(f"Writer {n} Page {k}"), None)
        except BaseException as exc:  # reported by the test below
            failures.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    seen: list[str] = []
    cursor = start["cursor"]
    reads = 0
    while not done.is_set():
        if not any(t.is_alive() for t in threads):
            done.set()  # one more read below picks up the last commits
        view = wakeup(server, since=cursor)
        seen += ids(view)
        cursor = view["cursor"]
        reads += 1
    for thread in threads:
        thread.join(WAIT)
    assert failures == []
    seen += ids(wakeup(server, since=cursor))
    expected = sorted(
        f"people/writer-{n}-page-{k}" for n in range(writers) for k in range(per_writer)
    )
    assert sorted(seen) == expected  # every page once: none missed, none repeated
    assert reads >= 2


def test_since_takes_a_date_or_a_duration_and_refuses_a_foreign_cursor(
    server: MemoryServer, kb: KnowledgeBase
) -> None:
    kb.put_page("people", person("Gail Dated"), None)
    assert ids(wakeup(server, since="2000-01-01")) == ["people/gail-dated"]
    assert ids(wakeup(server, since="1h")) == ["people/gail-dated"]
    assert ids(wakeup(server, since=(dt.date.today() + dt.timedelta(days=2)).isoformat())) == []
    for bad, words in (
        ("c1:999999999:999999999:", "not given out by this memory"),
        ("c1:5:3:", "damaged"),
        ("c1:abc", "not a change cursor"),
        ("last tuesday-ish", "neither a cursor nor a time"),
    ):
        with pytest.raises(MemoryToolError) as refused:
            wakeup(server, since=bad)
        assert refused.value.kind == ToolErrorKind.ARGUMENTS
        assert words in str(refused.value)
