"""The MCP endpoint on the wire, on the example shop: the HTTP status each protocol era gives
a JSON-RPC error, a request without a version header, the transport's refusals, CORS for
the allowed origins, and input and output schemas that say what the server takes and gives.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from flask import Response

from flask_webmcp.input_schema import remote_input_schema
from flask_webmcp.inputs import InputError
from flask_webmcp.inputs import load_input

sys.path.insert(0, str(Path(__file__).parent.parent / "examples" / "bookshop"))

from bookshop import CATALOG  # noqa: E402 - found through the path set just above
from bookshop import MCP  # noqa: E402
from bookshop import OrderBookInput  # noqa: E402
from bookshop import create_app  # noqa: E402

ACCEPT = "application/json, text/event-stream"
MODERN = "2026-07-28"
ORIGIN = "http://localhost:6274"


@pytest.fixture
def app():
    app = create_app({"TESTING": True})
    # The same endpoint, allowing one browser origin.
    browsers = dataclasses.replace(MCP, allowed_origins=lambda: (ORIGIN,))

    def browsers_mcp() -> Response:
        return browsers.respond()

    app.extensions["csrf"].exempt(browsers_mcp)  # as the shop's own /mcp is
    app.add_url_rule("/browsers/mcp", view_func=browsers_mcp, methods=MCP.METHODS)
    return app


@pytest.fixture
def client(app):
    return app.test_client()


def post(client, method: str, params: dict[str, Any] | None = None, *, era: str = "legacy",
         version: str | None = "2025-06-18", notification: bool = False,
         headers: dict[str, str] | None = None, path: str = "/mcp"):
    """One JSON-RPC message as a client of `era` sends it (`version`: its header, if any)."""
    params = dict(params or {})
    sent = {"Accept": ACCEPT, **(headers or {})}
    if era == "modern":
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                           "io.modelcontextprotocol/clientCapabilities": {}}
        sent.update({"Mcp-Method": method, "Mcp-Name": str(params.get("name", ""))})
        version = MODERN
    if version is not None:
        sent["MCP-Protocol-Version"] = version
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if not notification:
        body["id"] = 1
    return client.post(path, json=body, headers=sent)


@pytest.mark.parametrize(("era", "method", "params", "code", "status"), [
    ("legacy", "prompts/list", {}, -32601, 200),
    ("legacy", "tools/call", {"name": "no_such_tool"}, -32602, 200),
    ("legacy", "initialize", {"capabilities": {}}, -32602, 200),
    ("modern", "prompts/list", {}, -32601, 404),
    ("modern", "tools/call", {"name": "no_such_tool"}, -32602, 400)])
def test_a_json_rpc_error_has_the_status_of_its_era(client, era, method, params, code, status):
    """The handshake era answers a request's error with 200 like any answer (clients of that
    era read a 4xx as a broken transport); 2026-07-28 gives the statuses it names."""
    answer = post(client, method, params, era=era)
    assert answer.status_code == status
    assert answer.json["error"]["code"] == code and answer.json["id"] == 1


@pytest.mark.parametrize("version", [None, "2025-03-26"])
def test_a_request_without_a_version_header_is_served_as_2025_03_26(client, version):
    found = post(client, "tools/call", {"name": "find_books", "arguments": {}}, version=version)
    assert found.status_code == 200 and found.json["result"]["isError"] is False
    assert post(client, "initialize", {"protocolVersion": "2025-03-26", "capabilities": {}},
                version=None).json["result"]["protocolVersion"] == "2025-03-26"


def test_an_unsupported_version_header_is_refused(client):
    refused = post(client, "tools/list", version="2024-11-05")
    assert refused.status_code == 400 and "2025-03-26" in refused.json["error"]["data"][
        "supported"]


def test_a_notification_is_accepted_with_nothing(client):
    accepted = post(client, "notifications/initialized", notification=True)
    assert accepted.status_code == 202 and accepted.data == b""
    assert "Content-Type" not in accepted.headers


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_only_post_is_served(client, method):
    answer = client.open("/mcp", method=method, headers={"Accept": "text/event-stream"})
    assert answer.status_code == 405 and answer.headers["Allow"] == "POST"
    assert answer.json["error"]["code"] == -32600


@pytest.mark.parametrize(("body", "code"), [(b"{nope", -32700), (b"[]", -32600),
                                            (b'{"jsonrpc": "2.0", "id": 1, "result": {}}',
                                             -32600)])
def test_what_is_no_request_is_refused_by_the_transport(client, body, code):
    answer = client.post("/mcp", data=body, headers={
        "Accept": ACCEPT, "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-06-18"})
    assert answer.status_code == 400 and answer.json["error"]["code"] == code


def test_an_allowed_origin_gets_cors(client):
    preflight = client.options("/browsers/mcp", headers={
        "Origin": ORIGIN, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "mcp-protocol-version, authorization"})
    assert preflight.status_code == 204
    assert preflight.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert preflight.headers["Access-Control-Allow-Methods"] == "POST"
    assert "Mcp-Name" in preflight.headers["Access-Control-Allow-Headers"]
    answer = post(client, "tools/list", headers={"Origin": ORIGIN}, path="/browsers/mcp")
    assert answer.status_code == 200
    assert answer.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert "WWW-Authenticate" in answer.headers["Access-Control-Expose-Headers"]
    assert "Origin" in answer.headers["Vary"]


@pytest.mark.parametrize("path", ["/mcp", "/browsers/mcp"])
def test_another_origin_gets_no_cors_and_is_refused(client, path):
    preflight = client.options(path, headers={"Origin": "http://evil.example",
                                              "Access-Control-Request-Method": "POST"})
    answer = post(client, "tools/list", headers={"Origin": "http://evil.example"}, path=path)
    for refused in (preflight, answer):
        assert refused.status_code == 403
        assert "Access-Control-Allow-Origin" not in refused.headers


def test_the_input_schema_says_what_the_server_takes(app):
    order = remote_input_schema(CATALOG["order_book"])
    assert order["properties"]["quantity"] == {"type": "integer", "minimum": 1, "maximum": 5,
                                               "description": "How many copies"}
    assert order["additionalProperties"] is False
    with app.test_request_context():
        for value in ("2", 2.5, True):
            with pytest.raises(InputError) as refused:
                load_input(OrderBookInput, {"book_id": "x", "quantity": value}, typed=True)
            assert list(refused.value.errors) == ["quantity"]
        for value in (2, 2.0):
            assert load_input(OrderBookInput, {"book_id": "x", "quantity": value},
                              typed=True)["quantity"] == 2
        # A form sends text: "2" is a number there.
        assert load_input(OrderBookInput, {"book_id": "x", "quantity": "2"})["quantity"] == 2


def test_a_typed_call_is_refused_naming_the_field(client):
    answer = post(client, "tools/call", {"name": "find_books", "arguments": {"query": 5}})
    envelope = answer.json["result"]["structuredContent"]
    assert envelope["status"] == "invalid_input" and list(envelope["errors"]) == ["query"]


def test_the_output_schema_types_the_data_a_tool_declares(client):
    tools = {tool["name"]: tool["outputSchema"]
             for tool in post(client, "tools/list").json["result"]["tools"]}
    typed, retry = tools["find_books"]["properties"]["data"]["anyOf"]
    assert typed["required"] == ["books", "count"]
    assert typed["properties"]["books"]["items"]["properties"]["title"] == {"type": "string"}
    assert retry["properties"] == {"retryAfterSeconds": {
        "type": "integer", "description": "Seconds to wait before trying again"}}
    # A tool that declares no output: its data is any object.
    assert tools["order_book"]["properties"]["data"]["type"] == "object"
    assert "anyOf" not in tools["order_book"]["properties"]["data"]
    assert json.dumps(tools["find_books"]) != json.dumps(tools["order_book"])
