"""About this site and what AI agents can do on it: the explanation a visitor looks for once,
linked from every page's footer rather than repeated on each."""

from __future__ import annotations

from flask import Blueprint
from flask import Response
from flask import render_template

from flask_webmcp.negotiation import with_vary
from flask_webmcp.routes import page_route

from .addresses import site_url
from .mcp import MCP_PATH

bp = Blueprint("about", __name__)


@page_route(bp, "/about", "about")
def index() -> Response:
    """Who the site is for, how agents use it (WebMCP in the browser, MCP outside it) and
    what always stays with the person."""
    return with_vary(render_template("about.html", endpoint=site_url() + MCP_PATH))
