"""Registering and cancelling: the agent-usable prepare forms and the human-only confirms."""

from __future__ import annotations

from typing import Any

from flask import Blueprint
from flask import Response
from flask import abort
from flask import render_template
from flask import url_for
from flask.blueprints import BlueprintSetupState
from flask_babel import gettext as _
from werkzeug.routing import BaseConverter

from flask_webmcp.negotiation import is_partial
from flask_webmcp.negotiation import page_result
from flask_webmcp.negotiation import render_post_result
from flask_webmcp.negotiation import render_result
from flask_webmcp.negotiation import wants_json
from flask_webmcp.negotiation import with_vary
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.result import not_found
from flask_webmcp.routes import human_route
from flask_webmcp.routes import page_route
from flask_webmcp.routes import tool_route

from ..domain.actions import calendars
from ..domain.actions import plans
from ..domain.actions import registrations as actions
from ..domain.actions import waitlist
from ..domain.actions.events import unknown_event
from ..domain.schemas import REGISTRATION_ID_SHAPE
from ..domain.schemas import WAITLIST_ENTRY_SHAPE
from ..storage.connection import get_db
from .calls import action_context
from .calls import run_tool
from .errors import render_error
from .visitors import live_visitor

bp = Blueprint("registrations", __name__)


class RegistrationIdConverter(BaseConverter):
    """A path segment shaped like a registration id (the schema's rule), so that
    /registrations/confirm and /registrations/cancellation stay the POST-only addresses they
    are (a GET answers 405) instead of reading as the page of a registration so named."""

    regex = REGISTRATION_ID_SHAPE


class WaitlistEntryIdConverter(BaseConverter):
    """A path segment shaped like a place on a waitlist (the schema's rule)."""

    regex = WAITLIST_ENTRY_SHAPE


@bp.record_once
def _add_converter(state: BlueprintSetupState) -> None:
    state.app.url_map.converters["registration_id"] = RegistrationIdConverter
    state.app.url_map.converters["waitlist_entry_id"] = WaitlistEntryIdConverter

ACTIVITY_SHOWN = 20


def _register_context(event_id: str) -> dict[str, Any]:
    """What the registration page shows about the event and this visitor.

    Without such an event there is no page: the request ends with a not_found answer.
    """
    db = get_db()
    shown = actions.registration_page(db, event_id, action_context(live_visitor(db)))
    if shown is None:
        abort(render_error(unknown_event("prepare_event_registration")))
    return shown


def _index_context(own_plans: ToolResult | None = None) -> dict[str, Any]:
    """The visitor's registrations (active, then cancelled), recent activity, since when
    they have a calendar address, and their plans as get_my_plans answers them (`own_plans`,
    else read for the page: a visit is no call, so the activity log gets no line of it),
    whose places on waitlists the page lists: what the agent reads is what the person sees."""
    db = get_db()
    ctx = action_context(live_visitor(db))
    overview = actions.registrations_overview(db, ctx, ACTIVITY_SHOWN)
    own_plans = own_plans or plans.get_my_plans.run(db, {}, ctx)
    return {**overview, "calendar_since": calendars.calendar_feed_since(db, ctx),
            "plans": own_plans, "waitlist": (own_plans.data or {}).get("waitlist", [])}


@page_route(bp, "/events/<event_id>/register", "prepare_event_registration",
            offers=("prepare_event_registration",))
def register(event_id: str) -> Response:
    """The registration form, or (after a prepare without JavaScript) the review to confirm,
    with the form still holding what was entered (to change it and review again)."""
    context = _register_context(event_id)
    result = page_result()
    entered = result.page_only.get("entered", {}) if result else {}
    return with_vary(render_template("registrations/register.html", result=result,
                                     values=entered, errors={}, **context))


@tool_route(bp, "/events/<event_id>/register", actions.prepare_event_registration,
            methods=("POST",), offers=("prepare_event_registration",))
def prepare(event_id: str) -> Response:
    """prepare_event_registration: validate and hold the details for a person to confirm."""
    result, submitted = run_tool(bound={"event_id": event_id})
    if result.status is Status.NOT_FOUND:
        return render_error(result)  # no event: no form to show again
    # The review in place says the event's start–end and price, as the page around it does.
    shown = ({"event": actions.reviewed_event(get_db(), event_id, action_context(None))}
             if is_partial() and result.status is Status.CONFIRMATION_REQUIRED else {})
    return render_post_result(result, "registrations/register.html",
                              "registrations/_review.html",
                              redirect_to=url_for(".register", event_id=event_id),
                              page_context=lambda: _register_context(event_id),
                              values=submitted, errors=result.errors or {}, **shown)


