"""A headless Chromium for the console tests (selenium with Debian's chromium-driver).

One browser for the session, a fresh profile, no network beyond loopback. Every wait is
a bounded ``WebDriverWait``; ``errors()`` returns what the page logged as an error (a
JavaScript exception, ``console.error``, a resource that failed to load) since the last
call, so a test can say "no errors on this page". Screenshots go to ``SCREENSHOTS``
(``build/screenshots/console/``, or ``$CONSOLE_SCREENSHOTS``).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.common.exceptions import (
    NoSuchElementException,
    StaleElementReferenceException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

REPO = Path(__file__).resolve().parents[3]
SCREENSHOTS = Path(
    os.environ.get("CONSOLE_SCREENSHOTS") or REPO / "build" / "screenshots" / "console"
)
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
WAIT = 20.0
# Flags for a root user on a machine whose only network is loopback: without the
# background-networking ones Chromium's own connections are refused and logged.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,1000",
)


class Browser:
    def __init__(self, driver: webdriver.Chrome, ui: str) -> None:
        self.driver = driver
        self.ui = ui

    def go(self, path: str = "") -> None:
        self.driver.get(f"{self.ui}/{path.lstrip('/')}")

    def wait(self, condition: Callable[[Any], Any], timeout: float = WAIT) -> Any:
        """Until ``condition`` holds; an element the page replaced meanwhile (the live
        views redraw theirs) is looked up again on the next try, not an error."""
        ignored = (NoSuchElementException, StaleElementReferenceException)
        return WebDriverWait(self.driver, timeout, ignored_exceptions=ignored).until(condition)

    def find(self, css: str) -> WebElement:
        return self.wait(ec.presence_of_element_located((By.CSS_SELECTOR, css)))

    def all(self, css: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def text(self, css: str) -> str:
        """The text of the first element ``css`` finds, read from one lookup (an element
        replaced between finding and reading is found again)."""
        read = self.wait(lambda d: (d.find_element(By.CSS_SELECTOR, css).text,))
        return str(read[0])

    def click(self, css: str) -> None:
        self.wait(ec.element_to_be_clickable((By.CSS_SELECTOR, css))).click()

    def follow(self, css: str) -> None:
        """Click a link or a form's button and wait until the next page has replaced this
        one (so nothing is read off the old page by mistake)."""
        mark = self._mark_page()
        self.click(css)
        self._wait_replaced(mark)

    def submit(self, css: str) -> None:
        """Submit a form and wait for the page it leads to."""
        mark = self._mark_page()
        self.find(css).submit()
        self._wait_replaced(mark)

    def _mark_page(self) -> str:
        mark = secrets.token_hex(8)
        self.driver.execute_script("window.__testPage = arguments[0]", mark)
        return mark

    def _wait_replaced(self, mark: str) -> None:
        """Until a new document, fully loaded, stands where the marked one was. Not by an
        old element going stale: chromedriver sometimes reports that as "Node with given
        id does not belong to the document", an unknown error rather than a stale one;
        while the old page unloads a script may fail the same way, so those are retried."""
        script = "return window.__testPage !== arguments[0] && document.readyState === 'complete'"
        WebDriverWait(self.driver, WAIT, ignored_exceptions=(WebDriverException,)).until(
            lambda d: d.execute_script(script, mark)
        )

    def sign_in(self, secret: str) -> None:
        self.sign_out()
        self.go("login")
        self.find("#token").send_keys(secret)
        self.submit("#login-form")
        self.find("#who")

    def sign_out(self) -> None:
        if self.all("#sign-out"):
            self.follow("#sign-out")
            self.find("#login-form")
        self.driver.delete_all_cookies()

    def screenshot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.driver.save_screenshot(str(path))
        return path

    def errors(self) -> list[str]:
        """Errors the pages logged since the last call (JS, console.error, failed loads)."""
        return [
            entry["message"]
            for entry in self.driver.get_log("browser")
            if entry.get("level") == "SEVERE"
        ]


@contextlib.contextmanager
def open_browser(ui: str) -> Iterator[Browser]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="console-chromium-")
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        driver.set_page_load_timeout(WAIT)
        yield Browser(driver, ui)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
