"""Failures the error handlers answer go to the error slot of the form that asked, never into
that form's target (which may hold the form: replacing it would cancel an agent's call on it).

As an htmx partial, such a failure carries `HX-Retarget: #<action>-error` and
`HX-Reswap: innerHTML` (htmx and the JS bridge obey both); JSON and full pages are unchanged.
Every other partial answer of the action empties that slot out of band. This covers, for every
route that runs an action, the answers no tool form in a browser can provoke (a wrong method,
an unknown address, a body too large for forms without text fields); tests/browser/
test_every_answer.py covers the rest in Chromium, and the linter (WMCP016) checks that every
htmx tool form on every page has its slot, beside it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from bs4 import BeautifulSoup
from helpers import HTMX
from helpers import JSON
from helpers import database_files
from helpers import the_jsonld
from routes import SAMPLE_VALUES
from routes import body_limit
from routes import refused_unread_without_sign_in
from werkzeug.routing import Rule

from flask_webmcp.actions import Action
from flask_webmcp.negotiation import error_slot_id
from flask_webmcp.result import Status
from flask_webmcp.routes import route_roles
from webapp.web.openapi import route_answers

EVENT = "evt-webmcp-intro"
BIG = "x" * 70_000  # over MAX_CONTENT_LENGTH
# A value for the arguments in the routes' addresses (the requests are refused before any
# action reads them; an argument not named here gets ANY_VALUE).
ADDRESS_VALUES = {"event_id": EVENT, "registration_id": "reg-aaaaaaaaaaaa",
                  "entry_id": "wait-aaaaaaaaaaaa"}
ANY_VALUE = "nothing-here"


def address(rule: Rule) -> str:
    """The rule's path with a value for each of its arguments."""
    return re.sub(r"<(?:[^<>:]+:)?([^<>:]+)>",
                  lambda argument: ADDRESS_VALUES.get(argument[1], ANY_VALUE), rule.rule)


def action_routes(app) -> list[tuple[str, str, str, tuple[Status, ...]]]:
    """(path, method, action, statuses) of every route that runs an action."""
    return [(address(rule), "POST" if "POST" in (rule.methods or ()) else "GET",
             role.action.name, route_answers(rule, role.action))
            for rule, role in route_roles(app) if role.action is not None]


def required_query(rule: Rule, action: Action[Any]) -> str:
    """What a GET of `action` at `rule` is asked: each input its schema requires and the
    address does not carry, as the sample event's id or a value of the right shape."""
    values = {name: ADDRESS_VALUES.get(name, SAMPLE_VALUES[name])
              for name, field in action.schema().fields.items()
              if field.required and name not in rule.arguments}
    return f"?{urlencode(values)}" if values else ""


def assert_in_error_slot(response, action: str, status: str) -> None:
    assert response.headers["HX-Retarget"] == f"#{error_slot_id(action)}"
    assert response.headers["HX-Reswap"] == "innerHTML"
    envelope = the_jsonld(response.data)
    assert (envelope["action"], envelope["status"]) == (action, status)
    slot = BeautifulSoup(response.data, "html.parser").find(id=error_slot_id(action))
    assert slot is None, "the answer would empty the slot it goes into"


def assert_nowhere_else(visitor, method: str, path: str, data=None) -> None:
    """The same request as JSON and as a full page carries no swap instructions."""
    for headers in (JSON, {}):
        response = visitor.client.open(path, method=method, data=data, headers=headers)
        assert "HX-Retarget" not in response.headers
        assert "HX-Reswap" not in response.headers


def test_every_route_is_covered(app):
    """The routes below are all those that run an action (a new one is covered by itself)."""
    assert {action for _, _, action, _ in action_routes(app)} >= {
        "search_events", "get_event_details", "save_event", "prepare_event_registration",
        "prepare_registration_cancellation", "confirm_registration", "confirm_cancellation"}


def test_a_refused_form_token_goes_to_the_error_slot(app, visitor):
    for path, method, action, _ in action_routes(app):
        if method != "POST":
            continue
        response = visitor.post(path, headers=HTMX, csrf=False)
        if refused_unread_without_sign_in(path.split("?")[0]):
            # The organizer area refuses this visitor (no member) before reading the body
            # its token is in: that refusal goes to the slot.
            assert response.status_code == 403, path
            assert_in_error_slot(response, action, "invalid_input")
        else:
            assert response.status_code == 401, path
            assert_in_error_slot(response, action, "session_expired")
        assert_nowhere_else(visitor, "POST", path)


