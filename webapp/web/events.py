"""Finding events: the list with `search_events`, an event's page with `get_event_details`
(also offered over the listed results), and `save_event`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Blueprint
from flask import Response
from flask import abort
from flask import redirect
from flask import request
from flask import url_for
from flask_babel import gettext as _

from flask_webmcp.negotiation import is_partial
from flask_webmcp.negotiation import page_result
from flask_webmcp.negotiation import render_error_result
from flask_webmcp.negotiation import render_post_result
from flask_webmcp.negotiation import render_result
from flask_webmcp.negotiation import wants_json
from flask_webmcp.negotiation import with_vary
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.routes import human_route
from flask_webmcp.routes import tool_route

from ..domain.actions import events as actions
from ..domain.actions import registrations
from ..domain.actions.calendars import event_for_calendar
from ..domain.organization_pages import organizer_of
from ..storage.connection import get_db
from .caching import public
from .calls import action_context
from .calls import run_tool
from .cards import card_font
from .cards import card_png
from .covers import published_cover
from .errors import render_error
from .templating import city_beside_venue
from .templating import price_text
from .templating import span
from .visitors import live_visitor

bp = Blueprint("events", __name__)


def is_saved(event_id: str) -> bool:
    """Whether the visitor of this request (if their session is alive) saved the event."""
    db = get_db()
    return actions.is_saved(db, event_id, action_context(live_visitor(db)))


def held_registration(event_id: str) -> dict[str, Any] | None:
    """The registration for the event the visitor of this request holds, if any: the page
    then says they are registered instead of offering to register."""
    db = get_db()
    return registrations.held_registration(db, event_id, action_context(live_visitor(db)))


def waitlist_standing(event_id: str) -> dict[str, Any] | None:
    """Whether the visitor may join the event's waitlist, and their place in it (None: no
    such event)."""
    db = get_db()
    event = db.get_event(event_id, count_seats=True)
    if event is None:
        return None
    return registrations.waitlist_standing(db, event, action_context(live_visitor(db)))


@public(max_age=60)
@tool_route(bp, "/events", actions.search_events,
            offers=("search_events", "get_event_details"))
def search() -> Response:
    """Search upcoming events: JSON, the results partial (active search) or the whole page.

    A search that failed (invalid input, a fault) leaves the results on screen: its partial
    goes into the search form's error slot.
    """
    result, submitted = run_tool()
    if result.status in (Status.SUCCESS, Status.NO_RESULTS):
        return render_result(result, "events/index.html", "events/_results.html",
                             values=submitted, errors={})
    return render_error_result(result, "events/index.html", "events/_search_failed.html",
                               values=submitted, errors=result.errors or {})


@tool_route(bp, "/events/<event_id>", actions.get_event_details,
            offers=("get_event_details", "save_event"))
def detail(event_id: str) -> Response:
    """One event's page; its JSON-LD is the details (or the result a POST carried here)."""
    details = run_tool(bound={"event_id": event_id}).result
    if details.status is not Status.SUCCESS or details.data is None:
        return render_error(details)
    shown = page_result(details)
    return render_result(shown, "events/detail.html", "events/_details.html",
                         event=details.data["event"], saved=is_saved(event_id),
                         organizer=organizer_of(get_db(), event_id),
                         cover=published_cover(event_id),
                         registration=held_registration(event_id),
                         waitlist=waitlist_standing(event_id),
                         save_result=shown if shown.action in ("save_event", "remove_saved_event")
                         else None)


@public(max_age=3600)
@bp.get("/events/<event_id>/card.png")
def card(event_id: str) -> Response:
    """The event's share card, the picture of its link previews (og:image), in the page's
    language; none without a CJK font to draw it with (see `cards`)."""
    event = event_for_calendar(get_db(), event_id, action_context(None))
    if event is None or card_font() is None:
        abort(404)
    place = ", ".join(part for part in (event["venue"], city_beside_venue(event)) if part)
    png = card_png(event, span(event["startsAt"], event["endsAt"], with_zone=True),
                   f"{place} · {price_text(event)}", _("WebMCP Events"))
    response = Response(png, mimetype="image/png")
    response.add_etag()
    response.make_conditional(request)  # 304 to a previewer that has this card
    return response


@tool_route(bp, "/events/details", actions.get_event_details, offers=("save_event",))
def preview() -> Response:
    """An event chosen among the listed results: the preview pane, or (no JS) its page."""
    result = run_tool().result
    if result.status is not Status.SUCCESS or result.data is None:
        return render_error(result)
    event = result.data["event"]
    if not wants_json() and not is_partial():
        return with_vary(redirect(url_for(".detail", event_id=event["id"]), code=303))
    return render_result(result, "events/detail.html", "events/_preview.html",
                         event=event, saved=is_saved(event["id"]),
                         organizer=organizer_of(get_db(), event["id"]),
                         registration=held_registration(event["id"]),
                         waitlist=waitlist_standing(event["id"]), save_result=None)


@tool_route(bp, "/events/<event_id>/save", actions.save_event, methods=("POST",),
            offers=("save_event",))
def save(event_id: str) -> Response:
    """Save the event for the visitor (idempotent)."""
    return _save_box_answer(event_id, saved=lambda result: result.status is Status.SUCCESS)


@human_route(bp, "/events/<event_id>/unsave", actions.remove_saved_event, methods=("POST",),
            offers=("save_event",))
def unsave(event_id: str) -> Response:
    """A person takes the event off their saved list from its page (human-only: no tool)."""
    return _save_box_answer(event_id, saved=lambda result: result.status not in (
        Status.SUCCESS, Status.NOT_FOUND))


def _save_box_answer(event_id: str, saved: Callable[[ToolResult], bool]) -> Response:
    """Run the route's action on the event and answer with its save box, `saved` or not by
    the result (the session is not looked up again: an expired one stays expired), or without
    JavaScript with the event's page."""
    result = run_tool(bound={"event_id": event_id}).result
    return render_post_result(result, "error.html", "events/_save.html",
                              redirect_to=url_for(".detail", event_id=event_id),
                              event_id=event_id, saved=saved(result), save_result=result)
