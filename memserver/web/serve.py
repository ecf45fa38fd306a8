"""How every HTTP server of ours runs under uvicorn: one config, and connections that
cannot be held open for nothing.

uvicorn closes an idle keep-alive connection after ``timeout_keep_alive`` seconds, but
only once a first response was sent: a client that connects and sends nothing, or half
a request line, keeps its socket (and a file descriptor) forever. :class:`GuardedH11`
gives every connection ``HEADER_TIMEOUT`` seconds to deliver a request's headers, from
the moment it connects and again after every response; a connection that has not done
so by then is closed. (The body's own deadline is :class:`memserver.web.guard.HttpGuard`'s.)
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT = 10.0
KEEP_ALIVE_TIMEOUT = 5
GRACEFUL_SHUTDOWN = 5


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request's headers."""

    header_timeout = HEADER_TIMEOUT

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._waiting_for: object | None = None
        self._header_timer: asyncio.TimerHandle | None = None
        self._arm_header_timer()

    def _arm_header_timer(self) -> None:
        self._cancel_header_timer()
        self._waiting_for = self.cycle  # a new cycle object means new headers arrived
        self._header_timer = self.loop.call_later(self.header_timeout, self._header_timeout)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        idle = self.cycle is None or self.cycle.response_complete
        if idle and self.cycle is self._waiting_for and not self.transport.is_closing():
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._header_timer is not None and self.cycle is not self._waiting_for:
            self._cancel_header_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)


def server_config(
    app: Any, *, host: str | None = None, port: int | None = None, **options: Any
) -> uvicorn.Config:
    """The uvicorn config for one of our servers (``options`` override the defaults)."""
    settings: dict[str, Any] = {
        "http": GuardedH11,
        "log_level": "warning",
        "lifespan": "on",
        "timeout_keep_alive": KEEP_ALIVE_TIMEOUT,
        "timeout_graceful_shutdown": GRACEFUL_SHUTDOWN,
        **options,
    }
    if host is not None:
        settings["host"] = host
    if port is not None:
        settings["port"] = port
    return uvicorn.Config(app, **settings)


def listening(sock: socket.socket) -> tuple[str, int]:
    """The (host, port) a bound socket listens on."""
    host, port = sock.getsockname()[:2]
    return str(host), int(port)
