"""The language of answers over MCP: the one a request asks for, else the one of the page that
connected the agent (MCP clients seldom send `Accept-Language`, and Node's sends `*`), else
the site's default; `/en/mcp` and `/zh-TW/mcp` always speak their own.
"""

from __future__ import annotations

import pytest
from mcp_helpers import McpClient
from mcp_helpers import connect_agent

# How each language says what a search found, and what a refusal of the budget says.
FOUND = {"en": "Found", "zh-TW": "共"}
SLOW_DOWN = {"en": "Too many requests", "zh-TW": "太多"}
# What clients send when they name no language: nothing, or any.
UNNAMED = ["", "*"]


def search_message(agent: McpClient) -> str:
    message: str = agent.envelope("search_events", {"query": "webmcp"})["message"]
    return message


def speaks(message: str, language: str) -> bool:
    return FOUND[language] in message


@pytest.mark.parametrize("unnamed", UNNAMED)
@pytest.mark.parametrize("connected_in", ["en", "zh-TW"])
def test_an_agent_speaks_the_language_of_the_page_that_connected_it(app, visitor, connected_in,
                                                                    unnamed):
    token = connect_agent(visitor, language=connected_in)
    agent = McpClient(app.test_client(), "legacy", token, language=unnamed)
    assert speaks(search_message(agent), connected_in)
    other = {"en": "zh-TW", "zh-TW": "en"}[connected_in]
    tools = agent.result("tools/list")["tools"]
    assert tools == McpClient(app.test_client(), "legacy", language=connected_in).result(
        "tools/list")["tools"]
    assert tools != McpClient(app.test_client(), "legacy", language=other).result(
        "tools/list")["tools"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_request_that_asks_for_a_language_gets_it(app, visitor, era):
    token = connect_agent(visitor, language="en")
    assert speaks(search_message(McpClient(app.test_client(), era, token, "zh-TW")), "zh-TW")
    assert speaks(search_message(McpClient(app.test_client(), era, token, "zh-Hant, en;q=0.5")),
                  "zh-TW")
    at_prefix = McpClient(app.test_client(), era, token, "", path="/zh-TW/mcp")
    assert speaks(search_message(at_prefix), "zh-TW")
    chinese = connect_agent(visitor, "another", language="zh-TW")
    assert speaks(search_message(McpClient(app.test_client(), era, chinese, "",
                                           path="/en/mcp")), "en")


@pytest.mark.parametrize("unnamed", UNNAMED)
def test_without_a_connection_the_default_is_chinese(app, unnamed):
    assert speaks(search_message(McpClient(app.test_client(), language=unnamed)), "zh-TW")


@pytest.mark.parametrize("connected_in", ["en", "zh-TW"])
def test_a_refusal_of_the_budget_speaks_the_connections_language(app, visitor, connected_in):
    token = connect_agent(visitor, language=connected_in)
    app.config["RATELIMIT_READS_PER_ADDRESS"] = "1 per minute"  # after connecting
    agent = McpClient(app.test_client(), "legacy", token, language="*")
    assert agent.rpc("ping").status_code == 200
    refused = agent.rpc("tools/list").get_json()["error"]
    assert SLOW_DOWN[connected_in] in refused["message"]
