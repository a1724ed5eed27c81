"""Over MCP a person still confirms: the prepare tools leave a review waiting on the
visitor's page, where a token made for that view lets only the person finish it, in their
own browser. Nothing an MCP client can send finalizes a registration or a cancellation.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest
from helpers import TOKEN_FIELD
from helpers import Visitor
from helpers import confirmation_tokens
from helpers import stored_rows
from mcp_helpers import McpClient
from mcp_helpers import connect_agent

EVENT = "evt-webmcp-intro"
ATTENDEE = {"attendee_name": "Ann Lee", "email": "ann@example.com"}
REGISTER = {"event_id": EVENT, **ATTENDEE}
URL_ELICITATION: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}


@pytest.fixture(params=["modern", "legacy"])
def agent(request, app, visitor) -> McpClient:
    return McpClient(app.test_client(), request.param, connect_agent(visitor))


def registrations(app) -> list[tuple[Any, ...]]:
    with sqlite3.connect(app.config["DATABASE"]) as conn:
        return conn.execute("SELECT event_id, state FROM registrations").fetchall()


def waiting_tokens(visitor) -> list[str]:
    """The confirm tokens the review page shows the person now."""
    page = visitor.get("/en/registrations/pending").get_data(as_text=True)
    return confirmation_tokens(page)


def test_a_prepare_names_the_review_page_and_registers_nobody(app, agent):
    result = agent.call("prepare_event_registration", REGISTER)
    envelope = result["structuredContent"]
    assert result["isError"] is False and envelope["status"] == "confirmation_required"
    assert envelope["data"]["reviewUrl"] == "http://localhost/registrations/pending"
    assert envelope["data"]["reviewUrl"] in envelope["nextAction"]
    assert envelope["requiresUserDecision"] is True
    assert "token" not in json.dumps(envelope).lower()
    assert registrations(app) == []


def test_the_person_confirms_on_the_review_page(app, agent, visitor):
    agent.call("prepare_event_registration", REGISTER)
    page = visitor.get("/en/registrations/pending").get_data(as_text=True)
    assert "Register for this event?" in page and "Your connected agent" in page
    (token,) = confirmation_tokens(page)
    confirmed = visitor.confirm_registration(token)
    assert confirmed.status_code == 201
    assert registrations(app) == [(EVENT, "active")]
    assert waiting_tokens(visitor) == []  # used: nothing waits any more


def test_the_person_confirms_a_cancellation_on_the_review_page(app, agent, visitor):
    registration = visitor.register()
    result = agent.call("prepare_registration_cancellation",
                        {"registration_id": registration["id"]})
    assert result["structuredContent"]["status"] == "confirmation_required"
    page = visitor.get("/en/registrations/pending").get_data(as_text=True)
    assert "Cancel this registration?" in page
    (token,) = confirmation_tokens(page)
    assert visitor.confirm_cancellation(registration["id"], token).status_code == 200
    assert registrations(app) == [(EVENT, "cancelled")]


def test_viewing_the_review_page_changes_nothing(agent, visitor):
    """A GET may come from a link on another site: each view shows the same token, and a
    token shown earlier still works, once."""
    agent.call("prepare_event_registration", REGISTER)
    (first,) = waiting_tokens(visitor)
    (second,) = waiting_tokens(visitor)
    assert first == second
    assert visitor.confirm_registration(first).status_code == 201
    assert waiting_tokens(visitor) == []
    again = visitor.confirm_registration(second)
    assert again.status_code == 409 and again.get_json()["status"] == "conflict"


def test_a_look_at_the_review_page_keeps_the_token_being_confirmed(visitor):
    """Prepared on the event page, then the review page opened (by the person in another tab,
    or by a link from another site): the token the person is about to press still works."""
    _, token = visitor.prepare_registration()
    assert waiting_tokens(visitor) != []
    assert visitor.confirm_registration(token).status_code == 201


def test_a_review_token_is_bound_to_its_visitor(app, agent, visitor):
    """A review token copied into another browser is nobody else's confirmation."""
    agent.call("prepare_event_registration", REGISTER)
    (token,) = waiting_tokens(visitor)
    assert Visitor(app).confirm_registration(token).status_code == 404
    forged = token.rsplit(".", 1)[0] + ".not-the-signature"
    assert visitor.confirm_registration(forged).status_code == 404
    assert visitor.confirm_registration(token).status_code == 201


