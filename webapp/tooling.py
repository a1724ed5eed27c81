"""What every tool route does the same way: read and validate input, run the action, map
storage failures to a safe `internal_error`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import current_app
from flask import request
from werkzeug.exceptions import HTTPException

from .actions import ActionContext
from .db import get_db
from .db import site_now
from .db import site_timezone
from .storage import Activity
from .storage import Storage
from .storage import StorageError
from .visitors import SessionExpired
from .visitors import cookie_visitor
from .visitors import visitor_for_write
from .webmcp.inputs import InputError
from .webmcp.inputs import load_input
from .webmcp.inputs import read_input
from .webmcp.result import ToolResult
from .webmcp.result import internal_error
from .webmcp.result import invalid_input
from .webmcp.result import session_expired

# The JS bridge marks the requests it sends for an agent-invoked submit with this header.
AGENT_HEADER = "WebMCP-Agent-Invoked"

Action = Callable[[Storage, dict[str, Any], ActionContext], ToolResult]


def request_source() -> str:
    """"agent" when the bridge sent this request for an agent, else "human"."""
    return "agent" if request.headers.get(AGENT_HEADER) == "true" else "human"


def action_context(visitor_id: str | None = None) -> ActionContext:
    """The context of the current request."""
    return ActionContext(
        now=site_now(),
        timezone=site_timezone(),
        source=request_source(),
        visitor_id=visitor_id,
        search_count_cap=current_app.config["SEARCH_COUNT_CAP"],
    )


def acts_as(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Name the action a view performs, so error answers (CSRF, 404, 503) can say it."""

    def mark(view: Callable[..., Any]) -> Callable[..., Any]:
        view.action_name = name  # type: ignore[attr-defined]
        return view

    return mark


def current_action(default: str = "request") -> str:
    """The action of the view handling this request (see `acts_as`).

    For a request routing refused (wrong method), the action of the view at that address.
    """
    endpoint = request.endpoint
    if endpoint is None:
        adapter = current_app.url_map.bind_to_environ(request.environ)
        for method in ("GET", "POST"):
            try:
                endpoint, _ = adapter.match(method=method)
                break
            except HTTPException:
                continue
    view = current_app.view_functions.get(endpoint or "")
    return getattr(view, "action_name", default)


def run_tool(name: str, action: Action, schema: Any, bound: dict[str, Any] | None = None,
             writes: bool = False) -> tuple[ToolResult, dict[str, Any]]:
    """Validate the request's input with `schema`, run `action` on it, log the call.

    A write needs a live visitor (created on the first write). Returns the result and the
    input as submitted (to show it again in the form).
    """
    submitted: dict[str, Any] = {}
    visitor_id = cookie_visitor()
    try:
        submitted = read_input()
        params = load_input(schema, submitted, bound)
    except InputError as error:
        result = invalid_input(name, error.errors)
    else:
        try:
            db = get_db()
            if writes:
                visitor_id = visitor_for_write(db)
            result = action(db, params, action_context(visitor_id))
        except SessionExpired:
            result = session_expired(name)
        except StorageError:
            current_app.logger.exception("%s failed in storage", name)
            result = internal_error(name)
    record(name, result, visitor_id)
    return result, submitted


def record(action: str, result: ToolResult, visitor_id: str | None) -> None:
    """Log a call in the visitor's activity (who, what, outcome, target; no free text).

    Nobody can read an anonymous line, so calls without a visitor are not logged; a failure
    to log never fails the call.
    """
    if visitor_id is None:
        return
    try:
        get_db().record_activity(Activity(at=site_now(), visitor_id=visitor_id,
                                          source=request_source(), action=action,
                                          status=result.status.word, target_id=result.target))
    except StorageError:
        current_app.logger.exception("could not record the activity of %s", action)
