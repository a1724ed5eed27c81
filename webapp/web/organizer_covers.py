"""Uploaded pictures in the organizer area. An event's cover picture: its page (the cover as it
is, the form that uploads another, the button that takes it away), the two steps, and the
picture itself for the page (a draft's cover is seen nowhere else). An organization's logo:
the two steps, whose form and button are on the organization's page (the logo is public at
once, at its public address). Routes of the `organizer` blueprint, let in by its `admit` like
every other: a member whose role may manage events, of the organization that runs the event
(or holds it as a draft); for the logo, one whose role may change the organization.
"""

from __future__ import annotations

from typing import Any

from flask import Response
from flask import abort
from flask import render_template
from flask import url_for
from flask_babel import gettext as _

from flask_webmcp.forms import controls_for
from flask_webmcp.negotiation import page_result
from flask_webmcp.negotiation import render_post_result
from flask_webmcp.negotiation import with_vary
from flask_webmcp.result import not_found
from flask_webmcp.routes import human_route
from flask_webmcp.routes import page_route

from ..domain.actions import event_covers as actions
from ..domain.actions import organization_logos as logo_actions
from ..domain.cover_inputs import EventCoverInput
from ..domain.images import MAX_UPLOAD_BYTES
from ..domain.organizers import EDIT_ORGANIZATION
from ..domain.organizers import MANAGE_EVENTS
from ..storage.connection import get_db
from ..storage.covers import COVER_WIDTHS
from .bodies import accepts_body
from .calls import run_tool
from .errors import render_error
from .organizer import back_to_organization
from .organizer import bp
from .organizer import needs
from .organizer import shown_back

COVER_PATH = "/organizations/<organization_id>/events/<event_id>/cover"
LOGO_PATH = "/organizations/<organization_id>/logo"
# What an upload's body may hold: the picture, up to twice the largest taken, so that one
# a little too large is still read and refused with a sentence under the field; past this,
# the body is refused unread (413) as every other too large one.
PICTURE_BODY_LIMIT = 2 * MAX_UPLOAD_BYTES
# The address fields of the form, not its controls.
BOUND = ("organization_id", "event_id")


def _cover_context(event_id: str, values: dict[str, Any] | None = None,
                   errors: dict[str, Any] | None = None) -> dict[str, Any]:
    found = get_db().organizer_event(event_id)
    if found is None:
        abort(404)
    cover = get_db().event_cover(event_id)
    kept = shown_back(values)
    return {"event": found, "cover": actions.cover_view(cover) if cover else None,
            "controls": controls_for(EventCoverInput, kept or (
                {"alt": cover.alt} if cover else None), errors, bound=BOUND)}


@needs(MANAGE_EVENTS)
@page_route(bp, COVER_PATH, actions.SET_EVENT_COVER)
def cover_page(organization_id: str, event_id: str) -> Response:
    """The event's cover picture as its page will show it, the form that puts up another,
    and the button that takes it away."""
    return with_vary(render_template("organizer/event_cover.html", result=page_result(),
                                     organization_id=organization_id,
                                     **_cover_context(event_id)))


def _back_to_cover(result: Any, organization_id: str, event_id: str,
                   submitted: dict[str, Any]) -> Response:
    """Answer a step on the cover with its page: the redirect after a success, the page
    with the field errors (and the alt text typed) after a refusal."""
    return render_post_result(
        result, "organizer/event_cover.html", "organizer/event_cover.html",
        redirect_to=url_for(".cover_page", organization_id=organization_id,
                            event_id=event_id),
        organization_id=organization_id,
        page_context=lambda: _cover_context(event_id, submitted, result.errors),
        values=shown_back(submitted), errors=result.errors or {})


@needs(MANAGE_EVENTS)
@accepts_body(PICTURE_BODY_LIMIT)
@human_route(bp, COVER_PATH, actions.set_event_cover, methods=("POST",))
def set_cover(organization_id: str, event_id: str) -> Response:
    """Put the uploaded picture up as the event's cover; its page then."""
    result, submitted = run_tool(bound={"organization_id": organization_id,
                                        "event_id": event_id})
    return _back_to_cover(result, organization_id, event_id, submitted)


@needs(MANAGE_EVENTS)
@human_route(bp, COVER_PATH + "/remove", actions.remove_event_cover, methods=("POST",))
def remove_cover(organization_id: str, event_id: str) -> Response:
    """Take the event's cover picture away; its page then."""
    result, submitted = run_tool(bound={"organization_id": organization_id,
                                        "event_id": event_id})
    return _back_to_cover(result, organization_id, event_id, submitted)


@needs(MANAGE_EVENTS)
@page_route(bp, COVER_PATH + "/<int:width>.jpg", actions.SET_EVENT_COVER)
def cover_image(organization_id: str, event_id: str, width: int) -> Response:
    """One rendition of the event's cover, draft or published, for the organizer's page (never
    stored by a cache: the area's answers are private)."""
    image = get_db().cover_image(event_id, width) if width in COVER_WIDTHS else None
    if image is None:
        return render_error(not_found(actions.SET_EVENT_COVER,
                                      _("This event has no cover picture.")))
    return Response(image.data, mimetype="image/jpeg")


@needs(EDIT_ORGANIZATION)
@accepts_body(PICTURE_BODY_LIMIT)
@human_route(bp, LOGO_PATH, logo_actions.set_organization_logo, methods=("POST",))
def set_logo(organization_id: str) -> Response:
    """Put the uploaded picture up as the organization's logo; its page then."""
    result, submitted = run_tool(bound={"organization_id": organization_id})
    return back_to_organization(result, organization_id, submitted)


@needs(EDIT_ORGANIZATION)
@human_route(bp, LOGO_PATH + "/remove", logo_actions.remove_organization_logo,
             methods=("POST",))
def remove_logo(organization_id: str) -> Response:
    """Take the organization's logo away; its page then."""
    result = run_tool(bound={"organization_id": organization_id}).result
    return back_to_organization(result, organization_id)
