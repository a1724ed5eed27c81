"""Finding events: the list with `search_events`, an event's page with `get_event_details`
(also offered over the listed results), and `save_event`.
"""

from __future__ import annotations

from flask import Blueprint
from flask import redirect
from flask import url_for

from .actions import events as actions
from .db import get_db
from .errors import render_error
from .tooling import acts_as
from .tooling import run_tool
from .tools import CATALOG
from .visitors import cookie_visitor
from .webmcp.negotiation import is_partial
from .webmcp.negotiation import page_result
from .webmcp.negotiation import render_post_result
from .webmcp.negotiation import render_result
from .webmcp.negotiation import wants_json
from .webmcp.negotiation import with_vary
from .webmcp.result import Status

bp = Blueprint("events", __name__)


@bp.get("/events")
@acts_as("search_events")
def search():
    """Search upcoming events: JSON, the results partial (active search) or the whole page."""
    tool = CATALOG["search_events"]
    result, submitted = run_tool(tool.name, actions.search_events, tool.schema)
    return render_result(result, "events/index.html", "events/_results.html",
                         values=submitted, errors=result.errors or {})


@bp.get("/events/<event_id>")
@acts_as("get_event_details")
def detail(event_id: str):
    """One event's page; its JSON-LD is the details (or the result a POST carried here)."""
    tool = CATALOG["get_event_details"]
    details, _ = run_tool(tool.name, actions.get_event_details, tool.schema,
                          bound={"event_id": event_id})
    if details.status is not Status.SUCCESS:
        return render_error(details)
    visitor_id = cookie_visitor()
    saved = bool(visitor_id) and get_db().is_saved(visitor_id, event_id)
    shown = page_result(details)
    return render_result(shown, "events/detail.html", "events/_details.html",
                         event=details.data["event"], saved=saved,
                         save_result=shown if shown.action == "save_event" else None)


@bp.get("/events/details")
@acts_as("get_event_details")
def preview():
    """An event chosen among the listed results: the preview pane, or (no JS) its page."""
    tool = CATALOG["get_event_details"]
    result, _ = run_tool(tool.name, actions.get_event_details, tool.schema)
    if result.status is not Status.SUCCESS:
        return render_error(result)
    if not wants_json() and not is_partial():
        return with_vary(redirect(result.data["event"]["url"], code=303))
    visitor_id = cookie_visitor()
    saved = bool(visitor_id) and get_db().is_saved(visitor_id, result.target)
    return render_result(result, "events/detail.html", "events/_preview.html",
                         event=result.data["event"], saved=saved, save_result=None)


@bp.post("/events/<event_id>/save")
@acts_as("save_event")
def save(event_id: str):
    """Save the event for the visitor (idempotent)."""
    tool = CATALOG["save_event"]
    result, _ = run_tool(tool.name, actions.save_event, tool.schema,
                         bound={"event_id": event_id}, writes=True)
    return render_post_result(result, "error.html", "events/_save.html",
                              redirect_to=url_for(".detail", event_id=event_id),
                              event_id=event_id, saved=result.status is Status.SUCCESS,
                              save_result=result)
