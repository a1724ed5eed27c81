"""Each page offers exactly the tools docs/design.md §2 lists for it, as Chromium registers them;
the human-only forms (confirm, cancel, remove) are never tools.
"""

from __future__ import annotations

import pytest
from helpers import new_person

from webapp.domain.catalog import CATALOG

pytestmark = pytest.mark.browser

OPEN_EVENT = "evt-webmcp-intro"
FULL_EVENT = "evt-semantic-html"
# Where the tests register: 200 seats, so the module's registrations never fill it.
ROOMY_EVENT = "evt-webmcp-spec-reading"
# My registrations of a visitor with an active registration.
MY_REGISTRATIONS_TOOLS = {"get_my_plans", "prepare_registration_cancellation"}
NOTHING_MATCHES = "/events?location=kaohsiung&price=paid&level=advanced&query=Agent"


@pytest.mark.parametrize(("path", "tools"), [
    ("/events", {"search_events", "get_event_details"}),
    ("/events?query=webmcp", {"search_events", "get_event_details"}),
    (NOTHING_MATCHES, {"search_events"}),
    (f"/events/{OPEN_EVENT}", {"get_event_details", "save_event"}),
    (f"/events/{OPEN_EVENT}/register", {"prepare_event_registration"}),
    (f"/events/{FULL_EVENT}/register", set()),
    ("/registrations", {"get_my_plans"}),
    ("/saved", set()),
    ("/events/evt-no-such-event", set()),
], ids=["events", "results", "no-results", "event", "register", "register-full", "registrations",
        "saved", "unknown-event"])
def test_each_page_offers_exactly_its_tools(tab, path, tools):
    assert set(tab.open(path)) == tools


def test_chromium_describes_each_tool_as_the_catalog_does(js_tab):
    seen = {}
    for path in ("/events", f"/events/{OPEN_EVENT}", f"/events/{OPEN_EVENT}/register"):
        seen.update(js_tab.open(path))
    js_tab.register_as_person(ROOMY_EVENT)
    seen.update(js_tab.open("/registrations"))
    assert {name: (tool.description, tool.autosubmit) for name, tool in seen.items()} == {
        tool.name: (tool.form_description, tool.autosubmit) for tool in CATALOG}


def test_the_pages_are_the_ones_meant(js_tab):
    """The cases above are what their names say (so an empty tool list means something)."""
    assert js_tab.ask("/events?query=webmcp")["status"] == "success"
    assert js_tab.ask(NOTHING_MATCHES)["status"] == "no_results"
    assert js_tab.ask(f"/events/{FULL_EVENT}")["data"]["event"]["state"] == "full"
    assert js_tab.ask("/events/evt-no-such-event")["status"] == "not_found"


def test_choosing_an_event_offers_save_event_for_it(tab):
    tab.open("/events")
    tab.call("get_event_details", {"event_id": OPEN_EVENT})
    # With JavaScript the preview pane opens beside the list; without, the event's own page.
    expected = ({"search_events", "get_event_details", "save_event"} if tab.javascript
                else {"get_event_details", "save_event"})
    assert set(tab.agent.tools()) == expected


def test_a_person_opening_an_event_from_its_card_also_gets_save_event(tab):
    tab.open("/events")
    tab.page.locator(".event-card", has_text="WebMCP Intro Workshop").click()
    tab.page.wait_for_url(f"**/events/{OPEN_EVENT}")
    assert set(tab.agent.tools()) == {"get_event_details", "save_event"}


def test_the_registration_review_adds_no_tool(tab):
    tab.open(f"/events/{OPEN_EVENT}/register")
    tab.call("prepare_event_registration", new_person())
    assert tab.page.locator("form.confirm-form").count() == 1
    assert set(tab.agent.tools()) == {"prepare_event_registration"}


def test_registrations_offer_cancellation_and_its_dialog_adds_no_tool(tab):
    tab.register_as_person(ROOMY_EVENT)
    assert set(tab.open("/registrations")) == MY_REGISTRATIONS_TOOLS
    [registration_id] = tab.agent.tools()["prepare_registration_cancellation"].input_schema[
        "properties"]["registration_id"]["enum"]
    tab.call("prepare_registration_cancellation", {"registration_id": registration_id})
    assert tab.page.locator("dialog form.confirm-form").count() == 1
    assert set(tab.agent.tools()) == MY_REGISTRATIONS_TOOLS


def test_a_registered_visitor_gets_no_registration_tool(tab):
    tab.register_as_person(ROOMY_EVENT)
    assert set(tab.open(f"/events/{ROOMY_EVENT}/register")) == set()
    assert tab.page.get_by_text("You are already registered").count() == 1


def test_saved_events_can_be_removed_only_by_the_person(tab):
    tab.open(f"/events/{OPEN_EVENT}")
    tab.call("save_event")
    assert set(tab.open("/saved")) == set()
    assert tab.page.get_by_role("button", name="Remove").count() == 1
