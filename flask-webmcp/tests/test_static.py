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
