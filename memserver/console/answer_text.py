"""Where an answer's citation opens in the console: a page id opens the page view, a
``source/...`` id (a raw note the read agent quoted) the note view."""

from __future__ import annotations

from memserver.console.web import url

SOURCE = "source/"


def cited_href(page_id: str) -> str:
    """Where a citation opens: a note's view for ``source/...``, else the page."""
    if page_id.startswith(SOURCE):
        return url(f"note/{page_id.removeprefix(SOURCE)}")
    return url(f"page/{page_id}")
