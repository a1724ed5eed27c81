"""Events in calendars: each event's .ics file (RFC 5545, in the Asia/Taipei zone) and Google
Calendar link, and a visitor's private, revocable feed of their registrations."""

from __future__ import annotations

from datetime import datetime
from datetime import timedelta
from urllib.parse import parse_qs
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import pytest
from bs4 import BeautifulSoup
from helpers import JSON
from helpers import RENDERINGS
from helpers import Visitor
from helpers import attribute
from helpers import one
from icalendar import Calendar
from icalendar import Event as CalendarEvent
from test_organizer_events import ADDRESS
from test_organizer_events import published

from webapp.ics import REMINDERS
from webapp.web.languages import LANGUAGES

EVENT = "evt-webmcp-intro"  # 10:00 to 12:00 in Taipei, two weeks after the suite's today
OTHER = "evt-agent-testing"
TAIPEI = ZoneInfo("Asia/Taipei")
# What a person's calendar application lists their feed as, in the language it was made in.
FEED_NAMES = {"zh-TW": "WebMCP 社群活動：我的報名",
              "en": "WebMCP community events: my registrations"}


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
    assert sorted(-alarm.decoded("TRIGGER") for alarm in event.walk("VALARM")) == sorted(
        REMINDERS)
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


def make_feed(visitor, language: str = "en") -> str:
    """The visitor makes their calendar address on their page in `language` (no JavaScript):
    the path of the address the page then shows, once."""
    return urlsplit(make_feed_page(visitor, language)[0]).path


def make_feed_page(visitor, language: str = "en") -> tuple[str, BeautifulSoup]:
    """The visitor makes their calendar address: the address, and the page that shows it."""
    visitor.get(f"/{language}/registrations")
    made = visitor.post(f"/{language}/registrations/calendar")
    assert made.status_code == 303
    page = BeautifulSoup(visitor.get(made.headers["Location"]).data, "html.parser")
    address = attribute(one(page, "#calendar-address"), "value")
    again = BeautifulSoup(visitor.get(f"/{language}/registrations").data, "html.parser")
    assert again.select("#calendar-address") == []  # shown once
    return address, page


def feed_calendar(app, path: str, **headers: str) -> Calendar:
    """The feed at `path` as a calendar application fetches it: no cookie, and only the
    headers given (many send no Accept-Language at all)."""
    answer = app.test_client().get(path, headers=headers)
    assert answer.status_code == 200 and answer.mimetype == "text/calendar"
    return Calendar.from_ical(answer.data)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_feed_is_named_in_the_language_it_was_made_in(app, visitor, language):
    """The name a calendar lists the feed under (RFC 7986 NAME, and X-WR-CALNAME, which
    Google and Apple read) is in the language of the page the address was made on, whatever
    language the application that fetches it asks for, if any."""
    assert set(FEED_NAMES) == set(LANGUAGES)
    visitor.register(EVENT)
    path = make_feed(visitor, language)
    assert path.startswith(f"/{language}/calendar/feed/")
    for other in ("", *LANGUAGES):
        calendar = feed_calendar(app, path, **({"Accept-Language": other} if other else {}))
        assert str(calendar["NAME"]) == FEED_NAMES[language], other
        assert str(calendar["X-WR-CALNAME"]) == FEED_NAMES[language], other


def test_an_address_without_a_language_still_answers(app, visitor):
    """Addresses made before they carried a language keep working, named in the language
    the application asks for, else Chinese (the site's default)."""
    visitor.register(EVENT)
    neutral = "/calendar/feed/" + make_feed(visitor).split("/calendar/feed/")[1]
    assert str(feed_calendar(app, neutral)["NAME"]) == FEED_NAMES["zh-TW"]
    english = feed_calendar(app, neutral, **{"Accept-Language": "en"})
    assert str(english["NAME"]) == FEED_NAMES["en"]
    assert set(events_of(app.test_client().get(neutral))) == {EVENT}


def test_the_feed_reminds_a_day_and_an_hour_before_each_event(app, visitor):
    """Each event the visitor goes to carries a DISPLAY alarm (RFC 5545 §3.6.6: with the
    text it shows) a day before and an hour before its start; a cancelled one reminds of
    nothing."""
    assert set(REMINDERS) == {timedelta(days=1), timedelta(hours=1)}
    registration = visitor.register(EVENT)
    visitor.register(OTHER)
    _, token = visitor.prepare_cancellation(registration["id"])
    visitor.confirm_cancellation(registration["id"], token)
    calendar = feed_calendar(app, make_feed(visitor))
    events = {str(e["UID"]).split("@")[0]: e for e in calendar.events}
    assert events[EVENT].status == "CANCELLED" and events[EVENT].alarms.times == []
    going = events[OTHER]
    alarms = going.walk("VALARM")
    assert sorted(str(alarm["ACTION"]) for alarm in alarms) == ["DISPLAY", "DISPLAY"]
    assert {-alarm.decoded("TRIGGER") for alarm in alarms} == set(REMINDERS)
    assert all(str(alarm["DESCRIPTION"]) == str(going["SUMMARY"]) for alarm in alarms)
    start = going.decoded("DTSTART")
    assert sorted(time.trigger for time in going.alarms.times) == sorted(
        start - before for before in REMINDERS)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_page_offers_a_one_tap_subscription(visitor, language):
    """Beside the https address, a webcal:// link to the same path: a tap on it opens the
    phone's calendar application, subscribed (the scheme asks for exactly that)."""
    address, page = make_feed_page(visitor, language)
    subscribe = one(page, '#calendar-feed a[href^="webcal://"]')
    https = urlsplit(address)
    assert https.scheme in ("http", "https")
    assert attribute(subscribe, "href") == https._replace(scheme="webcal").geturl()


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


@pytest.mark.both_backends
def test_calendars_say_where_an_organizers_event_is(app):
    """The venue, then the street address or the online platform: what a map or a person
    needs to get there."""
    _manager, _organization, in_person = published(app, street_address=ADDRESS)
    _manager, _organization, online = published(
        app, location="online", venue="WebMCP 社群頻道", online_platform="Google Meet",
        link_sent="on_registration")
    visitor = Visitor(app)
    for event_id, where in ((in_person, f"台北市大安區復興南路一段 390 號, {ADDRESS}"),
                            (online, "WebMCP 社群頻道, Google Meet")):
        assert str(events_of(visitor.get(f"/calendar/{event_id}.ics"))[event_id]["LOCATION"]
                   ) == where
        page = BeautifulSoup(visitor.get(f"/en/events/{event_id}").data, "html.parser")
        google = urlsplit(attribute(one(page, "a[href^='https://calendar.google.com/']"),
                                   "href"))
        assert parse_qs(google.query)["location"] == [where]
