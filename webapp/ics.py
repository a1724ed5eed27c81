"""Calendar files (RFC 5545), written by the `icalendar` library: an event as a VEVENT, and
calendars of them with the zone their times are in (its VTIMEZONE travels with them).

One writer for every calendar the site hands out: the pages' `.ics` downloads and private
feeds (`web.calendars`) and the file attached to a registration mail (`mail.kinds`). So an
event has the same UID wherever a calendar got it, and a calendar that has it updates it
rather than adding it twice. The event's own words are the organizer's, in no language of
the site's; only what the site names itself (a feed's name) is in the visitor's language.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from icalendar import Alarm
from icalendar import Calendar
from icalendar import Event as CalendarEvent
from icalendar import Timezone

from .clock import site_now
from .clock import site_timezone

PRODUCT = "-//webmcp-events//Events in Taiwan//EN"
# When a subscribed calendar reminds the person of an event they registered for: the day
# before (to plan the trip), and an hour before (to leave).
REMINDERS = (timedelta(days=1), timedelta(hours=1))


def event_location(event: Mapping[str, Any]) -> str:
    """Where an event is, as a calendar shows it: its venue, then its street address (what a
    calendar's map opens) or the platform an online event runs on. Never the link to join
    one: that is mailed to the people registered, and calendar files are shared."""
    where = event.get("streetAddress") or event.get("onlinePlatform")
    return f"{event['venue']}, {where}" if where else str(event["venue"])


def calendar_event(event: Mapping[str, Any], page: str) -> CalendarEvent:
    """One event (its `id`, `title`, `summary`, `startsAt`, `endsAt` and where it is, as its
    details give them) as a VEVENT linking to its full page address `page`.

    Its UID is the event's id on the site's host, the same in every file. In a feed the event
    also says whether it is cancelled for this visitor, at which revision (`sequence`): a
    calendar removes an event only when told so under its UID, at a higher SEQUENCE. An event
    its organization cancelled (`state`) says so in every file, one revision after the
    file that announced it."""
    entry = CalendarEvent.new(
        uid=f"{event['id']}@{urlsplit(page).netloc}", summary=event["title"],
        start=in_site_zone(event["startsAt"]), end=in_site_zone(event["endsAt"]),
        stamp=site_now().astimezone(UTC), location=event_location(event), url=page,
        description=f"{event['summary']}\n\n{page}")
    if "cancelled" in event:
        entry.add("status", "CANCELLED" if event["cancelled"] else "CONFIRMED")
        entry.add("sequence", event["sequence"])
    elif event.get("state") == "cancelled":
        entry.add("status", "CANCELLED")
        entry.add("sequence", 1)
    return entry


def with_reminders(entry: CalendarEvent) -> CalendarEvent:
    """`entry` with a DISPLAY alarm at each of `REMINDERS` before it starts, unless it is
    cancelled (nobody wants to be reminded of what they will not attend)."""
    if entry.get("status") == "CANCELLED":
        return entry
    for before in REMINDERS:
        # RFC 5545 §3.6.6: a DISPLAY alarm needs a DESCRIPTION, the text it shows.
        alarm = Alarm.new(description=str(entry["SUMMARY"]))
        alarm.add("action", "DISPLAY")
        alarm.add("trigger", -before)
        entry.add_component(alarm)
    return entry


def calendar_bytes(entries: Iterable[CalendarEvent], name: str, method: str | None = None
                   ) -> bytes:
    """A calendar of `entries` named `name`, as the bytes of a `.ics` file; `method` (e.g.
    PUBLISH) when it travels by mail, where RFC 6047 asks the file and its Content-Type to
    name the same one."""
    calendar = Calendar.new(prodid=PRODUCT, name=name, subcomponents=list(entries))
    if method:
        calendar.add("method", method)
    for tzid in sorted(calendar.get_missing_tzids()):
        # Before the events, which refer to it, as icalendar's add_missing_timezones puts it.
        calendar.subcomponents.insert(0, zone_definition(tzid))
    return bytes(calendar.to_ical())


@cache
def zone_definition(tzid: str) -> Timezone:
    """The VTIMEZONE of a zone, made once per process and only read after: making one walks
    every transition of the zone (~10 ms for Asia/Taipei, two thirds of a registration mail's
    making), and it is the same for every calendar."""
    return Timezone.from_tzid(tzid)


def in_site_zone(iso: str) -> datetime:
    """An ISO 8601 time in the site's zone."""
    return datetime.fromisoformat(iso).astimezone(site_timezone())
