"""Events in people's calendars: an event's .ics file, an "Add to Google Calendar" address,
and a visitor's private feed of their registrations (made and stopped on their registrations
page, see `registrations`). Calendar files are RFC 5545, written by the `icalendar` library,
with times in the site's zone (its VTIMEZONE travels with them). They have no language: the
event's own words are the organizer's."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from flask import Blueprint
from flask import Response
from flask import abort
from flask import url_for
from icalendar import Calendar
from icalendar import Event as CalendarEvent

from ..clock import site_now
from ..clock import site_timezone
from ..domain.actions import calendars as actions
from ..storage.connection import get_db
from .addresses import site_url
from .caching import public
from .calls import action_context

bp = Blueprint("calendars", __name__, url_prefix="/calendar")
PRODUCT = "-//webmcp-events//Events in Taiwan//EN"
GOOGLE_CALENDAR = "https://calendar.google.com/calendar/render"


@public(max_age=300)
@bp.get("/<event_id>.ics")
def event_file(event_id: str) -> Response:
    """One event as a calendar file to download (or open in a calendar application)."""
    event = actions.event_for_calendar(get_db(), event_id, action_context(None))
    if event is None:
        abort(404)
    response = calendar_file([event], event["title"])
    response.headers["Content-Disposition"] = f'attachment; filename="{event_id}.ics"'
    return response


@bp.get("/feed/<token>.ics")
def feed(token: str) -> Response:
    """A visitor's private feed: their registrations' events, the cancelled ones marked so,
    as long as the address is theirs (a replaced or stopped address is not found). Never
    cached: it is personal."""
    events = actions.feed_events(get_db(), token, action_context(None))
    if events is None:
        abort(404)
    return calendar_file(events, "WebMCP Events")


def page_of(event: dict[str, Any]) -> str:
    """The full address of an event's page (neutral: each reader gets their language)."""
    return site_url() + url_for("events.detail", event_id=event["id"], lang_code=None)


def calendar_event(event: dict[str, Any]) -> CalendarEvent:
    """One event (as its details show it) as a VEVENT. Its UID is the same in every file, so
    a calendar that has the event updates it rather than adding it twice. In a feed the event
    also says whether it is cancelled for this visitor, at which revision (`sequence`): a
    calendar removes an event only when told so under its UID, at a higher SEQUENCE."""
    page = page_of(event)
    entry = CalendarEvent.new(
        uid=f"{event['id']}@{site_url().split('://', 1)[-1]}", summary=event["title"],
        start=_in_site_zone(event["startsAt"]), end=_in_site_zone(event["endsAt"]),
        stamp=site_now().astimezone(UTC), location=event["venue"], url=page,
        description=f"{event['summary']}\n\n{page}")
    if "cancelled" in event:
        entry.add("status", "CANCELLED" if event["cancelled"] else "CONFIRMED")
        entry.add("sequence", event["sequence"])
    return entry


def calendar_file(events: list[dict[str, Any]], name: str) -> Response:
    """A calendar of `events` as a text/calendar answer, with the zone its times are in."""
    calendar = Calendar.new(prodid=PRODUCT, name=name,
                            subcomponents=[calendar_event(event) for event in events])
    calendar.add_missing_timezones()
    return Response(calendar.to_ical(), mimetype="text/calendar")


def google_calendar_url(event: dict[str, Any]) -> str:
    """An address that opens Google Calendar with the event filled in (times in UTC, shown
    in the site's zone)."""
    def utc(iso: str) -> str:
        return datetime.fromisoformat(iso).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")

    return GOOGLE_CALENDAR + "?" + urlencode({
        "action": "TEMPLATE", "text": event["title"],
        "dates": f"{utc(event['startsAt'])}/{utc(event['endsAt'])}",
        "details": f"{event['summary']}\n\n{page_of(event)}", "location": event["venue"],
        "ctz": site_timezone().key})


def _in_site_zone(iso: str) -> datetime:
    return datetime.fromisoformat(iso).astimezone(site_timezone())


def init_app(app: Any) -> None:
    """Let templates link to Google Calendar."""
    app.jinja_env.globals.update(google_calendar_url=google_calendar_url)
