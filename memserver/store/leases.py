"""Source leases: which ingest agent works on which raw source (``source_leases``, 016).

An agent claims a source before reading it and releases it when done; while it holds
the lease no other agent (through this memory server or another one over the same
database) gets it. A lease lapses after ``seconds`` (an agent that died leaves nothing
stuck); the holder renews it by claiming again. One statement decides, so two claims at
the same moment never both win.
"""

from __future__ import annotations

from memserver.db.database import Database
from memserver.errors import StoreError

LEASE_SECONDS = 1800  # a note's ingestion, model calls included, ends well within this
MAX_LEASE_SECONDS = 24 * 3600


class SourceLeases:
    def __init__(self, db: Database) -> None:
        self.db = db

    def claim(self, path: str, holder: str, seconds: int = LEASE_SECONDS) -> str:
        """Take (or renew) the lease on ``path`` for ``holder``; returns who holds it now
        (``holder`` when the claim won)."""
        with self.db.checked("claim a source") as conn:
            for _ in range(3):  # the holder may release between the two statements
                row = conn.execute(
                    "INSERT INTO source_leases AS l (path, holder, expires_at)"
                    " VALUES (%s, %s, now() + make_interval(secs => %s))"
                    " ON CONFLICT (path) DO UPDATE"
                    " SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at"
                    " WHERE l.holder = EXCLUDED.holder OR l.expires_at < now()"
                    " RETURNING holder",
                    (path, holder, seconds),
                ).fetchone()
                if row is not None:
                    return str(row[0])
                other = conn.execute(
                    "SELECT holder FROM source_leases WHERE path = %s", (path,)
                ).fetchone()
                conn.commit()
                if other is not None:
                    return str(other[0])
        raise StoreError(
            f"could not claim {path}: its lease kept changing hands",
            "try again; another agent is claiming and releasing it",
        )

    def release(self, path: str, holder: str) -> bool:
        """Give the lease up (only its holder can); whether there was one to give up."""
        with self.db.checked("release a source") as conn:
            gone = conn.execute(
                "DELETE FROM source_leases WHERE path = %s AND holder = %s", (path, holder)
            ).rowcount
        return gone > 0

    def held(self) -> dict[str, str]:
        """Every live lease: path -> holder."""
        with self.db.checked("list source leases") as conn:
            rows = conn.execute(
                "SELECT path, holder FROM source_leases WHERE expires_at >= now()"
            ).fetchall()
        return {str(path): str(holder) for path, holder in rows}
