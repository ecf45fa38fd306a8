"""Reading one file under ``source/`` so that the file checked is the file read.

Checking a path (``resolve()``, "is it inside source/?") and then opening it is a race:
a symlink swapped in between makes the open follow it anywhere (``/etc/passwd``). Here
the file is opened first, and the *opened descriptor* is checked: its real path (from
``/proc/self/fd`` on Linux, ``F_GETPATH`` on macOS) must lie inside ``source/`` and it
must be a regular file; only then is it read, from that same descriptor. Where the
descriptor's path cannot be asked for, no component under ``source/`` may be a link.
The open never blocks (``O_NONBLOCK``: a fifo is refused, not waited on).

A file larger than ``max_bytes`` is not read at all: :class:`TooLarge` carries its size.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class UnsafeSource(Exception):
    """The path cannot be read as a source; the message says why, for the ledger."""


class TooLarge(Exception):
    """The file is larger than the limit; it was not read."""

    def __init__(self, size: int, limit: int, mtime_ns: int) -> None:
        super().__init__(f"{size} bytes, more than the limit of {limit}")
        self.size, self.limit, self.mtime_ns = size, limit, mtime_ns


@dataclass(frozen=True)
class SourceBytes:
    data: bytes
    size: int
    mtime: float


def read_source_file(root: Path, full: Path, max_bytes: int) -> SourceBytes:
    """The bytes of ``full``, which must really be a regular file inside ``root``.

    ``root`` is the resolved ``source/`` folder. Raises UnsafeSource (a link leaving it,
    not a regular file, unreadable) or TooLarge.
    """
    with open_source_file(root, full, max_bytes) as (handle, info):
        data = _read_all(handle.fileno(), max_bytes)
    if len(data) > max_bytes:  # it grew while being read
        raise TooLarge(len(data), max_bytes, info.st_mtime_ns)
    return SourceBytes(data, len(data), info.st_mtime)


@contextlib.contextmanager
def open_source_file(
    root: Path, full: Path, max_bytes: int
) -> Iterator[tuple[io.BufferedReader[io.FileIO], os.stat_result]]:
    """``full`` opened for reading once it is checked as :func:`read_source_file` checks
    it, and its ``stat``; for a caller that streams it (hashes it, hands it to a
    converter) instead of holding all of it."""
    try:
        fd = _open(root, full)
    except FileNotFoundError:
        raise UnsafeSource("broken symlink or missing file; fix or delete it") from None
    except OSError as exc:
        raise UnsafeSource(f"cannot read the file: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        real = _real_path(fd)
        if real is not None and not real.is_relative_to(root):
            raise UnsafeSource("symlink points outside source/; copy the file in")
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeSource("not a regular file (a fifo, socket or device)")
        if info.st_size > max_bytes:
            raise TooLarge(info.st_size, max_bytes, info.st_mtime_ns)
        handle = io.BufferedReader(io.FileIO(fd, "rb"))
    except BaseException:
        os.close(fd)
        raise
    with handle:
        yield handle, info


def _open(root: Path, full: Path) -> int:
    if _can_ask_path():
        return os.open(full, _READ_FLAGS)
    # No way to ask the descriptor where it is: refuse every link below source/.
    rel = full.relative_to(root) if full.is_absolute() and full.is_relative_to(root) else None
    if rel is None:
        raise UnsafeSource("the path is not inside source/")
    dir_fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for part in rel.parts[:-1]:
            next_fd = os.open(part, os.O_RDONLY | _NOFOLLOW, dir_fd=dir_fd)
            os.close(dir_fd)
            dir_fd = next_fd
        try:
            return os.open(rel.parts[-1], _READ_FLAGS | _NOFOLLOW, dir_fd=dir_fd)
        except OSError as exc:
            raise UnsafeSource(f"cannot read the file (links are refused here): {exc}") from None
    finally:
        os.close(dir_fd)


def _can_ask_path() -> bool:
    return sys.platform.startswith("linux") or hasattr(fcntl, "F_GETPATH")


def _real_path(fd: int) -> Path | None:
    """Where the open descriptor really is, or None when the platform cannot say."""
    if sys.platform.startswith("linux"):
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    if hasattr(fcntl, "F_GETPATH"):
        raw = fcntl.fcntl(fd, fcntl.F_GETPATH, b"\0" * 1024)
        return Path(os.fsdecode(raw.rstrip(b"\0")))
    return None


def _read_all(fd: int, max_bytes: int) -> bytes:
    """Up to ``max_bytes + 1`` bytes (one more than allowed tells that it grew)."""
    chunks: list[bytes] = []
    left = max_bytes + 1
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
