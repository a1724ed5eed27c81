"""Debian's Chromium with WebMCP enabled, driven by Playwright (no downloaded browser)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser
from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--enable-features=WebMCP"]


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless WebMCP browser; each measurement opens its own (cold) context in it."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=ARGS)
        try:
            yield browser
        finally:
            browser.close()
