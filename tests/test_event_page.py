"""An event's page for people and for the rest of the web: one primary action, its price, its
time and place said once, and schema.org Event microdata that meets Google's rich result rules
(while the page keeps exactly one JSON-LD block, the envelope).
"""

from __future__ import annotations

import json
from datetime import date
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from bs4 import BeautifulSoup
from bs4 import Tag
from helpers import HTMX
from helpers import jsonld_blocks
from helpers import one

from webapp.datasets.importer import ImportProblem
from webapp.datasets.importer import read_events
from webapp.datasets.synthetic import generate_events

PAID = "evt-a11y-audit-taipei"  # NT$500, at a venue whose name says Taipei
ONLINE = "evt-a11y-101-online"
FREE = "evt-webmcp-intro"


def microdata(scope: Tag) -> dict[str, Any]:
    """The properties of an itemscope as a dict (a list when a property repeats): nested
    scopes as dicts with their @type, values from content, href, datetime or the text."""
    properties: dict[str, Any] = {"@type": str(scope.get("itemtype", ""))}
    for element in scope.select("[itemprop]"):
        owner = element.find_parent(attrs={"itemscope": True})
        if owner is not scope:
            continue
        if element.has_attr("itemscope"):
            value: Any = microdata(element)
        else:
            value = (element.get("content") or element.get("href") or element.get("datetime")
                     or element.get_text(" ", strip=True))
        name = str(element["itemprop"])
        properties[name] = ([*properties[name], value] if isinstance(properties.get(name), list)
                            else [properties[name], value] if name in properties else value)
    return properties


def event_data(html: bytes) -> dict[str, Any]:
    soup = BeautifulSoup(html, "html.parser")
    scopes = soup.select('[itemtype="https://schema.org/Event"]')
    assert len(scopes) == 1
    return microdata(scopes[0])


def has_offset(moment: str) -> bool:
    return datetime.fromisoformat(moment).utcoffset() is not None


@pytest.mark.parametrize("event_id", [PAID, ONLINE, FREE])
def test_the_markup_meets_googles_required_event_properties(client, event_id):
    """Google's Event rich results require name, startDate and location (a Place with an
    address, or a VirtualLocation with a url); dates carry their offset; the recommended
    endDate, eventStatus, description and offers are there too."""
    page = client.get(f"/en/events/{event_id}")
    assert len(jsonld_blocks(page.data)) == 1  # the envelope, and nothing else
    event = event_data(page.data)
    assert event["name"] and event["description"]
    assert has_offset(event["startDate"]) and has_offset(event["endDate"])
    assert event["endDate"] > event["startDate"]
    assert event["eventStatus"] == "https://schema.org/EventScheduled"
    assert event["url"].endswith(f"/en/events/{event_id}")
    location = event["location"]
    if event_id == ONLINE:
        assert location["@type"] == "https://schema.org/VirtualLocation"
        assert location["url"].startswith("http")
        assert event["eventAttendanceMode"].endswith("OnlineEventAttendanceMode")
    else:
        assert location["@type"] == "https://schema.org/Place" and location["name"]
        address = location["address"]
        assert address["@type"] == "https://schema.org/PostalAddress"
        assert address["addressLocality"] and address["addressCountry"] == "TW"
    offer = event["offers"]
    assert offer["@type"] == "https://schema.org/Offer"
    assert offer["availability"].startswith("https://schema.org/")
    assert offer["url"].startswith("http") and has_offset(offer["validThrough"])
    if event_id == PAID:
        assert (offer["price"], offer["priceCurrency"]) == ("500", "TWD")
    if event_id == FREE:
        assert (offer["price"], offer["priceCurrency"]) == ("0", "TWD")


def test_a_paid_event_shows_its_price_in_each_language(client):
    for language in ("en", "zh-TW"):
        soup = BeautifulSoup(client.get(f"/{language}/events/{PAID}").data, "html.parser")
        price = one(soup, '[itemprop="offers"]')
        assert price.get_text(" ", strip=True).startswith("NT$500")
    answer = client.get(f"/events/{PAID}", headers={"Accept": "application/json"}).get_json()
    assert (answer["data"]["event"]["priceAmount"],
            answer["data"]["event"]["priceCurrency"]) == (500, "TWD")


def test_one_primary_action_and_the_city_and_date_said_once(client):
    soup = BeautifulSoup(client.get(f"/en/events/{PAID}").data, "html.parser")
    primary = [b.get_text(strip=True) for b in soup.select("main .button, main button")
               if "button--quiet" not in (b.get("class") or [])]
    assert primary == ["Register now"]
    where = one(soup, '[itemprop="location"]').get_text(" ", strip=True)
    assert where.count("Taipei") == 1
    starts = one(soup, '[itemprop="startDate"]')
    year = str(starts["datetime"])[:4]  # whatever the suite's clock says today is
    assert starts.get_text().count(year) == 1
    # At a venue: the zone is named once, in the footer, not at each time.
    assert "Taiwan Time" not in starts.get_text()
    assert one(soup, ".zone-note").get_text() == "Times are Taiwan Time (UTC+8)."


def primary_actions(html: bytes) -> list[str]:
    """The texts of the event's primary (not quiet) buttons and button links."""
    soup = BeautifulSoup(html, "html.parser")
    return [b.get_text(strip=True)
            for b in soup.select(".event-detail .button, .event-detail button")
            if "button--quiet" not in (b.get("class") or [])]


