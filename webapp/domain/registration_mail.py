"""The mail a registration sends: "registered" when a person confirms one, "cancelled" when
they cancel it, "a seat is yours" when the waitlist offers one, "the event is cancelled" when
its organization cancels it, each queued in the transaction that makes the change
(`Storage.queue_mail`), so the mail is kept exactly when the change is.

The payload holds everything the mail shows, as it was when the change was made: the delivery
loop looks nothing up, and a template fixed later still reaches mail waiting to be sent. Times
are ISO 8601 in the site's zone, with the zone's name beside them; the templates write them
in the person's language. A dedupe key per registration (or place on a waitlist) and kind:
however often a request is retried, one mail of each.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ..mail.kinds import EVENT_CANCELLED
from ..mail.kinds import REGISTRATION_CANCELLED
from ..mail.kinds import REGISTRATION_CONFIRMED
from ..mail.kinds import REGISTRATION_REMINDER
from ..mail.kinds import WAITLIST_JOINED
from ..mail.kinds import WAITLIST_OFFER
from ..storage import Event
from ..storage import Registration
from ..storage import Storage
from ..storage import WaitlistEntry
from .actions import ActionContext
from .projections import event_details
from .projections import local_time

# What a mail says of the organizer's additions to an event, when it has them.
MAILED_DETAILS = ("language", "streetAddress", "onlinePlatform", "linkSent", "paymentNote")
# A reminder goes out the day before: within this time of the event's start.
REMINDED_AHEAD = timedelta(days=1)


def event_facts(event: Event, ctx: ActionContext) -> dict[str, Any]:
    """What a mail says of an event: when (in the site's zone, named), where (with the street
    address, or online the platform and when the link comes), what it costs and how to pay,
    and the full address of its page (the organizer's additions only when given)."""
    details = event_details(event, ctx.now, ctx.timezone, ctx.pages)
    facts = {key: details[key] for key in (
        "id", "title", "summary", "startsAt", "endsAt", "location", "venue", "price",
        "priceAmount", "priceCurrency", *MAILED_DETAILS) if key in details}
    return {**facts, "timeZone": ctx.timezone.key, "url": ctx.pages.event_address(event.id)}


def registration_facts(registration: Registration, event: Event, ctx: ActionContext,
                       language: str) -> dict[str, Any]:
    """What every mail about a registration says of it: its number, the attendee, the event,
    and its manage link in the mail's `language` (that registration, from any device,
    without signing in)."""
    signature = ctx.manage_links.signature_for(registration.id)
    return {"registrationId": registration.id, "attendeeName": registration.attendee_name,
            "manageUrl": ctx.pages.manage_registration(registration.id, signature, language),
            "event": event_facts(event, ctx)}


def queue_registration_confirmed(db: Storage, registration: Registration, event: Event,
                                 ctx: ActionContext) -> bool:
    """Queue the "you are registered" mail, with the registration's number and check-in
    code; call it inside the transaction that creates the registration."""
    payload = {**registration_facts(registration, event, ctx, ctx.language),
               "checkInCode": ctx.check_in_codes.code_for(registration.id)}
    return db.queue_mail(f"registration-confirmed:{registration.id}", registration.email,
                         REGISTRATION_CONFIRMED.name, ctx.language, payload, ctx.now)


def queue_registration_cancelled(db: Storage, registration: Registration, event: Event,
                                 ctx: ActionContext) -> bool:
    """Queue the "your registration is cancelled" mail; call it inside the transaction that
    cancels the registration."""
    payload = registration_facts(registration, event, ctx, ctx.language)
    return db.queue_mail(f"registration-cancelled:{registration.id}", registration.email,
                         REGISTRATION_CANCELLED.name, ctx.language, payload, ctx.now)


def queue_event_cancelled(db: Storage, registration: Registration, event: Event,
                          ctx: ActionContext) -> bool:
    """Queue the "this event is cancelled" mail to an attendee, in the language they
    registered in, with the organization's reason if it gave one; call it inside the
    transaction that cancels the event (an event is cancelled once, so each attendee is
    mailed once)."""
    payload = {**registration_facts(registration, event, ctx, registration.language),
               "reason": event.cancellation_reason}
    return db.queue_mail(f"event-cancelled:{registration.id}", registration.email,
                         EVENT_CANCELLED.name, registration.language, payload, ctx.now)


def queue_waitlist_joined(db: Storage, entry: WaitlistEntry, event: Event, ctx: ActionContext
                          ) -> bool:
    """Queue the "you are on the waitlist" mail: the person's place in line and where it is
    listed, so a place kept only in a browser's cookie is also in their mail; call it inside
    the transaction that takes the place. A place is taken once, so mailed once."""
    payload = {"entryId": entry.id, "attendeeName": entry.attendee_name,
               "position": entry.position,
               "registrationsUrl": ctx.pages.registrations_address(entry.language),
               "event": event_facts(event, ctx)}
    return db.queue_mail(f"waitlist-joined:{entry.id}", entry.email, WAITLIST_JOINED.name,
                         entry.language, payload, ctx.now)


def queue_waitlist_cancelled(db: Storage, entry: WaitlistEntry, event: Event,
                             ctx: ActionContext) -> bool:
    """Queue the "this event is cancelled" mail to a person on its waitlist (waiting, or
    holding an offer), saying their place ends, in the language they joined in; call it
    inside the transaction that cancels the event and ends its waitlist (an event is
    cancelled once, so each place is mailed once)."""
    payload = {"entryId": entry.id, "attendeeName": entry.attendee_name, "waitlisted": True,
               "event": event_facts(event, ctx), "reason": event.cancellation_reason}
    return db.queue_mail(f"event-cancelled:{entry.id}", entry.email, EVENT_CANCELLED.name,
                         entry.language, payload, ctx.now)


def queue_waitlist_offer(db: Storage, entry: WaitlistEntry, event: Event, ctx: ActionContext
                         ) -> bool:
    """Queue the "a seat is yours if you want it" mail of an offer from the waitlist, in the
    language the person joined in, with when the hold ends and where to accept it; call it
    inside the transaction that makes the offer. An entry is offered once, so mailed once."""
    assert entry.offer_ends_at is not None, "only an offer is mailed"
    payload = {"entryId": entry.id, "attendeeName": entry.attendee_name,
               "offerEndsAt": local_time(entry.offer_ends_at, ctx.timezone),
               "acceptUrl": ctx.pages.registrations_address(entry.language),
               "event": event_facts(event, ctx)}
    return db.queue_mail(f"waitlist-offer:{entry.id}", entry.email, WAITLIST_OFFER.name,
                         entry.language, payload, ctx.now)


def queue_reminders(db: Storage, ctx: ActionContext) -> int:
    """Queue the reminder of every active registration whose event starts within
    REMINDED_AHEAD of `ctx.now`, in the language it was made in; how many were new.

    Each registration is reminded once (its dedupe key), however often this runs: run it
    every hour or so (`flask mail remind`; `mail run` does it as it goes). A registration
    made within that last day is not reminded: its confirmation has just arrived. A cancelled
    registration or a past event is never in the window.
    """
    queued = 0
    events: dict[str, Event | None] = {}
    for registration in db.registrations_starting(ctx.now, ctx.now + REMINDED_AHEAD):
        if registration.created_at > registration.event_starts_at - REMINDED_AHEAD:
            continue
        if registration.event_id not in events:
            events[registration.event_id] = db.get_event(registration.event_id)
        event = events[registration.event_id]
        if event is None:
            continue
        payload = {**registration_facts(registration, event, ctx, registration.language),
                   "checkInCode": ctx.check_in_codes.code_for(registration.id)}
        queued += db.queue_mail(f"registration-reminder:{registration.id}", registration.email,
                                REGISTRATION_REMINDER.name, registration.language, payload,
                                ctx.now)
    return queued
