"""`/mcp`: the catalog's six tools for agents outside a WebMCP browser (MCP clients).

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
from flask_webmcp.result import ToolResult
from flask_webmcp.result import internal_error
from flask_webmcp.result import not_connected
from flask_webmcp.result import rate_limited
from flask_webmcp.result import resource_link
from flask_webmcp.routes import tool_actions

from ..clock import site_now
from ..domain.catalog import CATALOG
from ..storage import AgentConnection
from ..storage import StorageError
from ..storage.connection import get_db
from .addresses import external_url_for
from .calls import CALLS
from .calls import MCP_SOURCE
from .errors import retry_after
from .errors import window
from .languages import DEFAULT
from .languages import accepted_language
from .oauth import InvalidToken
from .oauth import bearer_connection
from .oauth import challenge
from .visitors import SessionExpired
from .visitors import keep_alive
from .visitors import still_alive

bp = Blueprint("mcp", __name__)

MCP_PATH = "/mcp"
SOURCE = MCP_SOURCE
# JSON-RPC's "invalid request": the body of a 401 (the status and its header say the rest).
INVALID_REQUEST_CODE = -32600


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
    connected the agent (writes and personal reads need one; other reads need nobody)."""
    action = tool_actions(current_app)[tool.name]
    writes = not tool.hints.read_only
    try:
        connection = _connection()
    except StorageError:
        current_app.logger.exception("could not read the agent connection")
        return ToolOutcome.of(internal_error(tool.name))
    owner = connection.visitor_id if connection else None
    if owner is None and tool.needs_principal:
        # Told with a 401, a client that can sign its person in (OAuth) does so and retries.
        raise MustAuthenticate

    def visitor() -> str | None:
        if owner is None:
            if tool.needs_principal:
                raise SessionExpired
            return None
        if writes:
            return keep_alive(get_db(), owner)
        return still_alive(get_db(), owner) if tool.personal else owner

    result = CALLS.call(action, input_fields(arguments), source=SOURCE, typed=True,
                        acting_for=visitor,
                        asker=owner, gone=lambda name: not_connected(name, connect_url())
                        ).result
    if result.status is Status.CONFIRMATION_REQUIRED and result.data:
        return ToolOutcome.of(result, review_url=result.data["reviewUrl"],
                              review_message=_("Review it on this site, in the browser you "
                                               "use it with, and confirm it yourself if you "
                                               "want it: nothing happens until you do."))
    return ToolOutcome.of(result, links=event_links(result))


# The tools whose results list events: each event's page goes beside the envelope as a link.
LISTS_EVENTS = ("search_events", "get_event_details")


def event_links(result: ToolResult) -> tuple[dict[str, Any], ...]:
    """The pages of the events a search or an event's details lists, as `resource_link`
    content items (their addresses are full: `AgentPages`)."""
    if result.action not in LISTS_EVENTS or not result.data:
        return ()
    events = result.data.get("events") or [result.data.get("event")]
    return tuple(resource_link(event["url"], event["id"], event["title"])
                 for event in events if event)


@bp.url_value_preprocessor
def choose_language(endpoint: str | None, values: dict[str, Any] | None) -> None:
    """At the neutral address, answer in the language the request asks for (`Accept-Language`
    naming one), else the one of the page that connected the agent, else the site's default;
    at `/en/mcp` or `/zh-TW/mcp`, the prefix's. Chosen before the limits run, so that a
    refusal speaks it too. The client's cookies are never read here."""
    if not g.get("language_in_url"):
        connection = live_connection()
        g.language = accepted_language() or (connection.language if connection else DEFAULT)


def _connection() -> AgentConnection | None:
    """The live connection whose token the request carries (looked up once per request);
    raises StorageError when the storage cannot say."""
    if "agent_connection" not in g:
        try:
            g.agent_connection, g.token_refused = bearer_connection(), False
        except InvalidToken:
            g.agent_connection, g.token_refused = None, True
    connection: AgentConnection | None = g.agent_connection
    return connection


class MustAuthenticate(Exception):
    """The request needs a connection it does not have: answered 401 with the challenge
    that tells a client where to get one (`oauth.challenge`)."""


@bp.before_request
def refuse_bogus_tokens() -> None:
    """A bearer token that stands for nothing (unknown, expired, revoked, for another
    resource) is refused on every MCP request, so the client learns it at once, not at its
    first write. No token at all is fine: reading needs none."""
    try:
        _connection()
    except StorageError:
        return  # the call answers internal_error itself
    if g.token_refused:
        raise MustAuthenticate


@bp.errorhandler(MustAuthenticate)
def must_authenticate(error: MustAuthenticate) -> Response:
    """401 with `WWW-Authenticate: Bearer resource_metadata=…` (and `error="invalid_token"`
    when a token was sent): MCP clients start their OAuth flow from it (RFC 9728 §5.1)."""
    refused = bool(g.get("token_refused"))
    # Said to whoever reads the error (a client without OAuth shows it to its person).
    message = (_("The access token is not valid (unknown, expired or revoked): sign in again, "
                 "or have the person connect this agent at %(url)s.", url=connect_url())
               if refused else
               _("This needs a connected agent: sign in (OAuth), or have the person connect "
                 "this agent at %(url)s and send its access token (“Authorization: Bearer "
                 "…”).", url=connect_url()))
    answer = ENDPOINT.error_answer(ProtocolError(INVALID_REQUEST_CODE, message, 401))
    answer.status_code = 401
    answer.headers["WWW-Authenticate"] = challenge(invalid=refused)
    return answer


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
    return _("Upcoming web and AI community events in Taiwan and online. Reading events "
             "needs nothing; saving, preparing and reading the user's own plans "
             "(get_my_plans) act for the visitor who connected you (their "
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


@bp.route(MCP_PATH, methods=ENDPOINT.METHODS)
def endpoint() -> Response:
    """The MCP endpoint (Streamable HTTP, JSON answers)."""
    return ENDPOINT.respond()


@bp.errorhandler(RateLimitExceeded)
def over_budget(error: RateLimitExceeded) -> Response:
    """A call over a rate limit: for a tool, the envelope a route answers (a tool's failure,
    retryable); for anything else a JSON-RPC error. Flask-Limiter adds Retry-After."""
    call = requested_tool_call()
    tool = call.name if call is not None and call.name in CATALOG else None
    seconds = retry_after(error)
    result = rate_limited(tool or "mcp", str(error.description), window(error.limit.limit),
                          seconds)
    if tool is not None:
        return ENDPOINT.tool_answer(ToolOutcome.of(result))
    return ENDPOINT.error_answer(ProtocolError(RATE_LIMITED, result.message, 429,
                                               data={"retryable": True,
                                                     "retryAfterSeconds": seconds,
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
