"""Running services for ``memserver up``: child processes, ports, health polls, log files.

- :class:`Child` runs one program with its output appended to a log file, in its own
  process group (Ctrl-C in the terminal reaches only the supervisor, which stops the
  children in order) and, on Linux, with SIGTERM delivered to it if the supervisor
  dies, even by SIGKILL. ``tail()`` shows what *this* run wrote, for error messages.
- :func:`listen_socket` listens on a port before anything starts, so a port in use is a
  one-line error instead of a half-started system; the read agent is handed its socket
  (``pass_fds``), so no other program can take the port in between.
- :func:`wait_healthy` polls a ``/healthz`` within a deadline and fails early when the
  service it waits for has stopped.
- :func:`log_to_file` sends this process's log records (and warnings) to a file.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memserver.errors import ServiceError, UserError
from memserver.web.addr import parse_addr

logger = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the forked child
    """Linux: the child gets SIGTERM when ``up`` dies, even by SIGKILL."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))


@dataclass
class Child:
    """One agent process: its command, environment and log file."""

    name: str
    argv: list[str]
    env: dict[str, str] = field(repr=False)
    log: Path
    proc: subprocess.Popen[bytes] | None = None
    on_exit: Callable[[], None] | None = field(default=None, repr=False)
    pass_fds: tuple[int, ...] = ()  # file descriptors the child inherits (a listening socket)
    nice: int = 0  # added to its CPU niceness (background work yields to questions)
    _log_start: int = field(default=0, repr=False)  # where this run's lines begin

    def start(self) -> None:
        """Start it with stdout and stderr appended to its log; stdin closed."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as out:
            self._log_start = out.tell()
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            out.write(f"\n=== {stamp} {shlex.join(self.argv)}\n".encode())
            out.flush()
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
                pass_fds=self.pass_fds,
                preexec_fn=self._in_child if sys.platform.startswith("linux") else None,
            )
        threading.Thread(target=self._watch, name=f"watch-{self.name}", daemon=True).start()

    def _in_child(self) -> None:  # pragma: no cover - runs in the forked child
        _die_with_parent()
        if self.nice:
            with contextlib.suppress(OSError):
                os.nice(self.nice)

    def _watch(self) -> None:
        assert self.proc is not None
        self.proc.wait()
        if self.on_exit is not None:
            self.on_exit()

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def exit_code(self) -> int | None:
        """None while it runs (or before it started), else its exit status."""
        return self.proc.poll() if self.proc is not None else None

    def request_stop(self) -> None:
        """SIGINT, as Ctrl-C would send (both agents stop cleanly on it)."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGINT)

    def wait(self, timeout: float) -> int | None:
        """Wait for it to end (after ``request_stop``); SIGKILL its process group if it
        has not within ``timeout``. None if it never started."""
        if self.proc is None:
            return None
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            logger.warning("%s did not stop within %.0fs; killing it", self.name, timeout)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            return self.proc.wait(timeout)

    def tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines this run wrote to its log."""
        try:
            with open(self.log, "rb") as log:
                log.seek(self._log_start)
                text = log.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.rstrip().splitlines()[-lines:])

    def describe_exit(self) -> str:
        code = self.exit_code()
        if code is None:
            return "is running"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"was killed by {signal.Signals(-code).name}"
        return f"exited with status {code}"

    def failure(self, when: str = "") -> ServiceError:
        """The error for a child that ended by itself, with the tail of its log."""
        shown = "\n".join(f"  | {line}" for line in self.tail().splitlines()) or "  | (empty)"
        return ServiceError(
            f"the {self.name} {self.describe_exit()}{when}; last lines of {self.log}:\n{shown}",
            f"fix the cause shown above (full log: {self.log})",
        )


def client_host(host: str) -> str:
    """The host a local client uses to reach a server bound to ``host``."""
    return "127.0.0.1" if host in ("", "0.0.0.0", "::") else host


def url_of(addr: str) -> str:
    host, port = parse_addr(addr)
    host = client_host(host)
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def listen_socket(addr: str, what: str, flag: str) -> socket.socket:
    """A socket listening on ``addr`` now, so the port is ours before anything starts.

    Listening at once (not only binding) matters: a bound socket that does not listen
    yet can still lose the port to another program that listens first.
    """
    host, port = parse_addr(addr)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(socket.SOMAXCONN)
    except OSError as exc:
        sock.close()
        raise port_error(addr, what, flag, exc) from exc
    return sock


def port_error(addr: str, what: str, flag: str, exc: OSError) -> UserError:
    """The one message for a port we cannot have, whenever it turns out."""
    return UserError(
        f"cannot listen on {addr} for the {what}: {exc.strerror or exc}",
        f"another program (or another `memserver up`) uses that port; stop it or pass "
        f"{flag} HOST:PORT",
    )


def wait_healthy(
    url: str,
    timeout: float,
    *,
    alive: Callable[[], bool],
    failure: Callable[[], Exception],
    what: str,
) -> dict[str, Any]:
    """Poll ``url`` (a /healthz) until it answers 200 and return its JSON.

    Raises ``failure()`` if the service stops meanwhile, ServiceError on timeout.
    """
    import httpx2

    deadline = time.monotonic() + timeout
    last = "no answer yet"
    with httpx2.Client(timeout=2.0) as client:
        while True:
            if not alive():
                raise failure()
            try:
                response = client.get(url)
                if response.status_code == 200:
                    body = response.json()
                    return body if isinstance(body, dict) else {}
                last = f"HTTP {response.status_code}"
            except httpx2.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
            if time.monotonic() >= deadline:
                raise ServiceError(
                    f"the {what} did not answer {url} within {timeout:.0f}s ({last})",
                    "see its log under .memserver/logs/",
                )
            time.sleep(0.2)


@contextlib.contextmanager
def log_to_file(path: Path, *, keep_console: bool) -> Iterator[None]:
    """Send this process's log records to ``path`` (and off the terminal, unless asked)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    removed = [] if keep_console else [h for h in root.handlers if type(h) is logging.StreamHandler]
    for h in removed:
        root.removeHandler(h)
    root.addHandler(handler)
    logging.captureWarnings(True)  # e.g. the embedded PostgreSQL's runtime-dir warning
    try:
        yield
    finally:
        logging.captureWarnings(False)
        root.removeHandler(handler)
        handler.close()
        for h in removed:
            root.addHandler(h)
