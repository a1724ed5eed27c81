"""What every tool call does the same way, from a route or over MCP: validate the input with
the action's schema, find the visitor it acts for, run the action (a route declares it with
`webmcp.routes.tool_route`), log the call, and map storage failures to a safe
`internal_error`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any
from typing import NamedTuple

from flask import current_app
from flask import request
from flask_babel import gettext as _

from flask_webmcp.inputs import InputError
from flask_webmcp.inputs import load_input
from flask_webmcp.inputs import read_input
from flask_webmcp.result import ToolResult
from flask_webmcp.result import internal_error
from flask_webmcp.result import invalid_input
from flask_webmcp.result import not_found
from flask_webmcp.result import people_only
from flask_webmcp.result import session_expired
from flask_webmcp.routes import current_role

from ..clock import site_now
from ..clock import site_timezone
from ..domain.actions import Action
from ..domain.actions import ActionContext
from ..domain.tokens import ReviewTokens
from ..storage import Activity
from ..storage import Storage
from ..storage import StorageError
from ..storage.connection import get_db
from .addresses import site_url
from .visitors import SessionExpired
from .visitors import cookie_visitor
from .visitors import visitor_for_write

# The JS bridge marks the requests it sends for an agent-invoked submit with this header.
AGENT_HEADER = "WebMCP-Agent-Invoked"


def request_source() -> str:
    """"agent" when the bridge sent this request for an agent, else "human"."""
    return "agent" if request.headers.get(AGENT_HEADER) == "true" else "human"


def action_context(visitor_id: str | None, source: str = "human") -> ActionContext:
    """The context of the current request."""
    return ActionContext(
        now=site_now(),
        timezone=site_timezone(),
        source=source,
        visitor_id=visitor_id,
        site_address=site_url,
        connection_lifetime=timedelta(
            seconds=int(current_app.config["AGENT_CONNECTION_TTL"])),
        review_tokens=ReviewTokens(_secret()),
    )


def _secret() -> bytes:
    """The app's secret key as bytes (Flask takes it as text or bytes)."""
    key = current_app.secret_key
    return key if isinstance(key, bytes) else str(key).encode()


class ToolRun(NamedTuple):
    """What a tool call answered, and the input as submitted (to show it again in the form)."""

    result: ToolResult
    submitted: dict[str, Any]


def run_tool(bound: dict[str, Any] | None = None) -> ToolRun:
    """Validate the request's input, run the route's action on it and log the call.

    A POST is a write: it needs a live visitor (created on the first write). Values `bound`
    by the page address that do not validate mean there is nothing at that address:
    not_found, like an unknown id. Returns the result and the input as submitted (to show it
    again in the form).
    """
    role = current_role()
    if role is None or not isinstance(role.action, Action):
        raise LookupError("run_tool() needs a route declared with tool_route() or human_route()")
    action = role.action
    source = request_source()
    submitted: dict[str, Any] = {}
    visitor_id = cookie_visitor()
    if source == "agent" and role.human_only:
        # The bridge marks only submits of tool forms: a human-only step (a confirm form)
        # marked as an agent's is refused, whoever sent it (docs/design.md §3).
        result = people_only(action.name)
    else:
        try:
            submitted = read_input()
        except InputError as error:
            result = invalid_input(action.name, error.errors)
        else:
            writes = request.method == "POST"
            result, found = perform(action, submitted, source,
                                    visitor_for_write if writes else lambda db: visitor_id,
                                    bound)
            visitor_id = found or visitor_id
    record(Activity(at=site_now(), visitor_id=visitor_id, source=source, action=action.name,
                    status=result.status.word, target_id=result.target))
    return ToolRun(result, submitted)


def perform(action: Action, submitted: dict[str, Any], source: str,
            visitor: Callable[[Storage], str | None], bound: dict[str, Any] | None = None,
            expired: Callable[[str], ToolResult] = session_expired
            ) -> tuple[ToolResult, str | None]:
    """Validate `submitted` (and the values `bound` by a page address) with the action's
    schema, find whom it acts for with `visitor` (which raises SessionExpired when they are
    gone: answered with `expired`), and run it. Returns the result and the visitor, if one
    was found.
    """
    try:
        params = load_input(action.schema, submitted, bound)
    except InputError as error:
        if bound and set(error.errors) <= set(bound) - set(submitted):
            return not_found(action.name, _("There is nothing at this address."),
                             next_action=_("Use ids exactly as the site gave them; never "
                                           "guess.")), None
        return invalid_input(action.name, error.errors), None
    visitor_id = None
    try:
        db = get_db()
        visitor_id = visitor(db)
        result = action(db, params, action_context(visitor_id, source))
    except SessionExpired:
        result = expired(action.name)
    except StorageError:
        current_app.logger.exception("%s failed in storage", action.name)
        result = internal_error(action.name)
    return result, visitor_id


def record(entry: Activity) -> None:
    """Log a call in the visitor's activity (who, what, outcome, target; no free text).

    Nobody can read an anonymous line, so calls without a visitor are not logged; a failure
    to log never fails the call.
    """
    if entry.visitor_id is None:
        return
    try:
        get_db().record_activity(entry)
    except StorageError:
        current_app.logger.exception("could not record the activity of %s", entry.action)
