"""The Ask view in a real headless Chromium, with a real ``read-agent serve --no-llm``:
a question, a follow-up, a citation that opens the cited page, and its notes."""

from __future__ import annotations

from tests.memserver.console.browser import Browser
from tests.memserver.console.conftest import ConsoleServer


def test_ui_without_a_slash_opens_the_sign_in(browser: Browser) -> None:
    browser.sign_out()
    browser.driver.get(browser.ui)  # http://.../ui, as the README writes it
    browser.find("#login-form")
    assert browser.driver.current_url.endswith("/ui/login")
    assert browser.errors() == []


def test_ask_and_follow_up_then_open_a_cited_page(
    browser: Browser, console_server: ConsoleServer, read_agent: str
) -> None:
    _, secret = console_server.token("*")
    browser.sign_in(secret)
    browser.go("ask")
    assert "Your pages are dated" in browser.text("#period")
    browser.submit("#as-of-form")  # ask as of the newest page's date
    assert str(browser.find("#now").get_attribute("value")) >= "2026-11-15"
    browser.find("#question").send_keys("Who is Bob Martinez?")
    browser.submit("#ask-form")
    assert "Bob Martinez" in browser.text("#latest .answer")
    assert "no language model" in browser.text("#latest .degraded")
    browser.find("#question").send_keys("Who does he report to?")
    browser.submit("#ask-form")
    assert len(browser.all("li.exchange")) == 2
    assert "Dana Whitfield" in browser.text("#latest .answer")
    browser.screenshot("ask")
    browser.follow("#latest a.citation[href='/ui/page/people/bob-martinez']")
    assert browser.text("#page-title") == "Bob Martinez"
    browser.follow("#sources a.note")  # and the notes it was made from
    assert browser.text("#note-path").startswith("source/")
    browser.screenshot("note")
    assert browser.errors() == []
