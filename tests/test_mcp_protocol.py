"""`/mcp` on the wire: both protocol eras, the transport's rules, protocol faults as JSON-RPC
errors (with the HTTP status each era gives them), CORS for the allowed origins, and the tool
list derived from the catalog (never written twice).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import jsonschema
import pytest
from mcp_helpers import ACCEPT
from mcp_helpers import LEGACY
from mcp_helpers import MODERN
from mcp_helpers import McpClient
from mcp_helpers import connect_agent
from mcp_helpers import output_schemas

from flask_webmcp.apidoc import envelope_json_schema
from flask_webmcp.input_schema import expected_input_schema
from flask_webmcp.input_schema import remote_input_schema
from webapp.domain.catalog import CATALOG

READS = ("search_events", "get_event_details")


def error_of(response) -> dict[str, Any]:
    body = response.get_json()
    assert "result" not in body and body["jsonrpc"] == "2.0", body
    error: dict[str, Any] = body["error"]
    return error


# -- the two eras


@pytest.mark.parametrize(("asked", "answered"), [
    ("2025-03-26", "2025-03-26"), ("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"),
    ("2024-11-05", "2025-11-25"), ("2026-07-28", "2025-11-25")])
def test_initialize_answers_the_clients_version_or_the_newest_it_speaks(client, asked,
                                                                          answered):
    legacy = McpClient(client, "legacy")
    result = legacy.result("initialize", {"protocolVersion": asked, "capabilities": {},
                                          "clientInfo": {"name": "test", "version": "1"}})
    assert result["protocolVersion"] == answered
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"]["name"] == "webmcp-events" and result["instructions"]


def test_the_handshake_leaves_nothing_to_remember(client):
    """No session id: any worker answers the next request."""
    legacy = McpClient(client, "legacy")
    response = legacy.rpc("initialize", {"protocolVersion": LEGACY, "capabilities": {}})
    assert "Mcp-Session-Id" not in response.headers and "Set-Cookie" not in response.headers
    notification = legacy.message("notifications/initialized", notification=True)
    accepted = legacy.post(notification, legacy.headers("notifications/initialized", {}))
    assert accepted.status_code == 202 and accepted.data == b""
    assert "Content-Type" not in accepted.headers  # no body, so no type
    assert legacy.result("ping") == {}
    assert [tool["name"] for tool in legacy.result("tools/list")["tools"]] == CATALOG.names


def test_a_legacy_request_needs_a_version_it_speaks(client):
    legacy = McpClient(client, "legacy")
    for version in ("1999-01-01", "2024-11-05", "latest"):
        response = legacy.post(legacy.message("tools/list"), {
            **legacy.headers("tools/list", {}), "MCP-Protocol-Version": version})
        assert response.status_code == 400
        assert "2025-06-18" in error_of(response)["data"]["supported"]
    response = legacy.post(legacy.message("tools/list"),
                           {**legacy.headers("tools/list", {}), "MCP-Protocol-Version": MODERN})
    assert response.status_code == 400 and error_of(response)["code"] == -32602


@pytest.mark.parametrize("version", [None, "2025-03-26"])
def test_a_request_without_a_version_header_is_taken_as_2025_03_26(client, version):
    """A client from before the header sends none: it is served as 2025-03-26 (a version the
    server speaks), not refused."""
    legacy = McpClient(client, "legacy")
    initialized = legacy.result("initialize", {"protocolVersion": "2025-03-26",
                                               "capabilities": {}})
    assert initialized["protocolVersion"] == "2025-03-26"
    for method, params in (("tools/list", {}), ("ping", {}),
                           ("tools/call", {"name": "search_events",
                                           "arguments": {"query": "webmcp"}})):
        headers = legacy.headers(method, params)
        headers.pop("MCP-Protocol-Version")
        if version:
            headers["MCP-Protocol-Version"] = version
        response = legacy.post(legacy.message(method, params), headers)
        assert response.status_code == 200 and "result" in response.get_json(), method
    notification = legacy.message("notifications/initialized", notification=True)
    accepted = legacy.post(notification, {"Accept": ACCEPT, "Content-Type": "application/json"})
    assert accepted.status_code == 202


def test_discover_says_what_the_server_speaks(client):
    result = McpClient(client).result("server/discover")
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == ["2025-03-26", "2025-06-18", "2025-11-25",
                                           "2026-07-28"]
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["ttlMs"] >= 0 and result["cacheScope"] == "private"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "webmcp-events"


def test_a_modern_request_in_an_unknown_version_learns_the_supported_ones(client):
    modern = McpClient(client)
    body = modern.message("server/discover")
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2099-01-01"
    response = modern.post(body, {**modern.headers("server/discover", {}),
                                  "MCP-Protocol-Version": "2099-01-01"})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == -32022
    assert error["data"] == {"supported": ["2025-03-26", "2025-06-18", "2025-11-25",
                                           "2026-07-28"], "requested": "2099-01-01"}


@pytest.mark.parametrize(("header", "value"), [
    ("MCP-Protocol-Version", None), ("MCP-Protocol-Version", "2025-11-25"),
    ("Mcp-Method", None), ("Mcp-Method", "tools/list"), ("Mcp-Name", None),
    ("Mcp-Name", "get_event_details"), ("Mcp-Name", "=?base64?not base64?=")])
def test_headers_must_agree_with_the_body(client, header, value):
    modern = McpClient(client)
    params = {"name": "search_events", "arguments": {}}
    body = modern.message("tools/call", params)
    headers = modern.headers("tools/call", params)
    headers.pop(header)
    if value is not None:
        headers[header] = value
    response = modern.post(body, headers)
    assert response.status_code == 400 and error_of(response)["code"] == -32020
    assert response.get_json()["id"] == body["id"]


def test_a_tool_name_may_travel_base64_encoded(client):
    modern = McpClient(client)
    params = {"name": "search_events", "arguments": {"query": "webmcp"}}
    encoded = "=?base64?" + base64.b64encode(b"search_events").decode() + "?="
    response = modern.post(modern.message("tools/call", params),
                           {**modern.headers("tools/call", params), "Mcp-Name": encoded})
    assert response.status_code == 200
    assert response.get_json()["result"]["structuredContent"]["status"] == "success"


def test_a_modern_request_names_the_clients_capabilities(client):
    modern = McpClient(client)
    body = modern.message("tools/list")
    del body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    response = modern.post(body, modern.headers("tools/list", {}))
    assert response.status_code == 400 and error_of(response)["code"] == -32602


@pytest.mark.parametrize(("era", "method", "status"), [
    ("modern", "ping", 404), ("modern", "initialize2", 404), ("modern", "resources/list", 404),
    ("legacy", "server/discover2", 200), ("legacy", "prompts/list", 200)])
def test_an_unknown_method_is_not_found(client, era, method, status):
    """2026-07-28 answers it 404, as that revision says; the handshake era with 200, as any
    answer to a request (a client of that era reads a 4xx as a broken transport)."""
    response = McpClient(client, era).rpc(method)
    assert response.status_code == status and error_of(response)["code"] == -32601
    assert response.get_json()["id"] is not None


@pytest.mark.parametrize(("era", "status"), [("modern", 400), ("legacy", 200)])
@pytest.mark.parametrize(("method", "params"), [
    ("tools/call", {"name": "confirm_registration", "arguments": {}}),
    ("tools/call", {"name": "search_events", "arguments": ["webmcp"]}),
    ("tools/call", {"name": "", "arguments": {}}),
    ("tools/call", {"name": "save_event", "arguments": {"event_id": "evt-webmcp-intro"},
                    "requestState": "forged"})])
def test_bad_params_are_a_json_rpc_error_of_the_eras_status(client, era, status, method,
                                                           params):
    response = McpClient(client, era).rpc(method, params)
    assert response.status_code == status and error_of(response)["code"] == -32602


def test_a_handshake_without_a_version_is_a_json_rpc_error(client):
    response = McpClient(client, "legacy").rpc("initialize", {"capabilities": {}})
    assert response.status_code == 200 and error_of(response)["code"] == -32602
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": [1]}
    response = client.post("/mcp", data=json.dumps(body), headers={
        "Accept": ACCEPT, "Content-Type": "application/json", "MCP-Protocol-Version": LEGACY})
    assert response.status_code == 200 and error_of(response)["code"] == -32602
    assert response.get_json()["id"] == 7


# -- the transport


@pytest.mark.parametrize("body", [b"{not json", b"", b"[1, 2]",
                                  json.dumps([{"jsonrpc": "2.0", "id": 1,
                                               "method": "tools/list"}]).encode(),
                                  json.dumps({"jsonrpc": "1.0", "id": 1,
                                              "method": "tools/list"}).encode(),
                                  json.dumps({"jsonrpc": "2.0", "id": None,
                                              "method": "tools/list"}).encode(),
                                  json.dumps({"jsonrpc": "2.0", "id": 1.5,
                                              "method": "tools/list"}).encode(),
                                  json.dumps({"jsonrpc": "2.0", "id": 1,
                                              "result": {}}).encode()])
def test_what_is_not_one_json_rpc_request_is_refused(client, body):
    """Input that is no request has no answer: the transport refuses it, in either era."""
    response = client.post("/mcp", data=body, headers={
        "Accept": ACCEPT, "Content-Type": "application/json", "MCP-Protocol-Version": LEGACY})
    assert response.status_code == 400
    assert error_of(response)["code"] in (-32700, -32600)


@pytest.mark.parametrize("path", ["/mcp", "/en/mcp", "/zh-TW/mcp"])
@pytest.mark.parametrize(("method", "accept"), [("GET", ACCEPT), ("GET", "text/event-stream"),
                                                ("GET", None), ("GET", "text/html"),
                                                ("DELETE", ACCEPT)])
def test_only_post_is_served(client, path, method, accept):
    """No stream to open, no session to end: 405 with Allow, never a language's redirect."""
    response = client.open(path, method=method, headers={"Accept": accept} if accept else {})
    assert response.status_code == 405 and response.headers["Allow"] == "POST"
    assert "Location" not in response.headers
    assert error_of(response)["code"] == -32600


