"""The visitor's own plans, read in one call: `get_my_plans`.

An agent that prepared a registration or a cancellation must be able to see what became of it
(the person confirms on the site, where the agent cannot look), and to cancel it needs the
registration's id: this tool tells it both, the person's places on waitlists (a seat offered
to them is theirs to accept on the site until the offer ends) and what they saved. It reads
only what belongs to the visitor the call acts for (the catalog marks it personal: over MCP it
needs the connection), and changes nothing of theirs: like every page that shows a person's
places, it first passes on the seats of offers whose hold ran out (`domain.waitlist`).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult

from ...storage import Registration
from ...storage import Storage
from ..activity import logged_as
from ..catalog import CATALOG
from ..projections import local_time
from ..projections import registration_summary
from ..schemas import NoParams
from . import ActionContext
from .events import saved_events
from .registrations import CONFIRM_CANCELLATION
from .registrations import CONFIRM_REGISTRATION
from .registrations import pending_reviews
from .registrations import waitlist_places

# How far back "confirmed lately" looks: a conversation with an agent may pause for hours
# between its prepare and its next look; older confirmations are in the registrations anyway.
LATELY = timedelta(days=1)
# Organizer-written text in the plans (the registrations' events, the reviews, saved events).
UNTRUSTED_PLAN_FIELDS = (
    "data.registrations[].eventTitle", "data.waiting[].review.event.title",
    "data.waiting[].review.event.venue", "data.waiting[].review.registration.eventTitle",
    "data.confirmedLately[].eventTitle", "data.waitlist[].eventTitle", "data.saved[].title",
    "data.saved[].summary")


@logged_as(_l("Get my plans"),
           _l("%(who)s looked at your registrations and saved events"))
@CATALOG.action("get_my_plans", answers=(Status.SUCCESS,))
def get_my_plans(db: Storage, params: NoParams, ctx: ActionContext) -> ToolResult:
    """The visitor's registrations, what waits for them to confirm, what they confirmed
    lately, their places on waitlists and their saved events (all empty for nobody)."""
    registrations = db.visitor_registrations(ctx.visitor_id) if ctx.visitor_id else []
    waiting = [{"confirms": review["confirms"], "review": review["review"],
                "expiresAt": review["expiresAt"], "preparedBy": review["source"]}
               for review in pending_reviews(db, ctx)]
    data: dict[str, Any] = {
        "registrations": [registration_summary(r, ctx.timezone) for r in registrations],
        "waiting": waiting,
        "reviewUrl": ctx.pages.pending_review(),
        "confirmedLately": confirmed_lately(registrations, ctx),
        # As the person's pages show them: an offer whose hold ran out has passed on first.
        "waitlist": waitlist_places(db, ctx),
        "saved": saved_events(db, ctx),
    }
    active = sum(1 for r in registrations if r.state == "active")
    offered = [place for place in data["waitlist"] if place["state"] == "offered"]
    return ToolResult(
        action="get_my_plans",
        status=Status.SUCCESS,
        message=_("Active registrations: %(active)s. Waiting for the user's confirmation: "
                  "%(waiting)s. Places on waitlists: %(places)s (seats offered: %(offered)s). "
                  "Saved events: %(saved)s.", active=active, waiting=len(waiting),
                  places=len(data["waitlist"]), offered=len(offered),
                  saved=len(data["saved"])),
        data=data,
        next_action=_plans_next_action(bool(waiting), bool(offered), ctx),
        untrusted_fields=UNTRUSTED_PLAN_FIELDS,
    )


def confirmed_lately(registrations: list[Registration], ctx: ActionContext
                     ) -> list[dict[str, Any]]:
    """What the person confirmed within LATELY, newest first: each registration taken
    (`confirms`: confirm_registration) and each cancellation, with when."""
    since = ctx.now - LATELY
    lately = []
    for registration in registrations:
        moments = [(CONFIRM_REGISTRATION, registration.created_at)]
        if registration.cancelled_at is not None:
            moments.append((CONFIRM_CANCELLATION, registration.cancelled_at))
        lately += [(at, confirms, registration) for confirms, at in moments if at >= since]
    # A cancellation comes after its registration, even within one tick of the clock.
    lately.sort(key=lambda item: (item[0], item[1] == CONFIRM_CANCELLATION), reverse=True)
    return [{"confirms": confirms, "registrationId": registration.id,
             "eventId": registration.event_id, "eventTitle": registration.event_title,
             "at": local_time(at, ctx.timezone)} for at, confirms, registration in lately]


def _plans_next_action(waiting: bool, offered: bool, ctx: ActionContext) -> str:
    cancel = _("To cancel a registration, call prepare_registration_cancellation with its id "
               "exactly as listed here; never invent ids.")
    # Only the person accepts a seat a waitlist offers (no tool does): the agent tells them
    # before the hold ends, or the seat goes to the next one waiting.
    accept = (_("A seat is held for the user until the offer's offerEndsAt: only they can "
                "accept it, at %(address)s in their own browser; tell them before then.",
                address=ctx.pages.pending_review()) + " ") if offered else ""
    if not waiting:
        return accept + cancel
    return accept + _("What waits is done only once the user confirms it, at %(address)s in "
                      "their own browser; call get_my_plans again later to see whether they "
                      "did.", address=ctx.pages.pending_review()) + " " + cancel
