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
from ...storage import Registration
from ...storage import Storage
from ...storage import WaitlistEntry
from ..activity import logged_as
from ..projections import event_details
from ..registration_mail import queue_event_cancelled
from ..registration_mail import queue_waitlist_cancelled
from ..schemas import CancelEventInput
from ..schemas import CancelEventParams
from . import ActionContext

CANCEL_EVENT = "cancel_event"


def cancellation_recipients(db: Storage, event_id: str
                            ) -> tuple[list[Registration], list[WaitlistEntry]]:
    """Whom cancelling the event mails: its active registrations and everyone still on its
    waitlist (waiting, or holding an offer). The one read of them, so that the page asking to
    confirm counts exactly those the cancellation mails."""
    return db.event_attendees(event_id), db.event_waitlist(event_id)


def whom_we_mail(attendees: int, waiting: int) -> str | None:
    """The people a cancellation mails, as a sentence names them ("2 attendees and 1 person
    on its waitlist"); None when there is nobody."""
    named = [ngettext("%(num)d attendee", "%(num)d attendees", attendees) if attendees else "",
             ngettext("%(num)d person on its waitlist", "%(num)d people on its waitlist",
                      waiting) if waiting else ""]
    if all(named):
        return _("%(attendees)s and %(waiting)s", attendees=named[0], waiting=named[1])
    return "".join(named) or None


def cancellation_preview(db: Storage, event_id: str, ctx: ActionContext) -> dict[str, Any]:
    """What the page that asks to confirm a cancellation shows: the event, and whom the
    cancellation would mail (the route found the event in the organization)."""
    event = db.get_event(event_id, count_seats=True)
    assert event is not None, "the organizer area admits events the organization runs"
    attendees, waiting = cancellation_recipients(db, event_id)
    return {"event": event_details(event, ctx.now, ctx.timezone, ctx.pages),
            "ended": event.ends_at <= ctx.now,
            "attendees": len(attendees), "waiting": len(waiting),
            "whom": whom_we_mail(len(attendees), len(waiting))}


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
        if event.ends_at <= ctx.now:  # its people would be told after it took place
            return conflict(name, _("This event has ended: it can no longer be cancelled, "
                                    "and nobody was mailed."))
        # Read before the cancellation ends the waitlist's places (and withdraws a live offer).
        attendees, waiting = cancellation_recipients(db, event.id)
        if not db.cancel_event(event.id, params["reason"], ctx.now):
            return conflict(name, _("This event was already cancelled: nothing more was done, "
                                    "and nobody was mailed again."))
        cancelled = replace(event, cancelled_at=ctx.now,
                            cancellation_reason=params["reason"])
        for registration in attendees:
            queue_event_cancelled(db, registration, cancelled, ctx)
        for entry in waiting:
            queue_waitlist_cancelled(db, entry, cancelled, ctx)
        db.record_audit(AuditEntry(at=ctx.now, organization_id=params["organization_id"],
                                   account_id=ctx.account.id, action=name,
                                   event_id=event.id, target=event.id))
    whom = whom_we_mail(len(attendees), len(waiting))
    return ToolResult(
        action=name, status=Status.SUCCESS,
        message=(_("The event is cancelled. We are mailing %(whom)s.", whom=whom) if whom
                 else _("The event is cancelled. Nobody was registered or waiting, so "
                        "nobody is mailed.")),
        data={"eventId": event.id, "attendeesMailed": len(attendees),
              "waitlistMailed": len(waiting)},
        next_action=_("Done."), target=event.id)
