"""The organizer area offers agents nothing, as Chromium sees it: no tool on any of its pages
and no bridge loaded, while the public pages keep their tools (issue 30)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .organizer_setup import ORGANIZATION_NAME
from .organizer_setup import sign_in

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_organizer_pages_register_no_tool_and_load_no_bridge(open_tab, site, language):
    tab = open_tab(language=language)
    sign_in(tab, site)
    assert set(tab.open(f"/{language}/events")) == {"search_events", "get_event_details"}
    pages = [f"/{language}/organizer/", f"/{language}/organizer/organizations/new"]
    for path in pages:
        assert tab.open(path) == {}, path
    tab.page.get_by_label(tab.text("Organization name")).fill(ORGANIZATION_NAME)
    tab.page.locator("main form button[type=submit]").click()
    expect(tab.page).to_have_url(re.compile(
        re.escape(site.url(f"/{language}/organizer/organizations/")) + r"org-[\w-]+$"))
    assert tab.agent.tools() == {}
    for path in [*pages, tab.page.url.removeprefix(site.base_url)]:
        tab.open(path)
        scripts = tab.page.eval_on_selector_all("script[src]", "all => all.map(s => s.src)")
        assert not [src for src in scripts if "webmcp-bridge" in src], path
        assert tab.page.locator("[toolname]").count() == 0, path