def test_another_browser_sees_nothing_waiting(app, agent):
    """The review page shows a visitor's own confirmations only: the address an agent gives
    is no use to anyone else (or to the agent, which has no cookie)."""
    agent.call("prepare_event_registration", REGISTER)
    stranger = Visitor(app)
    page = stranger.get("/en/registrations/pending").get_data(as_text=True)
    assert TOKEN_FIELD.findall(page) == [] and "Nothing is waiting" in page
    bearer = app.test_client().get("/en/registrations/pending",
                                   headers={"Authorization": f"Bearer {agent.token}"})
    assert TOKEN_FIELD.findall(bearer.get_data(as_text=True)) == []


def test_the_review_page_keeps_tokens_out_of_every_cache(agent, visitor):
    agent.call("prepare_event_registration", REGISTER)
    response = visitor.get("/en/registrations/pending")
    assert response.headers["Cache-Control"] == "private, no-store"


def test_what_waits_expires_after_five_minutes(app, agent, visitor, clock):
    agent.call("prepare_event_registration", REGISTER)
    clock.advance(minutes=5)
    assert waiting_tokens(visitor) == []


def test_the_registrations_page_says_what_waits(agent, visitor):
    agent.call("prepare_event_registration", REGISTER)
    page = visitor.get("/zh-TW/registrations").get_data(as_text=True)
    assert "待確認（1）" in page and "/zh-TW/registrations/pending" in page


# -- nothing an MCP client sends finalizes anything


def attempts(agent: McpClient, registration_id: str, token: str) -> list[dict[str, Any]]:
    """Every way an MCP client might try to confirm: human-only actions called by name,
    tokens passed as arguments or in _meta, requestState and inputResponses made up."""
    confirm = {"confirmation_token": token}
    tries: list[dict[str, Any]] = []
    for name in ("confirm_registration", "confirm_cancellation", "remove_saved_event",
                 "confirm", "registrations/confirm", "connect_agent"):
        tries.append({"name": name, "arguments": {**confirm, "registration_id": registration_id}})
    tries += [
        {"name": "prepare_event_registration", "arguments": {**REGISTER, **confirm}},
        {"name": "prepare_event_registration", "arguments": {**REGISTER, "confirm": True}},
        {"name": "prepare_registration_cancellation",
         "arguments": {"registration_id": registration_id, **confirm}},
        {"name": "prepare_event_registration", "arguments": REGISTER,
         "_meta": {"confirmationToken": token, "confirmed": True,
                   "io.modelcontextprotocol/clientCapabilities": URL_ELICITATION}},
        {"name": "prepare_event_registration", "arguments": REGISTER,
         "requestState": "forged", "inputResponses": {"review": {"action": "accept"}}},
        {"name": "prepare_registration_cancellation",
         "arguments": {"registration_id": registration_id},
         "inputResponses": {"review": {"action": "accept", "content": confirm}}},
    ]
    return tries


def test_nothing_an_mcp_client_sends_finalizes_anything(app, agent, visitor):
    registration = visitor.register("evt-agent-testing")
    agent.call("prepare_event_registration", REGISTER)
    agent.call("prepare_registration_cancellation", {"registration_id": registration["id"]})
    (token, _) = waiting_tokens(visitor)  # even a token the page just showed
    before = stored_rows(app.config["DATABASE"])
    answered = []
    for params in attempts(agent, registration["id"], token):
        response = agent.rpc("tools/call", params)
        answered.append(response.get_json())
    for method in ("registrations/confirm", "confirm_registration", "elicitation/create",
                   "resources/read", "completion/complete", "tasks/get", "sampling/createMessage"):
        response = agent.rpc(method, {"token": token, "uri": "http://localhost/registrations"})
        # A method not found: 404 in 2026-07-28, a JSON-RPC error on 200 in the handshake era.
        assert response.status_code == (404 if agent.era == "modern" else 200)
        assert response.get_json()["error"]["code"] == -32601
        answered.append(response.get_json())
    after = stored_rows(app.config["DATABASE"])
    assert after["registrations"] == before["registrations"]
    used = [row for row in after["confirmations"] if row[7] is not None]  # used_at
    assert len(used) == 1  # the one the visitor spent registering, nothing more
    for answer in answered:
        status = answer.get("result", {}).get("structuredContent", {}).get("status")
        assert status != "success", answer


