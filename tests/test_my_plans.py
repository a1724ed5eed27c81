"""`get_my_plans`, the sixth tool: the visitor's own registrations (with their ids), what waits
for the person's confirmation and what they confirmed lately, their places on waitlists (in
line, or a seat offered until when) and their saved events — in JSON, as the panel's htmx
partial and as My registrations, for the visitor who asks and nobody else; over MCP only for
the visitor who connected the agent. The "already registered" conflict names the visitor's own
registration, never another person's.
"""

from __future__ import annotations

from datetime import datetime
from datetime import timedelta
from typing import Any

import jsonschema
import pytest
from bs4 import BeautifulSoup
from helpers import HTMX
from helpers import JSON
from helpers import Visitor
from helpers import attribute
from helpers import jsonld_blocks
from helpers import one
from helpers import the_jsonld
from mcp_helpers import McpClient
from mcp_helpers import connect_agent
from mcp_helpers import output_schemas
from test_waitlist import SMALL
from test_waitlist import add
from test_waitlist import cancel
from test_waitlist import fill
from test_waitlist import join
from test_waitlist import small_event

from webapp.domain.actions.plans import LATELY

OPEN_EVENT = "evt-webmcp-intro"
OTHER_EVENT = "evt-agent-testing"


def plans(visitor, language: str = "en"):
    """The JSON answer of get_my_plans for this visitor."""
    response = visitor.get(f"/{language}/registrations/plans", headers=JSON)
    assert response.status_code == 200
    return response.get_json()


def test_a_new_visitor_has_empty_plans(visitor):
    answer = plans(visitor)
    assert answer["action"] == "get_my_plans" and answer["status"] == "success"
    assert {key: answer["data"][key] for key in ("registrations", "waiting", "confirmedLately",
                                                  "waitlist", "saved")} == {
        "registrations": [], "waiting": [], "confirmedLately": [], "waitlist": [], "saved": []}
    assert answer["data"]["reviewUrl"].endswith("/registrations/pending")


def test_plans_list_registrations_with_ids_waiting_confirmations_and_saved(visitor, clock):
    kept = visitor.register(OPEN_EVENT)
    visitor.save(OTHER_EVENT)
    visitor.prepare_registration(OTHER_EVENT)
    # The registration is no longer recent, the prepare for the other event expired.
    clock.advance(seconds=(LATELY + timedelta(minutes=1)).total_seconds())
    waiting, _ = visitor.prepare_cancellation(kept["id"])
    answer = plans(visitor)["data"]
    [registration] = answer["registrations"]
    assert registration["id"] == kept["id"] and registration["eventId"] == OPEN_EVENT
    assert registration["state"] == "active" and registration["eventTitle"]
    assert "@" in registration["email"] and "***" in registration["email"]  # masked
    assert answer["confirmedLately"] == []
    # The registration's prepare expired (five minutes); the cancellation waits.
    assert [item["confirms"] for item in answer["waiting"]] == ["confirm_cancellation"]
    prepared = dict(waiting["data"]["review"])
    assert answer["waiting"][0]["expiresAt"] == prepared.pop("expiresAt")
    assert answer["waiting"][0]["review"] == prepared
    assert answer["waiting"][0]["preparedBy"] == "human"
    assert [event["id"] for event in answer["saved"]] == [OTHER_EVENT]
    assert "token" not in str(answer["waiting"])  # the confirm forms' secrets stay on the page


def test_confirmed_lately_names_what_the_person_confirmed(visitor):
    registration = visitor.register(OPEN_EVENT)
    _, token = visitor.prepare_cancellation(registration["id"])
    visitor.confirm_cancellation(registration["id"], token)
    lately = plans(visitor)["data"]["confirmedLately"]
    assert [(item["confirms"], item["registrationId"]) for item in lately] == [
        ("confirm_cancellation", registration["id"]),
        ("confirm_registration", registration["id"])]
    assert plans(visitor)["data"]["registrations"][0]["state"] == "cancelled"


def test_another_visitors_plans_are_never_shown(visitor, other_visitor):
    mine = visitor.register(OPEN_EVENT)
    visitor.save(OTHER_EVENT)
    visitor.prepare_registration(OTHER_EVENT)
    theirs = plans(other_visitor)
    assert theirs["data"]["registrations"] == theirs["data"]["waiting"] == []
    assert theirs["data"]["saved"] == []
    for answer in (other_visitor.get("/en/registrations"),
                   other_visitor.get("/en/registrations/plans", headers=HTMX),
                   other_visitor.get("/en/registrations/plans")):
        assert mine["id"] not in answer.get_data(as_text=True)


