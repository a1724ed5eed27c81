"""The door: checking attendees in at an event an organization runs, by the code of their
registration mail (typed, or read from its QR code).

A step for the organization's people only (any role: check-in staff exist for it), never a
tool. Door staff see whom a code stands for by name and a masked address; owners and managers,
who may see the attendee list, see the whole address. A registration is checked in once: the
second time the door is told when and by whom, in the site's time zone (the day too, unless it
was today there: a code shown again at a later event of several days).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from babel.dates import format_datetime
from flask_babel import get_locale
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from flask_webmcp.actions import human_action
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.result import not_found

from ...storage import AuditEntry
from ...storage import DoorAttendee
from ...storage import Membership
from ...storage import Storage
from ..activity import logged_as
from ..organizers import CHECK_IN
from ..organizers import VIEW_ATTENDEES
from ..organizers import may
from ..projections import local_time
from ..schemas import CheckInInput
from ..schemas import CheckInParams
from . import ActionContext

NAME = "check_in"


def masked_email(address: str) -> str:
    """An address as door staff see it: its first character and its domain
    (w***@example.com), enough to tell two people of one name apart, not to write to them."""
    local, _at, domain = address.rpartition("@")
    return f"{local[:1]}***@{domain}" if local else "***"


def attendee_view(attendee: DoorAttendee, membership: Membership, ctx: ActionContext
                  ) -> dict[str, Any]:
    """Whom a code stands for, as this member may see them."""
    assert ctx.account is not None, "the organizer area is for people who signed in"
    shown_email = (attendee.email if may(membership.role, VIEW_ATTENDEES)
                   else masked_email(attendee.email))
    view: dict[str, Any] = {"registrationId": attendee.registration_id,
                            "name": attendee.attendee_name, "email": shown_email}
    if attendee.checked_in_at is not None:
        view["checkedInAt"] = local_time(attendee.checked_in_at, ctx.timezone)
        view["checkedInBy"] = (_("you") if attendee.checked_in_by == ctx.account.email
                               else attendee.checked_in_by or _("a former member"))
    return view


def _answer(status: Status, message: str, outcome: str, attendee: dict[str, Any]
            ) -> ToolResult:
    return ToolResult(action=NAME, status=status, message=message,
                      data={"outcome": outcome, "attendee": attendee},
                      next_action=_("Ready for the next code."),
                      target=attendee["registrationId"])


@logged_as(_l("Check someone in"), _l("%(who)s checked someone in at an event"))
@human_action(NAME, schema=CheckInInput,
              answers=(Status.SUCCESS, Status.NOT_FOUND, Status.CONFLICT))
def check_in(db: Storage, params: CheckInParams, ctx: ActionContext) -> ToolResult:
    """Check in the attendee whose registration for the event has the code; say who it is,
    or why not (another event's code, a cancelled registration, one already checked in)."""
    assert ctx.account is not None, "the organizer area is for people who signed in"
    organization_id, event_id, code = (params["organization_id"], params["event_id"],
                                       params["code"])
    membership = db.membership(organization_id, ctx.account.id)
    assert membership is not None and may(membership.role, CHECK_IN), \
        "the route admits the organization's people only, on its own events"
    codes = ctx.check_in_codes
    registration_id = codes.registration_of(code, db.event_registration_ids(event_id))
    if registration_id is None:
        others = db.other_registration_ids(organization_id, event_id)
        elsewhere = codes.registration_of(code, others)
        other_event = db.get_event(others[elsewhere]) if elsewhere else None
        if other_event is not None:
            return not_found(NAME, _("%(code)s is a registration for another event: "
                                     "“%(title)s”. Nobody was checked in.",
                                     code=code, title=other_event.title))
        return not_found(NAME, _("No registration for this event has the code %(code)s. "
                                 "Check it against the attendee's mail.", code=code))
    attendee = db.door_attendee(registration_id)
    assert attendee is not None, "a registration just found is there"
    if attendee.state != "active":
        return _answer(Status.CONFLICT,
                       _("%(name)s cancelled this registration: not checked in.",
                         name=attendee.attendee_name), "cancelled",
                       attendee_view(attendee, membership, ctx))
    with db.transaction():
        checked_in = db.check_in(registration_id, event_id, ctx.account.id, ctx.now)
        if checked_in:
            db.record_audit(AuditEntry(at=ctx.now, organization_id=organization_id,
                                       account_id=ctx.account.id, action=NAME,
                                       event_id=event_id, target=registration_id))
    now_seen = db.door_attendee(registration_id)
    assert now_seen is not None and now_seen.checked_in_at is not None, \
        "an active registration is checked in, now or before"
    shown = attendee_view(now_seen, membership, ctx)
    if checked_in:
        return _answer(Status.SUCCESS, _("Checked in: %(name)s.", name=now_seen.attendee_name),
                       "checked_in", shown)
    return _answer(Status.CONFLICT, already_checked_in(now_seen.attendee_name,
                                                       now_seen.checked_in_at,
                                                       shown["checkedInBy"], ctx),
                   "already", shown)


def already_checked_in(name: str, at: datetime, who: str, ctx: ActionContext) -> str:
    """What the door says of a code checked in before: when (its day too, unless that was
    today in the site's time zone, by the app's clock) and by whom."""
    local = at.astimezone(ctx.timezone)
    locale = str(get_locale())  # the request's language, as Flask-Babel chose it
    time = format_datetime(local, "HH:mm", locale=locale)
    if local.date() == ctx.now.astimezone(ctx.timezone).date():
        return _("%(name)s is already checked in: at %(time)s by %(who)s.",
                 name=name, time=time, who=who)
    # Translators: a day of the year as a Babel (CLDR) pattern: d is the day, MMM the month.
    day = format_datetime(local, _("d MMM"), locale=locale)
    return _("%(name)s is already checked in: on %(day)s at %(time)s by %(who)s.",
             name=name, day=day, time=time, who=who)


def door_overview(db: Storage, event_id: str, ctx: ActionContext) -> dict[str, Any]:
    """What the door page shows beside its form: the event and how many of its attendees are
    in."""
    event = db.get_event(event_id)
    assert event is not None, "the route admits events the organization runs"
    checked_in, registered = db.door_counts(event_id)
    return {"event": {"id": event.id, "title": event.title,
                      "startsAt": local_time(event.starts_at, ctx.timezone)},
            "counts": {"checkedIn": checked_in, "registered": registered}}
