"""`/mcp`: the catalog's five tools for agents outside a WebMCP browser (MCP clients).

The extension speaks the protocol (`flask_webmcp.mcp`); this module says what a call does on
this site: it runs the same action as the tool's route, through the same pipeline
(`calls.CALLS`: the same schema, the same rules, the activity log, with source "mcp"), acting
for the visitor whose agent it is.
A person connects an agent on the human-only page `agents.index`, which gives it an access
token the agent sends as `Authorization: Bearer …`; reading needs none. Cookies are never
read here, so no other site can act for a visitor through their browser (the endpoint needs
no CSRF token), and nothing reachable here can finish a registration or a cancellation: the
prepare tools answer `confirmation_required` with the visitor's review page, where only the
person confirms, in their own browser.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from flask import Blueprint
from flask import Response
from flask import current_app
from flask import g
from flask import request
from flask_babel import gettext as _
from flask_limiter import RateLimitExceeded
from werkzeug.exceptions import HTTPException

from flask_webmcp.catalog import Tool
from flask_webmcp.inputs import input_fields
from flask_webmcp.mcp import INTERNAL_ERROR
from flask_webmcp.mcp import RATE_LIMITED
from flask_webmcp.mcp import MCPEndpoint
from flask_webmcp.mcp import ProtocolError
from flask_webmcp.mcp import ToolOutcome
from flask_webmcp.mcp import requested_tool_call
from flask_webmcp.result import Status
from flask_webmcp.result import internal_error
from flask_webmcp.result import not_connected
from flask_webmcp.result import rate_limited
from flask_webmcp.routes import tool_actions

from ..clock import site_now
from ..domain.actions.agents import connection_for
from ..domain.catalog import CATALOG
from ..storage import AgentConnection
from ..storage import StorageError
from ..storage.connection import get_db
from .addresses import external_url_for
from .calls import CALLS
from .errors import window
from .visitors import SessionExpired
from .visitors import keep_alive

bp = Blueprint("mcp", __name__)

MCP_PATH = "/mcp"
SOURCE = "mcp"


def bearer_token() -> str | None:
    """The access token the request carries (`Authorization: Bearer …`), if any."""
    auth = request.authorization
    if auth is None or auth.type != "bearer" or not auth.token:
        return None
    return auth.token


def is_mcp_request() -> bool:
    """Whether the current request is for the MCP endpoint."""
    return request.blueprint == bp.name


def connect_url() -> str:
    """Where a person connects an agent (in the language their browser chooses)."""
    return external_url_for("agents.index", lang_code=None)


def call_tool(tool: Tool, arguments: dict[str, Any]) -> ToolOutcome:
    """Run `tool` for the agent of this request: as its route would, for the visitor who
    connected the agent (writes need one; reads need nobody)."""
    action = tool_actions(current_app)[tool.name]
    writes = not tool.hints.read_only
    try:
        connection = _connection()
    except StorageError:
        current_app.logger.exception("could not read the agent connection")
        return ToolOutcome.of(internal_error(tool.name))
    owner = connection.visitor_id if connection else None

    def visitor() -> str | None:
        if owner is None:
            if writes:
                raise SessionExpired
            return None
        return keep_alive(get_db(), owner) if writes else owner

    result = CALLS.call(action, input_fields(arguments), source=SOURCE, acting_for=visitor,
                        asker=owner, gone=lambda name: not_connected(name, connect_url())
                        ).result
    if result.status is Status.CONFIRMATION_REQUIRED and result.data:
        return ToolOutcome.of(result, review_url=result.data["reviewUrl"],
                              review_message=_("Review it on this site, in the browser you "
                                               "use it with, and confirm it yourself if you "
                                               "want it: nothing happens until you do."))
    return ToolOutcome.of(result)


def _connection() -> AgentConnection | None:
    """The live connection whose token the request carries (looked up once per request);
    raises StorageError when the storage cannot say."""
    if "agent_connection" not in g:
        token = bearer_token()
        g.agent_connection = connection_for(get_db(), token, site_now()) if token else None
    connection: AgentConnection | None = g.agent_connection
    return connection


def live_connection() -> AgentConnection | None:
    """The live connection whose token the request carries; None for no token, a token that
    is unknown, revoked or expired, or a storage that cannot say."""
    try:
        return _connection()
    except StorageError:
        return None


def principal() -> str:
    """Whom a request acts for, to bind a call's retry to it: the agent's connection."""
    try:
        connection = _connection()
    except StorageError:
        return "unavailable"
    return connection.id if connection else "nobody"


def instructions() -> str:
    """What a client tells its model about this server, in the request's language."""
    return _("Upcoming web and AI community events in Taiwan and online. Reading needs "
             "nothing; saving and preparing act for the visitor who connected you (their "
             "access token, sent as “Authorization: Bearer …”). Registrations and "
             "cancellations are only prepared here: the user confirms each one on this site, "
             "in their own browser.")


ENDPOINT = MCPEndpoint(
    catalog=CATALOG,
    name="webmcp-events",
    version=metadata.version("webmcp-events"),
    call_tool=call_tool,
    principal=principal,
    instructions=instructions,
    allowed_origins=lambda: tuple(current_app.config["MCP_ALLOWED_ORIGINS"]),
    clock=site_now,
)


@bp.route(MCP_PATH, methods=["GET", "POST", "DELETE"])
def endpoint() -> Response:
    """The MCP endpoint (Streamable HTTP, JSON answers)."""
    return ENDPOINT.respond()


@bp.errorhandler(RateLimitExceeded)
def over_budget(error: RateLimitExceeded) -> Response:
    """A call over a rate limit: for a tool, the envelope a route answers (a tool's failure,
    retryable); for anything else a JSON-RPC error. Flask-Limiter adds Retry-After."""
    call = requested_tool_call()
    tool = call.name if call is not None and call.name in CATALOG else None
    result = rate_limited(tool or "mcp", str(error.description), window(error.limit.limit))
    if tool is not None:
        return ENDPOINT.tool_answer(ToolOutcome.of(result))
    return ENDPOINT.error_answer(ProtocolError(RATE_LIMITED, result.message, 429,
                                               data={"retryable": True,
                                                     "nextAction": result.next_action}))


@bp.errorhandler(HTTPException)
def refused(error: HTTPException) -> Response:
    """Any other HTTP error before the endpoint ran (a body over the limit, say)."""
    return ENDPOINT.http_error_answer(error)


@bp.errorhandler(Exception)
def failed(error: Exception) -> Response:
    """Anything unexpected: logged, answered as a JSON-RPC error that says nothing of it."""
    current_app.logger.exception("the MCP endpoint failed")
    return ENDPOINT.error_answer(ProtocolError(INTERNAL_ERROR, "The service failed; nothing "
                                               "was changed. Try again later.", 500))
