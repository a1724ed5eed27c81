"""Registering and cancelling: an agent may prepare, only a person confirms.

A prepare action validates the request and stores a pending confirmation: a random,
single-use token (only its hash is stored) bound to the visitor, the action and its target,
valid for five minutes. The page shows the token in a human-only confirm form (no `toolname`).
Confirming spends the token and changes the seats in one transaction that re-checks
everything, so concurrent confirmations can never sell more seats than there are; the mail
reporting it is queued in that transaction too (`registration_mail`).

On a full event whose waitlist is on, the same prepare holds joining the waitlist instead
(the payload says `waitlist`), which the person confirms with `actions.waitlist.join_waitlist`;
every seat a confirmed cancellation frees is passed on to the first one waiting
(`domain.waitlist`) in the transaction that frees it.

A confirmation prepared where no page shows it (by an agent over MCP) waits on the visitor's
review page (`pending_reviews`), whose confirm forms hold a review token (the stored hash,
signed with the site's secret: `domain/tokens.py`), so the person can confirm in their own
browser while every rule above still holds, and showing the page changes nothing.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import replace
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel import ngettext

from flask_webmcp.actions import human_action
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.result import conflict
from flask_webmcp.result import not_found

from ...storage import Activity
from ...storage import Confirmation
from ...storage import Event
from ...storage import Registration
from ...storage import Storage
from ..activity import ACTIVITY_WORDS
from ..activity import WENT_THROUGH
from ..activity import logged_as
from ..catalog import CATALOG
from ..directions import already_registered
from ..directions import ask_the_person
from ..directions import unknown_registration
from ..projections import activity_view
from ..projections import event_details
from ..projections import event_state
from ..projections import local_time
from ..projections import mask_email
from ..projections import registration_summary
from ..projections import registration_view
from ..registration_mail import queue_registration_cancelled
from ..registration_mail import queue_registration_confirmed
from ..schemas import CancelFromMailInput
from ..schemas import CancelFromMailParams
from ..schemas import ConfirmCancellationInput
from ..schemas import ConfirmCancellationParams
from ..schemas import ConfirmInput
from ..schemas import ConfirmParams
from ..schemas import PrepareEventRegistrationParams
from ..schemas import RegistrationParams
from ..tokens import hash_token
from ..waitlist import pass_on
from ..waitlist import waitlist_view
from . import ActionContext
from .events import unknown_event

CONFIRMATION_LIFETIME = timedelta(minutes=5)
CONFIRM_REGISTRATION = "confirm_registration"
JOIN_WAITLIST = "join_waitlist"
CONFIRM_CANCELLATION = "confirm_cancellation"
DISCARD_CANCELLATION = "discard_cancellation"
DISCARD_REGISTRATION = "discard_registration"
# The buttons a person presses to confirm: the pages show them, and nextAction names them.
CONFIRM_REGISTRATION_BUTTON = _l("Confirm registration")
CONFIRM_CANCELLATION_BUTTON = _l("Cancel my registration")
JOIN_WAITLIST_BUTTON = _l("Join the waitlist")
# The buttons that ask for a review, which a person presses again once one expired.
PREPARE_BUTTONS = {CONFIRM_REGISTRATION: _l("Next: check your details"),
                   CONFIRM_CANCELLATION: _l("Cancel the chosen registration…")}


def confirmation_minutes() -> int:
    """How long a review holds, in the whole minutes people are told."""
    return int(CONFIRMATION_LIFETIME.total_seconds() // 60)


def own_registration(db: Storage, registration_id: str, visitor_id: str | None,
                     for_update: bool = False) -> Registration | None:
    """The visitor's registration with this id; another visitor's is None, like an unknown one
    (with `for_update`, locked until the end of the transaction reading it)."""
    registration = db.get_registration(registration_id, for_update)
    if registration is None or registration.visitor_id != visitor_id:
        return None
    return registration


def _await_person(db: Storage, ctx: ActionContext, *, name: str, confirms: str,
                  target: str, payload: dict[str, Any], review: dict[str, Any], button: object,
                  message: str, untrusted: tuple[str, ...],
                  entered: dict[str, Any] | None = None, waitlist: bool = False) -> ToolResult:
    """Hold a write for a person: store its single-use confirmation and answer with the review.

    The token goes only to the page (the human-only confirm form), with what the person
    `entered` as they typed it (the review shows it in full and the form keeps it, while the
    envelope masks it); the agent is told to stop and let the person press `button`. The page
    learns that confirming joins the `waitlist` (the agent reads it in `message`).
    """
    assert ctx.visitor_id is not None, "a confirmation belongs to a visitor"
    token = secrets.token_urlsafe(32)
    expires = ctx.now + CONFIRMATION_LIFETIME
    db.create_confirmation(Confirmation(
        token_hash=hash_token(token), visitor_id=ctx.visitor_id, action=confirms,
        target_id=target, created_at=ctx.now, expires_at=expires, payload=payload,
        source=ctx.source))
    return ToolResult(
        action=name,
        status=Status.CONFIRMATION_REQUIRED,
        message=message,
        data={"review": {**review, "expiresAt": local_time(expires, ctx.timezone)},
              "reviewUrl": ctx.pages.pending_review()},
        requires_user_decision=True,
        next_action=ask_the_person(ctx.pages, button),
        untrusted_fields=untrusted,
        target=target,
        page_only={"confirmation_token": token, "entered": entered or {}, "waitlist": waitlist},
    )


def own_confirmation(db: Storage, token: str, ctx: ActionContext, name: str,
                     target: str | None = None, confirms: str | None = None,
                     waitlist: bool | None = False) -> Confirmation | ToolResult:
    """The visitor's confirmation for action `confirms` (`name` unless given; and `target`;
    joining the waitlist when `waitlist`, else not; either when None), or the not_found of
    action `name` refusing it.

    Another visitor's token, a token for another action or target, and an unknown token all
    look the same: not_found, revealing nothing. Call it in the transaction that spends the
    token: the token stays locked until it ends, so a racing request waits and finds it spent.
    """
    confirmation = db.get_confirmation(ctx.review_tokens.hash_of(token), for_update=True)
    if (confirmation is None or confirmation.visitor_id != ctx.visitor_id
            or confirmation.action != (confirms or name)
            or waitlist not in (None, bool(confirmation.payload.get("waitlist")))
            or (target is not None and confirmation.target_id != target)):
        return not_found(name, _("This confirmation does not exist."),
                         next_action=_("Stop and tell the user; they can start again."))
    return confirmation


def spent_or_expired(confirmation: Confirmation, ctx: ActionContext, name: str
                     ) -> ToolResult | None:
    """The conflict refusing a confirmation already used or out of time, else None."""
    if confirmation.used_at is not None:
        return conflict(name, _("This confirmation was already used."))
    if confirmation.expires_at <= ctx.now:
        return conflict(name, ngettext(
            "More than %(num)s minute has passed: press “%(button)s” again.",
            "More than %(num)s minutes have passed: press “%(button)s” again.",
            confirmation_minutes(), button=PREPARE_BUTTONS[confirmation.action]))
    return None


def closed_or_full(name: str, state: str) -> ToolResult | None:
    """The conflict refusing a seat of an event full, closed or cancelled, else None."""
    if state == "cancelled":
        return conflict(name, _("This event is cancelled: registration is closed."),
                        next_action=_("Tell the user the event is cancelled and will not take "
                                      "place; do not retry."))
    if state == "full":
        return conflict(name, _("This event is full: no seat is left."),
                        next_action=_("Tell the user the event is full; do not retry."))
    if state == "closed":
        return conflict(name, _("Registration for this event is closed."),
                        next_action=_("Tell the user registration is closed; do not retry."))
    return None


def email_taken(name: str) -> ToolResult:
    """The conflict refusing a second seat of one event for one e-mail address."""
    return conflict(name, _("This e-mail address is already registered for this event: each "
                            "attendee registers once, with their own address."),
                    next_action=_("Tell the user this e-mail address already has a seat at "
                                  "this event; do not retry with it."))


@logged_as(_l("Prepare event registration"),
           _l("%(who)s prepared a registration for “%(title)s”: "
              "waiting for you to confirm"),
           completed_by=(CONFIRM_REGISTRATION, DISCARD_REGISTRATION, JOIN_WAITLIST))
@CATALOG.action("prepare_event_registration",
                answers=(Status.CONFIRMATION_REQUIRED, Status.NOT_FOUND, Status.CONFLICT))
def prepare_event_registration(db: Storage, params: PrepareEventRegistrationParams,
                               ctx: ActionContext) -> ToolResult:
    """Check that the visitor can register and hold the details for a person to confirm; on a
    full event with a waitlist, hold joining its waitlist instead, and say so."""
    name = "prepare_event_registration"
    assert ctx.visitor_id is not None, "registering needs a visitor"
    event = db.get_event(params["event_id"], count_seats=True)
    if event is None:
        return unknown_event(name)
    state = event_state(event, ctx.now)
    waits = state == "full" and event.waitlist
    refused = None if waits else closed_or_full(name, state)
    if refused:
        return refused
    check = db.registration_check(ctx.visitor_id, event.id, params["email"])
    existing = check.visitor_registration
    if existing:
        # The visitor's own registration: its id may be told (to cancel it, say). Another
        # person's registration with the same address is never named (email_taken).
        refused = conflict(name, _("You are already registered for this event."),
                           next_action=already_registered(ctx.pages))
        return replace(refused, data={"registration": registration_view(existing)})
    if check.email_taken:
        return email_taken(name)
    entered = {"attendee_name": params["attendee_name"], "email": params["email"]}
    if waits:
        return _hold_joining(db, ctx, name, event, entered,
                             already_waiting=check.waiting_entry is not None)
    payload = {"attendeeName": params["attendee_name"], "email": params["email"]}
    return _await_person(
        db, ctx, name=name, confirms=CONFIRM_REGISTRATION, target=event.id, payload=payload,
        review=registration_review(event, payload, ctx),
        button=CONFIRM_REGISTRATION_BUTTON,
        message=_("Nothing is registered yet: the user must review and confirm it on this "
                  "site."),
        untrusted=("data.review.event.title", "data.review.event.venue"),
        entered={"attendee_name": params["attendee_name"], "email": params["email"]})


def _hold_joining(db: Storage, ctx: ActionContext, name: str, event: Event,
                  entered: dict[str, Any], already_waiting: bool) -> ToolResult:
    """Hold joining a full event's waitlist for the person to confirm (the same review as a
    registration, its message saying plainly that it is no seat); a visitor already waiting
    is told so."""
    assert ctx.visitor_id is not None, "waiting needs a visitor"
    if already_waiting:
        return conflict(name, _("You are already on the waitlist of this event."),
                        next_action=_("Tell the user they are already on the waitlist; their "
                                      "place is listed under My registrations. Do not retry."))
    payload = {"attendeeName": entered["attendee_name"], "email": entered["email"],
               "waitlist": True}
    return _await_person(
        db, ctx, name=name, confirms=CONFIRM_REGISTRATION, target=event.id, payload=payload,
        review=registration_review(event, payload, ctx), button=JOIN_WAITLIST_BUTTON,
        message=_("This event is full: nothing is registered and no seat is taken. What waits "
                  "for the user to confirm on this site is joining the event's waitlist, not "
                  "a seat: when a seat frees, the first person waiting is offered it, held "
                  "for them for a while, and takes it only by accepting it on this site."),
        untrusted=("data.review.event.title", "data.review.event.venue"),
        entered=entered, waitlist=True)


def registration_review(event: Event, payload: dict[str, Any], ctx: ActionContext
                        ) -> dict[str, Any]:
    """What a person reviews before confirming a registration (the e-mail masked)."""
    return {
        "event": {"id": event.id, "url": ctx.pages.event(event.id), "title": event.title,
                  "startsAt": local_time(event.starts_at, ctx.timezone), "venue": event.venue},
        "attendeeName": payload["attendeeName"],
        "email": mask_email(payload["email"]),
    }


@logged_as(_l("Confirm registration"),
           _l("%(who)s registered for “%(title)s”"))
@human_action(CONFIRM_REGISTRATION, schema=ConfirmInput, creates=True,
              answers=(Status.SUCCESS, Status.NOT_FOUND, Status.CONFLICT))
def confirm_registration(db: Storage, params: ConfirmParams, ctx: ActionContext
                         ) -> ToolResult:
    """A person confirms: spend the token and take one seat, re-checking everything."""
    name = CONFIRM_REGISTRATION
    with db.transaction():
        confirmation = own_confirmation(db, params["confirmation_token"], ctx, name)
        if isinstance(confirmation, ToolResult):
            return confirmation
        refused = spent_or_expired(confirmation, ctx, name)
        if refused:
            return refused
        event = db.get_event(confirmation.target_id, count_seats=True, for_update=True)
        if event is None:
            return unknown_event(name)
        refused = closed_or_full(name, event_state(event, ctx.now))
        if refused:
            return refused
        check = db.registration_check(confirmation.visitor_id, event.id,
                                      confirmation.payload["email"])
        existing = check.visitor_registration
        if existing:
            return replace(conflict(name, _("You are already registered for this event.")),
                           data={"registration": registration_view(existing)})
        if check.email_taken:
            return email_taken(name)
        registration = Registration(
            id=f"reg-{secrets.token_urlsafe(12)}", event_id=event.id,
            visitor_id=confirmation.visitor_id,
            attendee_name=confirmation.payload["attendeeName"],
            email=confirmation.payload["email"], state="active", created_at=ctx.now,
            event_title=event.title, event_starts_at=event.starts_at, language=ctx.language)
        db.create_registration(registration)
        db.use_confirmation(confirmation.token_hash, ctx.now)
        _leave_line(db, check.waiting_entry, event.id, ctx)
        # In the same transaction: the mail is queued exactly when the seat is taken.
        queue_registration_confirmed(db, registration, event, ctx)
    return ToolResult(
        action=name,
        status=Status.SUCCESS,
        message=_("You are registered: one seat is yours."),
        data={"registration": registration_view(registration)},
        next_action=_("Done. The registration is listed under My registrations."),
        target=registration.id,
    )


def _leave_line(db: Storage, entry_id: str | None, event_id: str, ctx: ActionContext
                ) -> None:
    """A visitor who took a seat another way leaves the event's waitlist (their live entry
    in it, if any), and a seat offered to them goes to the next one waiting."""
    if entry_id is not None and db.end_waitlist_entry(entry_id, "left", ctx.now):
        pass_on(db, event_id, ctx)


@logged_as(_l("Prepare registration cancellation"),
           _l("%(who)s prepared cancelling “%(title)s”: "
              "waiting for you to confirm"),
           completed_by=(CONFIRM_CANCELLATION, DISCARD_CANCELLATION))
@CATALOG.action("prepare_registration_cancellation",
                answers=(Status.CONFIRMATION_REQUIRED, Status.NOT_FOUND, Status.CONFLICT))
def prepare_registration_cancellation(db: Storage, params: RegistrationParams,
                                      ctx: ActionContext) -> ToolResult:
    """Check the registration can be cancelled and hold it for a person to confirm."""
    name = "prepare_registration_cancellation"
    registration = own_registration(db, params["registration_id"], ctx.visitor_id)
    if registration is None:
        return not_found(name, _("You have no registration with this id."),
                         next_action=unknown_registration(ctx.pages))
    if registration.state != "active":
        return conflict(name, _("This registration is already cancelled."))
    return _hold_cancellation(db, ctx, name, registration)


@logged_as(_l("Cancel from a mailed link"),
           _l("%(who)s opened “%(title)s” from a mailed link to cancel it: "
              "waiting for you to confirm"),
           completed_by=(CONFIRM_CANCELLATION, DISCARD_CANCELLATION))
@human_action("cancel_from_mail", schema=CancelFromMailInput,
              answers=(Status.CONFIRMATION_REQUIRED, Status.NOT_FOUND, Status.CONFLICT))
def cancel_from_mail(db: Storage, params: CancelFromMailParams, ctx: ActionContext
                     ) -> ToolResult:
    """Cancel through the manage link of a mail, on any device: the registration joins this
    browser (the link proves the mailbox, as a sign-in link does), then waits for the person
    to confirm its cancellation like any other."""
    name = "cancel_from_mail"
    assert ctx.visitor_id is not None, "cancelling needs a visitor"
    registration = db.get_registration(params["registration_id"])
    if registration is None or not ctx.manage_links.signs(registration.id,
                                                          params["signature"]):
        return not_found(name, _("This link leads to no registration. Use the link of the "
                                 "latest mail about it."))
    if registration.state != "active":
        return conflict(name, _("This registration is already cancelled."))
    if (registration.visitor_id != ctx.visitor_id
            and not db.adopt_registration(registration.id, ctx.visitor_id)):
        return conflict(name, _("This browser already holds another registration for this "
                                "event: cancel it under “My registrations”."))
    return _hold_cancellation(db, ctx, name, registration)


def _hold_cancellation(db: Storage, ctx: ActionContext, name: str,
                       registration: Registration) -> ToolResult:
    """Hold a registration's cancellation for the person to confirm."""
    return _await_person(
        db, ctx, name=name, confirms=CONFIRM_CANCELLATION, target=registration.id,
        payload={}, review=cancellation_review(registration, ctx),
        button=CONFIRM_CANCELLATION_BUTTON,
        message=_("Nothing is cancelled yet: the user must review and confirm it on this "
                  "site."),
        untrusted=("data.review.registration.eventTitle",))


