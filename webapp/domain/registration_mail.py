"""The mail a registration sends: "registered" when a person confirms one, "cancelled" when
they cancel it, each queued in the transaction that makes the change (`Storage.queue_mail`),
so the mail is kept exactly when the change is.

The payload holds everything the mail shows, as it was when the change was made: the delivery
loop looks nothing up, and a template fixed later still reaches mail waiting to be sent. Times
are ISO 8601 in the site's zone, with the zone's name beside them; the templates write them
in the person's language. A dedupe key per registration and kind: however often a request is
retried, one mail of each.
"""

from __future__ import annotations

from typing import Any

from ..mail.kinds import REGISTRATION_CANCELLED
from ..mail.kinds import REGISTRATION_CONFIRMED
from ..storage import Event
from ..storage import Registration
from ..storage import Storage
from .actions import ActionContext
from .projections import event_details


def event_facts(event: Event, ctx: ActionContext) -> dict[str, Any]:
    """What a mail says of an event: when (in the site's zone, named), where, what it costs,
    and the full address of its page."""
    details = event_details(event, ctx.now, ctx.timezone, ctx.pages)
    facts = {key: details[key] for key in (
        "id", "title", "summary", "startsAt", "endsAt", "location", "venue", "price",
        "priceAmount", "priceCurrency")}
    return {**facts, "timeZone": ctx.timezone.key, "url": ctx.pages.event_address(event.id)}


def queue_registration_confirmed(db: Storage, registration: Registration, event: Event,
                                 ctx: ActionContext) -> bool:
    """Queue the "you are registered" mail, with the registration's number and check-in
    code; call it inside the transaction that creates the registration."""
    payload = {"registrationId": registration.id, "attendeeName": registration.attendee_name,
               "checkInCode": ctx.check_in_codes.code_for(registration.id),
               "event": event_facts(event, ctx)}
    return db.queue_mail(f"registration-confirmed:{registration.id}", registration.email,
                         REGISTRATION_CONFIRMED.name, ctx.language, payload, ctx.now)


def queue_registration_cancelled(db: Storage, registration: Registration, event: Event,
                                 ctx: ActionContext) -> bool:
    """Queue the "your registration is cancelled" mail; call it inside the transaction that
    cancels the registration."""
    payload = {"registrationId": registration.id, "attendeeName": registration.attendee_name,
               "event": event_facts(event, ctx)}
    return db.queue_mail(f"registration-cancelled:{registration.id}", registration.email,
                         REGISTRATION_CANCELLED.name, ctx.language, payload, ctx.now)
