"""The names of files under ``source/`` that are listed but never read, and how they are shown.

A file name may hold a newline, an escape character or bytes that are not UTF-8; shown
as it is it reaches logs and terminals raw (an ESC sequence rewrites the screen), and the
source tools refuse such a path, so its entry could never be written and the agent
retried it for ever. Such a file gets a failed entry under its *safe rendering*
(:func:`safe_name`: each unsafe character as an escape, ``\\x1b``), saying why and how
to fix it. A symlinked folder is listed too (:data:`LINKED_FOLDER`), not followed.
"""

from __future__ import annotations

import unicodedata

LINKED_FOLDER = (
    "a symlinked folder: its files are not read (a link may lead out of source/ or loop); "
    "move or copy the folder itself into source/"
)
# Characters a name may not hold (they would reach logs and terminals as they are):
# controls, lone surrogates (bytes that are not UTF-8), and the marks that turn text
# around (shown text that is not the stored one).
_UNSAFE = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _unsafe(ch: str) -> bool:
    return ch in _UNSAFE or unicodedata.category(ch) in ("Cc", "Cs")


def safe_name(rel: str) -> str:
    """``rel`` with every unsafe character written as an escape (``\\x1b``, ``\\n``,
    ``\\udcff``): the ledger's key for a file whose name cannot be shown or used."""
    if not any(_unsafe(ch) for ch in rel):
        return rel
    out = []
    for ch in rel:
        if not _unsafe(ch):
            out.append(ch)
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\u{ord(ch):04x}")
    return "".join(out)


def name_problem(rel: str) -> str | None:
    if not any(_unsafe(ch) for ch in rel):
        return None
    return (
        "its name holds a control character or bytes that are not UTF-8 (shown escaped "
        "here); rename the file with plain characters"
    )
