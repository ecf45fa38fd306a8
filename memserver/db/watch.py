"""Connections the database stopped answering on: found within seconds, and cut.

A PostgreSQL that is frozen (stopped by SIGSTOP, a hung disk, a host that is paused)
keeps its sockets open and answers nothing: a query on it waits for ever, and no
server-side ``statement_timeout`` can end it (the server is what is stuck). So
:class:`Watch` keeps the connections the pool has handed out, with the time each left
it. When one has been out longer than ``suspect_after`` seconds, it asks the server on a
new connection of its own (``SELECT 1`` within ``probe_timeout``; at most once every
``probe_every`` seconds). A server that answers is only slow, and nothing happens. One
that does not is *not answering*: ``on_silent(problem, True)`` is told (the pool then
fails calls at once), and every connection still out since before the probe has its socket shut down,
so the thread waiting on it gets an error at once instead of waiting for ever. The
connection is broken afterwards, and the pool drops it. Every watch of the process on
the same server is told at once (one process has a pool per database it uses).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

logger = logging.getLogger(__name__)

SUSPECT_AFTER = 1.0
PROBE_TIMEOUT = 2.0
PROBE_EVERY = 2.0
TICK = 0.25


class Watch:
    """The connections out of one pool, and a thread that cuts them when the database
    stops answering (see the module docstring)."""

    def __init__(
        self,
        url: str,
        on_silent: Callable[[str, bool], None],
        *,
        suspect_after: float = SUSPECT_AFTER,
        probe_timeout: float = PROBE_TIMEOUT,
        probe_every: float = PROBE_EVERY,
    ) -> None:
        self.url = url
        self.on_silent = on_silent
        self.suspect_after = suspect_after
        self.probe_timeout = probe_timeout
        self.probe_every = probe_every
        self._out: dict[int, tuple[psycopg.Connection[Any], float]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._probed = 0.0
        self.server = _server_of(url)
        _watches.add(self)

    @contextmanager
    def out(self, conn: psycopg.Connection[Any]) -> Iterator[None]:
        """``conn`` is in use (by a caller, or by the pool's check) while in the block."""
        key = id(conn)
        with self._lock:
            self._out[key] = (conn, time.monotonic())
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._run, name="db-watch", daemon=True)
                self._thread.start()
        try:
            yield
        finally:
            with self._lock:
                self._out.pop(key, None)

    def close(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(TICK):
            now = time.monotonic()
            with self._lock:
                suspect = any(now - since >= self.suspect_after for _, since in self._out.values())
            if not suspect or now - self._probed < self.probe_every:
                continue
            self._probed = now
            problem = self.probe()
            if problem is None:
                continue
            for watch in self._same_server():
                watch.silenced(problem, now)

    def _same_server(self) -> list[Watch]:
        return [w for w in list(_watches) if w.server == self.server]

    def tell_others(self, problem: str, *, frozen: bool) -> None:
        """Another pool's finding (the server refused or dropped a connection): the other
        pools on this server are down too."""
        for watch in self._same_server():
            if watch is not self:
                watch.on_silent(problem, frozen)

    def silenced(self, problem: str, before: float) -> None:
        """The server does not answer: say so, and cut every connection out since
        ``before``."""
        with self._lock:
            stuck = [c for c, since in self._out.values() if since <= before]
        logger.warning(
            "the database does not answer (%s): cutting %d connection(s) waiting on it",
            problem,
            len(stuck),
        )
        self.on_silent(problem, True)
        for conn in stuck:
            cut(conn)

    def probe(self) -> str | None:
        """None when the server answers ``SELECT 1`` on a new connection within
        ``probe_timeout``, else why not. The probe runs in a thread of its own: a frozen
        server can hold even a new connection's first query."""
        answer: list[str | None] = []

        def ask() -> None:
            try:
                timeout = max(1, round(self.probe_timeout))
                with psycopg.connect(self.url, connect_timeout=timeout, autocommit=True) as conn:
                    conn.execute("SELECT 1")
                answer.append(None)
            except psycopg.Error as exc:
                answer.append(str(exc).strip().splitlines()[0] if str(exc).strip() else "error")

        thread = threading.Thread(target=ask, name="db-probe", daemon=True)
        thread.start()
        thread.join(self.probe_timeout + 0.5)
        if not answer:
            return f"no answer to a new connection within {self.probe_timeout:g} s"
        return answer[0]


# Every watch of this process: one that finds its server silent tells the others on the
# same server (the token store's pool and the knowledge base's are two pools on one).
_watches: weakref.WeakSet[Watch] = weakref.WeakSet()


def _server_of(url: str) -> tuple[str, str]:
    """Which server ``url`` reaches (host or socket directory, and port)."""
    try:
        params = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return (url, "")
    return (str(params.get("host") or ""), str(params.get("port") or ""))


def cut(conn: psycopg.Connection[Any]) -> None:
    """Shut down ``conn``'s socket (not close its descriptor, which its user still
    holds): a thread waiting on it wakes with an error, and the connection is broken."""
    with contextlib.suppress(OSError, psycopg.Error, ValueError):
        fd = os.dup(conn.fileno())
        with socket.socket(fileno=fd) as sock:
            sock.shutdown(socket.SHUT_RDWR)