def test_a_body_too_large_goes_to_the_error_slot(app, visitor):
    for path, method, action, _ in action_routes(app):
        if method != "POST":
            continue
        # Over what the route reads: the site's limit, or an upload route's own.
        big = "x" * (body_limit(path.split("?")[0], len(BIG)) + len(BIG))
        response = visitor.post(path, {"filler": big}, headers=HTMX)
        # The organizer area refuses this visitor (no member) before reading the body.
        refused_unread = refused_unread_without_sign_in(path.split("?")[0])
        assert response.status_code == (403 if refused_unread else 413), path
        assert_in_error_slot(response, action, "invalid_input")
        assert_nowhere_else(visitor, "POST", path, {"filler": big})


def test_a_wrong_method_goes_to_the_error_slot(app, visitor):
    addresses = app.url_map.bind("localhost")
    for path, method, action, _ in action_routes(app):
        wrong = "GET" if method == "POST" else "POST"
        if wrong in addresses.allowed_methods(path.split("?")[0]):
            continue  # the address answers both (a page and the prepare form it shows)
        response = visitor.client.open(path, method=wrong, headers=HTMX)
        assert response.status_code == 405, path
        assert_in_error_slot(response, action, "invalid_input")


@pytest.mark.parametrize("app_config", [{"RATELIMIT_WRITES": "1 per minute"}])
def test_a_rate_limited_write_goes_to_the_error_slot(app, visitor):
    visitor.post_json(f"/events/{EVENT}/save")  # the first write makes the visitor
    visitor.post_json(f"/events/{EVENT}/save")  # the visitor's budget
    for path, method, action, _ in action_routes(app):
        if method != "POST":
            continue
        response = visitor.post(path, headers=HTMX)
        assert response.status_code == 429, path
        assert_in_error_slot(response, action, "rate_limited")


def reading_routes(app) -> list[tuple[str, str]]:
    """(path with its query, action) of every GET route that runs an action, asked for what
    its action requires."""
    return [(address(rule) + required_query(rule, role.action), role.action.name)
            for rule, role in route_roles(app)
            if role.action is not None and "POST" not in (rule.methods or ())]


def test_a_failing_database_goes_to_the_error_slot_where_the_answer_renders_no_form(app, client):
    """The event page's details morph into a target holding the get_event_details form, and
    a search's results hold the get_event_details form of the list: a fault shows beside."""
    for file in database_files(Path(app.config["DATABASE"])):
        file.unlink(missing_ok=True)
    for path, action in reading_routes(app):
        response = client.get(path, headers=HTMX)
        assert response.status_code == 503, path
        assert_in_error_slot(response, action, "internal_error")


def test_an_unknown_event_on_its_page_goes_to_the_error_slot(client):
    response = client.get("/events/evt-no-such-event", headers=HTMX)
    assert response.status_code == 404
    assert_in_error_slot(response, "get_event_details", "not_found")


def test_a_failed_search_leaves_the_results_and_marks_the_fields(client):
    response = client.get("/events?date_from=2030-02-01&date_to=2030-01-01", headers=HTMX)
    assert response.status_code == 422
    assert_in_error_slot(response, "search_events", "invalid_input")
    soup = BeautifulSoup(response.data, "html.parser")
    marked = soup.find(id="search_events-date_from-error")
    assert marked is not None and marked.get("hx-swap-oob") == "innerMorph" and marked.get_text()
    assert soup.select_one("[toolname]") is None  # no form comes with it


def test_any_other_answer_empties_the_error_slot(app, client):
    routes = reading_routes(app)
    assert len(routes) >= 3  # the list's search, the event's page, the preview
    for path, action in routes:
        response = client.get(path, headers=HTMX)
        assert response.status_code == 200 and "HX-Retarget" not in response.headers, path
        slot = BeautifulSoup(response.data, "html.parser").find(id=error_slot_id(action))
        assert slot is not None and slot.get("hx-swap-oob") == "innerMorph", path
        assert not slot.contents, path
