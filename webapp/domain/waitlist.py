"""The waitlist's rules: how long an offered seat is held, and passing seats on.

When a seat of an event frees (a cancellation, a raised capacity, a released held seat) or an
offer ends (declined, or its hold ran out), the first one waiting is offered it (`pass_on`):
the seat is held for them for 24 hours while the event is more than 3 days away, 4 hours while
it is more than a day away, else an hour, and never past the registration deadline; they
accept it with a press on My registrations (`actions.waitlist`), and the offer is mailed to
them. Every write that frees a seat passes it on in its own transaction, the pages that show a
person's places pass their events' seats on first, and `flask waitlist pass-on` (every few
minutes: `make run` does) passes on what nobody looked at: an offer whose hold ran out is
passed on even if the job never ran, and running it again changes nothing.
"""

from __future__ import annotations

from datetime import datetime
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from ..storage import Event
from ..storage import Storage
from ..storage import WaitlistEntry
from .actions import ActionContext
from .projections import local_time
from .registration_mail import queue_waitlist_offer

# How long an offer holds its seat, by how far away the event still is: the first whose
# distance the event is beyond (else LAST_HOLD).
HOLDS = ((timedelta(days=3), timedelta(hours=24)), (timedelta(days=1), timedelta(hours=4)))
LAST_HOLD = timedelta(hours=1)


def offer_ends_at(event: Event, now: datetime) -> datetime | None:
    """When an offer made `now` stops holding its seat (`HOLDS`, never past the registration
    deadline); None when registration is closed, or the event cancelled, and nothing can be
    offered."""
    if event.cancelled_at is not None:
        return None
    ahead = event.starts_at - now
    hold = next((hold for beyond, hold in HOLDS if ahead > beyond), LAST_HOLD)
    ends = min(now + hold, event.registration_deadline, event.starts_at)
    return ends if ends > now else None


def pass_on(db: Storage, event_id: str, ctx: ActionContext) -> list[WaitlistEntry]:
    """Expire the event's offers whose hold ran out and offer each free seat to the next one
    waiting, mailing each offer; the new offers. Inside a transaction of its own (part of the
    caller's, when it has one), the event's row locked like every write that changes its
    seats."""
    with db.transaction():
        event = db.get_event(event_id, for_update=True)
        if event is None:
            return []
        offered = db.pass_on_seats(event.id, ctx.now, offer_ends_at(event, ctx.now))
        for entry in offered:
            queue_waitlist_offer(db, entry, event, ctx)
    return offered


def pass_on_everywhere(db: Storage, ctx: ActionContext) -> int:
    """Pass on the seats of every event still to come where someone waits or holds an offer
    (the periodic job); how many offers were made. Running it again makes none."""
    return sum(len(pass_on(db, event_id, ctx)) for event_id in db.events_waited_for(ctx.now))


def waitlist_view(entry: WaitlistEntry, timezone: ZoneInfo) -> dict[str, Any]:
    """A place on a waitlist as the person's pages show it: waiting (with the position, 1
    being next) or offered (with when the hold ends)."""
    return {
        "id": entry.id,
        "eventId": entry.event_id,
        "eventTitle": entry.event_title,
        "startsAt": local_time(entry.event_starts_at, timezone),
        "attendeeName": entry.attendee_name,
        "state": entry.state,
        "position": entry.position,
        "offerEndsAt": (local_time(entry.offer_ends_at, timezone)
                        if entry.offer_ends_at else None),
    }
