"""Property: a scoped writer's round trip loses no line it cannot see.

A stored page names hidden decisions many times over, often so that lines read the same
once redacted (same day, ``Decision [redacted]``, same source; open questions and list
items too; sections with the same reference again and again). A writer reads it as a
scoped token does (``shown_page``), as markdown, makes one edit of what it can see (or
none), and writes it back: after ``restore_hidden`` the page is the stored page with
that edit, every hidden original still in its place. Removing a line that holds a hidden
reference is refused (``lost``), never silent.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memserver.kb.page import Page, TimelineEntry, parse_page, render_page
from memserver.server.hidden_merge import restore_hidden, shown_page
from memserver.server.prose_scope import Hidden

DECISIONS = {f"decisions/2026-07-1{n}-choice-{n}": f"Choice number {n}" for n in range(5)}
IDS = sorted(DECISIONS)
HIDDEN = Hidden({"decisions"}, DECISIONS)
DAYS = (dt.date(2026, 7, 10), dt.date(2026, 7, 11))
SOURCES = ("notes/a.md", None, "hidden")
JOINS = (
    " ",
    ", ",
    ".\n\n",
    "\n- ",
)  # how mentions follow each other in a section  # "hidden": the decision's own page as source


def _mention(form: int, n: int) -> str:
    page_id, title = IDS[n], DECISIONS[IDS[n]]
    return (
        f"Decision “{title}” ({page_id})",
        f"see [[{title}]]",
        f"[the call]({page_id})",
        f"**{page_id}**",
    )[form]


mentions = st.builds(_mention, st.integers(0, 3), st.integers(0, len(IDS) - 1))


@st.composite
def entries(draw: st.DrawFn) -> TimelineEntry:
    n = draw(st.integers(0, len(IDS) - 1))
    source = draw(st.sampled_from(SOURCES))
    text = draw(st.sampled_from((_mention(0, n), f"Named in {_mention(1, n)}", "Plain line")))
    if text == "Plain line" and source != "hidden":
        text = f"Plain line {draw(st.integers(0, 3))}"
    return TimelineEntry(
        draw(st.sampled_from(DAYS)), text, f"{IDS[n]}.md" if source == "hidden" else source
    )


@st.composite
def pages(draw: st.DrawFn) -> Page:
    said = draw(st.lists(mentions, min_size=1, max_size=6))
    body = "".join(m + draw(st.sampled_from(JOINS)) for m in said)
    return Page(
        title="Globex Works",
        type="company",
        fields={"status": "customer", "tags": tuple(draw(st.lists(mentions, max_size=3)))},
        aliases=("Globex",),
        sources=tuple(
            draw(st.lists(st.sampled_from(["notes/a.md", "notes/b.md", *(f"{i}.md" for i in IDS)])))
        ),
        sections={"Summary": f"Plain sentence stays.\n\n{body}"},
        timeline=tuple(draw(st.lists(entries(), min_size=1, max_size=12))),
        open_questions=tuple(
            f"Is {m} still current?" for m in draw(st.lists(mentions, max_size=4))
        ),
    )


EDITS = ("none", "sentence", "add_line", "add_question", "as_data")


def _edit(page: Page, edit: str) -> Page:
    """The writer's change of what it sees (the same change applied to the stored page
    is what must be stored)."""
    if edit == "sentence":
        sections = {
            h: b.replace("Plain sentence stays.", "Edited sentence stays.")
            for h, b in page.sections.items()
        }
        return Page(**{**_as_kwargs(page), "sections": sections})
    if edit == "add_line":
        line = TimelineEntry(dt.date(2026, 7, 12), "Signed the renewal", "notes/c.md")
        return Page(**{**_as_kwargs(page), "timeline": (*page.timeline, line)})
    if edit == "add_question":
        return Page(**{**_as_kwargs(page), "open_questions": (*page.open_questions, "Who pays?")})
    return page


def _as_kwargs(page: Page) -> dict[str, Any]:
    return {
        "title": page.title,
        "type": page.type,
        "fields": page.fields,
        "aliases": page.aliases,
        "sources": page.sources,
        "sections": page.sections,
        "timeline": page.timeline,
        "open_questions": page.open_questions,
    }


def _leaks(page: Page) -> list[str]:
    text = render_page(page)
    return [s for s in (*IDS, *DECISIONS.values()) if s.lower() in text.lower()]


@settings(max_examples=1000, deadline=None)
@given(pages(), st.sampled_from(EDITS))
def test_a_round_trip_keeps_every_hidden_line(stored: Page, edit: str) -> None:
    shown = shown_page(stored, HIDDEN, [])
    assert not _leaks(shown)
    # the reader sees every line (none folded into another that reads the same)
    assert len(shown.timeline) == len(stored.timeline)
    assert len(shown.open_questions) == len(stored.open_questions)
    written = shown if edit == "as_data" else parse_page(render_page(shown))
    merged = restore_hidden(_edit(written, edit), stored, HIDDEN, [])
    assert merged.lost == []
    assert merged.page == _edit(stored, edit)


@settings(max_examples=200, deadline=None)
@given(pages(), st.data())
def test_dropping_a_line_with_a_hidden_reference_is_refused(
    stored: Page, data: st.DataObject
) -> None:
    shown = shown_page(stored, HIDDEN, [])
    hiding = [
        n
        for n, e in enumerate(stored.timeline)
        if HIDDEN.pieces(e.text) or HIDDEN.pieces(e.source or "")
    ]
    if not hiding:
        return
    drop = data.draw(st.sampled_from(hiding))
    written = Page(
        **{
            **_as_kwargs(shown),
            "timeline": tuple(e for n, e in enumerate(shown.timeline) if n != drop),
        }
    )
    merged = restore_hidden(written, stored, HIDDEN, [])
    assert any(place.startswith("timeline entry") for place in merged.lost)


def test_five_lines_that_read_the_same_are_shown_numbered_and_all_kept() -> None:
    """The issue's case: five ``Decision “…” (decisions/…)`` lines of one day and source."""
    day = dt.date(2026, 11, 3)
    stored = Page(
        title="Nomin Trade",
        type="company",
        timeline=tuple(
            TimelineEntry(day, _mention(0, n), "notes/sync.md") for n in range(len(IDS))
        ),
    )
    shown = shown_page(stored, HIDDEN, [])
    assert [e.text for e in shown.timeline] == [f"Decision [redacted {n}]" for n in range(1, 6)]
    written = parse_page(render_page(shown))
    merged = restore_hidden(written, stored, HIDDEN, [])
    assert merged.lost == [] and merged.page == stored
