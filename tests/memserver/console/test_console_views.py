"""The reading views for people, over HTTP: search shows the sentence that matched
(marked, escaped) with its internals behind a toggle; the timeline opens on the last 30
days; the history diff is side by side; review speaks of updates and conflicts."""

from __future__ import annotations

import re
import uuid

from memserver.kb.page import Page
from tests.memserver.console.conftest import ConsoleServer


def test_search_shows_the_matched_sentence_marked_and_escaped(
    console_server: ConsoleServer,
) -> None:
    tag = uuid.uuid4().hex[:6]
    name = f"Zebulon{tag}"
    console_server.kb().put_page(
        "people",
        Page(
            title=f"Quentin Vale {tag}",
            type="person",
            fields={"role": "Rollout lead"},
            sections={
                "Summary": "Quentin joined in May. "
                f"He runs the <script>alert(1)</script> {name} rollout for Acme. "
                "He likes tea."
            },
        ),
        None,
    )
    _, secret = console_server.token("*")
    with console_server.signed_in(secret) as client:
        html = client.get("/ui/", params={"q": f"{name} rollout", "now": "2026-11-20"}).text
    item = next(li for li in html.split('<li class="result">') if f"Quentin Vale {tag}" in li)
    snippet = re.search(r'<p class="snippet">(.*?)</p>', item, re.S)
    assert snippet is not None
    assert snippet.group(1) == (
        f"He runs the &lt;script&gt;alert(1)&lt;/script&gt; <mark>{name}</mark> "
        "<mark>rollout</mark> for Acme."
    )
    assert "<script>alert" not in html
    labels = item.index('class="label"')
    assert item.rindex("<summary>why this result</summary>", 0, labels) > 0
    assert re.search(r'id="search-now">2026-11-20 00:00 [+-]\d\d:\d\d</span>', html)
    assert "Routed to:" not in html


def test_the_timeline_opens_on_the_last_30_days_and_a_meeting_is_one_line(
    console_server: ConsoleServer,
) -> None:
    _, secret = console_server.token("*")
    with console_server.signed_in(secret) as client:
        html = client.get("/ui/timeline").text
    hint = re.search(r"last 30 days up to the newest dated entry,\s+(\S+) ", html)
    assert hint is not None
    newest = hint.group(1)
    window = re.search(r'name="window" value="from (\S+) to (\S+)"', html)
    assert window is not None and window.group(2) == newest
    days = re.findall(r'<section class="day"><h2>(\S+)</h2>', html)
    assert days and days[0] == newest and min(days) >= window.group(1)
    review = [
        line
        for line in html.split('<li class="happening">')
        if "Meeting “Globex integration review”" in line
    ]
    assert len(review) == 1  # not once per attendee
    assert "attended by" in review[0]
    assert "· for" in review[0] and ">Globex</a>" in review[0]  # the company's line, too
    for name in ("Bob Martinez", "Priya Shah", "Sofia Rossi"):
        assert f">{name}</a>" in review[0]


def test_the_history_diff_is_side_by_side_with_who_and_which_note(
    console_server: ConsoleServer,
) -> None:
    page_id = "people/bob-martinez"
    versions = console_server.kb().history(page_id)
    first, last = versions[-1], versions[0]
    assert last.version > first.version
    _, secret = console_server.token("*")
    with console_server.signed_in(secret) as client:
        page = client.get(f"/ui/page/{page_id}").text
        html = client.get(
            f"/ui/page/{page_id}/diff", params={"a": first.version, "b": last.version}
        ).text
    sides = re.findall(
        r'<th class="side">version (\d+).*?by <span class="who">([^<]+)</span>', html, re.S
    )
    assert sides == [(str(first.version), first.written_by), (str(last.version), last.written_by)]
    assert re.search(r'class="made-by">from <code>[^<]+\.md</code>', html)  # the note
    assert '<section class="diff-part"><h2>Fields</h2>' in html
    changed = re.findall(
        r'<tr class="changed"><td class="before">([^<]*)</td><td class="after">([^<]*)</td>', html
    )
    assert changed and all(before != after for before, after in changed)
    assert "@@" not in html and "+++" not in html  # not a unified diff
    assert page.count('class="made-by">from ') >= 2  # each ingested version names its note


def test_review_lists_updates_as_history_and_only_disagreements_as_open_conflicts(
    console_server: ConsoleServer,
) -> None:
    kb = console_server.kb()
    page_id = "companies/initech"
    stored = kb.get_page(page_id)
    tag = uuid.uuid4().hex[:6]
    kb.put_page(
        "companies",
        stored.page,
        stored.version,
        slug="initech",
        written_by="ingest",
        conflicts=[
            {"field": f"seats_{tag}", "old_value": 40, "new_value": 45, "status": "superseded"},
            {
                "field": f"plan_{tag}",
                "old_value": "pro",
                "new_value": "team",
                "status": "unresolved",
            },
        ],
    )
    _, secret = console_server.token("*", write=True)
    with console_server.signed_in(secret) as client:
        html = client.get("/ui/review").text
    conflicts = html[html.index('<section id="conflicts">') : html.index('<section id="updates">')]
    updates = html[html.index('<section id="updates">') : html.index('<section id="questions">')]
    assert f"plan_{tag}" in conflicts and f"seats_{tag}" not in conflicts
    assert f"seats_{tag}" in updates and f"plan_{tag}" not in updates
    assert "resolved</button>" in conflicts and "<button" not in updates
    opened = len(console_server.kb_reviews().conflicts(None, ("unresolved",)))
    assert f"<h2>{opened} open conflicts</h2>" in conflicts  # as `memserver review` counts
