"""The waitlist's steps, each a person's alone: joining (confirming what
`prepare_event_registration` held on a full event), accepting a seat offered, and leaving.

Joining is confirmed like a registration (the same review and single-use token) and takes no
seat; a seat that frees is offered to the first one waiting (`domain.waitlist.pass_on`), held
for them for a while, and accepting it before the hold ends makes it a registration without
counting seats again: the offer already holds one. Each step locks the event's row first, like
every write that changes its seats, so held seats, registrations and offers never outnumber the
capacity whatever runs at once.
"""

from __future__ import annotations

import secrets
from dataclasses import replace

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from flask_webmcp.actions import human_action
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.result import conflict
from flask_webmcp.result import not_found

from ...storage import Registration
from ...storage import Storage
from ...storage import WaitlistEntry
from ..activity import logged_as
from ..directions import already_registered
from ..projections import event_state
from ..projections import registration_view
from ..registration_mail import queue_registration_confirmed
from ..registration_mail import queue_waitlist_joined
from ..schemas import ConfirmInput
from ..schemas import ConfirmParams
from ..schemas import WaitlistEntryInput
from ..schemas import WaitlistEntryParams
from ..waitlist import pass_on
from ..waitlist import waitlist_view
from . import ActionContext
from .events import unknown_event
from .registrations import CONFIRM_REGISTRATION
from .registrations import JOIN_WAITLIST
from .registrations import closed_or_full
from .registrations import email_taken
from .registrations import own_confirmation
from .registrations import spent_or_expired

ACCEPT_OFFER = "accept_waitlist_offer"
LEAVE_WAITLIST = "leave_waitlist"


@logged_as(_l("Join the waitlist"),
           _l("%(who)s joined the waitlist of “%(title)s”"))
@human_action(JOIN_WAITLIST, schema=ConfirmInput, creates=True,
              answers=(Status.SUCCESS, Status.NOT_FOUND, Status.CONFLICT))
def join_waitlist(db: Storage, params: ConfirmParams, ctx: ActionContext) -> ToolResult:
    """A person confirms joining a full event's waitlist: spend the token and take the last
    place in line (no seat); a seat free already is offered at once."""
    name = JOIN_WAITLIST
    with db.transaction():
        confirmation = own_confirmation(db, params["confirmation_token"], ctx, name,
                                        confirms=CONFIRM_REGISTRATION, waitlist=True)
        if isinstance(confirmation, ToolResult):
            return confirmation
        refused = spent_or_expired(confirmation, ctx, name)
        if refused:
            return refused
        event = db.get_event(confirmation.target_id, count_seats=True, for_update=True)
        if event is None:
            return unknown_event(name)
        state = event_state(event, ctx.now)
        # A full event is what a waitlist is for: only a closed or cancelled one refuses.
        refused = closed_or_full(name, state) if state in ("closed", "cancelled") else None
        if refused:
            return refused
        check = db.registration_check(confirmation.visitor_id, event.id,
                                      confirmation.payload["email"])
        existing = check.visitor_registration
        if existing:
            return replace(conflict(name, _("You are already registered for this event."),
                                    next_action=already_registered(ctx.pages)),
                           data={"registration": registration_view(existing)})
        if check.waiting_entry:
            return conflict(name, _("You are already on the waitlist of this event."))
        if check.email_taken:
            return email_taken(name)
        entry_id = f"wait-{secrets.token_urlsafe(12)}"
        db.join_waitlist(WaitlistEntry(
            id=entry_id, event_id=event.id, visitor_id=confirmation.visitor_id,
            attendee_name=confirmation.payload["attendeeName"],
            email=confirmation.payload["email"], state="waiting", joined_at=ctx.now,
            event_title=event.title, event_starts_at=event.starts_at, language=ctx.language))
        db.use_confirmation(confirmation.token_hash, ctx.now)
        pass_on(db, event.id, ctx)  # a seat free already is theirs to accept at once
        entry = db.waitlist_entry(entry_id, for_update=True)
        assert entry is not None, "the entry was just written"
        if entry.state == "waiting":  # an offer made at once has its own mail
            queue_waitlist_joined(db, entry, event, ctx)
    return ToolResult(
        action=name,
        status=Status.SUCCESS,
        message=(_("A seat is free: it is held for you. Accept it under My registrations.")
                 if entry.state == "offered" else
                 _("You are on the waitlist, number %(position)s. Nothing is registered yet: "
                   "when a seat frees, it is offered to you, and you accept it under My "
                   "registrations (we mail you too).", position=entry.position)),
        data={"waitlist": waitlist_view(entry, ctx.timezone)},
        next_action=_("Done. The place is listed under My registrations."),
        target=event.id,
    )


