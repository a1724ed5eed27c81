"""save_event: idempotent, the visitor's own, in all three renderings."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from helpers import HTMX
from helpers import one
from helpers import the_jsonld

# PostgreSQL runs the flows that prove it end to end (marked `both_backends`); the storage
# under every other test here is checked on both backends by test_storage_contract.py.


@pytest.mark.both_backends
def test_saving_twice_stores_it_once(visitor):
    first = visitor.save()
    assert first["status"] == "success"
    assert first["data"] == {"eventId": "evt-webmcp-intro", "alreadySaved": False}
    second = visitor.save()
    assert second["status"] == "success"
    assert second["data"] == {"eventId": "evt-webmcp-intro", "alreadySaved": True}
    soup = BeautifulSoup(visitor.get("/en/saved").data, "html.parser")
    assert [a["href"] for a in soup.select(".event-title a")] == ["/en/events/evt-webmcp-intro"]


@pytest.mark.both_backends
def test_saved_events_belong_to_their_visitor(visitor, other_visitor):
    visitor.save("evt-agent-testing")
    other = BeautifulSoup(other_visitor.get("/en/saved").data, "html.parser")
    assert other.select(".event-title") == []
    assert other_visitor.save("evt-agent-testing")["data"]["alreadySaved"] is False


def test_saving_an_unknown_event_is_not_found(visitor):
    response = visitor.post_json("/events/evt-nope/save")
    assert response.status_code == 404
    assert response.get_json()["status"] == "not_found"


def test_save_partial_and_page_carry_the_same_result(visitor):
    visitor.save()
    partial = visitor.post("/events/evt-webmcp-intro/save", headers=HTMX)
    assert partial.status_code == 200
    assert the_jsonld(partial.data) == visitor.save()
    assert b"Saved \xe2\x9c\x93" in partial.data


def test_without_javascript_the_save_lands_on_the_event_page_with_its_result(visitor):
    response = visitor.post("/events/evt-webmcp-intro/save")
    assert response.status_code == 303
    assert response.headers["Location"] == "/en/events/evt-webmcp-intro"
    landing = visitor.get("/en/events/evt-webmcp-intro")
    assert the_jsonld(landing.data) == {
        "action": "save_event", "status": "success", "message": "Saved to your list.",
        "retryable": False, "data": {"eventId": "evt-webmcp-intro", "alreadySaved": False},
        "nextAction": "Done. Saving again is not needed; the user sees it under Saved."}
    # Carried once: the next view shows the page's own result again.
    assert the_jsonld(visitor.get("/en/events/evt-webmcp-intro").data)["action"] == (
        "get_event_details")


def test_removing_a_saved_event_is_a_person_only_form(visitor):
    visitor.save()
    soup = BeautifulSoup(visitor.get("/en/saved").data, "html.parser")
    form = one(soup, ".event-card form")
    assert not form.has_attr("toolname")
    response = visitor.post(form["action"])
    assert response.status_code == 303
    landing = visitor.get("/en/saved")
    assert the_jsonld(landing.data)["action"] == "remove_saved_event"
    assert BeautifulSoup(landing.data, "html.parser").select(".event-title") == []
