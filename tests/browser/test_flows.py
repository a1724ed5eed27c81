"""The three flows of DESIGN.md §5 with an agent and a person in one tab, JavaScript on and off,
in a Chinese and in an English browser: the agent finds and saves; it prepares a registration
or a cancellation, and only the person's press on the confirm button takes or frees a seat.
The tools, their parameters and the answers' keys and values are the same in both languages.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from helpers import new_person
from helpers import the_jsonld
from playwright.sync_api import Response

from .agent import ToolNotFound

pytestmark = pytest.mark.browser

EVENT = "evt-webmcp-intro"
EVENT_TITLE = "WebMCP Intro Workshop"
# Where J2 and J3 register: 200 seats, so the module's registrations never fill it.
ROOMY_EVENT = "evt-webmcp-spec-reading"
ROOMY_EVENT_TITLE = "Reading the WebMCP Draft Together"
# The flows run as a visitor whose browser asks for each language (the rest: English).
IN_EACH_LANGUAGE = pytest.mark.parametrize("language", ["zh-TW", "en"])


def registrations_offered(tab) -> list[str]:
    """The registrations the agent could cancel on /registrations (their event titles)."""
    tools = tab.open("/registrations")
    if "prepare_registration_cancellation" not in tools:
        return []
    schema = tools["prepare_registration_cancellation"].input_schema
    return [option["title"] for option in schema["properties"]["registration_id"]["anyOf"]]


@IN_EACH_LANGUAGE
def test_find_an_event_and_save_it(tab, language):
    """J1: search, details over the ids shown, save; one event id from start to end."""
    tab.open("/events")
    assert tab.page.url.endswith(f"/{language}/events")  # the browser's language
    found = tab.result(tab.call("search_events", {"query": "webmcp", "location": "taipei"}))
    shown = [event["id"] for event in found["data"]["events"]]
    offered = tab.agent.tools()["get_event_details"].input_schema["properties"]["event_id"]
    assert offered["enum"] == shown == [EVENT, "evt-webmcp-tools-deep-dive"]

    details = tab.result(tab.call("get_event_details", {"event_id": shown[0]}))
    assert details["data"]["event"]["id"] == EVENT
    saved = tab.result(tab.call("save_event"))
    assert saved["data"] == {"eventId": EVENT, "alreadySaved": False}
    again = tab.result(tab.call("save_event"))
    assert again["data"] == {"eventId": EVENT, "alreadySaved": True}

    tab.open("/saved")
    assert tab.page.get_by_role("link", name=EVENT_TITLE).count() == 1


@IN_EACH_LANGUAGE
def test_the_agent_prepares_a_registration_and_the_person_confirms(tab):
    """J2: the agent's prepare registers nobody; the person's confirm takes one seat."""
    seats = tab.seats(ROOMY_EVENT)
    tab.open(f"/events/{ROOMY_EVENT}/register")
    prepared = tab.result(tab.call("prepare_event_registration", new_person()))
    assert prepared["status"] == "confirmation_required"
    elsewhere = tab.new_tab()
    assert (tab.seats(ROOMY_EVENT), registrations_offered(elsewhere)) == (seats, [])

    tab.press(tab.text("Confirm registration"),
              then_shows=tab.text("You are registered: one seat is yours."))
    assert (tab.seats(ROOMY_EVENT), registrations_offered(elsewhere)) == (
        seats - 1, [ROOMY_EVENT_TITLE])


@IN_EACH_LANGUAGE
def test_the_agent_prepares_a_cancellation_and_the_person_confirms(tab):
    """J3: the agent's prepare opens the dialog; the person's confirm frees the seat."""
    registration = tab.register_as_person(ROOMY_EVENT)
    seats = tab.seats(ROOMY_EVENT)
    tab.open("/registrations")
    prepared = tab.result(tab.call("prepare_registration_cancellation",
                                   {"registration_id": registration}))
    assert prepared["status"] == "confirmation_required"
    assert tab.page.get_by_role("dialog").is_visible()
    assert tab.seats(ROOMY_EVENT) == seats

    tab.press(tab.text("Cancel my registration"),
              then_shows=tab.text("Your registration is cancelled and its seat is free again."))
    assert tab.seats(ROOMY_EVENT) == seats + 1
    assert registrations_offered(tab) == []


def test_a_tool_of_a_page_left_behind_is_gone(tab):
    tab.open(f"/events/{EVENT}")
    tab.open("/saved")
    with pytest.raises(ToolNotFound):
        tab.call("save_event")


def test_a_new_search_starts_at_its_first_page(tab):
    """The page asked for once is not asked for again by the next search (the form keeps what
    an agent filled, so the page control must not keep the page on screen)."""
    tab.open("/events")
    second = tab.result(tab.call("search_events", {"location": "taipei", "page": 2}))
    assert second["data"]["page"] == 2
    narrower = tab.result(tab.call("search_events", {"query": "webmcp"}))
    assert (narrower["data"]["page"], narrower["data"]["count"]) == (1, 2)
    assert [e["id"] for e in narrower["data"]["events"]] == [EVENT, "evt-webmcp-tools-deep-dive"]


def test_a_person_on_a_later_page_searching_again_gets_the_first_page(tab):
    tab.open("/events?page=2")
    tab.page.get_by_label("Keywords").fill("webmcp")
    with tab.page.expect_response(is_search) as searched:
        tab.press("Search", then_shows="showing 1 to 4")
    assert the_jsonld(searched.value.text())["data"]["page"] == 1


def is_search(response: Response) -> bool:
    """An answer to a search (a page or an htmx partial of /events, in any language)."""
    return (response.request.method == "GET"
            and urlsplit(response.url).path in ("/events", "/en/events", "/zh-TW/events"))
