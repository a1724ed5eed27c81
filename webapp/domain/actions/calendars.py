"""A visitor's registrations as a private calendar feed.

A person makes the feed's address on their registrations page: a random token in the address,
shown once there and stored only as a hash. A calendar application that subscribes to it sees
the events the visitor registered for. A cancelled one stays in the feed, marked cancelled: a
calendar keeps an event that merely drops out of a feed, so only a cancellation it is told of
takes the event out of the person's days. Making a new address stops the old one; stopping
the feed stops it at once.
Like connecting an agent, this is a person's step, never a tool.
"""

from __future__ import annotations

import secrets
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from flask_webmcp.actions import human_action
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.result import not_found

from ...storage import Registration
from ...storage import Storage
from ..activity import logged_as
from ..projections import event_details
from ..projections import local_time
from ..schemas import NoInput
from ..schemas import NoParams
from ..tokens import hash_token
from . import ActionContext

# Marks a feed token for what it is in an address a person copies.
TOKEN_PREFIX = "cal_"  # noqa: S105 - a prefix, not a secret


@logged_as(_l("Make a calendar address"),
           _l("%(who)s made a new calendar address"))
@human_action("make_calendar_feed", schema=NoInput, creates=True,
              answers=(Status.SUCCESS,))
def make_calendar_feed(db: Storage, params: NoParams, ctx: ActionContext) -> ToolResult:
    """A person makes (or replaces) the private address of their calendar feed."""
    assert ctx.visitor_id is not None, "a feed belongs to a visitor"
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    db.set_calendar_feed(ctx.visitor_id, hash_token(token), ctx.now)
    return ToolResult(
        action="make_calendar_feed",
        status=Status.SUCCESS,
        message=_("Your private calendar address is ready. Copy it now: it is shown only this "
                  "once, and any earlier address no longer works."),
        page_only={"feed_token": token},
    )


@logged_as(_l("Stop the calendar address"),
           _l("%(who)s stopped the calendar address"))
@human_action("stop_calendar_feed", schema=NoInput,
              answers=(Status.SUCCESS, Status.NOT_FOUND))
def stop_calendar_feed(db: Storage, params: NoParams, ctx: ActionContext) -> ToolResult:
    """A person stops their feed: its address stops working at once."""
    if ctx.visitor_id is None or not db.stop_calendar_feed(ctx.visitor_id):
        return not_found("stop_calendar_feed", _("You have no calendar address."))
    return ToolResult(action="stop_calendar_feed", status=Status.SUCCESS,
                      message=_("Your calendar address no longer works."))


def calendar_feed_since(db: Storage, ctx: ActionContext) -> str | None:
    """When the visitor's calendar address was made (ISO 8601 in the site's zone, as every
    time a page is given), or None when they have none."""
    since = db.calendar_feed_since(ctx.visitor_id) if ctx.visitor_id else None
    return local_time(since, ctx.timezone) if since else None


def feed_events(db: Storage, token: str, ctx: ActionContext) -> list[dict[str, Any]] | None:
    """The events the visitor whose feed has this token registered for, soonest first; None
    when no feed has it (never made, replaced or stopped).

    Each is the event's details plus `cancelled` (no registration of theirs for it is
    active, or its organization cancelled the event) and `sequence`, the RFC 5545 revision of
    their calendar entry: each registration and each cancellation after the first
    registration raises it, so a calendar applies the latest (registered, cancelled,
    registered again…).
    """
    visitor_id = db.calendar_feed_owner(hash_token(token))
    if visitor_id is None:
        return None
    by_event: dict[str, list[Registration]] = {}
    for registration in db.visitor_registrations(visitor_id):
        by_event.setdefault(registration.event_id, []).append(registration)
    events = []
    for event_id, registrations in by_event.items():
        event = db.get_event(event_id, count_seats=True)
        if event is None:
            continue
        cancelled = (event.cancelled_at is not None
                     or all(r.state == "cancelled" for r in registrations))
        events.append({**event_details(event, ctx.now, ctx.timezone, ctx.pages),
                       "cancelled": cancelled,
                       "sequence": 2 * (len(registrations) - 1) + int(cancelled)})
    return sorted(events, key=lambda event: event["startsAt"])


def event_for_calendar(db: Storage, event_id: str, ctx: ActionContext
                       ) -> dict[str, Any] | None:
    """An event's details for its calendar file, or None when there is no such event."""
    event = db.get_event(event_id, count_seats=True)
    return event_details(event, ctx.now, ctx.timezone, ctx.pages) if event else None
