"""An organization cancels an event it runs (issue 30): the organizer confirms on a page that
says how many attendees will be mailed; then the event's page, calendar file, feed and
schema.org status say it is cancelled, registering is refused to people and agents alike,
each attendee is mailed once in the language they registered in, and cancelling again
changes nothing; its waitlist ends and no reminder goes out. Also the organization's public
page, and event pages naming who runs them.
"""

from __future__ import annotations

import re
from email.message import EmailMessage
from urllib.parse import urlsplit

import pytest
from bs4 import BeautifulSoup
from helpers import JSON
from helpers import Visitor
from helpers import one
from helpers import query_database
from helpers import the_jsonld
from icalendar import Calendar
from mcp_helpers import McpClient
from mcp_helpers import connect_agent
from test_accounts import Inbox
from test_accounts import deliver
from test_accounts import sign_in
from test_accounts import text_of
from test_calendars import feed_calendar
from test_calendars import make_feed
from test_event_page import event_data
from test_event_page import microdata
from test_mailed_links import remind
from test_mailed_links import starts_at
from test_organizers import signed_in
from test_organizers import start
from test_waitlist import SMALL
from test_waitlist import add
from test_waitlist import cancel
from test_waitlist import fill
from test_waitlist import join
from test_waitlist import offered_mail
from test_waitlist import places
from test_waitlist import small_event
from test_waitlist import waitlist_rows

from webapp.storage.connection import get_db

pytestmark = pytest.mark.both_backends

EVENT = "evt-webmcp-intro"
LANGUAGES = ("zh-TW", "en")
CANCELLED_SUBJECT = {"zh-TW": "活動取消：WebMCP Intro Workshop",
                     "en": "Cancelled: WebMCP Intro Workshop"}
CANCELLED_NOTICE = {"zh-TW": "這場活動已取消", "en": "This event is cancelled"}
REASON = "講者臨時生病，改期另行通知。"
REFUSED = {"zh-TW": "這場活動已取消：報名已關閉。",
           "en": "This event is cancelled: registration is closed."}


def run_by(app, organization_id: str, event_id: str = EVENT) -> None:
    """Give a seed event to the organization (creating events is another part's)."""
    with app.app_context():
        assert get_db().set_event_organization(event_id, organization_id)


def register_in(person: Visitor, language: str, event_id: str = EVENT) -> str:
    """Register `person` for the event from a page in `language`: the registration's id."""
    prepared = person.post(f"/{language}/events/{event_id}/register",
                           {"attendee_name": "Ann Lee", "email": person.email},
                           headers={"HX-Request": "true"})
    token = re.search(r'name="confirmation_token" value="([^"]+)"',
                      prepared.get_data(as_text=True))
    assert token, prepared.get_data(as_text=True)[:300]
    confirmed = person.post_json(f"/{language}/registrations/confirm",
                                 {"confirmation_token": token.group(1)}).get_json()
    return str(confirmed["data"]["registration"]["id"])


def cancel_address(organization_id: str, language: str, event_id: str = EVENT) -> str:
    return f"/{language}/organizer/organizations/{organization_id}/events/{event_id}/cancel"


def cancelled_mail(inbox: Inbox) -> list[EmailMessage]:
    return [message for message in inbox.messages
            if str(message["Subject"]) in CANCELLED_SUBJECT.values()]


@pytest.fixture
def organization(app) -> tuple[Visitor, str]:
    """A signed-in owner and the organization that runs EVENT."""
    owner = signed_in(app)
    organization_id = start(owner, "台北網頁開發者聚會", "每月一次的網頁技術聚會")
    run_by(app, organization_id)
    return owner, organization_id


