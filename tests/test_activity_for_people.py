"""*My registrations* tells a person what happened, not what was attempted: a refused call is
left out, a prepared step the person then confirmed reads only as its confirmation, and each
line says how long ago, the full time on hover (`actions.registrations.activity_lines`,
templates/registrations/_panel.html)."""

from __future__ import annotations

from bs4 import BeautifulSoup
from helpers import JSON

AGENT = {**JSON, "WebMCP-Agent-Invoked": "true"}


def lines(visitor) -> list[str]:
    """The activity as the English page says it, newest first."""
    soup = BeautifulSoup(visitor.get("/en/registrations").data, "html.parser")
    return [line.get_text(" ", strip=True) for line in soup.select(".activity-what")]


def test_a_refused_call_is_not_the_persons_news(visitor):
    visitor.save("evt-webmcp-intro")
    assert visitor.post("/events/evt-no-such-event/save", headers=AGENT).status_code == 404
    assert visitor.post("/events/evt-webmcp-intro/register", {"attendee_name": ""},
                        headers=AGENT).status_code == 422
    assert lines(visitor) == ["You saved “WebMCP Intro Workshop”"]


def test_a_confirmed_step_reads_as_its_confirmation_alone(visitor):
    registration = visitor.register("evt-webmcp-intro")
    assert lines(visitor) == ["You registered for “WebMCP Intro Workshop”"]
    _, token = visitor.prepare_cancellation(registration["id"])
    # Waiting for the person: said as such until they confirm.
    assert lines(visitor)[0].startswith("You prepared cancelling “WebMCP Intro Workshop”")
    visitor.confirm_cancellation(registration["id"], token)
    assert lines(visitor) == ["You cancelled the registration for “WebMCP Intro Workshop”",
                              "You registered for “WebMCP Intro Workshop”"]


def test_a_step_prepared_again_after_its_confirmation_still_shows(visitor):
    registration = visitor.register("evt-webmcp-intro")
    _, token = visitor.prepare_cancellation(registration["id"])
    visitor.confirm_cancellation(registration["id"], token)
    visitor.prepare_registration("evt-webmcp-intro")  # registering again: not confirmed yet
    said = lines(visitor)
    assert said[0].startswith("You prepared a registration for “WebMCP Intro Workshop”")
    assert said[1:] == ["You cancelled the registration for “WebMCP Intro Workshop”",
                        "You registered for “WebMCP Intro Workshop”"]


def test_each_line_says_how_long_ago_on_the_sites_clock(visitor, clock):
    visitor.save("evt-webmcp-intro")

    def when_said(language: str) -> tuple[str, str]:
        soup = BeautifulSoup(visitor.get(f"/{language}/registrations").data, "html.parser")
        time = soup.select(".activity-when")[0]
        return time.get_text(strip=True), str(time["title"])

    assert when_said("en")[0] == "just now"
    clock.advance(minutes=3)
    assert when_said("en")[0] == "3 minutes ago"
    assert when_said("zh-TW")[0] == "3 分鐘前"
    clock.advance(days=8)
    ago, full = when_said("en")
    assert ago != full and full.endswith("Taiwan Time (UTC+8)") and full.startswith(ago)


def test_a_cancellation_kept_reads_as_kept_alone(visitor):
    registration = visitor.register("evt-webmcp-intro")
    _, token = visitor.prepare_cancellation(registration["id"])
    kept = visitor.post(f"/registrations/{registration['id']}/keep",
                        {"confirmation_token": token}, headers=JSON)
    assert kept.status_code == 200
    assert lines(visitor) == [
        "You kept the registration for “WebMCP Intro Workshop”: nothing was cancelled",
        "You registered for “WebMCP Intro Workshop”"]
