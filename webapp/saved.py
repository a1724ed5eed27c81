"""The visitor's saved events, each with a human-only "remove" form (not a tool)."""

from __future__ import annotations

from flask import Blueprint
from flask import render_template
from flask import url_for

from .actions import events as actions
from .db import get_db
from .db import site_timezone
from .projections import event_summary
from .schemas import SaveEventInput
from .tooling import acts_as
from .tooling import run_tool
from .visitors import live_visitor
from .webmcp.negotiation import page_result
from .webmcp.negotiation import render_post_result
from .webmcp.negotiation import with_vary

bp = Blueprint("saved", __name__, url_prefix="/saved")


@bp.get("")
@acts_as("view_saved_events")
def index():
    """The saved list, soonest first."""
    db = get_db()
    visitor_id = live_visitor(db)
    events = db.saved_events(visitor_id) if visitor_id else []
    return with_vary(render_template(
        "saved/index.html", result=page_result(),
        events=[event_summary(event, site_timezone()) for event in events]))


@bp.post("/<event_id>/remove")
@acts_as("remove_saved_event")
def remove(event_id: str):
    """Take an event off the list."""
    result, _ = run_tool(actions.remove_saved_event, SaveEventInput,
                         bound={"event_id": event_id}, writes=True)
    return render_post_result(result, "error.html", "saved/_removed.html",
                              redirect_to=url_for(".index"))
