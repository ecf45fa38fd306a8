"""Answers to a window and nothing else: "what happened last week" lists every dated
event in it (``kb_timeline``), "meetings in September" the folder's pages dated in it
(``kb_list_pages``, by date), and a folder with nothing in the window is looked for as a
section of the pages that are ("decisions since 2026-11-01" -> the meetings' Decisions).
The answer names the days the window holds, inclusive."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from memserver.kb.schema import FolderSpec
from memserver.kb.words import is_cyrillic, words
from read_agent.extractive.evidence import from_page, pieces
from read_agent.extractive.line import Line, Part
from read_agent.extractive.page_reader import PageReader
from read_agent.extractive.question import Reading, matched
from read_agent.extractive.reply import Reply, clean
from read_agent.tools.wire import Event, Page, events, listed_pages

LISTED = 20
SHORT = 90  # characters of an event's text on the first line
NEAR = 10  # pages read on each side of an empty window for the nearest of a subject


async def listing(reader: PageReader, reading: Reading) -> Reply | None:
    window = reading.window or {}
    start, end = window_dates(window)
    shown = _shown_window(window)
    if reading.folders:
        lines: list[Line] = []
        by = reading.listed_by
        for folder in reading.folders:
            where = (
                by if by is not None and reading.field and folder == reading.field.folder else None
            )
            lines += await _folder_pages(reader, folder, start, end, where)
        if lines:
            return Reply(Line(_first_line(lines)), lines[:LISTED], shown)
        found = await _sections_named(reader, reading.folders, start, end)
        if found:
            kinds = ", ".join(reading.folders)
            lead = f"No {kinds} pages between {shown}; the {kinds} sections of the pages there:"
            return Reply(Line(lead), found[:LISTED], shown)
        kinds = ", ".join(reading.folders)
        nearest = [
            line
            for folder in reading.folders
            for line in await _nearest(reader, reading, folder, start, end)
        ]
        if nearest:
            return Reply(Line(f"No {kinds} between {shown}; the nearest:"), nearest, shown)
        return Reply(Line(f"No {kinds} between {shown}."), [], shown)
    timeline = await reader.call("kb_timeline", {"window": reading.question, "limit": 200})
    if timeline is None:
        return None
    lines = _event_lines(reader, _about(reader, reading, events(timeline)))
    if not lines:
        return Reply(Line(f"Nothing is recorded between {shown}."), [], shown)
    said = list(Reply(None, lines).digest().lines)  # as shown: each said once
    return Reply(Line(_first_line(said)), said[:LISTED], shown)


async def valued(reader: PageReader, reading: Reading) -> Reply | None:
    """ "Which companies are customers?": the pages of the folder whose field holds the
    value the question names (``reading.valued``; ``kb_list_pages`` filtered by it), none
    when the server lists by no field or nothing holds it."""
    if reading.valued is None or not reader.tools.accepts("kb_list_pages", "field"):
        return None
    folder, field, value = reading.valued
    lines = await _folder_pages(reader, folder, None, None, (field, value))
    if not lines:
        return None
    said = f"{folder} whose {field.replace('_', ' ')} is {value}"
    return Reply(
        Line(_first_line(lines).replace(" found: ", f" found ({said}): ", 1)), lines[:LISTED]
    )


async def _folder_pages(
    reader: PageReader,
    folder: str,
    start: str | None,
    end: str | None,
    where: tuple[str, str] | None = None,
) -> list[Line]:
    args: dict[str, Any] = {"folder": folder, "limit": 50}
    args.update({k: v for k, v in (("start", start), ("end", end)) if v})
    if where is not None:
        args.update(field=where[0], value=where[1])
    listed = listed_pages(await reader.call("kb_list_pages", args))
    rows = sorted(listed, key=lambda p: (p.effective_date or "", p.id))
    lines = []
    for row in rows:
        pid, day = row.id, (row.effective_date or "")[:10]
        gist = ""
        if len(rows) <= 3 and (page := await reader.page(pid)) is not None:
            gist = _gist(page)
        lines.append(_titled(row.title, [gist], day, pid))
    return lines


async def _nearest(
    reader: PageReader, reading: Reading, folder: str, start: str | None, end: str | None
) -> list[Line]:
    """A window with none of the folder's pages: the last one before it and the first
    one after it (up to the answer's now), of the question's subject if it names one and
    that subject has one ("late October" ends a day after a meeting on the 20th: a
    window's edge is fuzzy where people speak of it)."""
    sides = []
    if start is not None:
        sides.append(await _listed(reader, folder, None, start))  # newest first
    if end is not None:
        now = reader.now.date().isoformat() if reader.now is not None else None
        if now is None or now > end:
            sides.append((await _listed(reader, folder, end, now))[::-1])  # oldest first
    out: list[Line] = []
    for rows in sides:
        near = rows[:NEAR]
        if reading.subjects:
            near = [r for r in near if await _of_subject(reader, reading, r.id)]
        if near:
            out.append(await _page_line(reader, near[0].id, near[0].title, near[0].effective_date))
    return out


async def _listed(reader: PageReader, folder: str, start: str | None, end: str | None) -> list[Any]:
    args: dict[str, Any] = {"folder": folder, "limit": 500}
    args.update({k: v for k, v in (("start", start), ("end", end)) if v})
    return list(listed_pages(await reader.call("kb_list_pages", args)))


async def _of_subject(reader: PageReader, reading: Reading, page_id: str) -> bool:
    """Whether a page is one of the question's subjects or links to one."""
    ids = {s.id for s in reading.subjects}
    if page_id in ids:
        return True
    page = await reader.page(page_id)
    if page is None:
        return False
    names = set(_subject_names(reader, reading))
    return bool(names & {" ".join(words(n)) for n in reader.link_names(page)})


async def _page_line(reader: PageReader, page_id: str, title: str, day: str | None) -> Line:
    """A page as one line: its title, its links (who attended, which company) and the
    gist of its first section."""
    page = await reader.page(page_id)
    said = [reader.links_said(page), _gist(page)] if page is not None else []
    return _titled(title, said, day, page_id)


def _titled(title: str, said: Sequence[str], day: str | None, page_id: str) -> Line:
    """A page's line: its title, then what else is said of it after dashes (words of
    the line, not of its title: the first line names the title alone)."""
    more = tuple(Part(f" — {words_}") for words_ in said if words_)
    return Line(title, (day or "")[:10] or None, (page_id,), parts=more)


async def _sections_named(
    reader: PageReader, folders: Sequence[str], start: str | None, end: str | None
) -> list[Line]:
    """ "Decisions since ...": the sections so named of the dated pages in the window."""
    if reader.schema is None:
        return []
    wanted = set().union(*(_folder_words(reader.schema.folder(f)) for f in folders))
    lines = []
    for spec in reader.schema.folders:
        if not spec.date_field or spec.name in folders:
            continue
        args: dict[str, Any] = {"folder": spec.name, "limit": 20}
        args.update({k: v for k, v in (("start", start), ("end", end)) if v})
        listed = listed_pages(await reader.call("kb_list_pages", args))
        for row in sorted(listed, key=lambda p: p.effective_date or ""):
            page = await reader.page(row.id)
            if page is None:
                continue
            for piece in from_page(page, 0, True):
                if piece.kind == "section" and matched(wanted, words(piece.heading)):
                    lines.append(piece.line())
    return lines


def _about(reader: PageReader, reading: Reading, listed: Sequence[Event]) -> Sequence[Event]:
    """The events of the question's subjects, if it names any and some are theirs ("what
    happened with Initech in June?": on Initech's page, or naming it); else all."""
    ids = {s.id for s in reading.subjects}
    names = _subject_names(reader, reading)
    if not ids:
        return listed
    theirs = [
        e
        for e in listed
        if e.id in ids
        or any(n and f" {n} " in f" {' '.join(words(e.title + ' ' + e.text))} " for n in names)
    ]
    return theirs or listed


def _event_lines(reader: PageReader, listed: Sequence[Event]) -> list[Line]:
    dated = reader.schema is not None and {f.name for f in reader.schema.folders if f.date_field}
    order = {f.name: i for i, f in enumerate(reader.schema.folders)} if reader.schema else {}
    seen: set[str] = set()
    out: list[tuple[tuple[str, bool, int], Line]] = []
    pages = {f"({e.id})" for e in listed if e.kind == "page"}
    for event in listed:
        kind, text = event.kind, event.text
        if kind == "page" and dated and event.folder not in dated:
            continue  # an entity page dated by its newest entry, not an event
        if kind == "timeline" and (
            text.startswith(("Attended ", "Meeting “")) or text.endswith(tuple(pages))
        ):
            continue  # the meeting, or the page an entry links to, is listed as a page
        key = " ".join(words(text))
        if key in seen:
            continue
        seen.add(key)
        shown = text if kind == "timeline" else event.title
        day = event.date[:10]
        place = (kind != "page", order.get(event.folder, len(order)))
        out.append(((day, *place), Line(clean(shown), day, (event.id,))))
    # A day's own pages first, in the schema's folder order (the meeting, then what it
    # decided), then what other pages' timelines say of that day.
    return [line for _, line in sorted(out, key=lambda x: x[0])]


def window_dates(window: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """A window's [start, end) as the dates kb_list_pages takes (a partial last day counts)."""
    start, end = str(window.get("start") or ""), str(window.get("end") or "")
    first = start[:10] if start and not start.startswith("0001") else None
    last = None
    if end and not end.startswith("9999"):
        last = end[:10]
        if end[11:19] not in ("", "00:00:00"):
            last = (dt.date.fromisoformat(last) + dt.timedelta(days=1)).isoformat()
    return first, last


def _shown_window(window: Mapping[str, Any]) -> str:
    """The window as the days it holds: "2026-11-09 and 2026-11-15", inclusive."""
    first, last = window_dates(window)
    if last is not None:
        last = (dt.date.fromisoformat(last) - dt.timedelta(days=1)).isoformat()
    if first and last:
        return first if first == last else f"{first} and {last}"
    return f"{first} and now" if first else f"the start and {last}"


def _first_line(lines: Sequence[Line]) -> str:
    """How many pages or events were found and the first ones' dates and titles (not
    their gist; an event's text cut short)."""
    names = [f"{line.head()}{_short(line.text)}" for line in lines[:4]]
    more = f" (and {len(lines) - 4} more)" if len(lines) > 4 else ""
    return f"{len(lines)} found: {'; '.join(names)}{more}."


def _short(text: str) -> str:
    return text if len(text) <= SHORT else text[: SHORT - 1].rstrip() + "…"


def _gist(page: Page) -> str:
    for body in page.sections.values():
        for _, piece in pieces(body):
            if len(piece.split()) >= 4:
                return piece
    return ""


def _folder_words(spec: FolderSpec) -> set[str]:
    out = {spec.name, spec.type}
    out |= {w for w in words(spec.description) if is_cyrillic(w) and len(w) >= 4}
    return out


def _subject_names(reader: PageReader, reading: Reading) -> list[str]:
    """Every name of the question's subjects, as words (its title when not read)."""
    return [" ".join(words(n)) for s in reading.subjects for n in reader.names(s.id) or [s.title]]
