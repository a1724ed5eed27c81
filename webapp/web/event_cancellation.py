"""Cancelling an event, in the organizer area: the page that asks to confirm it (saying how
many attendees will be mailed), and the step that cancels. Routes of the `organizer`
blueprint, let in by its `admit` like every other: a member whose role may manage events, of
the organization that runs the event."""

from __future__ import annotations

from typing import Any

from flask import Response
from flask import render_template
from flask import url_for

from flask_webmcp.forms import controls_for
from flask_webmcp.negotiation import page_result
from flask_webmcp.negotiation import render_post_result
from flask_webmcp.negotiation import with_vary
from flask_webmcp.routes import human_route
from flask_webmcp.routes import page_route

from ..domain.actions import event_cancellation as actions
from ..domain.organizers import MANAGE_EVENTS
from ..domain.schemas import CancelEventInput
from ..storage.connection import get_db
from .calls import run_tool
from .organizer import _context
from .organizer import bp
from .organizer import needs

CANCEL_PATH = "/organizations/<organization_id>/events/<event_id>/cancel"


def _cancel_context(event_id: str, values: dict[str, Any] | None = None,
                    errors: dict[str, Any] | None = None) -> dict[str, Any]:
    return {**actions.cancellation_preview(get_db(), event_id, _context()),
            "controls": controls_for(CancelEventInput, values, errors,
                                     bound=["organization_id", "event_id"])}


@needs(MANAGE_EVENTS)
@page_route(bp, CANCEL_PATH, actions.CANCEL_EVENT)
def cancel_page(organization_id: str, event_id: str) -> Response:
    """The event, how many attendees cancelling it mails, and the button that cancels it
    (or, once cancelled, that it is)."""
    return with_vary(render_template("organizer/cancel_event.html", result=page_result(),
                                     organization_id=organization_id,
                                     **_cancel_context(event_id)))


@needs(MANAGE_EVENTS)
@human_route(bp, CANCEL_PATH, actions.cancel_event, methods=("POST",))
def cancel(organization_id: str, event_id: str) -> Response:
    """Cancel the event and mail its attendees; back on the page, which says it is done."""
    result, submitted = run_tool(bound={"organization_id": organization_id,
                                        "event_id": event_id})
    return render_post_result(
        result, "organizer/cancel_event.html", "organizer/cancel_event.html",
        redirect_to=url_for(".cancel_page", organization_id=organization_id,
                            event_id=event_id),
        page_context=lambda: _cancel_context(event_id, submitted, result.errors),
        organization_id=organization_id, values=submitted, errors=result.errors or {})
