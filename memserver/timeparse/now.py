"""An explicit reference time (``now``): every entry point that reads dates relative to
today takes one, so a result can be reproduced. One reader and one error for them all:
the MCP tools' ``now``, ``memserver search --now``, the read agent's ``--now`` and its
HTTP ``now``."""

from __future__ import annotations

import datetime as dt

from memserver.errors import UserError

NOW_EXAMPLE = "write it like 2026-09-20 or 2026-09-20T15:00:00+08:00"


def parse_now(value: object, name: str = "now") -> dt.datetime | None:
    """``value`` as a datetime: an ISO date (its midnight) or date-time, ``Z`` for UTC.

    None or blank text is None (the real clock). Anything else that is not an ISO date or
    date-time is a ``UserError`` naming ``name`` and showing the form to write.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise UserError(f"{name} must be an ISO date or date-time string", NOW_EXAMPLE)
    try:
        return dt.datetime.fromisoformat(value.strip())
    except ValueError:
        raise UserError(f"{name} {value!r} is not an ISO date or date-time", NOW_EXAMPLE) from None
