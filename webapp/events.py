"""Finding events: the events list with `search_events`."""

from __future__ import annotations

from flask import Blueprint

from . import actions
from .tooling import acts_as
from .tooling import run_tool
from .tools import CATALOG
from .webmcp.negotiation import render_result

bp = Blueprint("events", __name__)


@bp.get("/events")
@acts_as("search_events")
def search():
    """Search upcoming events: JSON, the results partial (active search) or the whole page."""
    tool = CATALOG["search_events"]
    result, submitted = run_tool(tool.name, actions.search_events, tool.schema)
    return render_result(result, "events/index.html", "events/_results.html",
                         values=submitted, errors=result.errors or {})
