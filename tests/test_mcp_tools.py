"""Over MCP each tool runs the action of its route: for the same input and visitor, its
envelope is the route's JSON answer, key for key, in both protocol eras and both languages,
for every status a tool can answer, but for what an agent shown no page is told otherwise:
every address in full, and next steps that name its tools rather than pages. The activity log
says the agent did it.
"""

from __future__ import annotations

import re
from datetime import datetime
from datetime import timedelta
from typing import Any

import jsonschema
import pytest
from helpers import JSON
from mcp_helpers import McpClient
from mcp_helpers import connect_agent
from mcp_helpers import output_schemas

from webapp.domain.catalog import CATALOG
from webapp.storage import StorageError
from webapp.storage.sqlite import SQLiteStorage

SITE = "http://localhost"
# A path with no scheme and host before it ("see /registrations").
RELATIVE_ADDRESS = re.compile(r"(?<![\w/:.])/[a-z]")
OPEN_EVENT = "evt-webmcp-intro"
OTHER_EVENT = "evt-agent-testing"
FULL_EVENT = "evt-semantic-html"
ATTENDEE = {"attendee_name": "Ann Lee", "email": "ann@example.com"}


@pytest.fixture(params=["modern", "legacy"])
def era(request) -> str:
    return str(request.param)


@pytest.fixture(params=["en", "zh-TW"])
def language(request) -> str:
    return str(request.param)


@pytest.fixture
def agent(app, visitor, era, language) -> McpClient:
    """The visitor's agent: connected on the page, speaking `era`, reading `language`."""
    token = connect_agent(visitor)
    return McpClient(app.test_client(), era, token, language)


def in_full(answer: Any) -> Any:
    """A route's answer with every site-relative `url` in full (the test client's host)."""
    if isinstance(answer, list):
        return [in_full(item) for item in answer]
    if not isinstance(answer, dict):
        return answer
    return {key: SITE + value if key == "url" and str(value).startswith("/") else in_full(value)
            for key, value in answer.items()}


def assert_told_as_the_route(over_mcp: dict[str, Any], from_route: dict[str, Any]) -> None:
    """The envelope over MCP is the route's but for every address in full, and a next step
    that names no page by a relative address: where it differs from the route's, it names
    a tool."""
    told, said = dict(over_mcp), dict(from_route)
    told_next, said_next = told.pop("nextAction", None), said.pop("nextAction", None)
    assert told == in_full(said)
    assert (told_next is None) == (said_next is None)
    if told_next is not None:
        assert not RELATIVE_ADDRESS.search(told_next), told_next
        assert told_next == said_next or any(name in told_next for name in CATALOG.names)


def route(visitor, language: str, method: str, url: str, data: dict[str, Any] | None = None
          ) -> dict[str, Any]:
    """The route's JSON answer for this visitor, at its address in `language`."""
    headers = JSON
    url = f"/{language}{url}"
    if method == "get":
        answer: dict[str, Any] = visitor.get(url, headers=headers).get_json()
    else:
        answer = visitor.post(url, data, headers=headers).get_json()
    return answer