def test_answers_are_json_for_clients_that_take_it(client):
    modern = McpClient(client)
    response = modern.rpc("tools/list", headers={"Accept": "text/html"})
    assert response.status_code == 406
    response = modern.rpc("tools/list", headers={"Content-Type": "text/plain"})
    assert response.status_code == 415


ALLOWED_ORIGIN = "http://localhost:6274"
CORS_HEADERS = ("Access-Control-Allow-Origin", "Access-Control-Allow-Methods",
                "Access-Control-Allow-Headers", "Access-Control-Expose-Headers",
                "Access-Control-Allow-Credentials")


@pytest.mark.parametrize("app_config", [{"MCP_ALLOWED_ORIGINS": [ALLOWED_ORIGIN]}])
def test_a_browser_origin_must_be_allowed(client):
    """DNS-rebinding protection: a page elsewhere cannot reach the endpoint through a
    visitor's browser; non-browser clients send no Origin at all."""
    modern = McpClient(client)
    assert modern.rpc("tools/list").status_code == 200
    assert modern.rpc("tools/list", headers={"Origin": ALLOWED_ORIGIN}).status_code == 200
    for origin in ("http://evil.example", "http://localhost", "null"):
        refused = modern.rpc("tools/list", headers={"Origin": origin})
        assert refused.status_code == 403 and error_of(refused)["code"] == -32600
        assert not any(header in refused.headers for header in CORS_HEADERS)