def cancellation_review(registration: Registration, ctx: ActionContext) -> dict[str, Any]:
    """What a person reviews before confirming a cancellation."""
    return {
        "registration": registration_summary(registration, ctx.timezone),
        "effect": _("Cancelling frees one seat for someone else and cannot be undone."),
    }


@logged_as(_l("Confirm cancellation"),
           _l("%(who)s cancelled the registration for “%(title)s”"))
@human_action(CONFIRM_CANCELLATION, schema=ConfirmCancellationInput,
              answers=(Status.SUCCESS, Status.NOT_FOUND, Status.CONFLICT))
def confirm_cancellation(db: Storage, params: ConfirmCancellationParams, ctx: ActionContext
                         ) -> ToolResult:
    """A person confirms: cancel once and free one seat; a repeat frees nothing."""
    name = CONFIRM_CANCELLATION
    with db.transaction():
        confirmation = own_confirmation(db, params["confirmation_token"], ctx, name,
                                         target=params["registration_id"])
        if isinstance(confirmation, ToolResult):
            return confirmation
        registration = db.get_registration(confirmation.target_id, for_update=True)
        if registration is None:
            return not_found(name, _("This registration does not exist."))
        already = registration.state == "cancelled"
        if not already:
            refused = spent_or_expired(confirmation, ctx, name)
            if refused:
                return refused
            db.cancel_registration(registration.id, ctx.now)
            db.use_confirmation(confirmation.token_hash, ctx.now)
            registration = replace(registration, state="cancelled", cancelled_at=ctx.now)
            # The seat is the next one waiting's, offered in the transaction that frees it.
            pass_on(db, registration.event_id, ctx)
            # Events are never deleted; were one gone, there would be nothing to describe.
            event = db.get_event(registration.event_id)
            if event is not None:
                queue_registration_cancelled(db, registration, event, ctx)
    return ToolResult(
        action=name,
        status=Status.SUCCESS,
        message=(_("It was already cancelled; nothing changed.") if already
                 else _("Your registration is cancelled and its seat is free again.")),
        data={"registration": registration_view(registration), "alreadyCancelled": already},
        next_action=_("Done."),
        target=registration.id,
    )