# (tool, arguments, route method, route address, route input, status)
CASES = [
    ("search_events", {"query": "webmcp", "location": "taipei"}, "get",
     "/events?query=webmcp&location=taipei", None, "success"),
    ("search_events", {"query": "no-event-has-this-word"}, "get",
     "/events?query=no-event-has-this-word", None, "no_results"),
    ("search_events", {"date_from": "2030-02-01", "date_to": "2030-01-01"}, "get",
     "/events?date_from=2030-02-01&date_to=2030-01-01", None, "invalid_input"),
    ("search_events", {"query": "web", "sort": "price"}, "get",
     "/events?query=web&sort=price", None, "invalid_input"),
    ("get_event_details", {"event_id": OPEN_EVENT}, "get",
     f"/events/details?event_id={OPEN_EVENT}", None, "success"),
    ("get_event_details", {"event_id": "evt-no-such-event"}, "get",
     "/events/details?event_id=evt-no-such-event", None, "not_found"),
    ("get_event_details", {"event_id": "not an id"}, "get",
     "/events/details?event_id=not an id", None, "invalid_input"),
    ("save_event", {"event_id": "evt-no-such-event"}, "post",
     "/events/evt-no-such-event/save", {}, "not_found"),
    ("save_event", {"event_id": OPEN_EVENT, "note": "x"}, "post",
     f"/events/{OPEN_EVENT}/save", {"note": "x"}, "invalid_input"),
    ("prepare_event_registration", {"event_id": OPEN_EVENT, **ATTENDEE}, "post",
     f"/events/{OPEN_EVENT}/register", ATTENDEE, "confirmation_required"),
    ("prepare_event_registration", {"event_id": FULL_EVENT, **ATTENDEE}, "post",
     f"/events/{FULL_EVENT}/register", ATTENDEE, "conflict"),
    ("prepare_event_registration", {"event_id": "evt-no-such-event", **ATTENDEE}, "post",
     "/events/evt-no-such-event/register", ATTENDEE, "not_found"),
    ("prepare_event_registration",
     {"event_id": OPEN_EVENT, "attendee_name": "Ann", "email": "not-an-address"}, "post",
     f"/events/{OPEN_EVENT}/register", {"attendee_name": "Ann", "email": "not-an-address"},
     "invalid_input"),
    ("prepare_registration_cancellation", {"registration_id": "reg-aaaaaaaaaaaa"}, "post",
     "/registrations/cancellation", {"registration_id": "reg-aaaaaaaaaaaa"}, "not_found"),
    ("prepare_registration_cancellation", {"registration_id": "nope"}, "post",
     "/registrations/cancellation", {"registration_id": "nope"}, "invalid_input"),
    ("get_my_plans", {}, "get", "/registrations/plans", None, "success"),
    ("get_my_plans", {"page": 2}, "get", "/registrations/plans?page=2", None, "invalid_input"),
]


@pytest.mark.parametrize(("tool", "arguments", "method", "url", "data", "status"), CASES,
                         ids=[f"{case[0]}-{case[5]}-{i}" for i, case in enumerate(CASES)])
def test_each_tool_answers_as_its_route(agent, visitor, language, tool, arguments, method,
                                        url, data, status):
    over_mcp = agent.call(tool, arguments)
    from_route = route(visitor, language, method, url, data)
    assert from_route["status"] == status
    assert_told_as_the_route(over_mcp["structuredContent"], from_route)
    # Every status's answer fits exactly what the tool's outputSchema declares.
    jsonschema.validate(over_mcp["structuredContent"], output_schemas(agent)[tool])
    assert over_mcp["isError"] is (status not in ("success", "no_results",
                                                  "confirmation_required"))


def test_saving_is_the_routes_save(agent, visitor, language):
    over_mcp = agent.call("save_event", {"event_id": OPEN_EVENT})
    assert over_mcp["isError"] is False
    visitor.post_json(f"/saved/{OPEN_EVENT}/remove")  # as it was before, for the route
    from_route = route(visitor, language, "post", f"/events/{OPEN_EVENT}/save", {})
    assert from_route["data"] == {"eventId": OPEN_EVENT, "alreadySaved": False}
    assert_told_as_the_route(over_mcp["structuredContent"], from_route)


def test_saving_again_is_the_routes_already_saved(agent, visitor, language):
    agent.call("save_event", {"event_id": OPEN_EVENT})
    over_mcp = agent.call("save_event", {"event_id": OPEN_EVENT})["structuredContent"]
    assert over_mcp["data"]["alreadySaved"] is True
    assert_told_as_the_route(over_mcp, route(visitor, language, "post",
                                             f"/events/{OPEN_EVENT}/save", {}))


def test_an_active_registration_and_its_cancellation_as_the_routes(agent, visitor, language):
    registration = visitor.register(OTHER_EVENT)
    args = {"event_id": OTHER_EVENT, **ATTENDEE}
    already = agent.call("prepare_event_registration", args)["structuredContent"]
    assert already["status"] == "conflict"
    assert_told_as_the_route(already, route(visitor, language, "post",
                                            f"/events/{OTHER_EVENT}/register", ATTENDEE))
    cancelling = {"registration_id": registration["id"]}
    over_mcp = agent.call("prepare_registration_cancellation", cancelling)
    assert over_mcp["isError"] is False
    assert over_mcp["structuredContent"]["status"] == "confirmation_required"
    assert_told_as_the_route(over_mcp["structuredContent"], route(
        visitor, language, "post", "/registrations/cancellation", cancelling))
    _, token = visitor.prepare_cancellation(registration["id"])
    visitor.confirm_cancellation(registration["id"], token)
    cancelled = agent.call("prepare_registration_cancellation", cancelling)
    assert cancelled["structuredContent"]["status"] == "conflict"
    assert_told_as_the_route(cancelled["structuredContent"], route(
        visitor, language, "post", "/registrations/cancellation", cancelling))


