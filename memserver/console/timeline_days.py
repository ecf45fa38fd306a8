"""The timeline view's days: events grouped by date, one line per thing that happened.

The ingest agent writes one event onto every page it concerns: a meeting is a dated
page, each attendee's page gets "Attended meeting “Globex pilot review” (meetings/...)"
and the company's and project's get "Meeting “...” (meetings/...)"; a signed contract
is on the company's page and on each person's. By day the console shows such a thing
once: the meeting with who attended and what it was for, an event with the pages it is
written on.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

_MEETING = re.compile(r"^(Attended meeting|Meeting) “(?P<title>.+)” \((?P<id>[^()\s]+)\)$")


@dataclass
class Happening:
    """One thing of a day: an event and the pages it is on, or a meeting."""

    text: str
    source: str | None = None
    pages: list[tuple[str, str]] = field(default_factory=list)  # (id, title)
    meeting: str | None = None  # the meeting page's id
    attendees: list[tuple[str, str]] = field(default_factory=list)
    about: list[tuple[str, str]] = field(default_factory=list)  # its company, project ...
    dated_page: bool = False  # a page dated that day (a decision, a meeting of no one)


def by_day(events: Iterable[Mapping[str, Any]]) -> list[tuple[str, list[Happening]]]:
    """``kb_timeline`` events (newest first) as days of happenings."""
    days = []
    for day, same_day in itertools.groupby(events, key=lambda e: e["date"]):
        listed = list(same_day)
        meetings = {m["id"] for e in listed if (m := _MEETING.match(e["text"])) is not None}
        happenings: dict[tuple[str, ...], Happening] = {}
        for event in listed:
            _add(happenings, event, meetings)
        days.append((day, _without_repeats(list(happenings.values()))))
    return days


def _without_repeats(happenings: list[Happening]) -> list[Happening]:
    """Without "dated this day" for a page an event of the day already names (a person's
    page is dated by its newest entry: the entry says more)."""
    named = {
        page_id
        for h in happenings
        if not h.dated_page
        for page_id, _ in (*h.pages, *h.attendees, *h.about)
    }
    return [h for h in happenings if not (h.dated_page and h.pages[0][0] in named)]


def _add(
    happenings: dict[tuple[str, ...], Happening], event: Mapping[str, Any], meetings: set[str]
) -> None:
    """Put ``event`` on its line; ``meetings`` are the meeting ids the day's events name."""
    page = (event["id"], event["title"])
    meeting = _MEETING.match(event["text"]) if event["kind"] != "page" else None
    if meeting is not None or event["id"] in meetings:
        meeting_id = meeting["id"] if meeting is not None else event["id"]
        title = meeting["title"] if meeting is not None else event["title"]
        found = happenings.setdefault(("meeting", meeting_id), Happening(title))
        found.meeting = meeting_id
        found.source = found.source or event.get("source")
        if meeting is not None:
            (found.attendees if meeting.group(1) == "Attended meeting" else found.about).append(
                page
            )
        return
    if event["kind"] == "page":  # a page dated that day: a line of its own
        key: tuple[str, ...] = ("page", event["id"])
        happenings.setdefault(key, Happening(event["title"], dated_page=True)).pages.append(page)
        return
    key = ("event", event["text"], event.get("source") or "")
    happenings.setdefault(key, Happening(event["text"], event.get("source"))).pages.append(page)