@logged_as(_l("Keep registration"),
           _l("%(who)s kept the registration for “%(title)s”: nothing was cancelled"))
@human_action(DISCARD_CANCELLATION, schema=ConfirmCancellationInput,
              answers=(Status.SUCCESS, Status.NOT_FOUND))
def discard_cancellation(db: Storage, params: ConfirmCancellationParams, ctx: ActionContext
                         ) -> ToolResult:
    """A person keeps their registration: the prepared cancellation is spent unused, so
    nothing is left waiting for them to confirm; doing it again changes nothing."""
    name = DISCARD_CANCELLATION
    with db.transaction():
        confirmation = own_confirmation(db, params["confirmation_token"], ctx, name,
                                         target=params["registration_id"],
                                         confirms=CONFIRM_CANCELLATION)
        if isinstance(confirmation, ToolResult):
            return confirmation
        registration = own_registration(db, confirmation.target_id, ctx.visitor_id,
                                        for_update=True)
        if registration is None:
            return not_found(name, _("This registration does not exist."))
        if confirmation.used_at is None:
            db.use_confirmation(confirmation.token_hash, ctx.now)
    return ToolResult(
        action=name,
        status=Status.SUCCESS,
        message=(_("Your registration is kept: nothing was cancelled.")
                 if registration.state == "active"
                 else _("This registration is already cancelled.")),
        data={"registration": registration_view(registration)},
        next_action=_("Done."),
        target=registration.id,
    )