def preflight(client, origin: str | None, path: str = "/mcp"):
    headers = {"Access-Control-Request-Method": "POST",
               "Access-Control-Request-Headers": "authorization, content-type, "
                                                 "mcp-protocol-version"}
    if origin is not None:
        headers["Origin"] = origin
    return client.options(path, headers=headers)


@pytest.mark.parametrize("path", ["/mcp", "/en/mcp"])
@pytest.mark.parametrize("app_config", [{"MCP_ALLOWED_ORIGINS": [ALLOWED_ORIGIN]}])
def test_an_allowed_origin_passes_the_preflight(client, path):
    response = preflight(client, ALLOWED_ORIGIN, path)
    assert response.status_code == 204 and response.data == b""
    assert response.headers["Access-Control-Allow-Origin"] == ALLOWED_ORIGIN
    assert "Origin" in response.headers["Vary"]
    assert response.headers["Access-Control-Allow-Methods"] == "POST"
    allowed = {h.strip().lower()
               for h in response.headers["Access-Control-Allow-Headers"].split(",")}
    assert {"authorization", "content-type", "mcp-protocol-version", "mcp-method", "mcp-name",
            "last-event-id"} <= allowed
    assert int(response.headers["Access-Control-Max-Age"]) > 0
    assert "Access-Control-Allow-Credentials" not in response.headers  # cookies are not read


