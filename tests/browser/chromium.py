"""Debian's Chromium with WebMCP enabled, launched through Playwright.

Playwright never downloads a browser here: it drives the apt package (`make browser` installs
it). A missing browser is a test failure, never a skip, so CI cannot pass without it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Browser
from playwright.sync_api import Playwright

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--enable-features=WebMCP",
]
# Any loopback page is a secure context, which WebMCP requires; Playwright answers this one.
PROBE_URL = "http://127.0.0.1/webmcp-probe"
PROBE_PAGE = "<!doctype html><title>WebMCP probe</title>"


def launch_chromium(playwright: Playwright) -> Browser:
    """Chromium headless with WebMCP; fails loudly when the browser or the feature is missing."""
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (`make browser`). "
                    "The browser tests never skip.", pytrace=False)
    browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                         args=CHROMIUM_ARGS)
    if not has_webmcp(browser):
        browser.close()
        pytest.fail(f"{CHROMIUM} has no document.modelContext even with "
                    "--enable-features=WebMCP: it is too old for these tests.", pytrace=False)
    return browser


def has_webmcp(browser: Browser) -> bool:
    """Whether pages of this browser get WebMCP's `document.modelContext`."""
    page = browser.new_page()
    try:
        page.route(PROBE_URL, lambda route: route.fulfill(content_type="text/html",
                                                          body=PROBE_PAGE))
        page.goto(PROBE_URL)
        return page.evaluate("typeof document.modelContext === 'object'") is True
    finally:
        page.close()