@logged_as(_l("Don't register"),
           _l("%(who)s chose not to register for “%(title)s”: nothing was registered"))
@human_action(DISCARD_REGISTRATION, schema=ConfirmInput,
              answers=(Status.SUCCESS, Status.NOT_FOUND))
def discard_registration(db: Storage, params: ConfirmParams, ctx: ActionContext
                         ) -> ToolResult:
    """A person drops a registration (or a place on a waitlist) prepared for them, by an
    agent say: its review is spent unused, so nothing is left waiting for them; doing it again
    changes nothing."""
    name = DISCARD_REGISTRATION
    with db.transaction():
        confirmation = own_confirmation(db, params["confirmation_token"], ctx, name,
                                        confirms=CONFIRM_REGISTRATION, waitlist=None)
        if isinstance(confirmation, ToolResult):
            return confirmation
        settled = confirmation.used_at is not None
        if not settled:
            db.use_confirmation(confirmation.token_hash, ctx.now)
    return ToolResult(
        action=name,
        status=Status.SUCCESS,
        message=(_("This was already settled; nothing changed.") if settled
                 else _("Nothing was registered: the prepared registration is dropped.")),
        data={"eventId": confirmation.target_id},
        next_action=_("Done."),
        target=confirmation.target_id,
    )


def registration_page(db: Storage, event_id: str, ctx: ActionContext) -> dict[str, Any] | None:
    """What an event's registration page shows: the event, and the visitor's active
    registration for it if they have one; None when there is no such event."""
    event = db.get_event(event_id, count_seats=True)
    if event is None:
        return None
    return {"event": event_details(event, ctx.now, ctx.timezone, ctx.pages),
            "existing": held_registration(db, event_id, ctx),
            "waitlist": waitlist_standing(db, event, ctx)}