@pytest.mark.parametrize("app_config", [{"MCP_ALLOWED_ORIGINS": [ALLOWED_ORIGIN]}])
def test_another_origin_gets_no_cors(client):
    for origin in ("http://evil.example", "http://localhost:6275", "null"):
        response = preflight(client, origin)
        assert response.status_code == 403
        assert not any(header in response.headers for header in CORS_HEADERS)
    without_origin = preflight(client, None)  # not a browser's preflight: nothing to allow
    assert without_origin.status_code == 204
    assert not any(header in without_origin.headers for header in CORS_HEADERS)


@pytest.mark.parametrize("app_config", [{"MCP_ALLOWED_ORIGINS": [ALLOWED_ORIGIN],
                                         "RATELIMIT_WRITES": "1 per minute"}])
def test_every_answer_to_an_allowed_origin_may_be_read(client, visitor):
    """Results, JSON-RPC errors, notifications and limits: each says the origin may read it
    and which headers it may read beyond the safe ones."""
    browser = {"Origin": ALLOWED_ORIGIN}
    legacy = McpClient(client, "legacy", token=connect_agent(visitor))
    notification = legacy.message("notifications/initialized", notification=True)
    answers = [legacy.rpc("tools/list", headers=browser), legacy.rpc("prompts/list",
                                                                     headers=browser),
               legacy.post(notification, {**legacy.headers("notifications/initialized", {}),
                                          **browser})]
    answers += [legacy.rpc("tools/call", {"name": "save_event",
                                          "arguments": {"event_id": "evt-webmcp-intro"}},
                           headers=browser) for _ in range(2)]
    assert [answer.status_code for answer in answers] == [200, 200, 202, 200, 200]
    assert answers[-1].get_json()["result"]["structuredContent"]["status"] == "rate_limited"
    for answer in answers:
        assert answer.headers["Access-Control-Allow-Origin"] == ALLOWED_ORIGIN
        exposed = {h.strip() for h in answer.headers["Access-Control-Expose-Headers"].split(",")}
        assert {"WWW-Authenticate", "Retry-After"} <= exposed
        assert "Origin" in answer.headers["Vary"]
    plain = legacy.rpc("tools/list")  # no Origin: not a browser, nothing to say
    assert "Access-Control-Allow-Origin" not in plain.headers


def test_a_body_over_the_limit_is_refused_unread(app, client):
    limit = app.config["MAX_CONTENT_LENGTH"]
    modern = McpClient(client)
    params = {"name": "search_events", "arguments": {"query": "x" * limit}}
    response = modern.post(modern.message("tools/call", params),
                           modern.headers("tools/call", params))
    assert response.status_code == 413 and error_of(response)["code"] == -32600


def test_no_cookie_no_csrf_token(client):
    """An agent's call needs no form token, and sets no cookie: the endpoint reads none."""
    response = McpClient(client).rpc("tools/call", {"name": "search_events", "arguments": {}})
    assert response.status_code == 200 and "Set-Cookie" not in response.headers
    assert response.headers["Cache-Control"] == "private, no-store"


def test_a_browsers_cookie_does_not_act_for_its_visitor(client, visitor):
    """Only an access token makes an agent act for a visitor: a request carrying the
    visitor's own cookie (a page elsewhere posting through their browser) acts for nobody."""
    visitor.save()
    response = visitor.client.post("/mcp", data=json.dumps(McpClient(client).message(
        "tools/call", {"name": "save_event", "arguments": {"event_id": "evt-agent-testing"}})),
        headers=McpClient(client).headers("tools/call", {"name": "save_event"}))
    assert response.status_code == 401  # a connection is needed (see test_oauth.py)
    assert "evt-agent-testing" not in visitor.get("/en/saved").get_data(as_text=True)


def test_an_unexpected_failure_says_nothing_of_itself(client):
    import webapp.web.mcp as site

    def broken(tool, arguments):
        raise RuntimeError("/secret/path.py exploded")

    object.__setattr__(site.ENDPOINT, "call_tool", broken)  # the endpoint is frozen
    try:
        response = McpClient(client).rpc("tools/call", {"name": "search_events"})
    finally:
        object.__setattr__(site.ENDPOINT, "call_tool", site.call_tool)
    assert response.status_code == 500 and error_of(response)["code"] == -32603
    assert "secret" not in response.get_data(as_text=True)


