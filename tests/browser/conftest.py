"""Fixtures of the browser tests: one Chromium per session, the app under gunicorn per module
(a fresh database), and tabs of fresh visitors with JavaScript on or off, whose browser asks
for English unless a test parametrizes `language` (e.g. "zh-TW").
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser
from playwright.sync_api import BrowserContext
from playwright.sync_api import sync_playwright
from servers import gunicorn

from .chromium import launch_chromium
from .visit import Site
from .visit import Tab


@pytest.fixture(scope="session")
def chromium() -> Iterator[Browser]:
    """One Chromium for the whole session; every test gets fresh contexts of it."""
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The app served by gunicorn on a free loopback port, with a fresh seeded database."""
    database = tmp_path_factory.mktemp("site") / "events.sqlite"
    with gunicorn(database, workers=2, threads=4) as (base_url, _):
        yield Site(base_url, database)


@pytest.fixture
def open_tab(chromium: Browser, site: Site) -> Iterator[Callable[..., Tab]]:
    """Opens a tab of a new visitor (a fresh browser context, so fresh cookies)."""
    contexts: list[BrowserContext] = []

    def open_tab(javascript: bool = True, language: str = "en") -> Tab:
        # The browser's locale is its Accept-Language: the site's neutral addresses send the
        # visitor to the pages in that language.
        context = chromium.new_context(java_script_enabled=javascript, locale=language)
        contexts.append(context)
        return Tab(context.new_page(), site, javascript, language)

    yield open_tab
    for context in contexts:
        context.close()


@pytest.fixture
def language() -> str:
    """The language of the visitor's browser; a test parametrizes it to run in Chinese too."""
    return "en"


@pytest.fixture(params=[True, False], ids=["js-on", "js-off"])
def tab(request: pytest.FixtureRequest, open_tab: Callable[..., Tab], language: str) -> Tab:
    """A new visitor's tab, once with JavaScript on (the bridge answers) and once off."""
    return open_tab(javascript=request.param, language=language)


@pytest.fixture
def js_tab(open_tab: Callable[..., Tab], language: str) -> Tab:
    """A new visitor's tab with JavaScript on, for what only the bridge and htmx do."""
    return open_tab(javascript=True, language=language)