def reviewed_event(db: Storage, event_id: str, ctx: ActionContext) -> dict[str, Any] | None:
    """The event as a review in place says it (its start–end, price and how to pay), read
    once: without its seats or the visitor's standing, which the review does not show (reading
    the whole registration page for it was four more trips to a PostgreSQL server)."""
    event = db.get_event(event_id)
    return None if event is None else event_details(event, ctx.now, ctx.timezone, ctx.pages)


def waitlist_standing(db: Storage, event: Event, ctx: ActionContext) -> dict[str, Any]:
    """What the event's pages say of its waitlist: whether a person may join it now (`open`:
    the event is full and its waitlist on) and the visitor's place in it, if any (`place`)."""
    place = (db.live_waitlist_entry(ctx.visitor_id, event.id) if ctx.visitor_id else None)
    return {"open": event.waitlist and event_state(event, ctx.now) == "full",
            "place": waitlist_view(place, ctx.timezone) if place else None}


def held_registration(db: Storage, event_id: str, ctx: ActionContext) -> dict[str, Any] | None:
    """The visitor's active registration for the event, if they hold one (for the pages
    that then say so instead of offering to register)."""
    existing = (db.active_registration(ctx.visitor_id, event_id) if ctx.visitor_id
                else None)
    return registration_view(existing) if existing else None


