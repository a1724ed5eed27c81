"""The organizer area offers agents nothing, as Chromium sees it: no tool on any of its pages
and no bridge loaded, while the public pages keep their tools (issue 30)."""

from __future__ import annotations

import re
import secrets
from contextlib import closing
from datetime import timedelta

import pytest
from helpers import unique_email
from playwright.sync_api import expect
from suite_clock import suite_start

from webapp.domain.tokens import hash_token
from webapp.storage.sqlite import SQLiteStorage

from .visit import Site
from .visit import Tab

pytestmark = pytest.mark.browser


def sign_in(tab: Tab, site: Site) -> None:
    """Sign the tab's visitor in with a link made for them (the mail is tested elsewhere),
    pressing the link page's button as a person does."""
    token = secrets.token_urlsafe(24)
    # Good for a day of the server's clock, which starts at the suite's start.
    with closing(SQLiteStorage.open(site.database)) as storage:
        storage.create_sign_in_link(hash_token(token), unique_email(), suite_start(),
                                    suite_start() + timedelta(days=1))
    tab.page.goto(site.url(f"/{tab.language}/sign-in/{token}"))
    tab.page.locator("main form button[type=submit]").click()
    expect(tab.page).to_have_url(site.url(f"/{tab.language}/registrations"))


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_organizer_pages_register_no_tool_and_load_no_bridge(open_tab, site, language):
    tab = open_tab(language=language)
    sign_in(tab, site)
    assert set(tab.open(f"/{language}/events")) == {"search_events", "get_event_details"}
    pages = [f"/{language}/organizer/", f"/{language}/organizer/organizations/new"]
    for path in pages:
        assert tab.open(path) == {}, path
    tab.page.get_by_label(tab.text("Organization name")).fill("台北網頁開發者聚會")
    tab.page.locator("main form button[type=submit]").click()
    expect(tab.page).to_have_url(re.compile(
        re.escape(site.url(f"/{language}/organizer/organizations/")) + r"org-[\w-]+$"))
    assert tab.agent.tools() == {}
    for path in [*pages, tab.page.url.removeprefix(site.base_url)]:
        tab.open(path)
        scripts = tab.page.eval_on_selector_all("script[src]", "all => all.map(s => s.src)")
        assert not [src for src in scripts if "webmcp-bridge" in src], path
        assert tab.page.locator("[toolname]").count() == 0, path

