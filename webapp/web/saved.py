"""The visitor's saved events, each with a human-only "remove" form (not a tool)."""

from __future__ import annotations

from flask import Blueprint
from flask import Response
from flask import render_template
from flask import url_for

from flask_webmcp.negotiation import page_result
from flask_webmcp.negotiation import render_post_result
from flask_webmcp.negotiation import with_vary
from flask_webmcp.routes import human_route
from flask_webmcp.routes import page_route

from ..domain.actions import events as actions
from ..storage.connection import get_db
from .calls import action_context
from .calls import run_tool
from .visitors import live_visitor

bp = Blueprint("saved", __name__)


@page_route(bp, "/saved", "view_saved_events")
def index() -> Response:
    """The saved list, soonest first."""
    db = get_db()
    return with_vary(render_template(
        "saved/index.html", result=page_result(),
        events=actions.saved_events(db, action_context(live_visitor(db)))))


@human_route(bp, "/saved/<event_id>/remove", actions.remove_saved_event, methods=("POST",))
def remove(event_id: str) -> Response:
    """Take an event off the list."""
    result = run_tool(bound={"event_id": event_id}).result
    return render_post_result(result, "error.html", "saved/_removed.html",
                              redirect_to=url_for(".index"))
