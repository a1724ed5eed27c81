"""An event's attendees in the organizer area: the list (a page searched with a plain GET form,
paged by links, so it works without JavaScript) and its CSV export, streamed.

Routes of the `organizer` blueprint, admitted by its `admit` like every other: a member whose
role holds the right each declares, in the organization that runs the event of the address.
"""

from __future__ import annotations

from typing import Any
from typing import cast
from urllib.parse import quote

from flask import Response
from flask import abort
from flask import g
from flask import render_template
from flask import request
from flask import stream_with_context
from flask_babel import gettext as _
from marshmallow import ValidationError

from flask_webmcp.forms import controls_for
from flask_webmcp.negotiation import with_vary
from flask_webmcp.result import invalid_input
from flask_webmcp.routes import page_route

from ..domain import attendees
from ..domain.attendees import AttendeeSearchInput
from ..domain.attendees import AttendeeSearchParams
from ..domain.organizers import EXPORT_ATTENDEES
from ..domain.organizers import VIEW_ATTENDEES
from ..storage import Event
from ..storage.connection import get_db
from .calls import action_context
from .organizer import bp
from .organizer import needs

EVENT_ADDRESS = "/organizations/<organization_id>/events/<event_id>"


def _event(event_id: str) -> Event:
    """The event of the address (admit found it run by the organization), or not found."""
    event = get_db().get_event(event_id)
    if event is None:
        abort(404)
    return event


@needs(VIEW_ATTENDEES)
@page_route(bp, f"{EVENT_ADDRESS}/attendees", "view_attendees")
def attendee_list(organization_id: str, event_id: str) -> Response | tuple[str, int]:
    """The event's attendees, searched by name or e-mail and paged, with their counts."""
    event = _event(event_id)
    # An emptied box means "everyone", as if it were not sent.
    typed = {name: value for name, value in request.args.items() if value != ""}
    try:
        params = cast(AttendeeSearchParams, AttendeeSearchInput().load(typed))
    except ValidationError as error:
        errors = cast(dict[str, Any], error.messages)
        result = invalid_input("view_attendees", errors,
                               message=_("Please correct the fields marked below."))
        return render_template("organizer/attendees.html", result=result,
                               membership=g.membership,
                               event=attendees.event_view(event, _context()),
                               controls=controls_for(AttendeeSearchInput, typed, errors)), 422
    shown = attendees.attendee_list(get_db(), g.membership, event, params, _context())
    return with_vary(render_template(
        "organizer/attendees.html", result=None, membership=g.membership,
        controls=controls_for(AttendeeSearchInput, {"query": shown["query"]}), **shown))


@needs(EXPORT_ATTENDEES)
@page_route(bp, f"{EVENT_ADDRESS}/attendees.csv", "export_attendees")
def export(organization_id: str, event_id: str) -> Response:
    """The event's attendees as a CSV file for Excel, streamed a batch at a time."""
    event = _event(event_id)
    lines = attendees.export_attendees(get_db(), g.membership, event, _context())
    response = Response(stream_with_context(line.encode("utf-8") for line in lines),
                        content_type="text/csv; charset=utf-8")
    ascii_name, name = attendees.export_filename(event)
    response.headers.set("Content-Disposition", "attachment", filename=ascii_name,
                         **{"filename*": f"UTF-8''{quote(name, safe='')}"})
    return with_vary(response)


def _context() -> Any:
    return action_context(g.account.visitor_id)
