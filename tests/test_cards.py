"""A search result's card says at a glance what the event costs and whether a seat is left:
"NT$1,500" rather than "Paid", "3 seats left", "Almost full", "Full", "Registration closed",
whether a full event's waitlist can still be joined ("Full · waitlist open"), and when
registration closes once that is near (templates/events/_event_list.html, the search answer's
`projections.event_listing`)."""

from __future__ import annotations

from datetime import datetime
from datetime import timedelta
from typing import Any

import pytest
from bs4 import BeautifulSoup
from bs4 import Tag
from helpers import JSON
from helpers import Visitor
from helpers import unique_email
from test_event_cancellation import run_by
from test_organizers import signed_in
from test_organizers import start

from webapp.web.templating import CLOSING_SOON
from webapp.web.templating import FEW_SEATS

FULL_EVENT = "evt-semantic-html"  # its held seats are all of its seats
SMALL_EVENT = "evt-webmcp-intro"  # eight seats, none held
WAITLIST_EVENT = "evt-vue-taichung"  # its held seats are all of its seats, its waitlist on

AVAILABILITY = {  # what a card says of each state, before any count
    "en": {"closed": "Registration closed", "full": "Full"},
    "zh-TW": {"closed": "報名已截止", "full": "已額滿"},
}
SEATS_LEFT = {"en": "seats left", "zh-TW": "個名額"}
ALMOST_FULL = {"en": "Almost full", "zh-TW": "即將額滿"}
CLOSES = {"en": "registration closes", "zh-TW": "報名截止"}
# What a full event's card and page badge say, by whether its waitlist is on.
FULL = {"en": {False: "Full", True: "Full · waitlist open"},
        "zh-TW": {False: "已額滿", True: "已額滿・可候補"}}


def cards(client, url: str) -> dict[str, Tag]:
    """The cards of a results page, by event id."""
    soup = BeautifulSoup(client.get(url).data, "html.parser")
    return {str(card.select_one("input[name=event_id]")["value"]): card  # type: ignore[index]
            for card in soup.select(".event-card")}


def listed(client, url: str) -> dict[str, dict[str, Any]]:
    """The events the same search answers in JSON, by id."""
    events = client.get(url, headers=JSON).get_json()["data"]["events"]
    return {event["id"]: event for event in events}


def every_page(client, language: str) -> list[str]:
    """Each page of the unfiltered search."""
    pages, page = [], 1
    while True:
        url = f"/{language}/events?page={page}"
        pages.append(url)
        if not client.get(url, headers=JSON).get_json()["data"]["hasMore"]:
            return pages
        page += 1


def price_words(event: dict[str, Any], language: str) -> str:
    """What a card says of the event's price."""
    if event["priceAmount"] == 0:
        return {"en": "Free", "zh-TW": "免費"}[language]
    if event["priceAmount"] is None:
        return {"en": "Paid", "zh-TW": "付費"}[language]
    return f"NT${event['priceAmount']:,}"


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_every_card_says_its_price_and_its_seats(client, language):
    seen_states = set()
    for url in every_page(client, language):
        shown, answered = cards(client, url), listed(client, url)
        assert shown.keys() == answered.keys()
        for event_id, card in shown.items():
            event = answered[event_id]
            meta = card.select_one(".event-meta").get_text(" ", strip=True)  # type: ignore[union-attr]
            assert price_words(event, language) in meta, (event_id, meta)
            said = card.select_one(".event-availability").get_text(" ", strip=True)  # type: ignore[union-attr]
            seen_states.add(event["state"])
            if event["state"] in AVAILABILITY[language]:
                assert said.startswith(AVAILABILITY[language][event["state"]]), (event_id, said)
            else:
                assert str(event["remainingSeats"]) in said and SEATS_LEFT[language] in said
                assert (ALMOST_FULL[language] in said) == (event["remainingSeats"] <= FEW_SEATS)
    assert {"open", "full"} <= seen_states  # the sample data holds both


def test_a_full_event_says_so_before_it_is_opened(client):
    card = cards(client, "/zh-TW/events?query=semantic")[FULL_EVENT]
    assert card.select_one(".event-availability--full") is not None
    assert "已額滿" in card.get_text()