@human_route(bp, "/registrations/confirm", actions.confirm_registration, methods=("POST",))
def confirm() -> Response:
    """A person confirms a prepared registration (human-only: no tool form)."""
    result = run_tool().result
    succeeded = result.status is Status.SUCCESS and result.data is not None
    landing = (url_for(".registration", registration_id=result.target) if succeeded
               else url_for(".index"))
    # The partial also refreshes the event's seats and the form area it leaves behind.
    context = ({} if wants_json() or not succeeded or result.data is None
               else _register_context(result.data["registration"]["eventId"]))
    return render_post_result(result, "error.html", "registrations/_confirmed.html",
                              redirect_to=landing, values={}, errors={}, **context)


@human_route(bp, "/registrations/waitlist", waitlist.join_waitlist, methods=("POST",))
def join_waitlist() -> Response:
    """A person confirms joining a full event's waitlist (human-only: no tool form)."""
    result = run_tool().result
    return render_post_result(result, "error.html", "registrations/_joined.html",
                              redirect_to=url_for(".index"), values={}, errors={})


WAITLIST_PATH = "/registrations/waitlist/<waitlist_entry_id:entry_id>"


@human_route(bp, f"{WAITLIST_PATH}/accept", waitlist.accept_waitlist_offer, methods=("POST",))
def accept_offer(entry_id: str) -> Response:
    """A person takes the seat the waitlist offers them (human-only): their registration."""
    result = run_tool(bound={"entry_id": entry_id}).result
    succeeded = result.status is Status.SUCCESS
    landing = (url_for(".registration", registration_id=result.target) if succeeded
               else url_for(".index"))
    context = {} if wants_json() else _index_context()
    return render_post_result(result, "error.html", "registrations/_panel.html",
                              redirect_to=landing, values={}, errors={}, **context)


@human_route(bp, f"{WAITLIST_PATH}/leave", waitlist.leave_waitlist, methods=("POST",))
def leave_waitlist(entry_id: str) -> Response:
    """A person leaves a waitlist, declining a seat offered (human-only): the next one
    waiting is offered it."""
    result = run_tool(bound={"entry_id": entry_id}).result
    context = {} if wants_json() else _index_context()
    return render_post_result(result, "error.html", "registrations/_panel.html",
                              redirect_to=url_for(".index"), values={}, errors={}, **context)


@page_route(bp, "/registrations", "prepare_registration_cancellation",
            offers=("get_my_plans", "prepare_registration_cancellation"))
def index() -> Response:
    """The visitor's registrations, the cancellation form and their recent activity; its
    JSON-LD is their plans (get_my_plans), unless a POST carried its result here."""
    context = _index_context()
    return with_vary(render_template("registrations/index.html",
                                     result=page_result(context["plans"]), values={},
                                     errors={}, **context))


@tool_route(bp, "/registrations/plans", plans.get_my_plans,
            offers=("get_my_plans", "prepare_registration_cancellation"))
def my_plans() -> Response:
    """get_my_plans: JSON, the registrations panel (refreshed in place) or, without
    JavaScript, My registrations with the plans as its JSON-LD."""
    result = run_tool().result
    if result.status is not Status.SUCCESS:
        return render_error(result)  # the panel stays as it was; the failure shows beside
    return render_result(result, "registrations/index.html", "registrations/_panel.html",
                         values={}, errors={}, **_index_context(result))


@tool_route(bp, "/registrations/cancellation", actions.prepare_registration_cancellation,
            methods=("POST",), offers=("prepare_registration_cancellation",))
def prepare_cancellation() -> Response:
    """prepare_registration_cancellation: open the confirmation dialog; nothing is cancelled."""
    result, submitted = run_tool()
    return render_post_result(result, "registrations/index.html",
                              "registrations/_cancel_dialog.html",
                              redirect_to=url_for(".index"), page_context=_index_context,
                              values=submitted, errors=result.errors or {})


@human_route(bp, "/registrations/<registration_id>/cancel", actions.confirm_cancellation,
            methods=("POST",), offers=("prepare_registration_cancellation",))
