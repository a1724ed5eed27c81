"""Events in calendars: each event's .ics file (RFC 5545, in the Asia/Taipei zone) and Google
Calendar link, and a visitor's private, revocable feed of their registrations."""

from __future__ import annotations

from datetime import datetime
from urllib.parse import parse_qs
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import pytest
from bs4 import BeautifulSoup
from helpers import JSON
from helpers import RENDERINGS
from helpers import attribute
from helpers import one
from icalendar import Calendar
from icalendar import Event as CalendarEvent

EVENT = "evt-webmcp-intro"  # 10:00 to 12:00 in Taipei, two weeks after the suite's today
OTHER = "evt-agent-testing"
TAIPEI = ZoneInfo("Asia/Taipei")


def events_of(answer) -> dict[str, CalendarEvent]:
    """The VEVENTs of a calendar answer, by the event id of their UID."""
    assert answer.status_code == 200 and answer.mimetype == "text/calendar"
    calendar = Calendar.from_ical(answer.data)
    return {str(e["UID"]).split("@")[0]: e for e in calendar.events}


def test_an_event_downloads_as_a_calendar_file_in_taipei_time(client):
    answer = client.get(f"/calendar/{EVENT}.ics")
    assert "attachment" in answer.headers["Content-Disposition"]
    calendar = Calendar.from_ical(answer.data)
    assert [str(zone["TZID"]) for zone in calendar.walk("VTIMEZONE")] == ["Asia/Taipei"]
    event = events_of(answer)[EVENT]
    assert str(event["SUMMARY"]) == "WebMCP Intro Workshop"
    details = client.get(f"/events/{EVENT}", headers=JSON).get_json()["data"]["event"]
    start, end = event.decoded("DTSTART"), event.decoded("DTEND")
    assert start == datetime.fromisoformat(details["startsAt"])
    assert (start.hour, end.hour) == (10, 12)
    assert end == datetime.fromisoformat(details["endsAt"])
    assert start.tzinfo == TAIPEI
    assert str(event["URL"]).endswith(f"/events/{EVENT}")
    assert client.get("/calendar/evt-no-such-event.ics").status_code == 404


def test_the_event_page_offers_the_file_and_google_calendar(client):
    soup = BeautifulSoup(client.get(f"/en/events/{EVENT}").data, "html.parser")
    links = one(soup, ".calendar-links")
    assert attribute(one(links, "a[download]"), "href") == f"/calendar/{EVENT}.ics"
    google = urlsplit(attribute(one(links, 'a[href^="https://calendar.google.com/"]'), "href"))
    query = {key: values[0] for key, values in parse_qs(google.query).items()}
    assert query["action"] == "TEMPLATE" and query["text"] == "WebMCP Intro Workshop"
    day = client.get(f"/events/{EVENT}", headers=JSON).get_json()["data"]["event"]["startsAt"][:10]
    # 10:00 to 12:00 in Taipei, in UTC
    assert query["dates"] == f"{day.replace('-', '')}T020000Z/{day.replace('-', '')}T040000Z"
    assert query["ctz"] == "Asia/Taipei"


def make_feed(visitor) -> str:
    """The visitor makes their calendar address on their page (no JavaScript): the address
    the page then shows, once."""
    visitor.get("/en/registrations")
    made = visitor.post("/en/registrations/calendar")
    assert made.status_code == 303
    page = BeautifulSoup(visitor.get(made.headers["Location"]).data, "html.parser")
    address = attribute(one(page, "#calendar-address"), "value")
    again = BeautifulSoup(visitor.get("/en/registrations").data, "html.parser")
    assert again.select("#calendar-address") == []  # shown once
    return urlsplit(address).path


@pytest.mark.both_backends
def test_a_visitors_feed_follows_their_registrations(visitor, other_visitor):
    """The feed lists the visitor's events; a cancelled one stays, marked cancelled under the
    same UID at a higher SEQUENCE (RFC 5545), since a calendar keeps an event that merely
    drops out of a feed; registering again confirms it at a higher SEQUENCE still."""
    registration = visitor.register(EVENT)
    visitor.register(OTHER)
    feed = make_feed(visitor)
    before = events_of(visitor.get(feed))
    assert set(before) == {EVENT, OTHER}
    assert set(events_of(other_visitor.get(feed))) == {EVENT, OTHER}  # the address is the key
    assert [before[e].status for e in (EVENT, OTHER)] == ["CONFIRMED", "CONFIRMED"]

    _, token = visitor.prepare_cancellation(registration["id"])
    visitor.confirm_cancellation(registration["id"], token)
    after = events_of(visitor.get(feed))
    assert set(after) == {EVENT, OTHER}
    assert (after[EVENT].status, after[OTHER].status) == ("CANCELLED", "CONFIRMED")
    assert after[EVENT].uid == before[EVENT].uid
    assert after[EVENT].sequence > before[EVENT].sequence
    assert after[OTHER].sequence == before[OTHER].sequence
    assert "no-store" in visitor.get(feed).headers["Cache-Control"]

    visitor.register(EVENT)
    again = events_of(visitor.get(feed))[EVENT]
    assert again.status == "CONFIRMED" and again.sequence > after[EVENT].sequence


def test_a_feed_address_can_be_replaced_and_stopped(visitor):
    visitor.register(EVENT)
    first = make_feed(visitor)
    second = make_feed(visitor)
    assert visitor.get(first).status_code == 404
    assert set(events_of(visitor.get(second))) == {EVENT}
    visitor.post("/en/registrations/calendar/stop")
    assert visitor.get(second).status_code == 404
    page = BeautifulSoup(visitor.get("/en/registrations").data, "html.parser")
    assert "Make a calendar address" in one(page, "#calendar-feed").get_text()


def test_an_agent_cannot_make_a_feed(visitor):
    visitor.register(EVENT)
    refused = visitor.post("/registrations/calendar",
                           headers={**JSON, "WebMCP-Agent-Invoked": "true"})
    assert refused.get_json()["status"] != "success"
    page = BeautifulSoup(visitor.get("/en/registrations").data, "html.parser")
    assert "Make a calendar address" in one(page, "#calendar-feed").get_text()


@pytest.mark.both_backends
@pytest.mark.parametrize("language", ["en", "zh-TW"])
def test_my_registrations_answers_once_a_calendar_address_exists(visitor, language):
    """Making a calendar address once made My registrations answer 503 for good, in every
    rendering: the page handed a time to a filter that reads ISO text."""
    visitor.register()
    make_feed(visitor)
    for name, headers in RENDERINGS.items():
        answer = visitor.get(f"/{language}/registrations", headers=headers)
        assert answer.status_code == 200, name
