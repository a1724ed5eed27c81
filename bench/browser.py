"""Debian's Chromium with WebMCP enabled, launched as the browser tests launch it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from browser.chromium import launch_chromium
from playwright.sync_api import Browser
from playwright.sync_api import sync_playwright


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless WebMCP browser; each measurement opens its own (cold) context in it."""
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            yield browser
        finally:
            browser.close()
