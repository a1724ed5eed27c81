"""An organization's events in the organizer area: the form that drafts one, the same form
editing it (draft or published), its preview, and publishing it. Routes of the organizer
blueprint (`organizer.bp`), so `admit` lets each request in as its view declares: every one
here needs MANAGE_EVENTS in the organization of its address, and an `event_id` there is one
the organization runs or holds as a draft.
"""

from __future__ import annotations

from typing import Any
from typing import cast

from flask import Response
from flask import abort
from flask import g
from flask import render_template
from flask import request
from flask import url_for
from flask_babel import gettext as _
from marshmallow import ValidationError

from flask_webmcp.forms import Control
from flask_webmcp.forms import controls_for
from flask_webmcp.negotiation import page_result
from flask_webmcp.negotiation import render_post_result
from flask_webmcp.negotiation import with_vary
from flask_webmcp.result import invalid_input
from flask_webmcp.routes import human_route
from flask_webmcp.routes import page_route

from ..domain.actions import organizer_events as actions
from ..domain.actions.event_covers import cover_view
from ..domain.organizers import MANAGE_EVENTS
from ..domain.schemas import EVENT_FORM_SECTIONS
from ..domain.schemas import EditEventInput
from ..domain.schemas import EventFieldsInput
from ..storage import OrganizerEvent
from ..storage.connection import get_db
from .calls import action_context
from .calls import run_tool
from .organizer import bp
from .organizer import needs

# What a new event's form starts with: written in Chinese, priced in New Taiwan dollars, free,
# without a waitlist.
NEW_EVENT = {"language": "zh-Hant-TW", "price_amount": 0, "price_currency": "TWD",
             "waitlist": False}
# The fields of an address (and the version the form carries), not controls of the form.
BOUND = ("organization_id", "event_id", "version")


def _context() -> Any:
    return action_context(g.account.visitor_id)


def _found(event_id: str) -> OrganizerEvent:
    """The event of the address (admit has checked that the organization runs it)."""
    found = get_db().organizer_event(event_id)
    if found is None:
        abort(404)
    return found


def form_sections(controls: list[Control]) -> list[tuple[str, list[Control]]]:
    """The form's controls in its parts (`EVENT_FORM_SECTIONS`), each under its legend: the
    part a control is in is its field's `section`."""
    fields = EventFieldsInput().fields
    return [(str(legend), [control for control in controls
                           if fields[control.name].metadata["section"] == section])
            for section, legend in EVENT_FORM_SECTIONS.items()]


def _form(schema: type[EventFieldsInput], values: dict[str, Any],
          errors: dict[str, Any] | None) -> dict[str, Any]:
    controls = controls_for(schema, values, errors, bound=BOUND)
    return {"controls": controls, "sections": form_sections(controls)}


def _new_context(values: dict[str, Any] | None = None,
                 errors: dict[str, Any] | None = None) -> dict[str, Any]:
    return {**_form(EventFieldsInput, values or NEW_EVENT, errors), "event": None}


@needs(MANAGE_EVENTS)
@page_route(bp, "/organizations/<organization_id>/events/new", "create_event_draft")
def new_event(organization_id: str) -> Response:
    """The form that drafts an event of the organization."""
    return with_vary(render_template("organizer/event_form.html", result=None,
                                     organization_id=organization_id, **_new_context()))


@needs(MANAGE_EVENTS)
@human_route(bp, "/organizations/<organization_id>/events", actions.create_event_draft,
             methods=("POST",))
def create_event(organization_id: str) -> Response:
    """Keep the form's event as a draft, then show its preview."""
    result, submitted = run_tool(bound={"organization_id": organization_id})
    landing = (url_for(".event_preview", organization_id=organization_id,
                       event_id=result.target) if result.target
               else url_for(".new_event", organization_id=organization_id))
    return render_post_result(result, "organizer/event_form.html", "organizer/event_form.html",
                              redirect_to=landing, organization_id=organization_id,
                              page_context=lambda: _new_context(submitted, result.errors),
                              values=submitted, errors=result.errors or {})


