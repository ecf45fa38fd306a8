"""Converting an original in its own process, with time and memory limits: a zip bomb, a
PDF bomb, an encrypted or corrupt file becomes a :class:`ConversionError` with the
reason, never a stalled scan or an exception from inside a parser.

The time limit grows with the original's size (``BASE_SECONDS`` plus ``SECONDS_PER_MIB``
a MiB, at most ``MAX_SECONDS``); the worker (``memserver.convert.worker``) limits its own
memory and may write no file, and sees none of the caller's secrets (``PASSED_ENV``). What
it may write is limited too, and counted as it writes (``memserver.convert.budget``).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from typing import BinaryIO

from memserver.convert.budget import (
    DROPPED_ENV,
    IMPORT_MAX_NOTES,
    IMPORT_MAX_TEXT,
    NOTES_ENV,
    TEXT_ENV,
)
from memserver.convert.errors import ConversionError
from memserver.convert.note import Note

BASE_SECONDS = 120.0
SECONDS_PER_MIB = 10.0
MAX_SECONDS = 600.0
MEMORY_BYTES = 1536 * 1024 * 1024
# The only variables the converter sees: no token or API key reaches a process that
# parses untrusted files.
PASSED_ENV = frozenset({"PATH", "PYTHONPATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "HOME"})


def time_limit(size: int) -> float:
    """Seconds a conversion of ``size`` bytes may take."""
    return min(MAX_SECONDS, BASE_SECONDS + SECONDS_PER_MIB * size / (1024 * 1024))


def convert_isolated(
    kind: str,
    name: str,
    data: bytes | BinaryIO,
    seconds: float | None = None,
    *,
    max_text: int = IMPORT_MAX_TEXT,
    max_notes: int = IMPORT_MAX_NOTES,
    dropped: bool = False,
) -> list[Note]:
    """The notes of one original of ``kind``, converted in a limited child process that
    stops once it has written ``max_text`` bytes of text or ``max_notes`` notes
    (``memserver.convert.budget``; ``dropped``: for a file dropped into source/)."""
    if isinstance(data, bytes):
        size, payload, stdin = len(data), data, None
    else:  # a file: the worker reads it from where it is (this process never holds it)
        size, payload, stdin = os.fstat(data.fileno()).st_size - data.tell(), None, data
    limit = time_limit(size) if seconds is None else seconds
    env = {
        **{k: v for k, v in os.environ.items() if k in PASSED_ENV},
        "PYTHONDONTWRITEBYTECODE": "1",  # it may write no file
        "MEMSERVER_CONVERT_MEMORY": str(MEMORY_BYTES),
        "MEMSERVER_CONVERT_CPU": str(int(limit) + 1),
        TEXT_ENV: str(max_text),
        NOTES_ENV: str(max_notes),
        DROPPED_ENV: "1" if dropped else "0",
    }
    try:
        done = subprocess.run(
            [sys.executable, "-m", "memserver.convert.worker", kind, name],
            input=payload,
            stdin=stdin,
            capture_output=True,
            timeout=limit,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ConversionError(
            f"converting {name} took longer than {limit:.0f} s and was stopped",
            "split the document or export it again; a file built to stall converters is refused",
        ) from None
    try:
        out = json.loads(done.stdout.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [
            f"exit status {done.returncode}"
        ]
        raise ConversionError(
            f"the converter of {name} stopped ({why[0][:300]})",
            "the file may be corrupt or too large to convert; export it again",
        ) from None
    if "error" in out:
        day = out.get("date")
        raise ConversionError(
            str(out["error"]),
            str(out.get("fix") or "export it again"),
            dt.date.fromisoformat(day) if isinstance(day, str) else None,
        )
    return [Note.from_dict(n) for n in out["notes"]]
