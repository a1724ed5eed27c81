"""A small MCP client over Flask's test client, for tests that look at the wire itself.

It speaks either protocol era: "legacy" (initialize, then MCP-Protocol-Version on each
request) or "modern" (2026-07-28: version and capabilities in `_meta`, method and tool name
mirrored in headers). The real SDK client is used against gunicorn in `test_mcp_sdk.py`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from flask.testing import FlaskClient
from helpers import CSRF_FIELD
from helpers import hidden_value

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
ACCESS_TOKEN = re.compile(r'<input id="access-token" type="text" value="([^"]+)"')


class McpClient:
    """One MCP client of the app: its era, its access token and its language."""

    def __init__(self, client: FlaskClient, era: str = "modern", token: str | None = None,
                 language: str = "en", path: str = "/mcp",
                 capabilities: dict[str, Any] | None = None):
        self.client = client
        self.era = era
        self.token = token
        self.language = language
        self.path = path
        self.capabilities = capabilities if capabilities is not None else {}
        self.next_id = 0

    def headers(self, method: str, params: dict[str, Any]) -> dict[str, str]:
        headers = {"Accept": ACCEPT, "Content-Type": "application/json",
                   "Accept-Language": self.language}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.era == "modern":
            headers.update({"MCP-Protocol-Version": MODERN, "Mcp-Method": method})
            if method == "tools/call":
                headers["Mcp-Name"] = params["name"]
        elif method != "initialize":
            headers["MCP-Protocol-Version"] = LEGACY
        return headers

    def message(self, method: str, params: dict[str, Any] | None = None,
                notification: bool = False) -> dict[str, Any]:
        params = dict(params or {})
        if self.era == "modern":
            params["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                               "io.modelcontextprotocol/clientCapabilities": self.capabilities,
                               **params.get("_meta", {})}
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notification:
            self.next_id += 1
            body["id"] = self.next_id
        return body

    def post(self, body: Any, headers: dict[str, str]):
        return self.client.post(self.path, data=json.dumps(body), headers=headers)

    def rpc(self, method: str, params: dict[str, Any] | None = None,
            headers: dict[str, str] | None = None):
        """Send one request; the raw response."""
        body = self.message(method, params)
        return self.post(body, {**self.headers(method, body["params"]), **(headers or {})})

    def result(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The result of one request that must succeed."""
        response = self.rpc(method, params)
        answer = response.get_json()
        assert response.status_code == 200 and "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    def call(self, tool: str, arguments: dict[str, Any] | None = None, **params: Any
             ) -> dict[str, Any]:
        """A tools/call result (the envelope is its structuredContent)."""
        return self.result("tools/call", {"name": tool, "arguments": arguments or {}, **params})

    def envelope(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """The envelope a tool call answers with, checked against its text copy (the content
        items after it are links to pages)."""
        result = self.call(tool, arguments)
        content, *links = result["content"]
        assert content["type"] == "text"
        assert all(link["type"] == "resource_link" for link in links)
        assert json.loads(content["text"]) == result["structuredContent"]
        envelope: dict[str, Any] = result["structuredContent"]
        return envelope


def output_schemas(agent: McpClient) -> dict[str, dict[str, Any]]:
    """Each tool's outputSchema as `tools/list` gives it, made strict (`strict`)."""
    return {tool["name"]: strict(tool["outputSchema"])
            for tool in agent.result("tools/list")["tools"]}


def strict(schema: Any) -> Any:
    """A copy of a JSON Schema in which every object of listed properties refuses others: the
    published schemas let unknown keys pass (clients must not break when a release adds one),
    but the tests hold each answer to exactly what its tool declares."""
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    copy = {key: strict(value) for key, value in schema.items()}
    if "properties" in copy:
        copy.setdefault("additionalProperties", False)
    return copy


def connect_agent(visitor, label: str = "Ann's laptop", language: str = "en") -> str:
    """A person connects an agent on the page in `language` (as a browser without
    JavaScript would); the access token the page shows them once."""
    page_address = f"/{language}/agents"
    csrf = hidden_value(CSRF_FIELD, visitor.get(page_address).get_data(as_text=True))
    page = visitor.client.post(page_address, data={"csrf_token": csrf, "label": label},
                               follow_redirects=True)
    assert page.status_code == 200
    return hidden_value(ACCESS_TOKEN, page.get_data(as_text=True))