def test_the_three_answers_carry_the_same_envelope(visitor):
    registration = visitor.register(OPEN_EVENT)
    as_json = plans(visitor)
    partial = visitor.get("/en/registrations/plans", headers=HTMX)
    page = visitor.get("/en/registrations/plans")
    assert the_jsonld(partial.data) == the_jsonld(page.data) == as_json
    # My registrations itself carries them too, and shows each id as text to quote.
    landing = visitor.get("/en/registrations")
    assert jsonld_blocks(landing.data) == [as_json]
    soup = BeautifulSoup(landing.data, "html.parser")
    assert registration["id"] in one(soup, ".registration-id").get_text()
    form = soup.select_one("form[toolname=get_my_plans]")
    assert form is not None and form.has_attr("toolautosubmit")
    assert one(form, "button[type=submit]").get_text(strip=True) == "Refresh"


def test_reading_the_page_logs_nothing_but_the_tool_call_is_logged(visitor):
    visitor.register(OPEN_EVENT)
    visitor.get("/en/registrations")
    visitor.get("/en/registrations")
    page = visitor.get("/en/registrations").get_data(as_text=True)
    assert "looked at your registrations" not in page
    plans(visitor)
    page = visitor.get("/en/registrations").get_data(as_text=True)
    assert "You looked at your registrations and saved events" in page


def test_unknown_fields_are_invalid_input(visitor):
    answer = visitor.get("/en/registrations/plans?page=2", headers=JSON)
    assert answer.status_code == 422
    assert answer.get_json()["errors"] == {"page": ["Unknown field."]}


def test_already_registered_names_the_visitors_own_registration(visitor, other_visitor):
    mine = visitor.register(OPEN_EVENT)
    again = visitor.post_json(f"/events/{OPEN_EVENT}/register",
                              {"attendee_name": "Ann Lee", "email": visitor.email}).get_json()
    assert again["status"] == "conflict"
    assert again["data"]["registration"]["id"] == mine["id"]
    # Someone else trying the same address learns nothing of that registration.
    theirs = other_visitor.post_json(f"/events/{OPEN_EVENT}/register",
                                     {"attendee_name": "Bo", "email": visitor.email}).get_json()
    assert theirs["status"] == "conflict" and "data" not in theirs
    assert mine["id"] not in str(theirs)


def answer_without_ids(response) -> tuple[int, str | None, Any]:
    """An MCP answer as compared across tools: its HTTP status, its challenge, and its
    JSON-RPC error or envelope without the tool's name."""
    body = response.get_json()
    if "error" in body:
        return response.status_code, response.headers.get("WWW-Authenticate"), body["error"]
    envelope = dict(body["result"]["structuredContent"])
    envelope.pop("action")
    return response.status_code, None, (body["result"]["isError"], envelope)


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_over_mcp_it_needs_the_connection_as_a_write_does(app, era):
    anonymous = McpClient(app.test_client(), era, None, "en")
    plans_call = anonymous.rpc("tools/call", {"name": "get_my_plans", "arguments": {}})
    write = anonymous.rpc("tools/call", {"name": "save_event",
                                         "arguments": {"event_id": OPEN_EVENT}})
    assert answer_without_ids(plans_call) == answer_without_ids(write)
    assert OPEN_EVENT not in plans_call.get_data(as_text=True)
    # Reading events needs nobody.
    assert anonymous.call("search_events", {"query": "webmcp"})["isError"] is False


def test_over_mcp_an_ended_session_reads_nothing(app, visitor, clock):
    visitor.register(OPEN_EVENT)
    agent = McpClient(app.test_client(), "modern", connect_agent(visitor), "en")
    clock.advance(seconds=int(app.config["VISITOR_TTL"]) + 1)
    plans_call = agent.rpc("tools/call", {"name": "get_my_plans", "arguments": {}})
    write = agent.rpc("tools/call", {"name": "save_event",
                                     "arguments": {"event_id": OPEN_EVENT}})
    assert answer_without_ids(plans_call) == answer_without_ids(write)
    assert "reg-" not in plans_call.get_data(as_text=True)


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_an_agent_sees_the_registration_the_person_confirmed(app, visitor, era):
    """The agent prepares, the person confirms on the site, the agent's plans then list the
    registration with the id it needs to prepare a cancellation."""
    agent = McpClient(app.test_client(), era, connect_agent(visitor), "en")
    prepared = agent.call("prepare_event_registration", {
        "event_id": OPEN_EVENT, "attendee_name": "Ann Lee", "email": visitor.email})
    assert prepared["structuredContent"]["status"] == "confirmation_required"
    waiting = agent.call("get_my_plans", {})["structuredContent"]["data"]
    assert [item["confirms"] for item in waiting["waiting"]] == ["confirm_registration"]
    assert waiting["waiting"][0]["preparedBy"] == "mcp"
    # The person confirms on the review page, in their own browser.
    review = BeautifulSoup(visitor.get("/en/registrations/pending").data, "html.parser")
    token = attribute(one(review, "input[name=confirmation_token]"), "value")
    confirmed = visitor.confirm_registration(token).get_json()
    registration_id = confirmed["data"]["registration"]["id"]
    over_mcp = agent.call("get_my_plans", {})
    assert over_mcp["isError"] is False
    data = over_mcp["structuredContent"]["data"]
    assert [r["id"] for r in data["registrations"]] == [registration_id]
    assert data["waiting"] == []
    assert [item["registrationId"] for item in data["confirmedLately"]] == [registration_id]
    # And it is the route's answer for that visitor, key for key.
    assert over_mcp["structuredContent"] == plans(visitor)
    cancel = agent.call("prepare_registration_cancellation",
                        {"registration_id": registration_id})
    assert cancel["structuredContent"]["status"] == "confirmation_required"