def test_the_person_still_can_confirm_after_every_attempt(app, agent, visitor):
    agent.call("prepare_event_registration", REGISTER)
    (token,) = waiting_tokens(visitor)
    for params in attempts(agent, "reg-aaaaaaaaaaaa", token):
        agent.rpc("tools/call", params)
    assert registrations(app) == []
    fresh = waiting_tokens(visitor)
    assert fresh and visitor.confirm_registration(fresh[-1]).status_code == 201


# -- URL-mode elicitation (2026-07-28)


@pytest.fixture
def opener(app, visitor) -> McpClient:
    """A 2026-07-28 client that can open URLs for its user."""
    return McpClient(app.test_client(), "modern", connect_agent(visitor),
                     capabilities=URL_ELICITATION)


def test_a_client_that_opens_urls_is_asked_to_open_the_review_page(opener):
    result = opener.call("prepare_event_registration", REGISTER)
    assert result["resultType"] == "input_required"
    (request,) = result["inputRequests"].values()
    assert request["method"] == "elicitation/create"
    assert request["params"]["mode"] == "url"  # never a form the client could answer alone
    assert request["params"]["url"] == "http://localhost/registrations/pending"
    assert request["params"]["message"] and result["requestState"]


@pytest.mark.parametrize("answer", ["accept", "decline", "cancel"])
def test_the_retry_gets_the_calls_own_answer_and_confirms_nothing(app, opener, answer):
    first = opener.call("prepare_event_registration", REGISTER)
    retry = opener.call("prepare_event_registration", REGISTER,
                        requestState=first["requestState"],
                        inputResponses={"review": {"action": answer}})
    assert retry["resultType"] == "complete"
    assert retry["structuredContent"]["status"] == "confirmation_required"
    assert registrations(app) == []


def test_a_retry_after_the_person_confirmed_confirms_nothing_more(app, opener, visitor):
    first = opener.call("prepare_event_registration", REGISTER)
    (token,) = waiting_tokens(visitor)
    assert visitor.confirm_registration(token).status_code == 201
    for _ in range(2):
        opener.call("prepare_event_registration", REGISTER, requestState=first["requestState"],
                    inputResponses={"review": {"action": "accept"}})
    assert registrations(app) == [(EVENT, "active")]


def test_a_request_state_is_bound_to_its_call_its_agent_and_its_time(app, opener, visitor,
                                                                     clock):
    state = opener.call("prepare_event_registration", REGISTER)["requestState"]
    other_call = opener.rpc("tools/call", {"name": "prepare_event_registration",
                                           "arguments": {**REGISTER, "attendee_name": "Bo"},
                                           "requestState": state})
    other_agent = McpClient(app.test_client(), "modern", connect_agent(visitor, "other"))
    stolen = other_agent.rpc("tools/call", {"name": "prepare_event_registration",
                                            "arguments": REGISTER, "requestState": state})
    tampered = opener.rpc("tools/call", {"name": "prepare_event_registration",
                                         "arguments": REGISTER, "requestState": state[:-2] + "xx"})
    clock.advance(minutes=5, seconds=1)
    late = opener.rpc("tools/call", {"name": "prepare_event_registration", "arguments": REGISTER,
                                     "requestState": state})
    for refused in (other_call, stolen, tampered, late):
        assert refused.status_code == 400
        assert refused.get_json()["error"]["code"] == -32602
    assert registrations(app) == []


def test_a_client_that_cannot_open_urls_gets_the_answer_at_once(app, visitor):
    form_only = McpClient(app.test_client(), "modern", connect_agent(visitor),
                          capabilities={"elicitation": {}})
    result = form_only.call("prepare_event_registration", REGISTER)
    assert result["resultType"] == "complete"
    assert result["structuredContent"]["status"] == "confirmation_required"
