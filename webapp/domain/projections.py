"""What a result shows of stored things: small projections, never whole rows.

Agents pay for every byte they read and people should only see what they need, so each use
has its own projection (a search item is smaller than the details of one event).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from ..storage import Activity
from ..storage import Availability
from ..storage import Event
from ..storage import EventSummary
from ..storage import Registration
from .pages import Pages

# Organizer-written fields, named in every result that returns them (see ToolResult).
UNTRUSTED_EVENT_FIELDS = ("title", "summary", "description", "venue", "cancellationReason",
                          "streetAddress", "onlinePlatform", "topicTags", "paymentNote")
# What an organizer may add to an event, by the key results give it under: each only when
# given (events imported without them look as before).
ORGANIZER_DETAILS = {"language": "language", "street_address": "streetAddress",
                     "online_platform": "onlinePlatform", "link_sent": "linkSent",
                     "topic_tags": "topicTags", "payment_note": "paymentNote"}


def local_time(moment: datetime, timezone: ZoneInfo) -> str:
    """ISO 8601 in the site's time zone, with its offset (e.g. 2026-12-14T10:00:00+08:00)."""
    return moment.astimezone(timezone).isoformat(timespec="seconds")


def event_state(event: Event, now: datetime) -> str:
    """open, full, closed or cancelled: registration closes at the deadline; full when no
    seat is left; cancelled once its organization cancelled it, whatever else."""
    return _state(event.starts_at, event.registration_deadline, event.remaining_seats, now,
                  cancelled=event.cancelled_at is not None)


def _state(starts_at: datetime, deadline: datetime, remaining: int | None,
           now: datetime, cancelled: bool) -> str:
    if cancelled:
        return "cancelled"
    if now > deadline or now >= starts_at:
        return "closed"
    if remaining == 0:
        return "full"
    return "open"


def event_summary(event: EventSummary, timezone: ZoneInfo, pages: Pages) -> dict[str, Any]:
    """An event as a list names it (saved events; a search adds `event_listing`'s glance),
    with the language of its text when the organizer declared it."""
    summary = {
        "id": event.id,
        "url": pages.event(event.id),
        "title": event.title,
        "summary": event.summary,
        "startsAt": local_time(event.starts_at, timezone),
        "location": event.location,
        "price": event.price,
        "level": event.level,
    }
    if event.language:
        summary["language"] = event.language
    return summary


def organizer_details(event: Event) -> dict[str, Any]:
    """What the organizer added to an event (`ORGANIZER_DETAILS`), those given only: its text's
    language, street address, online platform and when its link is sent, topic tags (a
    list) and payment note."""
    given = {key: getattr(event, name) for name, key in ORGANIZER_DETAILS.items()
             if getattr(event, name)}
    if "topicTags" in given:
        given["topicTags"] = list(given["topicTags"])
    return given


def event_listing(event: EventSummary, seats: Availability, now: datetime,
                  timezone: ZoneInfo, pages: Pages) -> dict[str, Any]:
    """A search result item with what a card shows at a glance (counted now)."""
    return {**event_summary(event, timezone, pages),
            **_at_a_glance(event, seats.remaining_seats, seats.registration_deadline,
                           seats.price_amount, seats.price_currency, now, timezone,
                           cancelled=seats.cancelled, waitlist=seats.waitlist)}


def event_details(event: Event, now: datetime, timezone: ZoneInfo, pages: Pages
                  ) -> dict[str, Any]:
    """Everything a visitor needs to decide about one event (seats counted now); a
    cancelled one says why, when its organization said (`cancellationReason`)."""
    details = {
        **event_summary(event, timezone, pages),
        "description": event.description,
        "endsAt": local_time(event.ends_at, timezone),
        "venue": event.venue,
        **_at_a_glance(event, event.remaining_seats, event.registration_deadline,
                       event.price_amount, event.price_currency, now, timezone,
                       cancelled=event.cancelled_at is not None, waitlist=event.waitlist),
    }
    if event.cancelled_at is not None and event.cancellation_reason:
        details["cancellationReason"] = event.cancellation_reason
    return {**details, **organizer_details(event)}


def _at_a_glance(event: EventSummary, remaining: int | None, deadline: datetime,
                 amount: int | None, currency: str, now: datetime, timezone: ZoneInfo,
                 cancelled: bool, waitlist: bool) -> dict[str, Any]:
    """Seats left, whether registration is open and until when, whether a full event can
    still be waited for, and the price."""
    return {
        "remainingSeats": remaining,
        "registrationDeadline": local_time(deadline, timezone),
        "state": _state(event.starts_at, deadline, remaining, now, cancelled),
        # So a full event is no dead end at a glance: "Full · waitlist open".
        "waitlist": waitlist,
        # What it costs: 0 when free; None when paid and the organizer gave no amount.
        "priceAmount": 0 if event.price == "free" else amount,
        "priceCurrency": currency,
    }


def mask_email(email: str) -> str:
    """Enough of an address to recognise it, never the whole of it: r***@example.com."""
    local, _, domain = email.partition("@")
    return f"{local[:1]}***@{domain}"


def registration_view(registration: Registration) -> dict[str, Any]:
    """A registration as results show it (the e-mail masked)."""
    return {
        "id": registration.id,
        "eventId": registration.event_id,
        "attendeeName": registration.attendee_name,
        "email": mask_email(registration.email),
        "state": registration.state,
    }


def registration_summary(registration: Registration, timezone: ZoneInfo) -> dict[str, Any]:
    """A registration with its event's title and start, for lists and reviews."""
    return {
        **registration_view(registration),
        "eventTitle": registration.event_title,
        "startsAt": local_time(registration.event_starts_at, timezone),
    }


def activity_view(entry: Activity, timezone: ZoneInfo) -> dict[str, Any]:
    """One line of the visitor's activity, as their page shows it."""
    return {"at": local_time(entry.at, timezone), "source": entry.source,
            "action": entry.action, "status": entry.status, "targetId": entry.target_id}
