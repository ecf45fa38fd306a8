"""Source leases in the database: one holder at a time, renewed by it, lapsing, released."""

from __future__ import annotations

import threading

from memserver.db.database import Database
from memserver.store.leases import SourceLeases


def test_a_lease_has_one_holder_until_released(database: Database) -> None:
    leases = SourceLeases(database)
    assert leases.claim("a.md", "agent-1") == "agent-1"
    assert leases.claim("a.md", "agent-2") == "agent-1"  # taken: the other holder is named
    assert leases.claim("a.md", "agent-1") == "agent-1"  # the holder renews it
    assert leases.held() == {"a.md": "agent-1"}
    assert leases.release("a.md", "agent-2") is False  # only its holder gives it up
    assert leases.release("a.md", "agent-1") is True
    assert leases.claim("a.md", "agent-2") == "agent-2"


def test_a_lapsed_lease_goes_to_the_next_agent(database: Database) -> None:
    leases = SourceLeases(database)
    assert leases.claim("b.md", "dead-agent", seconds=10) == "dead-agent"
    with database.connection() as conn:  # ten seconds later
        conn.execute("UPDATE source_leases SET expires_at = now() - interval '1 second'")
    assert leases.held() == {}
    assert leases.claim("b.md", "agent-2") == "agent-2"


def test_claims_at_the_same_moment_have_one_winner(database: Database) -> None:
    leases = SourceLeases(database)
    start = threading.Barrier(8)
    won: list[str] = []

    def claim(n: int) -> None:
        start.wait(timeout=30)
        won.append(leases.claim("c.md", f"agent-{n}"))

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(won) == 8 and len(set(won)) == 1  # everyone was told the same holder
    assert leases.held() == {"c.md": won[0]}
