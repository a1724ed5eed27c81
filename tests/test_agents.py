"""Connecting an agent (an MCP client) is a person's act, on a page of its own: the access
token is shown once, stored only as a hash, expires, is listed and can be revoked there.
"""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from helpers import CSRF_FIELD
from helpers import JSON
from helpers import hidden_value
from helpers import jsonld_blocks
from helpers import one
from helpers import query_database
from mcp_helpers import ACCESS_TOKEN
from mcp_helpers import McpClient
from mcp_helpers import connect_agent

# PostgreSQL runs the flows that prove it end to end (marked `both_backends`); the storage
# under every other test here is checked on both backends by test_storage_contract.py.

SAVE = ("save_event", {"event_id": "evt-webmcp-intro"})


def connections(app) -> list[tuple[str, str, str]]:
    return query_database(app.config["DATABASE"],
                          "SELECT id, token_hash, label FROM agent_connections")


@pytest.mark.both_backends
def test_the_token_is_shown_once_and_stored_as_a_hash(app, visitor):
    token = connect_agent(visitor, "Ann's laptop")
    assert token.startswith("wme_") and len(token) > 40
    ((connection_id, stored, label),) = connections(app)
    assert token not in stored and len(stored) == 64 and label == "Ann's laptop"
    again = visitor.get("/en/agents").get_data(as_text=True)
    assert token not in again  # once
    assert "Ann&#39;s laptop" in again and connection_id in again


def test_the_page_gives_the_endpoint_and_a_client_configuration(visitor):
    csrf = hidden_value(CSRF_FIELD, visitor.get("/en/agents").get_data(as_text=True))
    page = visitor.client.post("/en/agents", data={"csrf_token": csrf},
                               follow_redirects=True).get_data(as_text=True)
    token = hidden_value(ACCESS_TOKEN, page)
    snippet = one(BeautifulSoup(page, "html.parser"), "pre.snippet").get_text()
    import json
    assert json.loads(snippet) == {"mcpServers": {"webmcp-events": {
        "url": "http://localhost/mcp", "headers": {"Authorization": f"Bearer {token}"}}}}
    assert all(token not in json.dumps(block) for block in jsonld_blocks(page))


def test_no_json_answer_ever_holds_the_token(app, visitor):
    answer = visitor.post_json("/agents", {"label": "script"}).get_json()
    assert answer["status"] == "success" and answer["action"] == "connect_agent"
    assert set(answer["data"]["connection"]) == {"id", "label", "createdAt", "expiresAt",
                                                 "lastUsedAt", "oauth"}
    assert "wme_" not in str(answer)


def test_an_agent_cannot_connect_itself(visitor):
    """A request marked as a browser agent's is refused, like every human-only step."""
    refused = visitor.post("/agents", {"label": "me"}, headers={
        **JSON, "WebMCP-Agent-Invoked": "true"})
    assert refused.status_code == 403 and refused.get_json()["action"] == "connect_agent"


def test_the_page_forms_are_for_people_only(visitor):
    page = BeautifulSoup(visitor.get("/en/agents").data, "html.parser")
    assert page.select("form[toolname]") == []


@pytest.mark.both_backends
def test_a_revoked_token_stops_working_at_once(app, visitor):
    token = connect_agent(visitor)
    agent = McpClient(app.test_client(), token=token)
    assert agent.call(*SAVE)["isError"] is False
    ((connection_id, _, _),) = connections(app)
    revoked = visitor.post_json(f"/agents/{connection_id}/disconnect").get_json()
    assert revoked["status"] == "success"
    refused = agent.rpc("tools/call", {"name": SAVE[0], "arguments": SAVE[1]})
    assert refused.status_code == 401  # on any request, reads too (test_oauth.py)
    assert 'error="invalid_token"' in refused.headers["WWW-Authenticate"]
    assert connection_id not in visitor.get("/en/agents").get_data(as_text=True)


def test_another_visitors_connection_cannot_be_revoked(app, visitor, other_visitor):
    connect_agent(visitor)
    ((connection_id, _, _),) = connections(app)
    answer = other_visitor.post_json(f"/agents/{connection_id}/disconnect").get_json()
    assert answer["status"] == "not_found"
    assert len(connections(app)) == 1


@pytest.mark.both_backends
def test_a_token_expires(app, visitor, clock):
    agent = McpClient(app.test_client(), token=connect_agent(visitor))
    clock.advance(seconds=app.config["AGENT_CONNECTION_TTL"])
    visitor.save("evt-agent-testing")  # the visitor's own session goes on
    assert agent.rpc("tools/call", {"name": SAVE[0], "arguments": SAVE[1]}).status_code == 401
    assert "Not yet" not in visitor.get("/en/agents").get_data(as_text=True)  # no longer listed


@pytest.mark.both_backends
def test_an_agent_acts_only_while_its_visitors_session_lasts(app, visitor, clock):
    agent = McpClient(app.test_client(), token=connect_agent(visitor))
    clock.advance(seconds=app.config["VISITOR_TTL"] + 1)
    assert agent.call(*SAVE)["structuredContent"]["status"] == "session_expired"
    assert agent.envelope("search_events", {"query": "webmcp"})["status"] == "success"


def test_each_write_keeps_the_visitors_session_alive(app, visitor, clock):
    agent = McpClient(app.test_client(), token=connect_agent(visitor))
    for _ in range(2):  # 28 days: the visitor's session twice over, within the token's life
        clock.advance(seconds=app.config["VISITOR_TTL"] - 60)
        assert agent.call(*SAVE)["isError"] is False


def test_the_page_lists_when_each_agent_was_last_used(app, visitor):
    agent = McpClient(app.test_client(), token=connect_agent(visitor))
    assert "Not yet" in visitor.get("/en/agents").get_data(as_text=True)
    agent.call("search_events", {})
    assert "Not yet" not in visitor.get("/en/agents").get_data(as_text=True)


@pytest.mark.parametrize("language", ["en", "zh-TW"])
def test_the_page_in_both_languages(visitor, language):
    page = visitor.get(f"/{language}/agents").get_data(as_text=True)
    assert {"en": "Connect an agent", "zh-TW": "連接 AI 代理"}[language] in page
    registrations = visitor.get(f"/{language}/registrations").get_data(as_text=True)
    assert f'href="/{language}/agents"' in registrations


@pytest.mark.both_backends
def test_prune_removes_expired_connections(app, runner, visitor, clock):
    connect_agent(visitor)
    visitor.save()
    clock.advance(seconds=app.config["AGENT_CONNECTION_TTL"] + 1)
    visitor.save("evt-agent-testing")
    result = runner.invoke(args=["prune"])
    assert "1 expired agent connection(s)" in result.output
    assert connections(app) == []


@pytest.mark.parametrize("label", ["x" * 61, "Ann\u202eLee"])
def test_a_bad_name_is_refused_with_a_field_error(visitor, label):
    answer = visitor.post_json("/agents", {"label": label}).get_json()
    assert answer["status"] == "invalid_input" and "label" in answer["errors"]
