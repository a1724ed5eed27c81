"""Cancelling an event: an organizer's step (a manager's or an owner's), never a tool.

Cancelling keeps the event, its page and its registrations: from then on its page, its
calendar files and its search result say it is cancelled, registering (and its waitlist) is
refused, and no reminder goes out. In the one transaction that cancels it, every attendee
with an active registration is mailed once, in the language they registered in, so is every
person still on its waitlist (waiting, or holding an offer, which is withdrawn), told that
their place ends, and the organization's audit log says who cancelled it. Cancelling again
changes nothing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel import ngettext

from flask_webmcp.actions import human_action
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.result import conflict
from flask_webmcp.result import not_found

from ...storage import AuditEntry
from ...storage import Storage
from ..activity import logged_as
from ..projections import event_details
from ..registration_mail import queue_event_cancelled
from ..registration_mail import queue_waitlist_cancelled
from ..schemas import CancelEventInput
from ..schemas import CancelEventParams
from . import ActionContext

CANCEL_EVENT = "cancel_event"


def cancellation_preview(db: Storage, event_id: str, ctx: ActionContext) -> dict[str, Any]:
    """What the page that asks to confirm a cancellation shows: the event, and how many
    attendees the cancellation would mail (the route found the event in the organization)."""
    event = db.get_event(event_id, count_seats=True)
    assert event is not None, "the organizer area admits events the organization runs"
    return {"event": event_details(event, ctx.now, ctx.timezone, ctx.pages),
            "attendees": db.count_attendees(event_id)}


@logged_as(_l("Cancel an event"), _l("%(who)s cancelled an event"))
@human_action(CANCEL_EVENT, schema=CancelEventInput,
              answers=(Status.SUCCESS, Status.NOT_FOUND, Status.CONFLICT))
def cancel_event(db: Storage, params: CancelEventParams, ctx: ActionContext) -> ToolResult:
    """Cancel an event the organization runs, mailing each of its attendees once."""
    name = CANCEL_EVENT
    assert ctx.account is not None, "the organizer area is for people who signed in"
    with db.transaction():
        # Locked like every write that changes its seats: nobody registers in between.
        event = db.get_event(params["event_id"], for_update=True)
        if event is None or event.organization_id != params["organization_id"]:
            return not_found(name, _("This organization runs no such event."))
        # Read before the cancellation ends their places (and withdraws a live offer).
        waiting = db.event_waitlist(event.id)
        if not db.cancel_event(event.id, params["reason"], ctx.now):
            return conflict(name, _("This event was already cancelled: nothing more was done, "
                                    "and nobody was mailed again."))
        cancelled = replace(event, cancelled_at=ctx.now,
                            cancellation_reason=params["reason"])
        attendees = db.event_attendees(event.id)
        for registration in attendees:
            queue_event_cancelled(db, registration, cancelled, ctx)
        for entry in waiting:
            queue_waitlist_cancelled(db, entry, cancelled, ctx)
        db.record_audit(AuditEntry(at=ctx.now, organization_id=params["organization_id"],
                                   account_id=ctx.account.id, action=name,
                                   event_id=event.id, target=event.id))
    return ToolResult(
        action=name, status=Status.SUCCESS,
        message=ngettext("The event is cancelled. We are mailing its %(num)d attendee.",
                         "The event is cancelled. We are mailing its %(num)d attendees.",
                         len(attendees)),
        data={"eventId": event.id, "attendeesMailed": len(attendees),
              "waitlistMailed": len(waiting)},
        next_action=_("Done."), target=event.id)
