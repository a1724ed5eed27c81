"""Visitor sessions and the activity log (a refused form token: test_access_control.py)."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from datetime import timedelta

from bs4 import BeautifulSoup
from helpers import JSON

from webapp.storage.connection import get_db
from webapp.web.visitors import SEEN_PRECISION
from webapp.web.visitors import VISITOR_KEY


def test_the_session_cookie_is_signed_httponly_and_lax(visitor):
    visitor.save()
    cookie = visitor.client.get_cookie("webmcp_events")
    assert cookie is not None and cookie.http_only and cookie.same_site == "Lax"
    assert cookie.expires is not None


def test_an_expired_session_stops_writes(app, visitor, clock):
    registration = visitor.register()
    clock.advance(seconds=app.config["VISITOR_TTL"] + 1)
    for response in (visitor.post_json("/events/evt-agent-testing/save"),
                     visitor.post_json("/registrations/cancellation",
                                       {"registration_id": registration["id"]}),
                     visitor.post_json("/events/evt-agent-testing/register",
                                       {"attendee_name": "Ann", "email": "a@example.com"})):
        assert response.status_code == 401
        body = response.get_json()
        assert body["status"] == "session_expired" and body["retryable"] is False
        assert "reload" in body["nextAction"].lower()


def test_reloading_after_expiry_starts_a_fresh_visitor(app, visitor, clock):
    registration = visitor.register()
    clock.advance(seconds=app.config["VISITOR_TTL"] + 1)
    page = visitor.get("/en/registrations").get_data(as_text=True)
    assert registration["id"] not in page
    assert visitor.save()["status"] == "success"


def test_writes_keep_a_session_alive(app, visitor, clock):
    visitor.save()
    for _ in range(3):
        clock.advance(seconds=app.config["VISITOR_TTL"] * 0.9)
        assert visitor.save()["status"] == "success"


def session_end(app, visitor) -> datetime:
    """When the visitor's session ends, as the server keeps it."""
    with visitor.client.session_transaction() as cookie:
        visitor_id = cookie[VISITOR_KEY]
    with app.app_context():
        ends = get_db().visitor_expires_at(visitor_id)
    assert ends is not None
    return ends


def test_a_write_extends_the_session_at_most_once_per_precision(app, visitor, clock):
    lifetime = timedelta(seconds=app.config["VISITOR_TTL"])
    visitor.save()
    first_end = session_end(app, visitor)
    assert first_end == clock() + lifetime
    clock.advance(seconds=SEEN_PRECISION.total_seconds() - 1)
    assert visitor.save("evt-agent-testing")["status"] == "success"
    assert session_end(app, visitor) == first_end  # nothing written: a read sufficed
    clock.advance(seconds=1)
    assert visitor.save("evt-semantic-html")["status"] == "success"
    assert session_end(app, visitor) == clock() + lifetime


def activity_rows(app):
    with sqlite3.connect(app.config["DATABASE"]) as conn:
        return conn.execute("SELECT source, action, status, target_id FROM activity "
                            "ORDER BY id").fetchall()


def test_every_call_is_logged_with_its_source(app, visitor):
    visitor.save()
    visitor.post("/events/evt-agent-testing/save",
                 headers={**JSON, "WebMCP-Agent-Invoked": "true"})
    _, token = visitor.prepare_registration()
    visitor.confirm_registration(token)
    visitor.get("/en/events?query=webmcp", headers={"WebMCP-Agent-Invoked": "true"})
    rows = activity_rows(app)
    assert rows[:2] == [("human", "save_event", "success", "evt-webmcp-intro"),
                        ("agent", "save_event", "success", "evt-agent-testing")]
    assert rows[2] == ("human", "prepare_event_registration", "confirmation_required",
                       "evt-webmcp-intro")
    assert rows[3][:3] == ("human", "confirm_registration", "success")
    assert rows[3][3].startswith("reg-")
    assert rows[4] == ("agent", "search_events", "success", None)


def test_the_source_never_changes_a_rule(visitor):
    agent = {**JSON, "WebMCP-Agent-Invoked": "true"}
    person = visitor.post("/events/evt-semantic-html/register",
                          {"attendee_name": "A", "email": "a@example.com"}, headers=JSON)
    by_agent = visitor.post("/events/evt-semantic-html/register",
                            {"attendee_name": "A", "email": "a@example.com"}, headers=agent)
    assert person.get_json() == by_agent.get_json()


def test_the_visitor_sees_their_recent_activity(visitor, other_visitor):
    visitor.post("/events/evt-webmcp-intro/save",
                 headers={**JSON, "WebMCP-Agent-Invoked": "true"})
    visitor.save("evt-agent-testing")
    rows = BeautifulSoup(visitor.get("/en/registrations").data, "html.parser").select(
        ".activity-what")
    said = [row.get_text(" ", strip=True) for row in rows]
    assert said[:2] == ["You saved “Agent Testing in Practice”",
                        "Your agent saved “WebMCP Intro Workshop”"]
    theirs = BeautifulSoup(other_visitor.get("/en/registrations").data, "html.parser")
    assert theirs.select(".activity-line") == []


def test_people_read_no_ids_and_a_repeated_save_once(visitor):
    """Ids are for agents and addresses: the pages name events by title; a registration's
    number shows once, labelled, for the person to quote (to an agent, or in a mail). Saving
    an event again changes nothing, so the activity says it once."""
    registration = visitor.register("evt-webmcp-intro")
    visitor.save("evt-agent-testing")
    visitor.save("evt-agent-testing")
    for page in ("/en/registrations", f"/en/registrations/{registration['id']}"):
        soup = BeautifulSoup(visitor.get(page).data, "html.parser")
        numbers = [number.extract().get_text(strip=True)
                   for number in soup.select(".registration-id")]
        assert len(numbers) == 1 and numbers[0].endswith(registration["id"])
        assert "reg-" not in soup.get_text() and "evt-" not in soup.get_text()
    rows = BeautifulSoup(visitor.get("/en/registrations").data, "html.parser").select(
        ".activity-what")
    said = [row.get_text(" ", strip=True) for row in rows]
    assert said == ["You saved “Agent Testing in Practice”",
                    "You registered for “WebMCP Intro Workshop”"]
