"""Listening addresses: ``HOST:PORT`` read one way by every program that serves HTTP
(``memserver serve``, ``memserver up``, ``read-agent serve``)."""

from __future__ import annotations

from memserver.errors import UserError


def parse_addr(addr: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``[::1]:PORT`` -> (host, port)."""
    host, sep, port_text = addr.rpartition(":")
    if not sep or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise UserError(f"cannot read the address {addr!r}", "write HOST:PORT, e.g. 127.0.0.1:8787")
    return (host.strip("[]") or "127.0.0.1"), int(port_text)
