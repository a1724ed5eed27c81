"""Events in people's calendars: an event's .ics file, an "Add to Google Calendar" address,
and a visitor's private feed of their registrations (made and stopped on their registrations
page, see `registrations`). The files are written by `webapp.ics`, which the registration
mail's attachment shares: the same event has the same UID wherever it came from.

The feed's address carries the language of the page it was made on (`/zh-TW/calendar/feed/…`,
see `languages.NAMED_IN_A_LANGUAGE`): a calendar application fetches it with no cookie and
often no Accept-Language, so only the address can say in which language to name the feed.
An address without one (made before addresses had it) is named in the visitor's language as
the request shows it, else Chinese."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from typing import Any
from urllib.parse import urlencode
from urllib.parse import urlsplit

from flask import Blueprint
from flask import Response
from flask import abort
from flask import url_for
from flask_babel import gettext as _
from icalendar import Event as CalendarEvent

from ..clock import site_timezone
from ..domain.actions import calendars as actions
from ..ics import calendar_bytes
from ..ics import calendar_event as ics_event
from ..ics import event_location
from ..ics import with_reminders
from ..storage.connection import get_db
from .addresses import site_url
from .caching import public
from .calls import action_context

bp = Blueprint("calendars", __name__, url_prefix="/calendar")
GOOGLE_CALENDAR = "https://calendar.google.com/calendar/render"


@public(max_age=300)
@bp.get("/<event_id>.ics")
def event_file(event_id: str) -> Response:
    """One event as a calendar file to download (or open in a calendar application), which
    reminds the person a day and an hour before it, as their feed does."""
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
    cached: it is personal. Each event not cancelled reminds the person a day and an hour
    before it starts."""
    events = actions.feed_events(get_db(), token, action_context(None))
    if events is None:
        abort(404)
    return calendar_file(events, _("WebMCP community events: my registrations"))


def page_of(event: dict[str, Any]) -> str:
    """The full address of an event's page (neutral: each reader gets their language)."""
    return site_url() + url_for("events.detail", event_id=event["id"], lang_code=None)


def calendar_event(event: dict[str, Any]) -> CalendarEvent:
    """One event (as its details show it) as a VEVENT linking to its page (`webapp.ics`)."""
    return ics_event(event, page_of(event))


def calendar_file(events: list[dict[str, Any]], name: str) -> Response:
    """A calendar of `events` (each with its reminders) as a text/calendar answer, with the
    zone their times are in."""
    return Response(calendar_bytes((with_reminders(calendar_event(event)) for event in events),
                                   name),
                    mimetype="text/calendar")


def google_calendar_url(event: dict[str, Any]) -> str:
    """An address that opens Google Calendar with the event filled in (times in UTC, shown
    in the site's zone)."""
    def utc(iso: str) -> str:
        return datetime.fromisoformat(iso).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")

    return GOOGLE_CALENDAR + "?" + urlencode({
        "action": "TEMPLATE", "text": event["title"],
        "dates": f"{utc(event['startsAt'])}/{utc(event['endsAt'])}",
        "details": f"{event['summary']}\n\n{page_of(event)}", "location": event_location(event),
        "ctz": site_timezone().key})


def webcal_url(address: str) -> str:
    """A feed's address with the webcal scheme, same host and path: tapped, it opens the
    device's calendar application, ready to subscribe (which then fetches it over https)."""
    return urlsplit(address)._replace(scheme="webcal").geturl()


def init_app(app: Any) -> None:
    """Let templates link to Google Calendar and subscribe to a feed."""
    app.jinja_env.globals.update(google_calendar_url=google_calendar_url)
    app.jinja_env.filters["webcal"] = webcal_url
