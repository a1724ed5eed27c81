"""get_event_details: on the event's page (bound) and over the listed results (radio group)."""

from __future__ import annotations

from datetime import datetime
from datetime import timedelta

import pytest
from bs4 import BeautifulSoup
from helpers import HTMX
from helpers import JSON
from helpers import attribute
from helpers import jsonld_blocks
from helpers import one
from helpers import the_jsonld
from helpers import three_answers

# PostgreSQL runs the flows that prove it end to end (marked `both_backends`); the storage
# under every other test here is checked on both backends by test_storage_contract.py.

DETAIL_KEYS = {"id", "url", "title", "summary", "description", "startsAt", "endsAt",
               "location", "venue", "price", "level", "remainingSeats",
               "registrationDeadline", "state", "priceAmount", "priceCurrency", "waitlist"}


@pytest.mark.both_backends
def test_details_of_an_open_event(client):
    as_json, partial, page = three_answers(client, "/events/evt-webmcp-intro")
    body = as_json.get_json()
    assert as_json.status_code == 200
    assert body["status"] == "success" and body["action"] == "get_event_details"
    event = body["data"]["event"]
    assert set(event) == DETAIL_KEYS
    assert event["id"] == "evt-webmcp-intro"
    assert event["remainingSeats"] == 8 and event["state"] == "open"
    assert event["startsAt"].endswith("+08:00")
    assert "/events/evt-webmcp-intro/register" in body["nextAction"]
    assert set(body["untrustedContent"]["fields"]) == {
        "data.event.title", "data.event.summary", "data.event.description", "data.event.venue"}
    assert the_jsonld(partial.data) == body
    assert the_jsonld(page.data) == body


@pytest.mark.both_backends
def test_details_of_a_full_event(client):
    event = client.get("/en/events/evt-semantic-html", headers=JSON).get_json()["data"]["event"]
    assert event["remainingSeats"] == 0
    assert event["state"] == "full"


@pytest.mark.both_backends
def test_details_of_a_closed_event(client, clock):
    def details():
        return client.get("/en/events/evt-webmcp-intro", headers=JSON).get_json()["data"]["event"]

    deadline = datetime.fromisoformat(details()["registrationDeadline"])
    clock.now = deadline
    assert details()["state"] == "open"  # up to the deadline itself
    clock.now = deadline + timedelta(seconds=1)
    event = details()
    assert event["state"] == "closed"
    assert event["remainingSeats"] == 8


@pytest.mark.parametrize("url", ["/events/evt-does-not-exist",
                                 "/events/details?event_id=evt-does-not-exist"])
def test_unknown_event_is_not_found_everywhere(client, url):
    as_json, partial, page = three_answers(client, url)
    assert as_json.status_code == partial.status_code == page.status_code == 404
    body = as_json.get_json()
    assert body["status"] == "not_found" and body["action"] == "get_event_details"
    assert "never guess" in body["nextAction"]
    assert the_jsonld(partial.data) == the_jsonld(page.data) == body


def test_malformed_ids_are_invalid_input(client):
    body = client.get("/en/events/details?event_id=../../etc", headers=JSON).get_json()
    assert body["status"] == "invalid_input" and "event_id" in body["errors"]
    body = client.get("/en/events/details", headers=JSON).get_json()
    assert body["errors"] == {"event_id": ["Fill in this field."]}


def test_the_page_bound_form_has_no_agent_inputs(client):
    soup = BeautifulSoup(client.get("/en/events/evt-webmcp-intro").data, "html.parser")
    form = one(soup, "form[toolname=get_event_details]")
    assert form["action"] == "/en/events/evt-webmcp-intro" and form["method"] == "get"
    assert form.find_all(["input", "select", "textarea"]) == []
    assert one(form, "button").get_text() == "Refresh seats and details"


def test_the_results_offer_exactly_the_ids_on_screen(client):
    soup = BeautifulSoup(client.get("/en/events?price=free").data, "html.parser")
    form = one(soup, "form[toolname=get_event_details]")
    radios = form.select("input[type=radio][name=event_id]")
    links = [attribute(a, "href").rsplit("/", 1)[1]
             for a in soup.select(".event-card .event-title a")]
    assert [r["value"] for r in radios] == links
    assert len(radios) == 10
    fieldset = radios[0].find_parent("fieldset")
    assert fieldset is not None and fieldset["toolparamdescription"]
    assert all(r.has_attr("required") for r in radios)


def test_choosing_a_listed_event_previews_it_or_opens_its_page(client):
    url = "/events/details?event_id=evt-agent-testing"
    as_json, partial, page = three_answers(client, url)
    assert as_json.get_json() == client.get("/en/events/evt-agent-testing",
                                            headers=JSON).get_json()
    assert the_jsonld(partial.data) == as_json.get_json()
    soup = BeautifulSoup(partial.data, "html.parser")
    assert one(soup, "form[toolname=save_event]")["action"] == (
        "/en/events/evt-agent-testing/save")
    assert soup.select_one("form[toolname=get_event_details]") is None  # the list has it
    assert page.status_code == 303
    assert page.headers["Location"] == "/en/events/evt-agent-testing"


def test_the_detail_page_has_one_json_ld_block_and_renders_text_inert(client):
    page = client.get("/en/events/evt-malicious-copy")
    assert len(jsonld_blocks(page.data)) == 1
    soup = BeautifulSoup(page.data, "html.parser")
    description = one(soup, ".event-description")
    assert "</script><script>alert(1)</script>" in description.get_text()
    assert description.find_all(["script", "img"]) == []
    body = client.get("/en/events/evt-malicious-copy", headers=JSON).get_json()
    assert "<img src=x onerror=alert(2)>" in body["data"]["event"]["description"]


def test_refreshing_the_page_swaps_only_the_details(client):
    partial = client.get("/en/events/evt-webmcp-intro", headers=HTMX)
    assert b"<html" not in partial.data
    soup = BeautifulSoup(partial.data, "html.parser")
    assert one(soup, "form[toolname=get_event_details]")["hx-target"] == "#event-details"