def test_past_the_budget_a_tool_says_so_and_the_rest_is_a_429(app, client, visitor):
    agent = McpClient(client, token=connect_agent(visitor))
    other = McpClient(client, token=connect_agent(visitor, "another"))  # another agent
    app.config["RATELIMIT_READS_PER_ADDRESS"] = "3 per minute"  # reads: a budget per agent
    answers = [agent.rpc("tools/call", {"name": "search_events", "arguments": {}})
               for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 200]
    limited = answers[-1].get_json()["result"]
    assert limited["isError"] is True
    assert limited["structuredContent"]["status"] == "rate_limited"
    assert limited["structuredContent"]["retryable"] is True
    assert answers[-1].headers["Retry-After"] == str(
        limited["structuredContent"]["data"]["retryAfterSeconds"])
    listing = agent.rpc("tools/list")
    assert listing.status_code == 429 and error_of(listing)["code"] == 429
    assert error_of(listing)["data"]["retryable"] is True
    assert other.rpc("tools/list").status_code == 200


# -- the tools, from the catalog


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_the_tool_list_is_the_catalog(client, era):
    result = McpClient(client, era).result("tools/list")
    tools = {tool["name"]: tool for tool in result["tools"]}
    assert list(tools) == CATALOG.names
    for tool in CATALOG:
        listed = tools[tool.name]
        assert (listed["title"], listed["description"]) == (str(tool.title),
                                                            str(tool.description))
        assert listed["inputSchema"] == remote_input_schema(tool)
        assert listed["outputSchema"] == envelope_json_schema(tool.output)
        jsonschema.Draft202012Validator.check_schema(listed["inputSchema"])
        jsonschema.Draft202012Validator.check_schema(listed["outputSchema"])
    if era == "modern":
        assert result["resultType"] == "complete" and result["cacheScope"] == "private"


def test_the_annotations_say_how_each_tool_behaves(client):
    tools = {tool["name"]: tool["annotations"]
             for tool in McpClient(client).result("tools/list")["tools"]}
    assert all(hints["openWorldHint"] is False for hints in tools.values())
    read_only = [name for name, hints in tools.items() if hints["readOnlyHint"]]
    assert read_only == [tool.name for tool in CATALOG if tool.hints.read_only]
    assert set(READS) <= set(read_only)  # the reads the design names, at least
    assert tools["save_event"]["idempotentHint"] is True
    for name in ("prepare_event_registration", "prepare_registration_cancellation"):
        assert tools[name]["destructiveHint"] is False and tools[name]["readOnlyHint"] is False
        assert tools[name]["idempotentHint"] is False  # each call holds another review


def test_input_schemas_are_the_forms_with_ids_as_inputs(client):
    """Every field a form shows keeps the schema its form gives (enumerations included); an
    id the page offers as options or carries in its address is a patterned string described
    by where ids come from, and required."""
    tools = {tool["name"]: tool["inputSchema"]
             for tool in McpClient(client).result("tools/list")["tools"]}
    search = tools["search_events"]
    form = expected_input_schema(CATALOG["search_events"])
    assert {k: v for k, v in search["properties"].items() if k != "page"} == {
        k: v for k, v in form["properties"].items() if k != "page"}
    # A form's number is "number" with a step of 1; the call keeps its JSON type: "integer".
    assert form["properties"]["page"]["type"] == "number"
    assert search["properties"]["page"] == {
        **{k: v for k, v in form["properties"]["page"].items() if k != "multipleOf"},
        "type": "integer"}
    assert search["properties"]["location"]["enum"] == ["", "taipei", "taichung", "kaohsiung",
                                                        "online"]
    registration = tools["prepare_event_registration"]
    form = expected_input_schema(CATALOG["prepare_event_registration"], bound=["event_id"])
    assert {k: v for k, v in registration["properties"].items() if k != "event_id"} == \
        form["properties"]
    for name, field in (("get_event_details", "event_id"), ("save_event", "event_id"),
                        ("prepare_event_registration", "event_id"),
                        ("prepare_registration_cancellation", "registration_id")):
        schema = tools[name]["properties"][field]
        assert set(schema) == {"type", "pattern", "description"}, name
        assert field in tools[name]["required"]
        assert "enum" not in schema and "page" not in schema["description"].split("(")[0]
    assert "search_events" in tools["save_event"]["properties"]["event_id"]["description"]
    assert "reg-" in tools["prepare_registration_cancellation"]["properties"][
        "registration_id"]["description"]


def test_no_input_schema_allows_what_the_server_refuses(client):
    """Every tool's schema refuses unknown fields (as its marshmallow schema does): the
    schema says so."""
    for tool in McpClient(client).result("tools/list")["tools"]:
        assert tool["inputSchema"]["additionalProperties"] is False, tool["name"]


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize(("arguments", "field"), [
    ({"page": 2.5}, "page"), ({"page": "2"}, "page"), ({"page": True}, "page"),
    ({"query": "webmcp", "limit": 5}, "limit"), ({"query": 5}, "query")])