@pytest.mark.parametrize("language", LANGUAGES)
def test_cancelling_mails_each_attendee_once_in_their_language(app, organization, language):
    owner, organization_id = organization
    chinese, english, gone = Visitor(app), Visitor(app), Visitor(app)
    register_in(chinese, "zh-TW")
    register_in(english, "en")
    left = register_in(gone, "en")
    _, token = gone.prepare_cancellation(left)
    assert gone.confirm_cancellation(left, token).status_code == 200
    deliver(app, Inbox())  # the registrations' own mail, out of the way

    page = BeautifulSoup(owner.get(cancel_address(organization_id, language)).data,
                         "html.parser")
    assert page.select("[toolname]") == []
    says = one(page, "main").get_text(" ", strip=True)
    assert ("2 attendees" if language == "en" else "2 位報名者") in says
    answer = owner.post(cancel_address(organization_id, language), {"reason": REASON})
    assert answer.status_code == 303

    inbox = Inbox()
    deliver(app, inbox)
    mailed = cancelled_mail(inbox)
    assert sorted(str(message["To"]) for message in mailed) == sorted(
        [chinese.email, english.email])
    for message in mailed:
        reader = "zh-TW" if message["To"] == chinese.email else "en"
        assert str(message["Subject"]) == CANCELLED_SUBJECT[reader]
        assert REASON in text_of(message)

    # Again: refused, nothing changes, and nobody is mailed twice.
    again = owner.post(cancel_address(organization_id, language), {"reason": "again"})
    assert again.status_code == 409
    assert the_jsonld(again.data)["status"] == "conflict"
    inbox = Inbox()
    deliver(app, inbox)
    assert cancelled_mail(inbox) == []
    database = app.config["DATABASE"]
    assert query_database(database, "SELECT cancellation_reason FROM events WHERE id = ?",
                          (EVENT,)) == [(REASON,)]
    assert query_database(database, "SELECT action, event_id FROM audit_log "
                          "WHERE organization_id = ? AND action = 'cancel_event'",
                          (organization_id,)) == [("cancel_event", EVENT)]
    audit = one(BeautifulSoup(owner.get(f"/{language}/organizer/organizations/"
                                        f"{organization_id}").data, "html.parser"),
                "section:has(#audit-title)").get_text()
    assert ("cancelled “WebMCP Intro Workshop”" if language == "en"
            else "取消了「WebMCP Intro Workshop」") in audit


def test_an_event_that_has_ended_cannot_be_cancelled(app, clock, organization):
    owner, organization_id = organization
    language = "zh-TW"
    register_in(Visitor(app), language)
    deliver(app, Inbox())  # the registration's own mail, out of the way
    with app.app_context():
        ended = get_db().get_event(EVENT).ends_at  # type: ignore[union-attr]
    clock.advance(seconds=(ended - clock()).total_seconds())  # the moment it ends
    sign_in(app, Inbox(), owner, owner.email)  # back after the event, as a person would be

    listed = one(BeautifulSoup(owner.get(f"/{language}/organizer/organizations/"
                                         f"{organization_id}").data, "html.parser"),
                 ".event-list--past")
    assert listed.select(f"a[href$='/events/{EVENT}/cancel']") == []
    page = BeautifulSoup(owner.get(cancel_address(organization_id, language)).data,
                         "html.parser")
    assert page.select("form[action$='/cancel']") == []
    assert ("This event has ended" if language == "en" else "這場活動已經結束") in one(
        page, "main").get_text()
    refused = owner.post(cancel_address(organization_id, language), {"reason": REASON})
    assert refused.status_code == 409
    assert the_jsonld(refused.data)["status"] == "conflict"
    inbox = Inbox()
    deliver(app, inbox)
    assert cancelled_mail(inbox) == []
    assert query_database(app.config["DATABASE"],
                          "SELECT cancelled_at FROM events WHERE id = ?", (EVENT,)) == [(None,)]


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_cancelled_event_says_so_and_takes_no_registration(app, organization, language):
    owner, organization_id = organization
    attendee, newcomer = Visitor(app), Visitor(app)
    register_in(attendee, "en")
    feed = make_feed(attendee)
    assert owner.post(cancel_address(organization_id, language), {}).status_code == 303

    page = attendee.get(f"/{language}/events/{EVENT}")
    soup = BeautifulSoup(page.data, "html.parser")
    assert CANCELLED_NOTICE[language] in one(soup, ".event-cancelled").get_text()
    assert event_data(page.data)["eventStatus"] == "https://schema.org/EventCancelled"
    assert the_jsonld(page.data)["data"]["event"]["state"] == "cancelled"
    assert soup.select(f'a[href$="/events/{EVENT}/register"]') == []

    calendar = Calendar.from_ical(attendee.get(f"/calendar/{EVENT}.ics").data)
    (entry,) = calendar.walk("VEVENT")
    assert str(entry["STATUS"]) == "CANCELLED" and entry.decoded("SEQUENCE") == 1
    (listed,) = feed_calendar(app, feed).walk("VEVENT")
    assert str(listed["STATUS"]) == "CANCELLED"

    form = BeautifulSoup(newcomer.get(f"/{language}/events/{EVENT}/register").data,
                         "html.parser")
    assert form.select('[toolname="prepare_event_registration"]') == []
    assert CANCELLED_NOTICE[language] in one(form, "#registration-form").get_text()
    refused = newcomer.post_json(f"/{language}/events/{EVENT}/register",
                                 {"attendee_name": "Bo", "email": newcomer.email})
    assert refused.status_code == 409
    body = refused.get_json()
    assert body["status"] == "conflict"
    assert body["message"] == REFUSED[language]
    # An agent outside the browser is refused the same way.
    agent = McpClient(app.test_client(), token=connect_agent(newcomer, language=language))
    over_mcp = agent.call("prepare_event_registration", {
        "event_id": EVENT, "attendee_name": "Bo", "email": newcomer.email})["structuredContent"]
    assert over_mcp["status"] == "conflict" and over_mcp["message"] in REFUSED.values()

    # Still found, marked cancelled: a person who heard of it learns it will not happen.
    found = newcomer.get(f"/{language}/events?query=WebMCP", headers=JSON).get_json()
    (card,) = [event for event in found["data"]["events"] if event["id"] == EVENT]
    assert card["state"] == "cancelled"


