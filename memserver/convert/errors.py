"""The one error a converter raises: what is wrong with the original, and the fix.

A converter that fails inside a library says which library and which step failed
(``library_step``), never that a file it could not read is corrupt: the file may be
fine and the library at fault (a DOCX read through an XML round trip that a new lxml
changed, say). Where the original's own date was read before the failure, the error
carries it, so the ledger's failed entry is dated by the document, not by today.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata


class ConversionError(Exception):
    """An original that cannot be converted; ``message`` names the problem, ``fix`` the fix,
    ``date`` the original's own date when it could be read."""

    def __init__(self, message: str, fix: str, date: dt.date | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix
        self.date = date

    def __str__(self) -> str:
        return f"{self.message}; {self.fix}"

    def dated(self, date: dt.date | None) -> ConversionError:
        """The same error carrying the original's date (kept if it had one)."""
        return ConversionError(self.message, self.fix, self.date or date)


def version_of(package: str) -> str:
    """``package``'s installed version, "?" when it cannot be told."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "?"


@contextmanager
def library_step(name: str, package: str, step: str) -> Iterator[None]:
    """Run one library's step on the original ``name``; any exception from inside the
    library becomes a ConversionError naming the file, the library (with its version)
    and the step, and a fix that does not blame the file."""
    try:
        yield
    except ConversionError:
        raise
    except MemoryError:
        raise
    except Exception as exc:
        raise ConversionError(
            f"{name}: {package} {version_of(package)} failed while {step} "
            f"({type(exc).__name__}: {exc})"[:500],
            "if the file opens in its own program, the converter is at fault, not the file: "
            "save it again in another format (.pdf, .md) and drop that in, and report "
            "the message above",
        ) from None
