"""An agent in a Chinese browser: the same tools, the same answers' keys, sentences in Chinese
(including those the JS bridge writes itself when the site cannot be reached)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.parametrize("language", ["zh-TW", "en"])]


def test_the_bridge_says_the_site_is_unreachable_in_the_pages_language(js_tab, language):
    js_tab.open("/events")
    assert js_tab.page.url.endswith(f"/{language}/events")
    # From now on no request reaches the site: the bridge answers on its own.
    js_tab.page.route("**/events?*", lambda route: route.abort())
    answer = js_tab.result(js_tab.call("search_events", {"query": "webmcp"}))
    assert answer == {
        "action": "search_events",
        "status": "internal_error",
        "message": js_tab.text("The site could not be reached. Nothing was changed."),
        "retryable": True,
        "nextAction": js_tab.text(
            "Tell the user the site is unreachable; retry later, not at once."),
    }
    assert answer["message"] != "" and (language == "en") == answer["message"].startswith("The")


def test_the_tools_are_the_same_in_both_languages(js_tab, language):
    """Names, parameters and option values do not change; titles and descriptions do."""
    tools = js_tab.open("/events")
    search = tools["search_events"].input_schema
    assert list(search["properties"]) == ["query", "location", "price", "level", "date_from",
                                          "date_to", "page"]
    assert search["properties"]["location"]["enum"] == ["", "taipei", "taichung", "kaohsiung",
                                                        "online"]
    titles = [option["title"] for option in search["properties"]["location"]["anyOf"]]
    assert titles == [js_tab.text(title) for title in ("Any location", "Taipei", "Taichung",
                                                       "Kaohsiung", "Online")]