def test_the_organization_page_lists_its_events(app, organization):
    _owner, organization_id = organization
    visitor = Visitor(app)
    for language in LANGUAGES:
        answer = visitor.get(f"/{language}/organizations/{organization_id}")
        assert answer.status_code == 200
        assert "noindex" not in answer.headers.get("X-Robots-Tag", "")
        soup = BeautifulSoup(answer.data, "html.parser")
        assert soup.select('meta[name="robots"]') == []
        scope = one(soup, '[itemtype="https://schema.org/Organization"]')
        data = microdata(scope)
        assert data["name"] == "台北網頁開發者聚會"
        assert data["description"] == "每月一次的網頁技術聚會"
        assert data["url"].endswith(f"/{language}/organizations/{organization_id}")
        links = [str(link["href"]) for link in soup.select(".event-card .event-title a")]
        assert links == [f"/{language}/events/{EVENT}"]
    assert visitor.get("/en/organizations/org-no-such-one").status_code == 404


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_event_page_names_the_organization_that_runs_it(app, organization, language):
    _owner, organization_id = organization
    visitor = Visitor(app)
    page = visitor.get(f"/{language}/events/{EVENT}")
    soup = BeautifulSoup(page.data, "html.parser")
    link = one(soup, ".event-organizer a")
    assert link["href"] == f"/{language}/organizations/{organization_id}"
    assert link.get_text(strip=True) == "台北網頁開發者聚會"
    organizer = event_data(page.data)["organizer"]
    assert organizer["@type"] == "https://schema.org/Organization"
    assert organizer["name"] == "台北網頁開發者聚會"
    assert urlsplit(organizer["url"]).path == f"/{language}/organizations/{organization_id}"
    # An event the site imports itself names nobody.
    own = BeautifulSoup(visitor.get(f"/{language}/events/evt-a11y-101-online").data,
                        "html.parser")
    assert own.select(".event-organizer") == []
    assert "organizer" not in event_data(str(own).encode())


def test_a_cancelled_events_waitlist_offers_nothing_more(app, clock, organization):
    """The places on the waitlist end with the event: a seat that frees afterwards is offered
    to nobody, and the page offers no waitlist to join."""
    owner, organization_id = organization
    add(app, small_event(clock()))
    run_by(app, organization_id, SMALL)
    (first, registration), _second = fill(app)
    waiting = Visitor(app)
    assert join(waiting)["status"] == "success"
    assert places(waiting)[0][1] == "waiting"
    assert owner.post(cancel_address(organization_id, "en", SMALL), {}).status_code == 303
    assert places(waiting)[0][1] == "expired"
    cancel(first, registration["id"])
    assert offered_mail(app) == []
    assert [state for _email, state in waitlist_rows(app)] == ["expired"]
    form = BeautifulSoup(Visitor(app).get(f"/en/events/{SMALL}/register").data, "html.parser")
    assert form.select('[toolname="prepare_event_registration"]') == []