def test_over_mcp_a_browsers_cookie_reads_nobodys_plans(app, visitor):
    """Only the agent's connection makes a call act for a visitor: the visitor's own cookie
    (a page elsewhere posting through their browser) reads nothing of theirs."""
    registration = visitor.register(OPEN_EVENT)
    through_the_browser = McpClient(visitor.client, "modern", None, "en")
    plans_call = through_the_browser.rpc("tools/call", {"name": "get_my_plans", "arguments": {}})
    write = through_the_browser.rpc("tools/call", {"name": "save_event",
                                                   "arguments": {"event_id": OPEN_EVENT}})
    assert answer_without_ids(plans_call) == answer_without_ids(write)
    assert registration["id"] not in plans_call.get_data(as_text=True)


# -- places on waitlists ---------------------------------------------------------------------

@pytest.fixture
def small(app, clock) -> None:
    """SMALL: two seats, its waitlist on (`fill` takes its seats)."""
    add(app, small_event(clock()))


def places_listed(visitor) -> list[tuple[str, str, int | None, str | None]]:
    """The visitor's places on waitlists as get_my_plans lists them: (event, state, position,
    offer's end)."""
    return [(place["eventId"], place["state"], place["position"], place["offerEndsAt"])
            for place in plans(visitor)["data"]["waitlist"]]


@pytest.mark.both_backends
def test_plans_list_places_in_line_then_the_seat_offered_and_until_when(app, small, clock):
    (holder, registration), _ = fill(app)
    first, second = Visitor(app), Visitor(app)
    join(first)
    join(second)
    assert places_listed(first) == [(SMALL, "waiting", 1, None)]
    assert places_listed(second) == [(SMALL, "waiting", 2, None)]
    cancel(holder, registration["id"])  # the seat frees: it is held for the first in line
    [(event_id, state, position, until)] = places_listed(first)
    assert (event_id, state, position) == (SMALL, "offered", None)
    assert datetime.fromisoformat(until) == clock() + timedelta(hours=24)  # type: ignore[arg-type]
    assert places_listed(second) == [(SMALL, "waiting", 1, None)]
    answer = plans(first)
    assert answer["data"]["waitlist"][0]["eventTitle"] == "小小讀書會 Study group"
    assert "data.waitlist[].eventTitle" in answer["untrustedContent"]["fields"]
    assert "Places on waitlists: 1 (seats offered: 1)" in answer["message"]
    assert "only they can accept it" in answer["nextAction"]
    assert "only they can accept it" not in plans(second)["nextAction"]


@pytest.mark.both_backends
def test_over_mcp_the_agent_reads_the_seat_offered_as_the_schema_declares(app, small):
    (holder, registration), _ = fill(app)
    waiting = Visitor(app)
    join(waiting)
    cancel(holder, registration["id"])
    agent = McpClient(app.test_client(), "modern", connect_agent(waiting), "en")
    over_mcp = agent.call("get_my_plans", {})
    assert over_mcp["isError"] is False
    jsonschema.validate(over_mcp["structuredContent"], output_schemas(agent)["get_my_plans"])
    assert over_mcp["structuredContent"] == plans(waiting)  # the route's answer, key for key
    assert [place["state"] for place in over_mcp["structuredContent"]["data"]["waitlist"]] == [
        "offered"]


@pytest.mark.both_backends
def test_an_offer_whose_hold_ran_out_has_passed_on_when_plans_are_read(app, small, clock):
    """Nothing depends on the periodic job: reading plans passes an ended offer on first."""
    (holder, registration), _ = fill(app)
    first, second = Visitor(app), Visitor(app)
    join(first)
    join(second)
    cancel(holder, registration["id"])
    clock.advance(hours=24, seconds=1)
    assert places_listed(first) == []  # expired: it is no place any more
    [(_, state, _, until)] = places_listed(second)
    assert state == "offered"
    assert datetime.fromisoformat(until) == clock() + timedelta(hours=24)  # type: ignore[arg-type]


def test_my_registrations_lists_the_places_get_my_plans_lists(app, small):
    (holder, registration), _ = fill(app)
    first, second = Visitor(app), Visitor(app)
    join(first)
    join(second)
    cancel(holder, registration["id"])
    for person in (first, second):
        page = person.get("/en/registrations")
        listed = the_jsonld(page.data)["data"]["waitlist"]
        rows = BeautifulSoup(page.data, "html.parser").select(".registration-list--waitlist li")
        assert len(rows) == len(listed) == 1
        assert listed[0]["eventTitle"] in rows[0].get_text()
        offered = listed[0]["state"] == "offered"
        assert ("Accept the seat" in rows[0].get_text()) is offered
        assert ("number 1" in rows[0].get_text()) is not offered
