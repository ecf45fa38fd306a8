"""The console in a real headless Chromium against a live memory server on loopback.

Each test signs in with its own token, walks one view as a person would, saves a
screenshot of it (``browser.SCREENSHOTS``) and checks that no page logged an error.
"""

from __future__ import annotations

import shutil

from memserver.kb.manifest import Manifest
from tests.memserver.console.browser import Browser
from tests.memserver.console.conftest import HELD, ConsoleServer


def _count(browser: Browser, css: str) -> int:
    return int(browser.text(css))


def test_a_scoped_token_sees_only_its_folders(
    browser: Browser, console_server: ConsoleServer
) -> None:
    name, secret = console_server.token("people,meetings")
    browser.sign_in(secret)
    assert browser.text("#who") == f"{name} [meetings,people, read]"
    offered = [box.get_attribute("value") for box in browser.all("input[name=folder]")]
    assert offered == ["people", "meetings"]
    assert not browser.all("a[href='/ui/ingest']") and not browser.all("a[href='/ui/tokens']")
    browser.find("#q").send_keys("latest meeting with Bob Martinez")
    browser.submit("#search-form")
    browser.find("#results")
    ids = [e.text.strip("[]") for e in browser.all("#results .id")]
    assert ids and all(i.split("/")[0] in ("people", "meetings") for i in ids)
    assert "order newest" in browser.text("#time-read")
    assert ids[0].startswith("meetings/")
    marked = [m.text for m in browser.all("#results .snippet mark")]
    assert marked and all(m.casefold().startswith(("meeting", "bob", "martinez")) for m in marked)
    assert not any(label.is_displayed() for label in browser.all("#results .label"))
    browser.click("#results li.result details.why summary")  # "why this result"
    assert browser.all("#results li.result .label")[0].is_displayed()
    browser.screenshot("search")
    assert browser.errors() == []


def test_search_open_a_page_and_follow_a_link_and_a_backlink(
    browser: Browser, console_server: ConsoleServer
) -> None:
    _, secret = console_server.token("*")
    browser.sign_in(secret)
    browser.go("?q=Bob+Martinez")
    browser.follow("#results li.result a.title")
    assert browser.text("#page-title") == "Bob Martinez"
    assert "Dana Whitfield" in browser.text("#fields")  # his manager since 2026-09-21
    browser.screenshot("page")
    target = browser.text("#links a.link")
    browser.follow("#links a.link")
    assert browser.text("#page-title") == target
    browser.go("page/people/bob-martinez")
    source = browser.text("#backlinks a.backlink")
    browser.follow("#backlinks a.backlink")
    assert browser.text("#page-title") == source
    assert "Bob Martinez" in browser.text("#links")  # the backlink's page links back
    browser.go("page/people/bob-martinez")
    browser.follow("#diff-button")
    browser.find("#diff")
    assert browser.all("#diff table.sides tr.changed, #diff table.sides tr.added")
    wider = "return document.documentElement.scrollWidth > window.innerWidth"
    assert browser.driver.execute_script(wider) is False  # long lines wrap
    browser.screenshot("diff")
    assert browser.errors() == []


_LABEL_OVERLAPS = """
const boxes = [...document.querySelectorAll('svg#graph g.node text:not(.hidden-label)')]
  .map((t) => t.getBoundingClientRect());
let overlapping = 0;
for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
  const a = boxes[i], b = boxes[j];
  if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) overlapping++;
}
return [boxes.length, overlapping];
"""


def _stroke_of(browser: Browser, verb: str) -> str:
    return str(browser.find(f"svg#graph line[data-verb='{verb}']").get_attribute("stroke"))


def test_the_graph_draws_the_neighbourhood_and_filters_verbs(
    browser: Browser, console_server: ConsoleServer
) -> None:
    _, secret = console_server.token("*")
    browser.sign_in(secret)
    browser.go("graph?id=people/bob-martinez&depth=1")
    browser.wait(lambda d: browser.find("svg#graph").get_attribute("data-nodes"))
    attended = _stroke_of(browser, "attended")
    browser.go("graph?id=people/bob-martinez&depth=2")
    nodes = browser.wait(lambda d: browser.find("svg#graph").get_attribute("data-nodes"))
    drawn = len(browser.all("svg#graph g.node"))
    assert drawn == int(nodes) and drawn >= 5
    assert browser.all("svg#graph g.node.center[data-id='people/bob-martinez']")
    browser.wait(lambda d: browser.all("svg#graph g.node")[0].get_attribute("transform"))
    assert _stroke_of(browser, "attended") == attended  # a verb keeps its colour
    legend = {e.get_attribute("data-folder"): e for e in browser.all("#folders .folder")}
    assert {"people", "meetings"} <= set(legend)
    centre = browser.find("svg#graph g.node.center circle").get_attribute("fill")
    assert legend["people"].find_element("css selector", "circle").get_attribute("fill") == centre
    labelled, overlapping = browser.driver.execute_script(_LABEL_OVERLAPS)
    assert labelled >= drawn // 2 and overlapping == 0
    browser.screenshot("graph")
    browser.click(".verb-filter[value='attended']")
    browser.wait(lambda d: len(browser.all("svg#graph g.node")) < drawn)
    assert len(browser.all("svg#graph line")) < drawn
    assert browser.errors() == []


