"""`get_my_plans` in a WebMCP browser: My registrations offers it (in Chinese too), it answers
the visitor's own plans with JavaScript (the bridge) and without (the next page's JSON-LD), the
same object the route answers a JSON client, and the page shows each registration's id.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

# Where the tests register: 200 seats, so the module's registrations never fill it.
ROOMY_EVENT = "evt-webmcp-spec-reading"


@pytest.mark.parametrize("language", ["zh-TW"])
def test_my_registrations_offers_my_plans_and_it_answers(tab, language):
    registration = tab.register_as_person(ROOMY_EVENT)
    tools = tab.open("/zh-TW/registrations")
    assert set(tools) == {"get_my_plans", "prepare_registration_cancellation"}
    assert tools["get_my_plans"].autosubmit and tools["get_my_plans"].input_schema.get(
        "properties", {}) == {}
    # The id is text on the page, for the person to quote.
    assert registration in tab.page.locator(".registration-id").first.inner_text()
    answer = tab.call("get_my_plans", {})
    plans = tab.result(answer)
    assert (plans["action"], plans["status"]) == ("get_my_plans", "success")
    assert [r["id"] for r in plans["data"]["registrations"]] == [registration]
    assert plans == tab.json_answer_to(tab.tool_request)
    # The form is still there to call again, and so is the cancellation it names ids for.
    assert set(tab.agent.tools()) == {"get_my_plans", "prepare_registration_cancellation"}


def test_a_new_visitor_is_offered_my_plans_and_has_none(tab):
    assert set(tab.open("/registrations")) == {"get_my_plans"}
    plans = tab.result(tab.call("get_my_plans"))
    assert plans["data"]["registrations"] == plans["data"]["saved"] == []