@pytest.mark.both_backends
@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_a_full_event_says_on_its_card_whether_its_waitlist_can_be_joined(client, language):
    takes_waitlist = set()
    for url in every_page(client, language):
        shown, answered = cards(client, url), listed(client, url)
        for event_id, event in answered.items():
            said = shown[event_id].select_one(".event-availability").get_text(" ", strip=True)  # type: ignore[union-attr]
            if event["state"] == "full":
                takes_waitlist.add(event["waitlist"])
                assert said == FULL[language][event["waitlist"]], (event_id, said)
            # A waitlist that can be joined is not said in the colour of a refusal.
            classes = shown[event_id].select_one(".event-availability")["class"]  # type: ignore[index]
            assert ("event-availability--waitlist" in classes) is (
                event["state"] == "full" and event["waitlist"]), (event_id, classes)
            if event["state"] != "full":
                assert FULL[language][True] not in said, (event_id, said)
    assert takes_waitlist == {False, True}  # the sample data holds both kinds of full event


@pytest.mark.both_backends
@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_an_organizations_page_says_of_each_event_what_its_search_card_says(app, client,
                                                                           language):
    shown_here = (WAITLIST_EVENT, FULL_EVENT, SMALL_EVENT)
    organization = start(signed_in(app))
    for event_id in shown_here:
        run_by(app, organization, event_id)
    page = BeautifulSoup(client.get(f"/{language}/organizations/{organization}").data,
                         "html.parser")
    on_its_page = {str(card.select_one("a")["href"]).rsplit("/", 1)[-1]:  # type: ignore[index]
                   card.select_one(".event-availability") for card in page.select(".event-card")}
    searched: dict[str, Tag] = {}
    for url in every_page(client, language):
        searched.update(cards(client, url))
    assert set(on_its_page) == set(shown_here)
    for event_id, said in on_its_page.items():
        on_card = searched[event_id].select_one(".event-availability")
        assert said is not None and on_card is not None
        assert (said.get_text(" ", strip=True), said["class"]) == (
            on_card.get_text(" ", strip=True), on_card["class"]), event_id


@pytest.mark.both_backends
@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_a_full_events_page_says_whether_its_waitlist_can_be_joined(client, language):
    for event_id, waitlist in ((WAITLIST_EVENT, True), (FULL_EVENT, False)):
        response = client.get(f"/{language}/events/{event_id}")
        badge = BeautifulSoup(response.data, "html.parser").select_one(".badge--full")
        assert badge is not None and badge.get_text(strip=True) == FULL[language][waitlist]
        assert ("badge--waitlist" in badge["class"]) is waitlist  # not the colour of a refusal
        assert client.get(f"/{language}/events/{event_id}", headers=JSON).get_json()[
            "data"]["event"]["waitlist"] is waitlist


def test_the_last_seats_are_counted_on_the_card_as_they_go(app, client):
    url = "/en/events?query=webmcp+intro"
    capacity = 8

    def someone_registers():  # a visitor holds one seat of an event: each seat is someone else's
        Visitor(app).register(SMALL_EVENT, name="Ann Lee", email=unique_email())

    for _ in range(capacity - FEW_SEATS):
        someone_registers()
    said = cards(client, url)[SMALL_EVENT].select_one(".event-availability").get_text()  # type: ignore[union-attr]
    assert f"Almost full: {FEW_SEATS} seats left" in said
    for _ in range(FEW_SEATS):
        someone_registers()
    assert listed(client, url)[SMALL_EVENT]["state"] == "full"
    assert cards(client, url)[SMALL_EVENT].select_one(".event-availability--full") is not None


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_a_card_says_when_registration_closes_only_when_it_is_near(client, clock, language):
    for url in every_page(client, language):
        shown, answered = cards(client, url), listed(client, url)
        for event_id, card in shown.items():
            event = answered[event_id]
            left = datetime.fromisoformat(event["registrationDeadline"]) - clock()
            near = event["state"] == "open" and left <= CLOSING_SOON
            assert (CLOSES[language] in card.get_text()) == near, event_id


def test_as_the_deadline_nears_the_card_starts_saying_it(client, clock):
    deadline = datetime.fromisoformat(
        listed(client, "/en/events?query=webmcp+intro")[SMALL_EVENT]["registrationDeadline"])
    clock.advance(seconds=(deadline - clock() - CLOSING_SOON - timedelta(hours=1))
                  .total_seconds())
    assert "registration closes" not in cards(
        client, "/en/events?query=webmcp+intro")[SMALL_EVENT].get_text()
    clock.advance(hours=2)
    assert "registration closes" in cards(
        client, "/en/events?query=webmcp+intro")[SMALL_EVENT].get_text()
