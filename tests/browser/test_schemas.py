"""The inputSchema Chromium builds from each tool form is the one webapp/schemas.py promises.

The expectations are written out from the marshmallow schemas (descriptions, vocabularies with
their labels, limits) plus what Chromium adds on its own (the date sentence). They go through
`expected_input_schema(tool, **context)`, which has the signature of the toolkit's schema
module, so that one can take this function's place without touching the tests.
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.browser

EVENT = "evt-webmcp-intro"
EVENT_TITLE = "WebMCP Intro Workshop"
# Chromium appends this to the description of every <input type=date> (webmcp.md §1.2).
DATE_SENTENCE = " (Dates MUST be provided in 'YYYY-MM-DD' format.)"


def expected_input_schema(tool: str, **context: Any) -> dict[str, Any]:
    """The JSON Schema an agent should see for `tool`'s form.

    context: `choices` (field -> [(value, label)], the options a page renders for a radio
    group) and `bound` (fields the page's URL carries, so not asked of the agent).
    """
    choices = context.get("choices", {})
    bound = set(context.get("bound", ()))
    if tool == "search_events":
        return form_schema({
            "query": text("Words to find in event titles and summaries"),
            "location": choice("City where the event takes place, or online", [
                ("", "Any location"), ("taipei", "Taipei"), ("taichung", "Taichung"),
                ("kaohsiung", "Kaohsiung"), ("online", "Online")]),
            "price": choice("Whether attending is free or paid", [
                ("", "Free or paid"), ("free", "Free"), ("paid", "Paid")]),
            "level": choice("Experience the event is aimed at", [
                ("", "Any level"), ("beginner", "Beginner"), ("intermediate", "Intermediate"),
                ("advanced", "Advanced")]),
            "date_from": date("Earliest start date, inclusive"),
            "date_to": date("Latest start date, inclusive"),
            "page": whole_number("Page of results, 10 per page", minimum=1, maximum=1000),
        })
    if tool == "get_event_details" and "event_id" not in bound:
        return form_schema({"event_id": choice(
            "Id of one of the events listed on this page "
            "(option titles are organizer-written event titles)",
            choices["event_id"])}, required=["event_id"])
    if tool in ("get_event_details", "save_event"):
        return form_schema({})
    if tool == "prepare_event_registration":
        return form_schema({
            "attendee_name": text("Full name of the person attending, as on the attendee list"),
            "email": text("E-mail address the organizer uses to reach the attendee"),
        }, required=["attendee_name", "email"])
    if tool == "prepare_registration_cancellation":
        return form_schema({"registration_id": choice(
            "Id of the registration to cancel, from the list on this page",
            choices["registration_id"])}, required=["registration_id"])
    raise KeyError(tool)


def form_schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or []}


def text(description: str) -> dict[str, Any]:
    # Chromium emits no maxLength and no format for text or e-mail inputs (webmcp.md §1.3).
    return {"type": "string", "description": description}


def choice(description: str, options: list[tuple[str, str]]) -> dict[str, Any]:
    return {"type": "string",
            "anyOf": [{"type": "string", "const": value, "title": title}
                      for value, title in options],
            "enum": [value for value, _ in options],
            "description": description}


def date(description: str) -> dict[str, Any]:
    return {"type": "string", "format": "date", "description": description + DATE_SENTENCE}


def whole_number(description: str, minimum: int, maximum: int) -> dict[str, Any]:
    return {"type": "number", "minimum": minimum, "maximum": maximum, "multipleOf": 1,
            "description": description}


def assert_agent_sees(tab, tool: str, expected: dict[str, Any]) -> None:
    """Chromium's schema of `tool` on the tab's page is `expected`, key for key."""
    tools = tab.agent.tools()
    assert tool in tools, f"{tool} is not a tool of {tab.page.url}"
    assert tools[tool].input_schema == expected


def listed_events(tab, path: str) -> list[tuple[str, str]]:
    """The (id, title) of the events a search page lists, as a JSON client gets them."""
    return [(event["id"], event["title"]) for event in tab.ask(path)["data"]["events"]]


def test_search_events(tab):
    tab.open("/events")
    assert_agent_sees(tab, "search_events", expected_input_schema("search_events"))


@pytest.mark.parametrize("path", ["/events", "/events?query=webmcp", "/events?page=2"])
def test_get_event_details_over_the_listed_events(tab, path):
    tab.open(path)
    expected = expected_input_schema(
        "get_event_details", choices={"event_id": listed_events(tab, path)})
    assert_agent_sees(tab, "get_event_details", expected)


@pytest.mark.parametrize("tool", ["get_event_details", "save_event"])
def test_tools_bound_to_the_event_page(tab, tool):
    tab.open(f"/events/{EVENT}")
    assert_agent_sees(tab, tool, expected_input_schema(tool, bound=["event_id"]))


def test_save_event_in_the_preview_pane(js_tab):
    js_tab.open("/events")
    js_tab.call("get_event_details", {"event_id": EVENT})
    assert_agent_sees(js_tab, "save_event", expected_input_schema("save_event",
                                                                  bound=["event_id"]))


def test_prepare_event_registration(tab):
    tab.open(f"/events/{EVENT}/register")
    assert_agent_sees(tab, "prepare_event_registration",
                      expected_input_schema("prepare_event_registration", bound=["event_id"]))


def test_prepare_registration_cancellation_over_active_registrations(tab):
    first = tab.register_as_person(EVENT)
    second = tab.register_as_person("evt-htmx-online")
    tab.open("/registrations")
    expected = expected_input_schema("prepare_registration_cancellation", choices={
        "registration_id": [(first, EVENT_TITLE),
                            (second, "Hypermedia-Driven Apps with htmx")]})
    assert_agent_sees(tab, "prepare_registration_cancellation", expected)
