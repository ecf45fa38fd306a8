"""``up`` keeps its embedded PostgreSQL up: a restart that fails says so and is tried
again, and the next one that can start it does (a start that never finishes is ended
by its deadline: ``tests/memserver/db/test_db.py``)."""

from __future__ import annotations

import io
import os
import signal
import time
from pathlib import Path
from types import SimpleNamespace

from memserver.db import pgserver
from memserver.db.database import Database
from memserver.kb.layout import KBPaths
from memserver.up import runner
from memserver.up.runner import Up, UpOptions


def test_a_failed_restart_says_so_and_is_tried_again(pg_scratch: Path) -> None:
    kb = KBPaths.of(pg_scratch / "kb")
    db = Database.open(kb, env={})
    out = io.StringIO()
    try:
        assert db.server is not None
        pgdata = db.server.pgdata
        os.kill(pgserver.running_pid(pgdata) or 0, signal.SIGINT)
        deadline = time.monotonic() + 60
        while pgserver.running_pid(pgdata) is not None:
            assert time.monotonic() < deadline, "PostgreSQL did not stop"
            time.sleep(0.05)
        settings = pgdata / "postgresql.auto.conf"
        kept = settings.read_text()
        settings.write_text(kept + "shared_buffers = 'a lot'\n")  # no start can succeed
        up = Up(UpOptions(kb=kb.root), out=out)
        up.kb = SimpleNamespace(db=db)  # type: ignore[assignment]
        up._keep_database_up()
        first = out.getvalue()
        settings.write_text(kept)
        up._next_db_check = 0.0  # the next try now, not in DB_RETRY_SECONDS
        up._keep_database_up()
        with db.connection() as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        db.close()
    assert "the embedded PostgreSQL stopped; restarting it" in first
    assert "could not restart the embedded PostgreSQL" in first
    assert f"trying again in {runner.DB_RETRY_SECONDS:.0f} s" in first
    assert out.getvalue().rstrip().endswith("the embedded PostgreSQL is running again")
