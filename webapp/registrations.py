"""Registering and cancelling: the agent-usable prepare forms and the human-only confirms."""

from __future__ import annotations

from typing import Any

from flask import Blueprint
from flask import render_template
from flask import url_for

from .actions import registrations as actions
from .actions.events import unknown_event
from .db import get_db
from .db import site_now
from .db import site_timezone
from .errors import render_error
from .projections import event_details
from .schemas import ConfirmCancellationInput
from .schemas import ConfirmInput
from .tooling import acts_as
from .tooling import run_tool
from .tools import CATALOG
from .visitors import live_visitor
from .webmcp.negotiation import page_result
from .webmcp.negotiation import render_post_result
from .webmcp.negotiation import wants_json
from .webmcp.result import Status
from .webmcp.result import not_found

bp = Blueprint("registrations", __name__)

ACTIVITY_SHOWN = 20


def _register_context(event_id: str) -> dict[str, Any] | None:
    """What the registration page shows about the event and this visitor, or None."""
    db = get_db()
    event = db.get_event(event_id, count_seats=True)
    if event is None:
        return None
    visitor_id = live_visitor(db)
    existing = db.active_registration(visitor_id, event_id) if visitor_id else None
    return {"event": event_details(event, site_now(), site_timezone()), "existing": existing}


@bp.get("/events/<event_id>/register")
@acts_as("prepare_event_registration")
def register(event_id: str):
    """The registration form, or (after a prepare without JavaScript) the review to confirm."""
    context = _register_context(event_id)
    if context is None:
        return render_error(unknown_event("prepare_event_registration"))
    return render_template("registrations/register.html", result=page_result(), values={},
                           errors={}, **context)


@bp.post("/events/<event_id>/register")
@acts_as("prepare_event_registration")
def prepare(event_id: str):
    """prepare_event_registration: validate and hold the details for a person to confirm."""
    tool = CATALOG["prepare_event_registration"]
    result, submitted = run_tool(tool.name, actions.prepare_event_registration, tool.schema,
                                 bound={"event_id": event_id}, writes=True)
    context = {} if wants_json() else _register_context(event_id)
    if result.status is Status.NOT_FOUND or context is None:
        # No such event (or no valid id): no form to show again, only the answer.
        return render_error(result)
    return render_post_result(result, "registrations/register.html",
                              "registrations/_review.html",
                              redirect_to=url_for(".register", event_id=event_id),
                              values=submitted, errors=result.errors or {}, **context)


@bp.post("/registrations/confirm")
@acts_as("confirm_registration")
def confirm():
    """A person confirms a prepared registration (human-only: no tool form)."""
    result, _ = run_tool(actions.CONFIRM_REGISTRATION, actions.confirm_registration,
                         ConfirmInput, writes=True)
    landing = (url_for(".registration", registration_id=result.target)
               if result.status is Status.SUCCESS else url_for(".index"))
    return render_post_result(result, "error.html", "registrations/_confirmed.html",
                              redirect_to=landing)


def _index_context() -> dict[str, Any]:
    db = get_db()
    visitor_id = live_visitor(db)
    registrations = db.visitor_registrations(visitor_id) if visitor_id else []
    active = [r for r in registrations if r.state == "active"]
    return {
        "registrations": registrations,
        "choices": [(r.id, r.event_title) for r in active],
        "activity": db.recent_activity(visitor_id, ACTIVITY_SHOWN) if visitor_id else [],
        "timezone": site_timezone(),
    }


@bp.get("/registrations")
@acts_as("prepare_registration_cancellation")
def index():
    """The visitor's registrations, the cancellation form and their recent activity."""
    return render_template("registrations/index.html", result=page_result(), values={},
                           errors={}, **_index_context())


@bp.post("/registrations/cancellation")
@acts_as("prepare_registration_cancellation")
def prepare_cancellation():
    """prepare_registration_cancellation: open the confirmation dialog; nothing is cancelled."""
    tool = CATALOG["prepare_registration_cancellation"]
    result, submitted = run_tool(tool.name, actions.prepare_registration_cancellation,
                                 tool.schema, writes=True)
    context = {} if wants_json() else _index_context()
    return render_post_result(result, "registrations/index.html",
                              "registrations/_cancel_dialog.html",
                              redirect_to=url_for(".index"), values=submitted,
                              errors=result.errors or {}, **context)


@bp.post("/registrations/<registration_id>/cancel")
@acts_as("confirm_cancellation")
def confirm_cancellation(registration_id: str):
    """A person confirms a cancellation (human-only); repeating it changes nothing."""
    result, _ = run_tool(actions.CONFIRM_CANCELLATION, actions.confirm_cancellation,
                         ConfirmCancellationInput, bound={"registration_id": registration_id},
                         writes=True)
    context = {} if wants_json() else _index_context()
    return render_post_result(result, "error.html", "registrations/_panel.html",
                              redirect_to=url_for(".index"), values={}, errors={}, **context)


@bp.get("/registrations/<registration_id>")
@acts_as("view_registration")
def registration(registration_id: str):
    """One of the visitor's registrations (another visitor's is not found)."""
    db = get_db()
    visitor_id = live_visitor(db)
    found = db.get_registration(registration_id)
    if found is None or found.visitor_id != visitor_id:
        return render_error(not_found("view_registration",
                                      "You have no registration with this id."))
    return render_template("registrations/detail.html", result=page_result(),
                           registration=found, email=actions.mask_email(found.email),
                           timezone=site_timezone())
