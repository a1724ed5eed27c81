"""Every tool answers an agent with exactly what a JSON client gets for the same request.

With JavaScript the bridge answers with the result object; without, the form navigates and the
answer is the page's JSON-LD, a list holding that object once. The JSON answer is the tool's
HTTP request sent again with `Accept: application/json` and the same visitor's cookies.

`not_found` cannot be reached through a browser: a radio group offers only the ids shown on the
page and Chromium refuses any other value before the form is submitted (see the two tests
`..._only_offered_...`); tools bound to a page take their id from that page's address, and a
page for an unknown id has no tool. JSON clients meet not_found (see tests/test_*.py).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from helpers import new_person

from .agent import Answer

pytestmark = pytest.mark.browser

# A big event, so the registrations of this module never fill it.
EVENT = "evt-webmcp-spec-reading"


def completed(output: Any) -> Answer:
    return Answer(status="Completed", output=output)


def rejected(error_text: str) -> Answer:
    return Answer(status="Error", error_text=error_text)


def without_expiry(output: Any) -> Any:
    """A prepare answer without its review's expiry time, which differs on every call (as does
    the confirmation token, which is only on the page)."""
    output = copy.deepcopy(output)
    for envelope in output if isinstance(output, list) else [output]:
        envelope["data"]["review"].pop("expiresAt")
    return output


@pytest.mark.parametrize(("arguments", "status"), [
    ({"query": "webmcp"}, "success"),
    ({"location": "kaohsiung", "price": "paid", "level": "advanced", "query": "Agent"},
     "no_results"),
    # A rule no form control can state: the browser sends it, the site refuses it.
    ({"date_from": "2030-02-01", "date_to": "2030-01-01"}, "invalid_input"),
], ids=["success", "no-results", "dates-out-of-order"])
def test_search_events(tab, arguments, status):
    tab.open("/events")
    answer = tab.call("search_events", arguments)
    envelope = tab.json_answer_to(tab.tool_request)
    assert envelope["status"] == status
    assert answer == completed(tab.delivered(envelope))


@pytest.mark.parametrize(("page", "tool", "arguments", "error"), [
    ("/events", "search_events", {"location": "tokyo"},
     'Invalid value "tokyo" for parameter location'),
    ("/events", "search_events", {"page": 0},
     "Form validation failed: page: Value must be greater than or equal to 1.. "),
    ("/events", "search_events", {"date_from": "tomorrow"},
     'Invalid value "tomorrow" for parameter date_from'),
    ("/events", "search_events", {"bogus": "x"},
     'Input contains a parameter "bogus" but there is no such parameter for the tool'),
    ("/events", "get_event_details", {"event_id": "evt-k8s-production"},
     'Invalid value "evt-k8s-production" for parameter event_id'),
    (f"/events/{EVENT}/register", "prepare_event_registration", {"attendee_name": "Ann Lee"},
     "Form validation failed: email: Please fill out this field.. "),
    (f"/events/{EVENT}/register", "prepare_event_registration",
     {"attendee_name": "Ann Lee", "email": "ann"},
     "Form validation failed: email: Please include an '@' in the email address. "
     "'ann' is missing an '@'.. "),
], ids=["unknown-location", "page-zero", "not-a-date", "unknown-parameter",
        "event-only-offered-if-listed", "email-missing", "email-without-at"])
def test_the_browser_refuses_what_the_form_cannot_hold(tab, page, tool, arguments, error):
    tab.open(page)
    assert tab.call(tool, arguments) == rejected(error)
    assert tab.tool_request is None, "a refused call must not reach the site"


@pytest.mark.parametrize(("page", "arguments"), [
    ("/events", {"event_id": EVENT}),
    (f"/events/{EVENT}", {}),
], ids=["from-the-list", "on-its-page"])
def test_get_event_details(tab, page, arguments):
    tab.open(page)
    answer = tab.call("get_event_details", arguments)
    envelope = tab.json_answer_to(tab.tool_request)
    assert (envelope["status"], envelope["data"]["event"]["id"]) == ("success", EVENT)
    assert answer == completed(tab.delivered(envelope))


def test_save_event_then_save_it_again(tab, open_tab):
    tab.open(f"/events/{EVENT}")
    first = tab.call("save_event")
    newcomer = open_tab(javascript=tab.javascript)  # a visitor who has not saved it yet
    newcomer.open(f"/events/{EVENT}")
    assert first == completed(tab.delivered(newcomer.ask(f"/events/{EVENT}/save", form={})))

    again = tab.call("save_event")
    envelope = tab.json_answer_to(tab.tool_request)
    assert (envelope["status"], envelope["data"]["alreadySaved"]) == ("success", True)
    assert again == completed(tab.delivered(envelope))


def test_prepare_event_registration_asks_the_person_to_confirm(tab):
    tab.open(f"/events/{EVENT}/register")
    answer = tab.call("prepare_event_registration", new_person())
    envelope = tab.json_answer_to(tab.tool_request)
    assert envelope["status"] == "confirmation_required"
    assert answer.status == "Completed"
    assert without_expiry(answer.output) == without_expiry(tab.delivered(envelope))
    token = tab.page.locator("input[name=confirmation_token]").get_attribute("value")
    assert token and token not in json.dumps(answer.output), "the token is for the person"


@pytest.mark.parametrize("person", [
    {"attendee_name": "A" * 81, "email": "ann@example.com"},
    {"attendee_name": "Ann Lee", "email": "ann@example"},
], ids=["name-longer-than-80", "email-without-a-domain"])
def test_prepare_event_registration_with_input_only_the_site_refuses(tab, person):
    """Chromium does not enforce maxlength on an agent's fill, and HTML accepts ann@example."""
    tab.open(f"/events/{EVENT}/register")
    answer = tab.call("prepare_event_registration", person)
    envelope = tab.json_answer_to(tab.tool_request)
    assert envelope["status"] == "invalid_input"
    assert answer == completed(tab.delivered(envelope))