def test_the_timeline_groups_a_window_by_day(
    browser: Browser, console_server: ConsoleServer
) -> None:
    _, secret = console_server.token("*")
    browser.sign_in(secret)
    browser.go("timeline?window=2026-09")
    days = [h.text for h in browser.all("#days section.day h2")]
    assert days and days == sorted(days, reverse=True)
    assert days and all(d.startswith("2026-09-") for d in days)
    browser.screenshot("timeline")
    assert browser.errors() == []


def test_the_timeline_opens_on_the_last_30_days_with_a_meeting_on_one_line(
    browser: Browser, console_server: ConsoleServer
) -> None:
    _, secret = console_server.token("*")
    browser.sign_in(secret)
    browser.go("timeline")
    assert "last 30 days up to the newest dated entry" in browser.text("#timeline-hint")
    days = [h.text for h in browser.all("#days section.day h2")]
    assert days and days == sorted(days, reverse=True) and days[0] >= "2026-11-15"
    meetings = [m.text for m in browser.all("#days a.meeting")]
    assert meetings and len(meetings) == len(set(meetings))  # each meeting once
    browser.screenshot("timeline-default")
    assert browser.errors() == []


def test_ingest_progress_moves_while_a_note_is_ingested(
    browser: Browser, console_server: ConsoleServer
) -> None:
    _, secret = console_server.token("*", write=True)
    browser.sign_in(secret)
    browser.go("ingest")
    browser.wait(lambda d: browser.text("#live").startswith("live, updated"))
    browser.driver.execute_script("window.stayedOnPage = 42")
    pending, done = _count(browser, '[data-count="pending"]'), _count(browser, "#done")
    shutil.copy(console_server.held, console_server.paths.source / HELD)
    Manifest(console_server.paths).scan()  # what the agent's source_pending does first
    browser.wait(lambda d: _count(browser, '[data-count="pending"]') == pending + 1)
    console_server.ingest("--file", HELD)
    browser.wait(lambda d: _count(browser, "#done") == done + 1)
    assert _count(browser, '[data-count="pending"]') == pending
    assert HELD in browser.text("#recent")
    assert browser.driver.execute_script("return window.stayedOnPage") == 42  # no reload
    browser.screenshot("ingest")
    assert browser.errors() == []


def _flag(console_server: ConsoleServer, secret: str, page_id: str, old: str, new: str) -> int:
    """Write a change to a page through MCP, flagged for review; its new version."""
    page = console_server.call(secret, "kb_get_page", {"id": page_id})
    assert old in page["markdown"]
    put = console_server.call(
        secret,
        "kb_put_page",
        {
            "id": page_id,
            "markdown": page["markdown"].replace(old, new, 1),
            "base_version": page["version"],
            "review": "reverses an accepted decision",
        },
    )
    return int(put["version"])


def test_accept_and_reject_a_flagged_change(
    browser: Browser, console_server: ConsoleServer
) -> None:
    writer, secret = console_server.token("*", write=True)
    kb = console_server.kb()
    decision = "decisions/2026-07-15-per-seat-pricing-for-acme-track"
    project = "projects/usage-metering"
    before = kb.get_page(decision).markdown
    kept = _flag(
        console_server,
        console_server.ingest_secret,
        project,
        "due_date: 2026-11-30",
        "due_date: 2026-12-15",
    )
    flagged = _flag(
        console_server, console_server.ingest_secret, decision, "$49 per user", "$0 per user"
    )
    browser.sign_in(secret)
    browser.go("review")
    assert len(browser.all("#changes tr.change")) == 2
    browser.screenshot("review")
    browser.follow(f"#changes tr.change[data-page='{project}'] a.edit")
    assert "due_date: 2026-12-15" in (browser.find("#markdown").get_attribute("value") or "")
    browser.screenshot("edit")
    browser.go("review")
    browser.follow(f"#changes tr.change[data-page='{project}'] button.accept")
    assert "accepted" in browser.text("#review-done")
    browser.follow(f"#changes tr.change[data-page='{decision}'] button.reject")
    assert "rejected" in browser.text("#review-done")
    assert not browser.all("#changes tr.change")
    assert kb.get_page(project).version == kept  # accepted: left as it is
    after = kb.get_page(decision)
    assert after.version == flagged + 1 and after.markdown == before  # rejected: restored
    tools = [(e.token, e.tool) for e in console_server.audit.query(token=writer)]
    assert (writer, "console.review.accept") in tools and (writer, "console.review.reject") in tools
    assert (writer, "console.restore") in tools  # the earlier version, written whole
    assert browser.errors() == []


def test_revoking_a_token_signs_its_session_out(
    browser: Browser, console_server: ConsoleServer
) -> None:
    name, secret = console_server.token("*", write=True, name="admin")
    browser.sign_in(secret)
    browser.go(f"audit?token={name}")
    assert name in browser.text("#audit")
    browser.screenshot("audit")
    browser.go("tokens")
    browser.screenshot("tokens")
    browser.follow(f"#tokens tr.token[data-name='{name}'] button.revoke")
    assert f"token '{name}' is revoked" in browser.text("#signed-out")
    assert console_server.tokens.get(name).status() == "revoked"
    browser.screenshot("signed-out")
    browser.go("")
    browser.find("#login-form")
    assert browser.errors() == []