def confirm_cancellation(registration_id: str) -> Response:
    """A person confirms a cancellation (human-only); repeating it changes nothing."""
    result = run_tool(bound={"registration_id": registration_id}).result
    # The partial is the whole registrations panel: the list and the activity change too.
    context = {} if wants_json() else _index_context()
    return render_post_result(result, "error.html", "registrations/_panel.html",
                              redirect_to=url_for(".index"), values={}, errors={}, **context)


@human_route(bp, "/registrations/<registration_id>/keep", actions.discard_cancellation,
             methods=("POST",), offers=("prepare_registration_cancellation",))
def keep_registration(registration_id: str) -> Response:
    """A person keeps the registration they were asked about: its prepared cancellation is
    dropped, so nothing waits for them; the panel comes back without the dialog."""
    result = run_tool(bound={"registration_id": registration_id}).result
    context = {} if wants_json() else _index_context()
    return render_post_result(result, "error.html", "registrations/_panel.html",
                              redirect_to=url_for(".index"), values={}, errors={}, **context)


@human_route(bp, "/registrations/pending/discard", actions.discard_registration,
             methods=("POST",))
def discard_registration() -> Response:
    """A person drops a registration prepared for them: nothing is registered, nothing waits
    for them any more, and they are back on what still waits (which says so)."""
    result = run_tool().result
    return render_post_result(result, "registrations/pending.html",
                              "registrations/_pending.html", redirect_to=url_for(".pending"),
                              page_context=_pending_context, values={}, errors={},
                              **(_pending_context() if is_partial() else {}))


@human_route(bp, "/registrations/calendar", calendars.make_calendar_feed, methods=("POST",))
def make_calendar_feed() -> Response:
    """A person makes (or replaces) their private calendar address: shown once, on the page."""
    result = run_tool().result
    return render_post_result(result, "registrations/index.html",
                              "registrations/_calendar.html", redirect_to=url_for(".index"),
                              page_context=_index_context, values={}, errors={})


@human_route(bp, "/registrations/calendar/stop", calendars.stop_calendar_feed,
            methods=("POST",))
def stop_calendar_feed() -> Response:
    """A person stops their calendar address: calendars subscribed to it get nothing more."""
    result = run_tool().result
    return render_post_result(result, "registrations/index.html",
                              "registrations/_calendar.html", redirect_to=url_for(".index"),
                              page_context=_index_context, values={}, errors={})


@page_route(bp, "/registrations/pending", "review_pending")
def pending() -> Response:
    """What waits for the visitor to confirm, wherever it was prepared (on a page, or by an
    agent over MCP), each with its human-only confirm form; a GET changes nothing."""
    return with_vary(render_template("registrations/pending.html", result=page_result(),
                                     **_pending_context()))


def _pending_context() -> dict[str, Any]:
    db = get_db()
    ctx = action_context(live_visitor(db))
    return {"reviews": actions.pending_reviews(db, ctx),
            "waitlist": actions.waitlist_places(db, ctx)}


MANAGE_PATH = "/registrations/<registration_id:registration_id>/manage/<signature>"


@page_route(bp, MANAGE_PATH, "cancel_from_mail")
def manage(registration_id: str, signature: str) -> Response:
    """A registration from the manage link of a mail, on any device; a GET changes nothing."""
    db = get_db()
    shown = actions.mailed_registration(db, registration_id, signature,
                                        action_context(live_visitor(db)))
    if shown is None:
        return render_error(not_found("cancel_from_mail", _(
            "This link leads to no registration. Use the link of the latest mail about it.")))
    return with_vary(render_template("registrations/manage.html", result=page_result(),
                                     registration=shown, signature=signature))


@human_route(bp, MANAGE_PATH, actions.cancel_from_mail, methods=("POST",))
def cancel_from_mail(registration_id: str, signature: str) -> Response:
    """Cancel from a mailed link: the review of the cancellation, to confirm."""
    result = run_tool(bound={"registration_id": registration_id,
                             "signature": signature}).result
    return render_post_result(result, "error.html", "registrations/_manage_result.html",
                              redirect_to=url_for(".pending"), values={}, errors={})


@page_route(bp, "/registrations/<registration_id:registration_id>", "view_registration")
def registration(registration_id: str) -> Response:
    """One of the visitor's registrations (another visitor's is not found)."""
    db = get_db()
    shown = actions.registration_details(db, registration_id, action_context(live_visitor(db)))
    if shown is None:
        return render_error(not_found("view_registration",
                                      _("You have no registration with this id.")))
    return with_vary(render_template("registrations/detail.html", result=page_result(),
                                     registration=shown))
