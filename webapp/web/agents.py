"""Connecting an agent that is not in the browser (an MCP client): a page for people only.

A person connects an agent here; the page shows its access token once (never a JSON answer:
the envelope holds no token) with the address of the MCP endpoint, and lists their connected
agents, each with a button that disconnects it. Its forms carry no `toolname`, and a request
marked as an agent's is refused (`calls.run_tool`): an agent cannot connect itself.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint
from flask import Response
from flask import render_template
from flask import url_for

from flask_webmcp.forms import controls_for
from flask_webmcp.negotiation import page_result
from flask_webmcp.negotiation import render_post_result
from flask_webmcp.negotiation import with_vary
from flask_webmcp.routes import human_route
from flask_webmcp.routes import page_route

from ..domain.actions import agents as actions
from ..domain.schemas import ConnectAgentInput
from ..storage.connection import get_db
from .addresses import site_url
from .calls import action_context
from .calls import run_tool
from .mcp import MCP_PATH
from .visitors import live_visitor

bp = Blueprint("agents", __name__)
# Where a person connects an agent that is not in their browser (an MCP client).
CONNECT_PATH = "/agents"


def _page_context(values: dict[str, Any] | None = None,
                  errors: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the page shows besides a result: the form, the visitor's connected agents and the
    address agents are given."""
    db = get_db()
    return {"controls": controls_for(ConnectAgentInput, values, errors),
            "connections": actions.agent_connections(db, action_context(live_visitor(db))),
            "endpoint": site_url() + MCP_PATH}


@page_route(bp, CONNECT_PATH, "connect_agent")
def index() -> Response:
    """The page: a new connection's token (once, after connecting), the form, the list."""
    return with_vary(render_template("agents/index.html", result=page_result(),
                                     **_page_context()))


@human_route(bp, CONNECT_PATH, actions.connect_agent, methods=("POST",))
def connect() -> Response:
    """A person connects an agent: its access token is shown once, on the page."""
    result, submitted = run_tool()
    return render_post_result(result, "agents/index.html", "agents/_result.html",
                              redirect_to=url_for(".index"),
                              page_context=lambda: _page_context(submitted, result.errors))


@human_route(bp, f"{CONNECT_PATH}/<connection_id>/disconnect", actions.disconnect_agent,
            methods=("POST",))
def disconnect(connection_id: str) -> Response:
    """A person disconnects one of their agents: its token stops working at once."""
    result = run_tool(bound={"connection_id": connection_id}).result
    return render_post_result(result, "agents/index.html", "agents/_result.html",
                              redirect_to=url_for(".index"), page_context=_page_context)