def test_a_closed_event_as_the_route(agent, visitor, language, clock):
    event = visitor.get(f"/en/events/{OPEN_EVENT}", headers=JSON).get_json()["data"]["event"]
    clock.now = datetime.fromisoformat(event["registrationDeadline"]) + timedelta(seconds=1)
    over_mcp = agent.call("prepare_event_registration", {"event_id": OPEN_EVENT, **ATTENDEE})
    assert over_mcp["structuredContent"]["status"] == "conflict"
    assert_told_as_the_route(over_mcp["structuredContent"], route(
        visitor, language, "post", f"/events/{OPEN_EVENT}/register", ATTENDEE))


@pytest.mark.parametrize("app_config", [{"RATELIMIT_REGISTRATIONS_PER_EVENT_EMAIL":
                                         "1 per day"}])
def test_a_rate_limit_is_the_routes_envelope(agent, visitor, language):
    """The per-e-mail budget counts prepares from pages and from agents alike, and a call
    over it is a tool's failure (retryable), not a protocol error."""
    assert route(visitor, language, "post", f"/events/{OPEN_EVENT}/register",
                 ATTENDEE)["status"] == "confirmation_required"
    from_route = route(visitor, language, "post", f"/events/{OPEN_EVENT}/register", ATTENDEE)
    over_mcp = agent.call("prepare_event_registration", {"event_id": OPEN_EVENT, **ATTENDEE})
    assert from_route["status"] == "rate_limited"
    assert over_mcp["isError"] is True
    assert_told_as_the_route(over_mcp["structuredContent"], from_route)
    jsonschema.validate(over_mcp["structuredContent"],
                        output_schemas(agent)["prepare_event_registration"])


@pytest.mark.parametrize(("tool", "arguments", "method", "url", "data", "failing"), [
    ("search_events", {"query": "web"}, "get", "/events?query=web", None, "search_events"),
    ("save_event", {"event_id": OPEN_EVENT}, "post", f"/events/{OPEN_EVENT}/save", {},
     "save_event"),
])
def test_a_storage_failure_is_the_routes_internal_error(agent, visitor, language, monkeypatch,
                                                        tool, arguments, method, url, data,
                                                        failing):
    visitor.csrf  # noqa: B018 - read the form token while the storage still works

    def broken(*args, **kwargs):
        raise StorageError("disk gone")

    monkeypatch.setattr(SQLiteStorage, failing, broken)
    over_mcp = agent.call(tool, arguments)
    from_route = route(visitor, language, method, url, data)
    assert from_route["status"] == "internal_error" and from_route["retryable"] is True
    assert over_mcp["isError"] is True
    assert_told_as_the_route(over_mcp["structuredContent"], from_route)


def test_reading_needs_no_connection(app, era):
    anonymous = McpClient(app.test_client(), era)
    found = anonymous.envelope("search_events", {"query": "webmcp"})
    assert found["status"] == "success" and found["data"]["count"] >= 1
    details = anonymous.envelope("get_event_details", {"event_id": OPEN_EVENT})
    assert details["status"] == "success"


@pytest.mark.parametrize("token", [None, "wme_not-a-token-anyone-was-given"])
@pytest.mark.parametrize(("tool", "arguments"), [
    ("save_event", {"event_id": OPEN_EVENT}),
    ("prepare_event_registration", {"event_id": OPEN_EVENT, **ATTENDEE}),
    ("prepare_registration_cancellation", {"registration_id": "reg-aaaaaaaaaaaa"}),
])
def test_a_write_without_a_connection_asks_for_one(app, era, token, tool, arguments):
    # Told with a 401 and its challenge (an OAuth client signs in from it: test_oauth.py);
    # the error says where a person connects an agent, for clients that take a token.
    agent = McpClient(app.test_client(), era, token)
    answer = agent.rpc("tools/call", {"name": tool, "arguments": arguments})
    assert answer.status_code == 401
    challenge = answer.headers["WWW-Authenticate"]
    assert challenge.startswith("Bearer ") and "resource_metadata=" in challenge
    assert ('error="invalid_token"' in challenge) is (token is not None)
    message = answer.get_json()["error"]["message"]
    assert "http://localhost/agents" in message


