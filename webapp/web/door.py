"""The door page of an event an organization runs (`…/events/<event_id>/door`): the
organization's people, in any role, check attendees in by the code of their registration mail.

The page works as a plain form: a typed code is posted, and the page that follows says who it
is. With htmx the answer replaces the door's panel in place (the form again, empty and focused,
ready for the next code); with a camera, `static/js/door.js` reads the code from the mail's QR
code and submits the same form. Its routes join the `organizer` blueprint, so the area's
`admit` lets nobody in but the organization's people, and only on its own events.
"""

from __future__ import annotations

from typing import Any

from flask import Response
from flask import g
from flask import render_template
from flask import url_for

from flask_webmcp.forms import controls_for
from flask_webmcp.negotiation import page_result
from flask_webmcp.negotiation import render_post_result
from flask_webmcp.negotiation import with_vary
from flask_webmcp.routes import human_route
from flask_webmcp.routes import page_route

from ..domain.actions import door as actions
from ..domain.organizers import CHECK_IN
from ..domain.schemas import CheckInInput
from ..storage.connection import get_db
from .calls import action_context
from .calls import run_tool
from .organizer import bp
from .organizer import needs
from .security import CAMERA_PERMISSIONS

# The blueprint these routes join (the organizer area's, behind its `admit`).
DOOR_BLUEPRINT = bp
ADDRESS = "/organizations/<organization_id>/events/<event_id>/door"
# The QR reader for browsers without BarcodeDetector: jsQR, vendored from npm at this version
# (static/js, with its licence), loaded by door.js only when needed.
JSQR_SCRIPT = "js/jsqr-1.4.0.js"
# Which of the door's answers keep the code that was typed: those asking to correct it.
KEEPS_WHAT_WAS_TYPED = ("invalid_input", "not_found")


def _door_context(event_id: str, values: dict[str, Any] | None = None,
                  errors: dict[str, Any] | None = None) -> dict[str, Any]:
    return {**actions.door_overview(get_db(), event_id, action_context(g.account.visitor_id)),
            "organization": g.membership.organization, "jsqr_script": JSQR_SCRIPT,
            "controls": controls_for(CheckInInput, values, errors,
                                     bound=["organization_id", "event_id"])}


def _with_camera(answer: Response) -> Response:
    """The door page may use the camera (the site's other pages may not)."""
    answer.headers["Permissions-Policy"] = CAMERA_PERMISSIONS
    return answer


@needs(CHECK_IN)
@page_route(bp, ADDRESS, actions.NAME)
def door(organization_id: str, event_id: str) -> Response:
    """The door: a code field, the answer to the last code, and who is in so far."""
    return _with_camera(with_vary(render_template(
        "organizer/door.html", result=page_result(), **_door_context(event_id))))


@needs(CHECK_IN)
@human_route(bp, ADDRESS, actions.check_in, methods=("POST",))
def check_in(organization_id: str, event_id: str) -> Response:
    """Check in the attendee whose code was typed or scanned; the door again, saying who it
    is (or why not), ready for the next code."""
    result, submitted = run_tool(bound={"organization_id": organization_id,
                                        "event_id": event_id})
    kept = submitted if result.status.word in KEEPS_WHAT_WAS_TYPED else {}
    errors = result.errors or {}
    return _with_camera(render_post_result(
        result, "organizer/door.html", "organizer/_door.html",
        redirect_to=url_for(".door", organization_id=organization_id, event_id=event_id),
        values=kept, errors=errors, **_door_context(event_id, kept, errors)))

