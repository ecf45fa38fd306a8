"""Redaction of ``<private>...</private>`` spans before text reaches an LLM or the index.

Hashes and the manifest always see the raw file; everything that leaves it (text sent
to a model, chunks indexed for search, text returned by tools) goes through
:func:`redact_private` first.
"""

from __future__ import annotations

import re

REDACTED = "[redacted]"

# Case-insensitive, spans lines; an unclosed tag hides everything after it (fail closed).
_PRIVATE = re.compile(r"<private(?:\s[^>]*)?>.*?(?:</private\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_STRAY_CLOSE = re.compile(r"</private\s*>", re.IGNORECASE)


def redact_private(text: str) -> str:
    """Replace every ``<private>...</private>`` span with ``[redacted]``."""
    return _STRAY_CLOSE.sub("", _PRIVATE.sub(REDACTED, text))


def has_private(text: str) -> bool:
    """Whether the text contains a private span."""
    return _PRIVATE.search(text) is not None