def registrations_overview(db: Storage, ctx: ActionContext, activity_shown: int
                           ) -> dict[str, Any]:
    """The visitor's registrations (active, then cancelled), their latest activity and how
    many confirmations wait for them (their places on waitlists are get_my_plans')."""
    if ctx.visitor_id is None:
        return {"active": [], "cancelled": [], "activity": [], "pending": 0}
    registrations = [registration_summary(r, ctx.timezone)
                     for r in db.visitor_registrations(ctx.visitor_id)]
    return {
        "active": [r for r in registrations if r["state"] == "active"],
        "cancelled": [r for r in registrations if r["state"] == "cancelled"],
        "activity": activity_lines(db, db.recent_activity(ctx.visitor_id, activity_shown),
                                   ctx.timezone),
        "pending": len(_still_pending(db, ctx)),
    }


def waitlist_places(db: Storage, ctx: ActionContext) -> list[dict[str, Any]]:
    """The visitor's places on waitlists, waiting (with their position) or offered a seat
    (with when its hold ends), soonest event first. Their events' seats are passed on first,
    so an offer shows here whether or not the periodic job ran."""
    if ctx.visitor_id is None:
        return []
    for event_id in {entry.event_id for entry in db.visitor_waitlist(ctx.visitor_id)}:
        pass_on(db, event_id, ctx)
    return [waitlist_view(entry, ctx.timezone) for entry in db.visitor_waitlist(ctx.visitor_id)]