@pytest.mark.parametrize(("language", "registered", "register", "see"), [
    ("en", "You're registered for this event", "Register now", "See your registration"),
    ("zh-TW", "你已報名這場活動", "立即報名", "查看報名資料")])
def test_a_registered_visitor_is_told_so_instead_of_offered_to_register(
        visitor, language, registered, register, see):
    """Once the visitor holds a registration for the event, its page (and its refresh, and
    the preview pane of the list) says so and links to it: one primary action, and no
    offer to register again; once cancelled, the offer is back."""
    page = f"/{language}/events/{FREE}"
    assert primary_actions(visitor.get(page).data) == [register]
    registration = visitor.register(FREE)
    answers = [visitor.get(page), visitor.get(page, headers=HTMX),
               visitor.get(f"/{language}/events/details?event_id={FREE}", headers=HTMX)]
    for answer in answers:
        soup = BeautifulSoup(answer.data, "html.parser")
        assert one(soup, ".registered-note").get_text(strip=True) == registered
        assert primary_actions(answer.data) == [see]
        link = one(soup, ".event-actions a.button")
        assert link["href"] == f"/{language}/registrations/{registration['id']}"
        assert soup.select_one(f'a[href="/{language}/events/{FREE}/register"]') is None
    _, token = visitor.prepare_cancellation(registration["id"])
    visitor.confirm_cancellation(registration["id"], token)
    assert primary_actions(visitor.get(page).data) == [register]


def test_another_visitors_registration_changes_nothing_on_the_page(visitor, other_visitor):
    visitor.register(FREE)
    assert primary_actions(other_visitor.get(f"/en/events/{FREE}").data) == ["Register now"]


@pytest.mark.parametrize("language", ["en", "zh-TW"])
@pytest.mark.parametrize("event_id", [PAID, ONLINE, FREE])
def test_the_registration_page_says_what_the_event_page_says(client, language, event_id):
    """The registration page's summary of the event is the event page's: start–end with the
    zone once, the city once, the price with its amount (not "Paid"), seats and deadline."""
    def said(path: str) -> dict[str, str]:
        soup = BeautifulSoup(client.get(path).data, "html.parser")
        scope = one(soup, '[itemtype="https://schema.org/Event"]')
        return {part: one(scope, selector).get_text(" ", strip=True)
                for part, selector in [("when", ".event-meta"), ("facts", "dl.facts"),
                                       ("where", '[itemprop="location"]')]}

    register_page = said(f"/{language}/events/{event_id}/register")
    assert register_page == said(f"/{language}/events/{event_id}")
    assert "–" in register_page["when"]  # the end too, not only the start
    if event_id == PAID:
        assert "NT$500" in register_page["facts"]
        assert register_page["where"].count("Taipei" if language == "en" else "台北") == 1


def test_a_saved_event_can_be_unsaved_from_its_page(visitor):
    visitor.save(FREE)
    soup = BeautifulSoup(visitor.get(f"/en/events/{FREE}").data, "html.parser")
    assert one(soup, "form[toolname=save_event] button").get_text() == "Saved ✓"
    unsave = one(soup, f'form[action="/en/events/{FREE}/unsave"]')
    answer = visitor.post(unsave["action"], headers=HTMX)
    assert answer.status_code == 200
    shown = BeautifulSoup(answer.data, "html.parser")
    assert one(shown, "form[toolname=save_event] button").get_text() == "Save for later"
    assert "Removed from your saved list." in shown.get_text()
    assert visitor.save(FREE)["data"]["alreadySaved"] is False


def test_an_agent_cannot_unsave(visitor):
    visitor.save(FREE)
    refused = visitor.post(f"/events/{FREE}/unsave",
                           headers={"Accept": "application/json", "WebMCP-Agent-Invoked": "true"})
    assert refused.get_json()["status"] != "success"
    assert visitor.save(FREE)["data"]["alreadySaved"] is True


def test_prices_are_imported_and_generated(tmp_path):
    """An import file gives a paid event's amount (NT$ unless it names a currency); a free
    event with an amount is refused; synthetic paid events cost something too."""
    today, zone = date(2026, 6, 15), ZoneInfo("Asia/Taipei")
    row = {"id": "evt-priced", "title": "T", "summary": "S", "location": "taipei",
           "venue": "V", "price": "paid", "level": "beginner", "capacity": 10,
           "schedule": {"startsInDays": 3, "startTime": "10:00", "durationMinutes": 60}}
    path = tmp_path / "events.json"
    path.write_text(json.dumps([{**row, "priceAmount": 1500},
                                {**row, "id": "evt-priced-usd", "priceAmount": 20,
                                 "priceCurrency": "USD"}]))
    assert [(e.price_amount, e.price_currency) for e in read_events(path, today, zone)] == [
        (1500, "TWD"), (20, "USD")]
    path.write_text(json.dumps([{**row, "price": "free", "priceAmount": 100}]))
    with pytest.raises(ImportProblem) as refused:
        read_events(path, today, zone)
    assert "priceAmount" in " ".join(refused.value.problems)
    events = list(generate_events(200, seed=1, now=datetime(2026, 6, 15, tzinfo=zone),
                                  timezone=zone))
    assert all((e.price_amount or 0) > 0 for e in events if e.price == "paid")
    assert all(e.price_amount is None for e in events if e.price == "free")