def test_no_reminder_goes_for_a_cancelled_event(app, organization):
    owner, organization_id = organization
    attendee = Visitor(app)
    register_in(attendee, "en")
    assert owner.post(cancel_address(organization_id, "en"), {}).status_code == 303
    start = starts_at(attendee, EVENT)
    clock = app.config["CLOCK"]
    clock.advance(seconds=(start - clock()).total_seconds() - 23 * 3600)
    assert remind(app).startswith("0 reminder")


def test_each_person_on_the_waitlist_is_told_once_and_an_offer_is_withdrawn(app, clock,
                                                                          organization):
    """Cancelling mails everyone still on the waitlist once, the one holding an offer too,
    saying their place ends; the offer ends with the places; a second cancel mails nobody."""
    owner, organization_id = organization
    add(app, small_event(clock()))
    run_by(app, organization_id, SMALL)
    (first, registration), (staying, _kept) = fill(app)
    waiting = [Visitor(app) for _ in range(3)]
    for person in waiting:
        assert join(person)["status"] == "success"
    cancel(first, registration["id"])  # the first one waiting is offered the seat
    assert [state for _email, state in waitlist_rows(app)] == ["offered", "waiting", "waiting"]
    deliver(app, Inbox())  # the offer's mail, sent before the cancellation

    assert owner.post(cancel_address(organization_id, "en", SMALL), {}).status_code == 303
    assert [state for _email, state in waitlist_rows(app)] == ["expired"] * 3
    inbox = Inbox()
    deliver(app, inbox)
    told = {str(message["To"]): text_of(message) for message in inbox.messages}
    assert sorted(told) == sorted(person.email for person in (staying, *waiting))
    assert len(inbox.messages) == len(told)  # once each
    place_ends = "your place on the waitlist ends"
    for person in waiting:
        assert place_ends in " ".join(told[person.email].split())
    assert place_ends not in " ".join(told[staying.email].split())

    again = owner.post(cancel_address(organization_id, "en", SMALL), {})
    assert again.status_code == 409
    inbox = Inbox()
    deliver(app, inbox)
    assert inbox.messages == []


WHOM = {"en": ("We will mail {attendees} and {waiting} that the event is cancelled.",
               "1 attendee", "3 people on its waitlist"),
        "zh-TW": ("我們會寄信告知活動取消：{attendees}和{waiting}。",
                  "1 位報名者", "候補名單上的 3 人")}


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_page_counts_attendees_and_the_waitlist_as_the_cancellation_mails_them(
        app, clock, organization, language):
    """The page asking to confirm names both: the attendees and everyone still on the
    waitlist (the one holding an offer too), as many as the cancellation then mails."""
    owner, organization_id = organization
    add(app, small_event(clock()))
    run_by(app, organization_id, SMALL)
    (first, registration), _staying = fill(app)
    for person in [Visitor(app) for _ in range(3)]:
        assert join(person)["status"] == "success"
    cancel(first, registration["id"])  # the first one waiting is offered the seat
    deliver(app, Inbox())  # the offer's mail, sent before the cancellation

    address = cancel_address(organization_id, language, SMALL)
    says = " ".join(one(BeautifulSoup(owner.get(address).data, "html.parser"), "main")
                    .get_text(" ", strip=True).split())
    sentence, attendees, waiting = WHOM[language]
    assert sentence.format(attendees=attendees, waiting=waiting) in says, says
    assert owner.post(address, {}).status_code == 303
    inbox = Inbox()
    deliver(app, inbox)
    assert len(inbox.messages) == 1 + 3
    done = one(BeautifulSoup(owner.get(address).data, "html.parser"), ".notice")
    assert f"{attendees}" in done.get_text() and f"{waiting}" in done.get_text()