def activity_lines(db: Storage, entries: list[Activity], timezone: ZoneInfo
                   ) -> list[dict[str, Any]]:
    """The activity as the visitor reads it, newest first: what went through (a refused call
    is left out), each line with the title of the event it was about (a registration's
    event, for a registration), a call repeated with the same outcome (saving an event again,
    searching again) shown once, and a step the person then confirmed shown only as its
    confirmation ("You registered for …", not also "… prepared a registration")."""
    lines: list[dict[str, Any]] = []
    events: dict[str, Event | None] = {}
    completed: set[tuple[str, str]] = set()  # (action, event id) done after what comes next
    for entry in entries:
        if entry.status not in WENT_THROUGH:
            continue
        line = activity_view(entry, timezone)
        if lines and all(lines[-1][key] == line[key]
                         for key in ("source", "action", "status", "targetId")):
            continue
        target = entry.target_id
        if target is not None and target not in events:
            events[target] = _event_of(db, target)
        event = events.get(target) if target else None
        words = ACTIVITY_WORDS.get(entry.action)
        if event is not None:
            if words and any((action, event.id) in completed for action in words.completed_by):
                continue
            completed.add((entry.action, event.id))
        line["title"] = event.title if event else None
        lines.append(line)
    return lines


def _event_of(db: Storage, target_id: str) -> Event | None:
    """The event an activity line is about: the event itself, or the event of a
    registration; None for anything else (an agent connection) or something gone."""
    event = db.get_event(target_id)
    if event is None:
        registration = db.get_registration(target_id)
        event = db.get_event(registration.event_id) if registration else None
    return event


def registration_details(db: Storage, registration_id: str, ctx: ActionContext
                         ) -> dict[str, Any] | None:
    """One of the visitor's registrations as its page shows it (another visitor's is None),
    with how to pay when the organizer said (the page a person lands on once registered)."""
    found = own_registration(db, registration_id, ctx.visitor_id)
    if found is None:
        return None
    event = db.get_event(found.event_id)
    paying = ({"paymentNote": event.payment_note, "language": event.language}
              if event is not None and event.payment_note else {})
    return {**registration_summary(found, ctx.timezone), **paying}


