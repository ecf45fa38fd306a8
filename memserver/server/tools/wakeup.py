"""kb_wakeup: what changed since a cursor, what waits, what was busy, and a new cursor
(built by :mod:`memserver.server.wakeup`; no model call)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from memserver.server.brief_settings import BRIEF
from memserver.server.tools.base import Access, current, tool
from memserver.server.wakeup import build_wakeup

DEFAULT_WAKEUP_BUDGET = 1_200
MAX_SINCE_CHARS = 20_100


class WakeupView(TypedDict):
    since: str
    cursor: str
    counts: dict[str, int]
    decisions: list[dict[str, Any]]
    conflicts: list[dict[str, Any]]
    reviews: list[dict[str, Any]]
    pages: list[dict[str, Any]]
    open_conflicts: list[dict[str, Any]]
    waiting_review: list[dict[str, Any]]
    active_subjects: list[dict[str, Any]]
    omitted: dict[str, int]
    truncated: bool
    text: str
    tokens: int
    budget: int


@tool(
    access=Access.READ,
    title="Wake up: what changed",
    aliases={"cursor": "since", "after": "since", "tokens": "budget"},
)
def kb_wakeup(
    since: Annotated[
        str | None,
        Field(
            max_length=MAX_SINCE_CHARS,
            description="The `cursor` your last kb_wakeup returned; or a date (2026-09-01), "
            "a time, or a duration back from now (7d); default: the last 7 days.",
        ),
    ] = None,
    budget: Annotated[
        int,
        Field(
            ge=BRIEF.min_budget,
            le=BRIEF.max_budget,
            description=f"At most this many tokens (about 4 characters each); "
            f"default {DEFAULT_WAKEUP_BUDGET}.",
        ),
    ] = DEFAULT_WAKEUP_BUDGET,
) -> WakeupView:
    """Call this once at the start of a session: what changed in the memory since you last
    looked, what waits for a person, and what was busy, within `budget` tokens.

    Pass the `cursor` your previous kb_wakeup returned as `since` (keep it between
    sessions): you get exactly the changes made after it, none missed and none
    repeated, even while others write. Without one it covers the last 7 days; a date
    or a duration (7d) works too. It holds `decisions` and `pages` written (each
    created or changed, with its dates, versions, the fields that changed from -> to
    and the note that changed them), `conflicts` recorded or closed and `reviews`
    flagged or decided in that time, what waits now (`open_conflicts`,
    `waiting_review`), the `active_subjects` (pages written most or linked most from the
    pages written), `counts` for the whole window, and `text`, the same brief to read.
    Cite pages as [folder/slug] with their dates. `truncated` means items were left out
    to fit (`omitted` counts them per section): ask again with the same `since` and a
    larger budget (at most 6000) if you need them. Then keep the new `cursor`.
    """
    call = current()
    return WakeupView(**build_wakeup(call, since, budget))  # type: ignore[typeddict-item]