def _own_entry(db: Storage, entry_id: str, ctx: ActionContext, name: str
               ) -> WaitlistEntry | ToolResult:
    """The visitor's place on a waitlist with this id, or the not_found refusing it (another
    visitor's looks like an unknown one)."""
    entry = db.waitlist_entry(entry_id)
    if entry is None or entry.visitor_id != ctx.visitor_id:
        return not_found(name, _("You have no place on a waitlist with this id."))
    return entry


@logged_as(_l("Accept a seat from the waitlist"),
           _l("%(who)s took the seat offered for “%(title)s”"))
@human_action(ACCEPT_OFFER, schema=WaitlistEntryInput, creates=True,
              answers=(Status.SUCCESS, Status.NOT_FOUND, Status.CONFLICT))
def accept_waitlist_offer(db: Storage, params: WaitlistEntryParams, ctx: ActionContext
                          ) -> ToolResult:
    """A person accepts the seat offered to them before its hold ends: it becomes their
    registration (the offer held the seat: nothing is counted again)."""
    name = ACCEPT_OFFER
    entry = _own_entry(db, params["entry_id"], ctx, name)
    if isinstance(entry, ToolResult):
        return entry
    with db.transaction():
        event = db.get_event(entry.event_id, for_update=True)
        if event is None:
            return unknown_event(name)
        refused = closed_or_full(name, "cancelled") if event.cancelled_at else None
        if refused:
            return refused
        pass_on(db, event.id, ctx)  # an offer whose hold ran out has ended first
        current = db.waitlist_entry(entry.id, for_update=True)
        if current is None or current.state != "offered":
            return conflict(name, _("This offer has ended: its seat went to the next person "
                                    "waiting."),
                            next_action=_("Tell the user the offer ended; do not retry."))
        check = db.registration_check(entry.visitor_id, event.id, entry.email)
        if check.visitor_registration:
            return conflict(name, _("You are already registered for this event."))
        if check.email_taken:
            return email_taken(name)
        registration = Registration(
            id=f"reg-{secrets.token_urlsafe(12)}", event_id=event.id,
            visitor_id=entry.visitor_id, attendee_name=entry.attendee_name, email=entry.email,
            state="active", created_at=ctx.now, event_title=event.title,
            event_starts_at=event.starts_at, language=ctx.language)
        db.end_waitlist_entry(entry.id, "accepted", ctx.now)
        db.create_registration(registration)
        queue_registration_confirmed(db, registration, event, ctx)
    return ToolResult(
        action=name,
        status=Status.SUCCESS,
        message=_("You are registered: one seat is yours."),
        data={"registration": registration_view(registration)},
        next_action=_("Done. The registration is listed under My registrations."),
        target=registration.id,
    )


@logged_as(_l("Leave the waitlist"),
           _l("%(who)s left the waitlist of “%(title)s”"))
@human_action(LEAVE_WAITLIST, schema=WaitlistEntryInput,
              answers=(Status.SUCCESS, Status.NOT_FOUND))
def leave_waitlist(db: Storage, params: WaitlistEntryParams, ctx: ActionContext
                   ) -> ToolResult:
    """A person leaves a waitlist, declining the seat offered to them if there is one: it goes
    to the next one waiting at once. Doing it again changes nothing."""
    name = LEAVE_WAITLIST
    entry = _own_entry(db, params["entry_id"], ctx, name)
    if isinstance(entry, ToolResult):
        return entry
    with db.transaction():
        if db.get_event(entry.event_id, for_update=True) is not None:
            current = db.waitlist_entry(entry.id, for_update=True)
            if current is not None and db.end_waitlist_entry(
                    current.id, "declined" if current.state == "offered" else "left", ctx.now):
                pass_on(db, entry.event_id, ctx)
    return ToolResult(
        action=name,
        status=Status.SUCCESS,
        message=_("You left the waitlist."),
        data={"waitlist": {"id": entry.id, "eventId": entry.event_id}},
        next_action=_("Done."),
        target=entry.event_id,
    )
