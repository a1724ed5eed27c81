"""Rate limiting attacks: a burst of writes from one client answers 429 `rate_limited`.

The budget here is lowered to BUDGET writes a minute (tests/conftest.py keeps limits on but
high for every other module).
"""

from __future__ import annotations

import sqlite3
import time

import limits.storage.memory
import pytest
from helpers import HTMX
from helpers import JSON
from helpers import POST_ROUTES
from helpers import Visitor
from helpers import the_jsonld
from limits.errors import ConfigurationError

from webapp import create_app

BUDGET = 3
EVENT = "evt-webmcp-intro"


@pytest.fixture
def app_config():
    return {"RATELIMIT_WRITES": f"{BUDGET} per minute"}


def summarize(counts) -> str:
    return (f"rate limiting: {counts['sent']} write requests sent, {counts['limited']} "
            "answered 429 rate_limited")


@pytest.fixture
def send(tally):
    """POST as a visitor, counting what was sent and what was limited."""

    def post(visitor, url, data=None, headers=None, **kwargs):
        response = visitor.post(url, data, headers=headers, **kwargs)
        tally["sent"] += 1
        tally["limited"] += response.status_code == 429
        return response

    return post


def spend_budget(send, visitor):
    """Become a visitor (the first write, counted for the browser session), then spend it all."""
    for _ in range(1 + BUDGET):
        assert send(visitor, f"/events/{EVENT}/save", headers=JSON).status_code == 200


def assert_rate_limited(response, action, rendering):
    assert response.status_code == 429
    body = response.get_json() if rendering is JSON else the_jsonld(response.data)
    assert body["status"] == "rate_limited" and body["action"] == action
    assert body["retryable"] is True
    assert "minute" in body["message"] and body["nextAction"]
    assert int(response.headers["Retry-After"]) > 0


def saved_rows(app):
    with sqlite3.connect(app.config["DATABASE"]) as conn:
        return conn.execute("SELECT count(*) FROM saved_events").fetchone()[0]


@pytest.mark.parametrize("rendering", [JSON, HTMX, {}], ids=["json", "partial", "page"])
def test_a_burst_answers_rate_limited_in_every_rendering(send, visitor, rendering):
    spend_budget(send, visitor)
    response = send(visitor, "/events/evt-agent-testing/save", headers=rendering)
    assert_rate_limited(response, "save_event", rendering)
    if rendering is not JSON:
        assert "Slow down" in response.get_data(as_text=True)


def test_every_write_route_shares_one_budget_and_writes_nothing_when_limited(send, app,
                                                                             visitor):
    spend_budget(send, visitor)
    before = saved_rows(app)
    for url, data, action in POST_ROUTES:
        assert_rate_limited(send(visitor, url, data, headers=JSON), action, JSON)
    assert saved_rows(app) == before


def test_reads_are_never_limited(send, visitor):
    spend_budget(send, visitor)
    for _ in range(BUDGET * 3):
        assert visitor.get("/en/events?query=webmcp", headers=JSON).status_code == 200
        assert visitor.get(f"/en/events/{EVENT}", headers=JSON).status_code == 200


def test_other_visitors_at_the_same_address_are_not_slowed(send, visitor, other_visitor):
    spend_budget(send, visitor)
    assert send(visitor, f"/events/{EVENT}/save", headers=JSON).status_code == 429
    for _ in range(1 + BUDGET):
        response = send(other_visitor, f"/events/{EVENT}/save", headers=JSON)
        assert response.status_code == 200 and response.get_json()["status"] == "success"


def test_browsers_before_their_first_write_are_counted_apart(send, app):
    """Each new browser behind one address has its own budget, not one shared by all."""
    newcomers = [Visitor(app) for _ in range(BUDGET * 3)]
    for newcomer in newcomers:
        newcomer.csrf  # noqa: B018 - opening a page starts the browser session
        answer = send(newcomer, f"/events/{EVENT}/save", headers=JSON)
        assert answer.status_code == 200


def test_a_client_without_a_session_is_counted_by_its_address(send, client):
    statuses = []
    for _ in range(BUDGET + 2):
        statuses.append(send(client, f"/events/{EVENT}/save", headers=JSON).status_code)
    # No session: no form token either, so the first answers are session_expired.
    assert statuses == [401] * BUDGET + [429, 429]


class CounterClock:
    """The clock of the limiter's in-memory counters (they read `time.time()` of their own
    module): the real time plus however far a test moved it."""

    def __init__(self):
        self.ahead = 0.0

    def time(self) -> float:
        return time.time() + self.ahead


@pytest.fixture
def counter_clock(monkeypatch) -> CounterClock:
    clock = CounterClock()
    monkeypatch.setattr(limits.storage.memory, "time", clock)
    return clock


def test_the_window_passing_restores_the_budget(send, visitor, counter_clock):
    spend_budget(send, visitor)
    assert send(visitor, f"/events/{EVENT}/save", headers=JSON).status_code == 429
    counter_clock.ahead = 30  # half the minute: still spent
    assert send(visitor, f"/events/{EVENT}/save", headers=JSON).status_code == 429
    counter_clock.ahead = 61  # the minute is over
    assert send(visitor, f"/events/{EVENT}/save", headers=JSON).status_code == 200


@pytest.mark.parametrize(("enabled", "expected"), [("true", [200] * (1 + BUDGET) + [429]),
                                                   ("false", [200] * (2 + BUDGET))])
def test_the_environment_configures_the_limiter(send, tmp_path, monkeypatch, enabled,
                                                expected):
    """FLASK_RATELIMIT_* settings reach Flask-Limiter; FLASK_RATELIMIT_ENABLED=false ends it."""
    monkeypatch.setenv("FLASK_DATABASE", str(tmp_path / "events.sqlite"))
    monkeypatch.setenv("FLASK_SECRET_KEY", "environment test secret")
    monkeypatch.setenv("FLASK_RATELIMIT_ENABLED", enabled)
    monkeypatch.setenv("FLASK_RATELIMIT_WRITES", f"{BUDGET} per minute")
    app = create_app()
    assert app.config["RATELIMIT_ENABLED"] is (enabled == "true")
    visitor = Visitor(app)
    statuses = [send(visitor, f"/events/{EVENT}/save", headers=JSON).status_code
                for _ in range(2 + BUDGET)]
    assert statuses == expected


def test_the_environment_chooses_the_counters_storage(tmp_path, monkeypatch):
    """FLASK_RATELIMIT_STORAGE_URI reaches Flask-Limiter (shared counters for several workers
    are a redis:// or memcached:// URI): a storage it cannot use stops the app at start,
    rather than each worker counting on its own unnoticed.
    """
    monkeypatch.setenv("FLASK_DATABASE", str(tmp_path / "events.sqlite"))
    monkeypatch.setenv("FLASK_SECRET_KEY", "environment test secret")
    monkeypatch.setenv("FLASK_RATELIMIT_STORAGE_URI", "nosuch://counters.example")
    with pytest.raises(ConfigurationError, match="nosuch://"):
        create_app()
