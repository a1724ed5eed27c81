"""Registering and cancelling: the agent-usable prepare forms and the human-only confirms."""

from __future__ import annotations

from typing import Any

from flask import Blueprint
from flask import abort
from flask import render_template
from flask import url_for

from .actions import registrations as actions
from .actions.events import unknown_event
from .db import get_db
from .db import site_now
from .db import site_timezone
from .errors import render_error
from .projections import activity_view
from .projections import event_details
from .projections import registration_summary
from .schemas import ConfirmCancellationInput
from .schemas import ConfirmInput
from .tooling import acts_as
from .tooling import run_tool
from .visitors import live_visitor
from .webmcp.negotiation import page_result
from .webmcp.negotiation import render_post_result
from .webmcp.negotiation import wants_json
from .webmcp.negotiation import with_vary
from .webmcp.result import Status
from .webmcp.result import not_found

bp = Blueprint("registrations", __name__)

ACTIVITY_SHOWN = 20


def _register_context(event_id: str) -> dict[str, Any]:
    """What the registration page shows about the event and this visitor.

    Without such an event there is no page: the request ends with a not_found answer.
    """
    db = get_db()
    event = db.get_event(event_id, count_seats=True)
    if event is None:
        abort(render_error(unknown_event("prepare_event_registration")))
    visitor_id = live_visitor(db)
    existing = db.active_registration(visitor_id, event_id) if visitor_id else None
    return {"event": event_details(event, site_now(), site_timezone()), "existing": existing}


@bp.get("/events/<event_id>/register")
@acts_as("prepare_event_registration")
def register(event_id: str):
    """The registration form, or (after a prepare without JavaScript) the review to confirm."""
    context = _register_context(event_id)
    return with_vary(render_template("registrations/register.html", result=page_result(),
                                     values={}, errors={}, **context))


@bp.post("/events/<event_id>/register")
@acts_as("prepare_event_registration")
def prepare(event_id: str):
    """prepare_event_registration: validate and hold the details for a person to confirm."""
    result, submitted = run_tool(actions.prepare_event_registration,
                                 bound={"event_id": event_id}, writes=True)
    if result.status is Status.NOT_FOUND:
        return render_error(result)  # no event: no form to show again
    return render_post_result(result, "registrations/register.html",
                              "registrations/_review.html",
                              redirect_to=url_for(".register", event_id=event_id),
                              page_context=lambda: _register_context(event_id),
                              values=submitted, errors=result.errors or {})


@bp.post("/registrations/confirm")
@acts_as("confirm_registration")
def confirm():
    """A person confirms a prepared registration (human-only: no tool form)."""
    result, _ = run_tool(actions.confirm_registration, ConfirmInput, writes=True)
    succeeded = result.status is Status.SUCCESS
    landing = (url_for(".registration", registration_id=result.target) if succeeded
               else url_for(".index"))
    # The partial also refreshes the event's seats and the form area it leaves behind.
    context = ({} if wants_json() or not succeeded
               else _register_context(result.data["registration"]["eventId"]))
    return render_post_result(result, "error.html", "registrations/_confirmed.html",
                              redirect_to=landing, values={}, errors={}, **context)


def _index_context() -> dict[str, Any]:
    """The visitor's registrations (active, then cancelled) and recent activity."""
    db = get_db()
    visitor_id = live_visitor(db)
    if visitor_id is None:
        return {"active": [], "cancelled": [], "activity": []}
    timezone = site_timezone()
    registrations = [registration_summary(r, timezone)
                     for r in db.visitor_registrations(visitor_id)]
    return {
        "active": [r for r in registrations if r["state"] == "active"],
        "cancelled": [r for r in registrations if r["state"] == "cancelled"],
        "activity": [activity_view(entry, timezone)
                     for entry in db.recent_activity(visitor_id, ACTIVITY_SHOWN)],
    }


@bp.get("/registrations")
@acts_as("prepare_registration_cancellation")
def index():
    """The visitor's registrations, the cancellation form and their recent activity."""
    return with_vary(render_template("registrations/index.html", result=page_result(),
                                     values={}, errors={}, **_index_context()))


@bp.post("/registrations/cancellation")
@acts_as("prepare_registration_cancellation")
def prepare_cancellation():
    """prepare_registration_cancellation: open the confirmation dialog; nothing is cancelled."""
    result, submitted = run_tool(actions.prepare_registration_cancellation, writes=True)
    return render_post_result(result, "registrations/index.html",
                              "registrations/_cancel_dialog.html",
                              redirect_to=url_for(".index"), page_context=_index_context,
                              values=submitted, errors=result.errors or {})


@bp.post("/registrations/<registration_id>/cancel")
@acts_as("confirm_cancellation")
def confirm_cancellation(registration_id: str):
    """A person confirms a cancellation (human-only); repeating it changes nothing."""
    result, _ = run_tool(actions.confirm_cancellation, ConfirmCancellationInput,
                         bound={"registration_id": registration_id}, writes=True)
    # The partial is the whole registrations panel: the list and the activity change too.
    context = {} if wants_json() else _index_context()
    return render_post_result(result, "error.html", "registrations/_panel.html",
                              redirect_to=url_for(".index"), values={}, errors={}, **context)


@bp.get("/registrations/<registration_id>")
@acts_as("view_registration")
def registration(registration_id: str):
    """One of the visitor's registrations (another visitor's is not found)."""
    db = get_db()
    found = actions.own_registration(db, registration_id, live_visitor(db))
    if found is None:
        return render_error(not_found("view_registration",
                                      "You have no registration with this id."))
    return with_vary(render_template(
        "registrations/detail.html", result=page_result(),
        registration=registration_summary(found, site_timezone())))
