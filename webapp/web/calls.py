"""What every tool route does the same way: read and validate the input, find the visitor,
run the route's action (declared with `webmcp.routes.tool_route`), log the call, and map
storage failures to a safe `internal_error`.
"""

from __future__ import annotations

from typing import Any
from typing import NamedTuple

from flask import current_app
from flask import request
from flask_babel import gettext as _

from ..clock import site_now
from ..clock import site_timezone
from ..domain.actions import Action
from ..domain.actions import ActionContext
from ..domain.catalog import CATALOG
from ..storage import Activity
from ..storage import StorageError
from ..storage.connection import get_db
from ..webmcp.inputs import InputError
from ..webmcp.inputs import load_input
from ..webmcp.inputs import read_input
from ..webmcp.result import ToolResult
from ..webmcp.result import internal_error
from ..webmcp.result import invalid_input
from ..webmcp.result import not_found
from ..webmcp.result import people_only
from ..webmcp.result import session_expired
from ..webmcp.routes import current_role
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
    )


class ToolCall(NamedTuple):
    """What a tool call answered, and the input as submitted (to show it again in the form)."""

    result: ToolResult
    submitted: dict[str, Any]


def run_tool(bound: dict[str, Any] | None = None) -> ToolCall:
    """Validate the request's input, run the route's action on it and log the call.

    A POST is a write: it needs a live visitor (created on the first write). Values `bound`
    by the page address that do not validate mean there is nothing at that address:
    not_found, like an unknown id. Returns the result and the input as submitted (to show it
    again in the form).
    """
    role = current_role()
    if role is None or not isinstance(role.action, Action):
        raise LookupError("run_tool() needs a route declared with tool_route()")
    action = role.action
    source = request_source()
    visitor_id = cookie_visitor()
    submitted: dict[str, Any] = {}
    if source == "agent" and action.name not in CATALOG:
        # The bridge marks only submits of tool forms: a human-only step (a confirm form)
        # marked as an agent's is refused, whoever sent it (DESIGN.md §3).
        result = people_only(action.name)
    else:
        result, submitted, visitor_id = _validate_and_run(action, bound, source, visitor_id)
    record(Activity(at=site_now(), visitor_id=visitor_id, source=source, action=action.name,
                    status=result.status.word, target_id=result.target))
    return ToolCall(result, submitted)


def _validate_and_run(action: Action, bound: dict[str, Any] | None, source: str,
                      visitor_id: str | None
                      ) -> tuple[ToolResult, dict[str, Any], str | None]:
    """Read and validate the input, then run the action (a POST for its visitor); returns
    the result, the input as submitted and the visitor."""
    submitted: dict[str, Any] = {}
    try:
        submitted = read_input()
        params = load_input(action.schema, submitted, bound)
    except InputError as error:
        if bound and set(error.errors) <= set(bound) - set(submitted):
            return not_found(action.name, _("There is nothing at this address."),
                             next_action=_("Use ids exactly as the site gave them; never "
                                           "guess.")), submitted, visitor_id
        return invalid_input(action.name, error.errors), submitted, visitor_id
    try:
        db = get_db()
        if request.method == "POST":
            visitor_id = visitor_for_write(db)
        result = action(db, params, action_context(visitor_id, source))
    except SessionExpired:
        result = session_expired(action.name)
    except StorageError:
        current_app.logger.exception("%s failed in storage", action.name)
        result = internal_error(action.name)
    return result, submitted, visitor_id


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