def test_the_connect_page_is_named_in_chinese_too(app):
    agent = McpClient(app.test_client(), language="zh-TW")
    answer = agent.rpc("tools/call", {"name": "save_event", "arguments": {"event_id": OPEN_EVENT}})
    assert answer.status_code == 401
    message = answer.get_json()["error"]["message"]
    assert "http://localhost/agents" in message and "AI 代理" in message


def test_writes_act_for_the_visitor_who_connected_the_agent(agent, visitor):
    assert agent.call("save_event", {"event_id": OPEN_EVENT})["isError"] is False
    saved = visitor.get("/en/saved").get_data(as_text=True)
    assert f"/events/{OPEN_EVENT}" in saved


def test_the_activity_log_says_the_connected_agent_did_it(agent, visitor, language):
    agent.call("search_events", {"query": "webmcp"})
    agent.call("save_event", {"event_id": OPEN_EVENT})
    agent.call("prepare_event_registration", {"event_id": OPEN_EVENT, **ATTENDEE})
    page = visitor.get(f"/{language}/registrations").get_data(as_text=True)
    who = {"en": "Your connected agent", "zh-TW": "你連接的 AI 代理"}[language]
    assert page.count(who) == 3
    import sqlite3
    with sqlite3.connect(agent.client.application.config["DATABASE"]) as conn:
        rows = conn.execute("SELECT source, action, status FROM activity WHERE source = 'mcp' "
                            "ORDER BY id").fetchall()
    assert rows == [("mcp", "search_events", "success"), ("mcp", "save_event", "success"),
                    ("mcp", "prepare_event_registration", "confirmation_required")]


def test_event_results_link_each_events_page_in_full(app, era):
    """Searches and details give each event's page as a `resource_link` beside the envelope:
    the address its `url` gives, in full."""
    agent = McpClient(app.test_client(), era)
    found = agent.call("search_events", {"query": "webmcp"})
    details = agent.call("get_event_details", {"event_id": OPEN_EVENT})
    for result, events in [(found, found["structuredContent"]["data"]["events"]),
                           (details, [details["structuredContent"]["data"]["event"]])]:
        assert events and result["content"][1:] == [
            {"type": "resource_link", "uri": event["url"], "name": event["id"],
             "title": event["title"], "mimeType": "text/html"} for event in events]
        assert all(event["url"] == f"{SITE}/events/{event['id']}" for event in events)
    nothing = agent.call("search_events", {"query": "no-event-has-this-word"})
    assert len(nothing["content"]) == 1  # the envelope alone


def test_next_steps_name_the_tools_an_agent_has(agent, visitor, language):
    """Where a page would send a person to a page, an agent is told which tool to call."""
    details = agent.envelope("get_event_details", {"event_id": OPEN_EVENT})
    assert "prepare_event_registration" in details["nextAction"]
    assert OPEN_EVENT in details["nextAction"]
    registration = visitor.register(OTHER_EVENT)
    already = agent.envelope("prepare_event_registration", {"event_id": OTHER_EVENT, **ATTENDEE})
    assert already["status"] == "conflict" and "get_my_plans" in already["nextAction"]
    unknown = agent.envelope("prepare_registration_cancellation",
                             {"registration_id": "reg-aaaaaaaaaaaa"})
    assert "get_my_plans" in unknown["nextAction"]
    prepared = agent.envelope("prepare_registration_cancellation",
                              {"registration_id": registration["id"]})
    assert f"{SITE}/registrations/pending" in prepared["nextAction"]
    assert "get_my_plans" in prepared["nextAction"]
    for told in (details, already, unknown, prepared):
        assert not RELATIVE_ADDRESS.search(told["nextAction"]), told["nextAction"]
