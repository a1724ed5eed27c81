"""What every tool route does the same way: read and validate input, run the action, map
storage failures to a safe `internal_error`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import current_app
from flask import request
from marshmallow import Schema
from werkzeug.exceptions import HTTPException

from .actions import ActionContext
from .db import get_db
from .db import site_now
from .db import site_timezone
from .storage import Activity
from .storage import Storage
from .storage import StorageError
from .tools import CATALOG
from .visitors import SessionExpired
from .visitors import cookie_visitor
from .visitors import visitor_for_write
from .webmcp.inputs import InputError
from .webmcp.inputs import load_input
from .webmcp.inputs import read_input
from .webmcp.result import ToolResult
from .webmcp.result import internal_error
from .webmcp.result import invalid_input
from .webmcp.result import not_found
from .webmcp.result import session_expired

# The JS bridge marks the requests it sends for an agent-invoked submit with this header.
AGENT_HEADER = "WebMCP-Agent-Invoked"

Action = Callable[[Storage, dict[str, Any], ActionContext], ToolResult]


def request_source() -> str:
    """"agent" when the bridge sent this request for an agent, else "human"."""
    return "agent" if request.headers.get(AGENT_HEADER) == "true" else "human"


def action_context(visitor_id: str | None, source: str) -> ActionContext:
    """The context of the current request."""
    return ActionContext(
        now=site_now(),
        timezone=site_timezone(),
        source=source,
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


def run_tool(action: Action, schema: type[Schema] | None = None,
             bound: dict[str, Any] | None = None, writes: bool = False
             ) -> tuple[ToolResult, dict[str, Any]]:
    """Validate the request's input, run `action` on it and log the call.

    The call is named after the view's `acts_as` action, and validated with that tool's
    catalog schema unless `schema` is given (human-only steps have their own). A write needs
    a live visitor (created on the first write). Values `bound` by the page address that do
    not validate mean there is nothing at that address: not_found, like an unknown id.
    Returns the result and the input as submitted (to show it again in the form).
    """
    name = current_action()
    schema = schema or CATALOG[name].schema
    source = request_source()
    submitted: dict[str, Any] = {}
    visitor_id = cookie_visitor()
    try:
        submitted = read_input()
        params = load_input(schema, submitted, bound)
    except InputError as error:
        if bound and set(error.errors) <= set(bound) - set(submitted):
            result = not_found(name, "There is nothing at this address.",
                               next_action="Use ids exactly as the site gave them; never guess.")
        else:
            result = invalid_input(name, error.errors)
    else:
        try:
            db = get_db()
            if writes:
                visitor_id = visitor_for_write(db)
            result = action(db, params, action_context(visitor_id, source))
        except SessionExpired:
            result = session_expired(name)
        except StorageError:
            current_app.logger.exception("%s failed in storage", name)
            result = internal_error(name)
    record(Activity(at=site_now(), visitor_id=visitor_id, source=source, action=name,
                    status=result.status.word, target_id=result.target))
    return result, submitted


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
