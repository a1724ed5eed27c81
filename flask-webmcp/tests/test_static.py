"""The bridge ships with the extension and any app serves it, with no static file of its own."""

from __future__ import annotations

from flask import Flask
from flask import url_for

from flask_webmcp import Catalog
from flask_webmcp import WebMCP


def test_an_app_serves_the_bridge_from_the_extension():
    app = Flask(__name__)
    WebMCP(app, Catalog([]))
    with app.test_request_context():
        address = url_for("webmcp.static", filename="webmcp-bridge.js")
    assert address == "/static/webmcp/webmcp-bridge.js"
    with app.test_client().get(address) as answer:
        assert answer.status_code == 200 and "javascript" in answer.content_type
        script = answer.get_data(as_text=True)
        assert "respondWith" in script and "agentInvoked" in script


def test_the_bridge_asks_to_be_compiled_as_it_loads():
    """V8 reads the explicit compile hint only on a script's first line: anywhere else it is a
    comment, and the agent's first call compiles the bridge on the main thread."""
    app = Flask(__name__)
    WebMCP(app, Catalog([]))
    with app.test_client().get("/static/webmcp/webmcp-bridge.js") as answer:
        first_line = answer.get_data(as_text=True).splitlines()[0]
    assert first_line == "//# allFunctionsCalledOnLoad"
