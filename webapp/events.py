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
from .visitors import live_visitor
from .webmcp.negotiation import is_partial
from .webmcp.negotiation import page_result
from .webmcp.negotiation import render_post_result
from .webmcp.negotiation import render_result
from .webmcp.negotiation import wants_json
from .webmcp.negotiation import with_vary
from .webmcp.result import Status

bp = Blueprint("events", __name__)


def is_saved(event_id: str) -> bool:
    """Whether the visitor of this request (if their session is alive) saved the event."""
    db = get_db()
    visitor_id = live_visitor(db)
    return visitor_id is not None and db.is_saved(visitor_id, event_id)


@bp.get("/events")
@acts_as("search_events")
def search():
    """Search upcoming events: JSON, the results partial (active search) or the whole page."""
    result, submitted = run_tool(actions.search_events)
    return render_result(result, "events/index.html", "events/_results.html",
                         values=submitted, errors=result.errors or {})


@bp.get("/events/<event_id>")
@acts_as("get_event_details")
def detail(event_id: str):
    """One event's page; its JSON-LD is the details (or the result a POST carried here)."""
    details, _ = run_tool(actions.get_event_details, bound={"event_id": event_id})
    if details.status is not Status.SUCCESS:
        return render_error(details)
    shown = page_result(details)
    return render_result(shown, "events/detail.html", "events/_details.html",
                         event=details.data["event"], saved=is_saved(event_id),
                         save_result=shown if shown.action == "save_event" else None)


@bp.get("/events/details")
@acts_as("get_event_details")
def preview():
    """An event chosen among the listed results: the preview pane, or (no JS) its page."""
    result, _ = run_tool(actions.get_event_details)
    if result.status is not Status.SUCCESS:
        return render_error(result)
    if not wants_json() and not is_partial():
        return with_vary(redirect(result.data["event"]["url"], code=303))
    return render_result(result, "events/detail.html", "events/_preview.html",
                         event=result.data["event"], saved=is_saved(result.target),
                         save_result=None)


@bp.post("/events/<event_id>/save")
@acts_as("save_event")
def save(event_id: str):
    """Save the event for the visitor (idempotent)."""
    result, _ = run_tool(actions.save_event, bound={"event_id": event_id}, writes=True)
    return render_post_result(result, "error.html", "events/_save.html",
                              redirect_to=url_for(".detail", event_id=event_id),
                              event_id=event_id, saved=result.status is Status.SUCCESS,
                              save_result=result)