def _edit_context(event_id: str, values: dict[str, Any] | None = None,
                  errors: dict[str, Any] | None = None, version: int | None = None
                  ) -> dict[str, Any]:
    found = _found(event_id)
    return {**_form(EditEventInput, values or actions.form_values(found, _context()), errors),
            "event": found, "version": version or found.version}


@needs(MANAGE_EVENTS)
@page_route(bp, "/organizations/<organization_id>/events/<event_id>/edit", "edit_event")
def edit_event_page(organization_id: str, event_id: str) -> Response:
    """The form that edits an event of the organization, filled as it is now."""
    return with_vary(render_template("organizer/event_form.html", result=None,
                                     organization_id=organization_id,
                                     **_edit_context(event_id)))


@needs(MANAGE_EVENTS)
@human_route(bp, "/organizations/<organization_id>/events/<event_id>", actions.edit_event,
             methods=("POST",))
def edit_event(organization_id: str, event_id: str) -> Response:
    """Save the form's event; its preview then. Refused, the form keeps what was typed (and,
    after someone else's save, carries their version and shows what they changed)."""
    result, submitted = run_tool(bound={"organization_id": organization_id,
                                        "event_id": event_id})
    version = (result.data or {}).get("version") if result.status.word == "conflict" else None
    return render_post_result(
        result, "organizer/event_form.html", "organizer/event_form.html",
        redirect_to=url_for(".event_preview", organization_id=organization_id,
                            event_id=event_id),
        organization_id=organization_id,
        page_context=lambda: _edit_context(event_id, submitted, result.errors,
                                           version or submitted.get("version")),
        values=submitted, errors=result.errors or {})


def _preview_context(event_id: str) -> dict[str, Any]:
    cover = get_db().event_cover(event_id)  # a draft's too: the preview shows what will be
    return {"preview": actions.event_preview(_found(event_id), _context()),
            "cover": cover_view(cover) if cover else None}


@needs(MANAGE_EVENTS)
@page_route(bp, "/organizations/<organization_id>/events/<event_id>", "publish_event")
def event_preview(organization_id: str, event_id: str) -> Response:
    """An event of the organization as its page shows it (a draft as it will), with what can
    be done with it: edit it, publish a draft, see a published one's page."""
    return with_vary(render_template("organizer/event_preview.html", result=page_result(),
                                     organization_id=organization_id,
                                     **_preview_context(event_id)))


@needs(MANAGE_EVENTS)
@human_route(bp, "/organizations/<organization_id>/events/<event_id>/publish",
             actions.publish_event, methods=("POST",))
def publish(organization_id: str, event_id: str) -> Response:
    """Publish the draft as previewed; its preview then, which links to its public page."""
    result = run_tool(bound={"organization_id": organization_id, "event_id": event_id}).result
    return render_post_result(
        result, "organizer/event_preview.html", "organizer/event_preview.html",
        redirect_to=url_for(".event_preview", organization_id=organization_id,
                            event_id=event_id),
        organization_id=organization_id,
        page_context=lambda: _preview_context(event_id), values={}, errors={})


@needs(MANAGE_EVENTS)
@page_route(bp, "/organizations/<organization_id>/past-events", "view_organization")
def past_events(organization_id: str) -> Response | tuple[str, int]:
    """Every past event of the organization, a page at a time with links to the others (the
    dashboard lists the latest few): works without JavaScript."""
    organization = g.membership.organization
    try:
        params = cast(actions.PastEventsParams, actions.PastEventsInput().load(request.args))
    except ValidationError as error:
        errors = cast(dict[str, Any], error.messages)
        result = invalid_input("view_organization", errors,
                               message=_("Please correct the fields marked below."))
        return render_template("organizer/past_events.html", result=result,
                               organization=organization, events=[], total=0, page=1,
                               pages=0), 422
    return with_vary(render_template(
        "organizer/past_events.html", result=None, organization=organization,
        **actions.past_events(get_db(), organization_id, params, _context())))