def mailed_registration(db: Storage, registration_id: str, signature: str,
                        ctx: ActionContext) -> dict[str, Any] | None:
    """The registration a manage link shows (None when the link's signature is not its)."""
    if not ctx.manage_links.signs(registration_id, signature):
        return None
    found = db.get_registration(registration_id)
    return registration_summary(found, ctx.timezone) if found else None


def pending_reviews(db: Storage, ctx: ActionContext) -> list[dict[str, Any]]:
    """What waits for the visitor to confirm, each with the token of its human-only confirm
    form (only the page shows it): `confirms` (the action), `review` (as its prepare
    answered), `expiresAt`, `source` (who prepared it), `token` and, for a registration, the
    `email` in full (the person checks it; the review masks it for agents).

    Showing them changes nothing (the token is a review token, the same on every view); only
    what could still succeed is listed (`_still_pending`).
    """
    return [{"confirms": confirmation.action, "review": review,
             "expiresAt": local_time(confirmation.expires_at, ctx.timezone),
             "minutesLeft": _minutes_left(confirmation, ctx),
             "event": _event_reviewed(db, confirmation, ctx),
             "source": confirmation.source,
             "token": ctx.review_tokens.token_for(confirmation.token_hash),
             "email": confirmation.payload.get("email"),
             "waitlist": bool(confirmation.payload.get("waitlist"))}
            for confirmation, review in _still_pending(db, ctx)]


def _minutes_left(confirmation: Confirmation, ctx: ActionContext) -> int:
    """The whole minutes a person still has to confirm, rounded up (never "0 minutes")."""
    seconds = (confirmation.expires_at - ctx.now).total_seconds()
    return max(1, math.ceil(seconds / 60))


def _event_reviewed(db: Storage, confirmation: Confirmation, ctx: ActionContext
                    ) -> dict[str, Any] | None:
    """The event a prepared registration is for, as its page describes it (start–end, price),
    which the agent's review leaves out; None for a cancellation (its review says enough)."""
    if confirmation.action != CONFIRM_REGISTRATION:
        return None
    event = db.get_event(confirmation.target_id, count_seats=True)
    return None if event is None else event_details(event, ctx.now, ctx.timezone, ctx.pages)


def _still_pending(db: Storage, ctx: ActionContext
                   ) -> list[tuple[Confirmation, dict[str, Any]]]:
    """The visitor's unspent, unexpired confirmations that pressing confirm could still
    carry out, each with its review: the review page lists exactly these and the count on
    My registrations counts exactly these, so the count never leads to an empty page or
    offers to register for an event already joined."""
    if ctx.visitor_id is None:
        return []
    waiting = []
    for confirmation in db.pending_confirmations(ctx.visitor_id, ctx.now):
        review = _review_of(db, confirmation, ctx)
        if review is not None:
            waiting.append((confirmation, review))
    return waiting


def _review_of(db: Storage, confirmation: Confirmation, ctx: ActionContext
               ) -> dict[str, Any] | None:
    """The review of a pending confirmation, as its prepare answered; None when confirming
    it could only be refused: its event is gone, closed or full, the visitor (or the
    address) already holds a seat there (or, joining the waitlist, a place in it), or the
    registration to cancel is gone or already cancelled. A second review of one thing,
    prepared in another tab or by an agent, so leaves as soon as the first is confirmed."""
    if confirmation.action == CONFIRM_REGISTRATION:
        event = db.get_event(confirmation.target_id, count_seats=True)
        waits = bool(confirmation.payload.get("waitlist"))
        if (event is None
                or event_state(event, ctx.now) not in (("open", "full") if waits else ("open",))):
            return None
        check = db.registration_check(confirmation.visitor_id, event.id,
                                      confirmation.payload["email"])
        if (check.visitor_registration or check.email_taken
                or (waits and check.waiting_entry)):
            return None
        return registration_review(event, confirmation.payload, ctx)
    registration = own_registration(db, confirmation.target_id, ctx.visitor_id)
    if registration is None or registration.state != "active":
        return None
    return cancellation_review(registration, ctx)
