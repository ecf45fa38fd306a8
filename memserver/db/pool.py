"""The connection pool, and what it does when PostgreSQL goes away and comes back.

A bare ``psycopg_pool.ConnectionPool`` waits 30 s for a connection while the server is
down, hands out connections that died with a restarted server, and after an outage
backs off its reconnect attempts for minutes, so calls kept failing after the server
was back. :class:`Pool` instead

- checks every connection as it leaves the pool (a dead one is replaced, not handed out;
  when the server refuses a new one, the database is down at once, for every pool of
  this process on that server);
- waits at most ``GET_TIMEOUT`` seconds for one, then marks the database *down* and
  raises :class:`DatabaseUnavailable`;
- while down, first tries one direct connection per call (instant when the server is
  gone: refused, or no socket): still failing -> ``DatabaseUnavailable`` at once, with
  no wait; succeeding -> a fresh pool replaces the old one and the call goes on, so the
  first call after the server is back succeeds;
- turns a query that fails because its connection broke into ``DatabaseUnavailable``
  too (other database errors are left to the caller);
- gives every statement a server-side ``statement_timeout`` (``STATEMENT_TIMEOUT``;
  the few long ones, index builds, lift it for their transaction: :func:`unbounded`);
- watches the connections it hands out (:mod:`memserver.db.watch`): when the server
  stops answering without closing them (frozen), it is marked down within seconds and
  the calls waiting on it get ``DatabaseUnavailable`` instead of waiting for ever;
- while down, at most one call at a time asks whether the server is back, on its own
  time only while the server refuses (instant, so the first call after it is back
  succeeds); once the server has let a question wait (frozen), a thread asks, once a
  second at most, and every call fails at once until it hears "yes".
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from memserver.db.watch import Watch
from memserver.errors import DatabaseUnavailable, StoreError

logger = logging.getLogger(__name__)

GET_TIMEOUT = 3.0
PROBE_TIMEOUT = 2
PROBE_EVERY = 1.0  # while frozen: seconds between two questions whether the server is back
SLOW_PROBE = 0.5  # a question that took this long was not refused: the server is frozen
CONNECT_TIMEOUT = 10
STATEMENT_TIMEOUT = 60.0  # seconds; the server ends a statement that runs longer


class Pool:
    """A ``ConnectionPool`` that survives the server going away (see the module docstring)."""

    def __init__(
        self,
        url: str,
        *,
        shown_url: str,
        max_size: int,
        configure: Callable[[psycopg.Connection[Any]], None],
        name: str = "memserver",
    ) -> None:
        self.url = url
        self.shown_url = shown_url
        self._max_size = max_size
        self._options: dict[str, Any] = {
            "min_size": 1,
            "max_size": max_size,
            "kwargs": {
                "connect_timeout": CONNECT_TIMEOUT,
                "application_name": name,
                "options": f"-c statement_timeout={int(STATEMENT_TIMEOUT * 1000)}",
            },
            "configure": configure,
            "timeout": GET_TIMEOUT,
            "name": name,
        }
        self._watch = Watch(url, self._silent)
        self._pool = self._new_pool()
        self._down_since: float | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._why = ""  # while down: why the server is not answering
        self._frozen = False  # while down: it let a question wait (no refusal)
        self._asking = False  # a background question runs
        self._asked = 0.0  # when the last background question ended

    def _new_pool(self) -> ConnectionPool[Any]:
        return ConnectionPool(self.url, open=False, **self._options)

    def open(self, timeout: float) -> None:
        """Open the pool and wait for its first connection (StoreError if none comes)."""
        try:
            self._pool.open(wait=True, timeout=timeout)
        except Exception as exc:
            self._pool.close()
            raise StoreError(
                f"could not open a connection pool on {self.shown_url}: {exc}",
                "check that the server accepts connections",
            ) from exc

    @property
    def down(self) -> bool:
        return self._down_since is not None

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A checked connection; DatabaseUnavailable when the server does not answer."""
        if self._down_since is not None:
            self._recover()
        pool, conn = self._getconn()
        try:
            with self._watch.out(conn), conn:  # commit on success, roll back on error
                try:
                    yield conn
                except psycopg.OperationalError as exc:
                    if conn.broken or conn.closed:
                        raise self._mark_down(str(exc), tell=True) from exc
                    raise
        finally:
            pool.putconn(conn)

    def _getconn(self) -> tuple[ConnectionPool[Any], psycopg.Connection[Any]]:
        """A connection that answers. A dead one (the server restarted or went away) is
        dropped; then one question on a new connection says which: a refusal marks the
        database down at once (no wait for the pool's timeout), an answer means the
        next connection is tried."""
        asked = False
        for _ in range(self._max_size + 2):
            pool = self._pool
            try:
                conn = pool.getconn()
            except PoolTimeout as exc:
                raise self._mark_down(f"no connection within {GET_TIMEOUT:g} s") from exc
            except PoolClosed as exc:
                if self._closed:
                    raise  # closed by us: the caller's error, not an outage
                if pool is self._pool:
                    raise self._mark_down("the connection pool is closed") from exc
                continue  # another call replaced the pool after an outage: use the new one
            try:
                with self._watch.out(conn):  # watched: on a frozen server it hangs too
                    ConnectionPool.check_connection(conn)
            except psycopg.Error as exc:
                pool.putconn(conn)  # broken: the pool drops it
                if self._down_since is not None:  # the watch cut it: the server is silent
                    raise DatabaseUnavailable(self.shown_url, self._why or str(exc)) from exc
                why = None if asked else self._ask()
                asked = True
                if why is not None:
                    raise self._mark_down(why, tell=True) from exc
                continue
            return pool, conn
        raise self._mark_down("no connection that answers")

    def _silent(self, detail: str, frozen: bool) -> None:
        """The server does not answer (this pool's watch or another pool on the same
        server found it; ``frozen``: it lets questions wait): fail calls at once."""
        self._mark_down(detail)
        self._why = detail
        self._frozen = self._frozen or frozen

    def _mark_down(self, detail: str, *, tell: bool = False) -> DatabaseUnavailable:
        """Down from now on; ``tell``: the other pools on this server too."""
        if self._down_since is None:
            self._down_since = time.monotonic()
            logger.warning("the database at %s is unavailable: %s", self.shown_url, detail)
            if tell:
                self._watch.tell_others(detail, frozen=False)
        return DatabaseUnavailable(self.shown_url, detail.strip().splitlines()[0] if detail else "")

    def _recover(self) -> None:
        """While down: ask whether the server is back (see the module docstring); a
        fresh pool if it is, else DatabaseUnavailable at once."""
        if not self._lock.acquire(blocking=False):  # another call is asking right now
            raise DatabaseUnavailable(self.shown_url, self._why or "checking")
        try:
            if self._down_since is None:
                return  # another thread recovered meanwhile
            if self._frozen:  # asking may take PROBE_TIMEOUT: never on a caller's time
                self._ask_in_background()
                raise DatabaseUnavailable(self.shown_url, self._why or "checking")
            started = time.monotonic()
            why = self._ask()
            if why is not None:
                self._why = why
                self._frozen = time.monotonic() - started >= SLOW_PROBE
                raise DatabaseUnavailable(self.shown_url, why)
            self._back()
        finally:
            self._lock.release()

    def _ask(self) -> str | None:
        """None when a new connection opens within PROBE_TIMEOUT, else why not."""
        try:
            psycopg.connect(self.url, connect_timeout=PROBE_TIMEOUT).close()
        except psycopg.Error as exc:
            return str(exc).strip().splitlines()[0] if str(exc).strip() else "refused"
        return None

    def _ask_in_background(self) -> None:
        """Start one background question (none while one runs, or for PROBE_EVERY after
        the last); the call that follows its "yes" finds a fresh pool."""
        now = time.monotonic()
        if self._asking or now - self._asked < PROBE_EVERY:
            return
        self._asking, self._asked = True, now

        def ask() -> None:
            try:
                why = self._ask()
                with self._lock:
                    if why is None and self._down_since is not None:
                        self._back()
                    elif why is not None:
                        self._why = why
            finally:
                self._asking = False
                self._asked = time.monotonic()

        threading.Thread(target=ask, name="db-back", daemon=True).start()

    def _back(self) -> None:
        """The server answers again: a fresh pool (call holding ``_lock``)."""
        assert self._down_since is not None
        old, self._pool = self._pool, self._new_pool()
        self._pool.open(wait=False)
        outage = time.monotonic() - self._down_since
        self._down_since, self._frozen, self._why = None, False, ""
        logger.warning("the database at %s is back after %.1f s", self.shown_url, outage)
        # Closing waits for connections still out; never on the caller's thread.
        threading.Thread(target=old.close, name="old-pool-close", daemon=True).start()

    def ping(self) -> str | None:
        """None when a query runs, else why not (for health checks)."""
        try:
            with self.connection() as conn:
                conn.execute("SELECT 1")
        except DatabaseUnavailable as exc:
            return exc.message
        except psycopg.Error as exc:
            return str(exc).strip()
        return None

    def close(self) -> None:
        self._closed = True
        self._watch.close()
        self._pool.close()


def unbounded(conn: psycopg.Connection[Any]) -> None:
    """Lift the statement timeout for the rest of ``conn``'s transaction (an index build
    over a large table may take minutes)."""
    conn.execute("SET LOCAL statement_timeout = 0")