def test_what_the_input_schema_refuses_the_server_refuses(client, era, arguments, field):
    """A value the tool's inputSchema does not allow is invalid_input naming its field, and
    what the schema allows is taken: the two never disagree."""
    schema = input_schemas(McpClient(client, era))["search_events"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(arguments, schema)
    envelope = McpClient(client, era).envelope("search_events", arguments)
    assert envelope["status"] == "invalid_input" and list(envelope["errors"]) == [field]


@pytest.mark.parametrize("arguments", [{"page": 2}, {"page": 2.0}, {"query": "webmcp"}, {}])
def test_what_the_input_schema_allows_the_server_takes(client, arguments):
    schema = input_schemas(McpClient(client))["search_events"]
    jsonschema.validate(arguments, schema)
    envelope = McpClient(client).envelope("search_events", arguments)
    assert envelope["status"] in ("success", "no_results"), envelope


def input_schemas(agent: McpClient) -> dict[str, Any]:
    """Each tool's inputSchema as `tools/list` gives it to `agent`."""
    return {tool["name"]: tool["inputSchema"] for tool in agent.result("tools/list")["tools"]}


def test_descriptions_speak_of_no_page(client):
    for tool in McpClient(client).result("tools/list")["tools"]:
        assert "page" not in tool["description"], tool["name"]
        assert tool["description"] in CATALOG[tool["name"]].form_description


@pytest.mark.parametrize(("how", "headers", "path"), [
    ("Accept-Language", {"Accept-Language": "zh-TW,zh;q=0.9"}, "/mcp"),
    ("the address", {"Accept-Language": "en"}, "/zh-TW/mcp")])
def test_the_tool_list_reads_chinese(client, how, headers, path):
    modern = McpClient(client, path=path)
    response = modern.rpc("tools/list", headers=headers)
    tools = response.get_json()["result"]["tools"]
    assert tools[0]["title"] == "搜尋活動" and "即將舉辦" in tools[0]["description"]
    assert tools[0]["name"] == "search_events"  # the contract is the same in every language
    english = McpClient(client).result("tools/list")["tools"]
    assert [t["inputSchema"]["required"] for t in tools] == [
        t["inputSchema"]["required"] for t in english]


def test_each_output_schema_types_its_tools_data(client):
    """The envelope is one shape, and each tool's outputSchema narrows its `data` to what the
    tool declares (or a rate_limited answer's), never any object."""
    tools = {tool["name"]: tool["outputSchema"]
             for tool in McpClient(client).result("tools/list")["tools"]}
    generic = envelope_json_schema()
    for name, schema in tools.items():
        declared = CATALOG[name].output
        assert declared is not None, f"{name} declares no output"
        assert {k: v for k, v in schema["properties"].items() if k != "data"} == {
            k: v for k, v in generic["properties"].items() if k != "data"}
        assert schema["required"] == generic["required"]
        typed, retry = schema["properties"]["data"]["anyOf"]
        assert typed["type"] == "object" and typed["properties"], name
        assert retry["required"] == ["retryAfterSeconds"]
    assert len({json.dumps(schema, sort_keys=True) for schema in tools.values()}) == len(tools)


def test_every_envelope_fits_the_output_schema(client, visitor):
    """A tool's structuredContent always conforms to its outputSchema, failures included."""
    agent = McpClient(client, token=connect_agent(visitor))
    schemas = output_schemas(agent)
    calls: list[tuple[str, dict[str, Any]]] = [
             ("search_events", {"query": "webmcp"}), ("search_events", {"page": 0}),
             ("get_event_details", {"event_id": "evt-nope"}),
             ("save_event", {"event_id": "evt-webmcp-intro"}),
             ("prepare_event_registration", {"event_id": "evt-webmcp-intro",
                                             "attendee_name": "Ann", "email": "a@example.com"}),
             ("prepare_registration_cancellation", {"registration_id": "reg-aaaaaaaaaaaa"}),
             ("get_my_plans", {})]
    for name, arguments in calls:
        jsonschema.validate(agent.envelope(name, arguments), schemas[name])
    anonymous = McpClient(client)
    jsonschema.validate(anonymous.envelope("search_events", {"query": "webmcp"}),
                        schemas["search_events"])