def test_prepare_in_an_older_tab_after_registering(tab):
    """The older tab still shows the form; the site knows better: already registered."""
    older = tab.new_tab()
    older.open(f"/events/{EVENT}/register")
    tab.register_as_person(EVENT)
    answer = older.call("prepare_event_registration", new_person())
    envelope = older.json_answer_to(older.tool_request)
    assert (envelope["status"], envelope["message"]) == (
        "conflict", "You are already registered for this event.")
    assert answer == completed(older.delivered(envelope))


def test_a_form_whose_session_is_gone(tab):
    tab.open(f"/events/{EVENT}/register")
    tab.page.context.clear_cookies()
    answer = tab.call("prepare_event_registration", new_person())
    envelope = tab.json_answer_to(tab.tool_request)
    assert envelope["status"] == "session_expired"
    assert answer == completed(tab.delivered(envelope))


def test_prepare_registration_cancellation_asks_the_person_to_confirm(tab):
    registration = tab.register_as_person(EVENT)
    tab.open("/registrations")
    answer = tab.call("prepare_registration_cancellation", {"registration_id": registration})
    envelope = tab.json_answer_to(tab.tool_request)
    assert envelope["status"] == "confirmation_required"
    assert answer.status == "Completed"
    assert without_expiry(answer.output) == without_expiry(tab.delivered(envelope))


def test_prepare_cancellation_in_an_older_tab_after_cancelling(tab):
    registration = tab.register_as_person(EVENT)
    older = tab.new_tab()
    older.open("/registrations")
    tab.open("/registrations")
    tab.call("prepare_registration_cancellation", {"registration_id": registration})
    tab.press("Cancel my registration", then_shows="its seat is free again")
    answer = older.call("prepare_registration_cancellation", {"registration_id": registration})
    envelope = older.json_answer_to(older.tool_request)
    assert (envelope["status"], envelope["message"]) == (
        "conflict", "This registration is already cancelled.")
    assert answer == completed(older.delivered(envelope))


def test_a_registration_is_only_offered_if_listed(tab):
    tab.register_as_person(EVENT)
    tab.open("/registrations")
    answer = tab.call("prepare_registration_cancellation", {"registration_id": "reg-notyours1"})
    assert answer == rejected('Invalid value "reg-notyours1" for parameter registration_id')
    assert tab.tool_request is None


def test_a_condition_from_an_earlier_search_stays_until_cleared(tab):
    """Chromium fills only the keys given and keeps the form's other values between calls, as
    the search_events description tells the agent; appliedFilters always shows what was used.

    With JavaScript too: the bridge cannot tell a condition left out from one given again with
    the value it already had (see test_bridge.py, ..._given_again_...), so it sends the form
    as Chromium filled it rather than guess."""
    tab.open("/events")
    tab.call("search_events", {"location": "taipei"})
    kept = tab.result(tab.call("search_events", {"query": "webmcp"}))
    assert kept["appliedFilters"] == {"location": "taipei", "query": "webmcp"}
    cleared = tab.result(tab.call("search_events", {"query": "webmcp", "location": ""}))
    assert cleared["appliedFilters"] == {"query": "webmcp"}
