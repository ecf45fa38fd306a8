"""The connection pool, and what it does when PostgreSQL goes away and comes back.

A bare ``psycopg_pool.ConnectionPool`` waits 30 s for a connection while the server is
down, hands out connections that died with a restarted server, and after an outage
backs off its reconnect attempts for minutes, so calls kept failing after the server
was back. :class:`Pool` instead

- checks every connection as it leaves the pool (a dead one is replaced, not handed out);
- waits at most ``GET_TIMEOUT`` seconds for one, then marks the database *down* and
  raises :class:`DatabaseUnavailable`;
- while down, first tries one direct connection per call (instant when the server is
  gone: refused, or no socket): still failing -> ``DatabaseUnavailable`` at once, with
  no wait; succeeding -> a fresh pool replaces the old one and the call goes on, so the
  first call after the server is back succeeds;
- turns a query that fails because its connection broke into ``DatabaseUnavailable``
  too (other database errors are left to the caller).
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

from memserver.errors import DatabaseUnavailable, StoreError

logger = logging.getLogger(__name__)

GET_TIMEOUT = 3.0
PROBE_TIMEOUT = 2
CONNECT_TIMEOUT = 10


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
        self._options: dict[str, Any] = {
            "min_size": 1,
            "max_size": max_size,
            "kwargs": {"connect_timeout": CONNECT_TIMEOUT, "application_name": name},
            "configure": configure,
            "check": ConnectionPool.check_connection,
            "timeout": GET_TIMEOUT,
            "name": name,
        }
        self._pool = self._new_pool()
        self._down_since: float | None = None
        self._closed = False
        self._lock = threading.Lock()

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
            with conn:  # commit on success, roll back on error (as the pool's own)
                try:
                    yield conn
                except psycopg.OperationalError as exc:
                    if conn.broken or conn.closed:
                        raise self._mark_down(str(exc)) from exc
                    raise
        finally:
            pool.putconn(conn)

    def _getconn(self) -> tuple[ConnectionPool[Any], psycopg.Connection[Any]]:
        for _ in range(3):
            pool = self._pool
            try:
                return pool, pool.getconn()
            except PoolTimeout as exc:
                raise self._mark_down(f"no connection within {GET_TIMEOUT:g} s") from exc
            except PoolClosed as exc:
                if self._closed:
                    raise  # closed by us: the caller's error, not an outage
                if pool is self._pool:
                    raise self._mark_down("the connection pool is closed") from exc
                # another call replaced the pool after an outage meanwhile: use the new one
        raise self._mark_down("the connection pool kept being replaced")

    def _mark_down(self, detail: str) -> DatabaseUnavailable:
        if self._down_since is None:
            self._down_since = time.monotonic()
            logger.warning("the database at %s is unavailable: %s", self.shown_url, detail)
        return DatabaseUnavailable(self.shown_url, detail.strip().splitlines()[0] if detail else "")

    def _recover(self) -> None:
        """While down: one direct connection; a fresh pool if it works, else fail at once."""
        with self._lock:
            if self._down_since is None:
                return  # another thread recovered meanwhile
            try:
                psycopg.connect(self.url, connect_timeout=PROBE_TIMEOUT).close()
            except psycopg.Error as exc:
                raise DatabaseUnavailable(
                    self.shown_url, str(exc).strip().splitlines()[0] if str(exc) else "refused"
                ) from exc
            old, self._pool = self._pool, self._new_pool()
            self._pool.open(wait=False)
            outage = time.monotonic() - self._down_since
            self._down_since = None
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
        self._pool.close()
