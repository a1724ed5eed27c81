"""Rate limiting attacks: a burst of writes from one client answers 429 `rate_limited`, and
so do many clients at one address past its ceiling, reads past an address's budget, and
registrations for one event past their budget per address and per e-mail.

The budget of each client is lowered here to BUDGET writes a minute; a test that meets another
budget lowers that one (the app reads them at each request). tests/conftest.py keeps every
limit on but high for the other modules. Addresses other than 127.0.0.1 are documentation
addresses (RFC 5737).
"""

from __future__ import annotations

import sqlite3
import time

import pytest
from helpers import HTMX
from helpers import JSON
from helpers import Visitor
from helpers import the_jsonld
from limits import parse_many
from limits.errors import ConfigurationError
from mcp_helpers import McpClient
from mcp_helpers import connect_agent
from routes import POST_ROUTES

from webapp import create_app
from webapp.web import limit_counters

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
    assert_says_when(response, body["data"])


def assert_says_when(response, data):
    """The seconds to wait, in the envelope (for an agent shown no header) and in the
    header alike: a whole number, at least 1, at most the longest budget of the tests."""
    seconds = data["retryAfterSeconds"]
    assert isinstance(seconds, int) and 1 <= seconds <= 3 * 24 * 3600
    assert response.headers["Retry-After"] == str(seconds)
    return seconds


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


def test_spent_writes_leave_reads_alone(send, visitor):
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
    """The clock of the limiter's counters (`limit_counters` reads `time.time()` of its own
    module): the real time plus however far a test moved it."""

    def __init__(self):
        self.ahead = 0.0

    def time(self) -> float:
        return time.time() + self.ahead


@pytest.fixture
def counter_clock(monkeypatch) -> CounterClock:
    clock = CounterClock()
    monkeypatch.setattr(limit_counters, "time", clock)
    return clock


def test_the_window_passing_restores_the_budget(send, visitor, counter_clock):
    spend_budget(send, visitor)
    assert send(visitor, f"/events/{EVENT}/save", headers=JSON).status_code == 429
    counter_clock.ahead = 30  # half the minute: still spent, and the wait says so
    refused = send(visitor, f"/events/{EVENT}/save", headers=JSON)
    assert refused.status_code == 429
    assert assert_says_when(refused, refused.get_json()["data"]) <= 30
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


# -- budgets per address and per event


def assert_refused(response, action, says):
    """A 429 envelope naming the budget it met (`says`) and how long that budget lasts."""
    body = response.get_json()
    assert response.status_code == 429, body
    assert body["status"] == "rate_limited" and body["action"] == action
    assert says in body["message"] and body["retryable"] is True
    assert_says_when(response, body["data"])
    return body


def test_an_address_has_a_ceiling_over_all_its_sessions(app, send):
    """A new session costs one GET: without a ceiling per address one machine would have a
    budget per session it opens."""
    app.config["RATELIMIT_WRITES_PER_ADDRESS"] = "5 per minute"
    sessions = [Visitor(app) for _ in range(6)]
    answers = [send(session, f"/events/{EVENT}/save", headers=JSON) for session in sessions]
    assert [a.status_code for a in answers] == [200] * 5 + [429]
    assert_refused(answers[-1], "save_event", "from your network")
    elsewhere = Visitor(app, address="198.51.100.7")
    assert send(elsewhere, f"/events/{EVENT}/save", headers=JSON).status_code == 200


def test_new_visitors_are_bounded_per_address_and_existing_ones_go_on(app, send):
    app.config["RATELIMIT_NEW_VISITORS_PER_ADDRESS"] = "2 per hour"
    known = [Visitor(app) for _ in range(2)]
    for visitor in known:
        assert send(visitor, f"/events/{EVENT}/save", headers=JSON).status_code == 200
    newcomer = Visitor(app)
    body = assert_refused(send(newcomer, f"/events/{EVENT}/save", headers=JSON), "save_event",
                          "new sessions")
    assert "an hour" in body["nextAction"]
    for visitor in known:  # they have a visitor already: their writes start none
        assert send(visitor, "/events/evt-agent-testing/save", headers=JSON).status_code == 200
    assert visitor_count(app) == 2


def visitor_count(app) -> int:
    with sqlite3.connect(app.config["DATABASE"]) as conn:
        count: int = conn.execute("SELECT count(*) FROM visitors").fetchone()[0]
        return count


def test_reads_have_a_generous_budget_per_address(app, client):
    app.config["RATELIMIT_READS_PER_ADDRESS"] = "3 per minute"
    statuses = [client.get("/events", headers=JSON).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    assert_refused(client.get(f"/events/{EVENT}", headers=JSON), "get_event_details",
                   "from your network")
    for _ in range(5):  # monitors probe health however often they need
        assert client.get("/health").status_code == 200
    other = Visitor(app, address="198.51.100.7")
    assert other.get("/events", headers=JSON).status_code == 200


def test_reads_and_writes_each_spend_only_their_own_budget(app, send):
    """A budget counts only its methods (Flask-Limiter is offered no limit for the others):
    writes leave the reads' budget whole, and reads the writes'."""
    app.config["RATELIMIT_READS_PER_ADDRESS"] = "2 per minute"
    visitor = Visitor(app)  # its first page is one read of the budget
    spend_budget(send, visitor)  # every write the visitor's budget allows
    assert visitor.get("/events", headers=JSON).status_code == 200
    assert_refused(visitor.get("/events", headers=JSON), "search_events", "from your network")
    assert send(visitor, f"/events/{EVENT}/save", headers=JSON).status_code == 429


REGISTERED = "evt-design-tokens-taipei"


def prepare(visitor, email="ann@example.com", event=REGISTERED, as_json=False):
    """Prepare a registration from a form body, or a JSON one (as an MCP client would)."""
    fields = {"attendee_name": "Ann Lee", "email": email}
    if as_json:
        return visitor.client.post(f"/events/{event}/register", json=fields,
                                   headers={**JSON, "X-CSRFToken": visitor.csrf})
    return visitor.post(f"/events/{event}/register", fields, headers=JSON)


@pytest.mark.parametrize("as_json", [False, True], ids=["form", "json"])
def test_registrations_for_one_event_are_bounded_per_email(app, send, as_json):
    """However many sessions and addresses: one e-mail address prepares few registrations for
    one event (each seat needs one), and its case makes no other address."""
    app.config["RATELIMIT_REGISTRATIONS_PER_EVENT_EMAIL"] = "2 per day"
    people = [Visitor(app, address=f"198.51.100.{n}") for n in range(1, 4)]
    assert prepare(people[0], as_json=as_json).status_code == 200
    assert prepare(people[1], email="ANN@example.com", as_json=as_json).status_code == 200
    body = assert_refused(prepare(people[2], as_json=as_json), "prepare_event_registration",
                          "with this e-mail address")
    assert "a day" in body["nextAction"]
    assert prepare(people[2], email="bo@example.com", as_json=as_json).status_code == 200
    assert prepare(people[2], event="evt-agent-testing", as_json=as_json).status_code == 200


def test_registrations_for_one_event_are_bounded_per_address(app, send):
    app.config["RATELIMIT_REGISTRATIONS_PER_EVENT_ADDRESS"] = "2 per hour"
    household = [Visitor(app) for _ in range(3)]
    assert prepare(household[0], "a@example.com").status_code == 200
    assert prepare(household[1], "b@example.com").status_code == 200
    assert_refused(prepare(household[2], "c@example.com"), "prepare_event_registration",
                   "from your network")
    assert prepare(household[2], "c@example.com", event="evt-agent-testing").status_code == 200
    neighbour = Visitor(app, address="198.51.100.7")
    assert prepare(neighbour, "d@example.com").status_code == 200


def test_other_writes_do_not_spend_the_registration_budgets(app, send):
    app.config["RATELIMIT_REGISTRATIONS_PER_EVENT_ADDRESS"] = "1 per hour"
    app.config["RATELIMIT_REGISTRATIONS_PER_EVENT_EMAIL"] = "1 per hour"
    visitor = Visitor(app)
    assert send(visitor, f"/events/{REGISTERED}/save", headers=JSON).status_code == 200
    assert prepare(visitor).status_code == 200


# -- the client's address behind proxies


def app_behind(tmp_path, clock, proxies: int):
    """An app behind `proxies` trusted proxies, allowing each address one read a minute."""
    return create_app({"TESTING": True, "SECRET_KEY": "proxies", "CLOCK": clock,
                       "DATABASE": str(tmp_path / "events.sqlite"), "TRUSTED_PROXIES": proxies,
                       "RATELIMIT_READS_PER_ADDRESS": "1 per minute"})


def read_as(client, forwarded_for: str) -> int:
    status: int = client.get("/events", headers={**JSON, "X-Forwarded-For": forwarded_for}
                             ).status_code
    return status


@pytest.mark.parametrize(("proxies", "client_writes"), [
    # no proxy trusted: the header is the client's own words (the address is the connection's)
    (0, ["192.0.2.1", "192.0.2.2", "192.0.2.3"]),
    # one proxy appends the address it saw: what the client wrote before it changes nothing
    (1, ["192.0.2.1, 203.0.113.9", "192.0.2.2, 203.0.113.9", "203.0.113.9"]),
])
def test_a_client_cannot_choose_its_address(tmp_path, clock, proxies, client_writes):
    client = app_behind(tmp_path, clock, proxies).test_client()
    assert [read_as(client, header) for header in client_writes] == [200, 429, 429]


@pytest.mark.parametrize("proxies", [1, 2])
def test_clients_behind_trusted_proxies_are_told_apart(tmp_path, clock, proxies):
    """Every request comes from the proxy (127.0.0.1); the address the outermost trusted
    proxy saw is the client's."""
    client = app_behind(tmp_path, clock, proxies).test_client()
    inner_hops = ", 10.0.0.2" * (proxies - 1)  # a second proxy appends the first one's address
    first, second = (f"{address}{inner_hops}" for address in ("203.0.113.1", "203.0.113.2"))
    assert [read_as(client, first), read_as(client, second), read_as(client, first)] == [
        200, 200, 429]


def test_trusted_proxies_is_a_count(tmp_path):
    with pytest.raises(ValueError, match="TRUSTED_PROXIES"):
        create_app({"SECRET_KEY": "x", "DATABASE": str(tmp_path / "db.sqlite"),
                    "TRUSTED_PROXIES": -1})


def test_the_refusal_is_in_the_language_of_the_request(app):
    """Which budget, and how long it lasts, in the visitor's words (the status stays)."""
    app.config["RATELIMIT_NEW_VISITORS_PER_ADDRESS"] = "1 per hour"
    first, second = Visitor(app), Visitor(app)
    assert first.post(f"/zh-TW/events/{EVENT}/save", headers=JSON).status_code == 200
    body = second.post(f"/zh-TW/events/{EVENT}/save", headers=JSON).get_json()
    assert body["status"] == "rate_limited"
    assert body["message"] == "短時間內來自你的網路的新工作階段太多了。請稍後再試。"
    assert "最多 一小時" in body["nextAction"]


@pytest.mark.parametrize(("limit", "language", "lasts"), [
    ("1 per hour", "en", "up to an hour;"),
    ("1 per 2 hours", "en", "up to 2 hours;"),
    ("1 per 2 hours", "zh-TW", "最多 2 小時；"),
    ("1 per 3 days", "en", "up to 3 days;"),
])
def test_the_refusal_says_how_long_the_budget_lasts_in_the_form_its_number_takes(
        app, limit, language, lasts):
    app.config["RATELIMIT_NEW_VISITORS_PER_ADDRESS"] = limit
    first, second = Visitor(app), Visitor(app)
    assert first.post(f"/{language}/events/{EVENT}/save", headers=JSON).status_code == 200
    body = second.post(f"/{language}/events/{EVENT}/save", headers=JSON).get_json()
    assert body["status"] == "rate_limited"
    assert lasts in body["nextAction"]


# -- agents over MCP: every message is a POST, yet only writes spend the write budgets

# The measure: this many quick searches must never keep an agent from connecting.
SEARCHES = 200


def amounts(app, setting) -> list[int]:
    """How many requests each window of a budget allows, as the app is configured."""
    return [item.amount for item in parse_many(app.config[setting])]


def mcp_error(response):
    body = response.get_json()
    assert "result" not in body, body
    return body["error"]


@pytest.fixture
def agent(app, visitor) -> McpClient:
    """An agent of the 2025 handshake era the visitor connected."""
    return McpClient(app.test_client(), "legacy", token=connect_agent(visitor))


def test_searches_never_keep_a_connected_agent_from_connecting(app, agent):
    assert max(amounts(app, "RATELIMIT_WRITES")) < SEARCHES  # far past the write budget
    for _ in range(SEARCHES):
        assert agent.call("search_events", {"query": "web"})["isError"] is False
    assert agent.result("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                       "clientInfo": {"name": "t", "version": "1"}})
    assert agent.rpc("tools/list").status_code == 200
    assert agent.result("ping") == {}
    modern = McpClient(agent.client, "modern", token=agent.token)
    assert modern.result("server/discover")["supportedVersions"]
    assert modern.result("tools/list")["tools"]


def test_writes_past_their_budget_say_when_and_the_protocol_goes_on(app, agent):
    """The write budget is spent by writes alone; spent, it refuses no handshake."""
    (budget,) = amounts(app, "RATELIMIT_WRITES")
    for _ in range(budget):
        assert agent.call("save_event", {"event_id": EVENT})["structuredContent"][
            "status"] == "success"
    response = agent.rpc("tools/call", {"name": "save_event", "arguments": {"event_id": EVENT}})
    refused = response.get_json()["result"]
    assert refused["isError"] is True
    assert refused["structuredContent"]["status"] == "rate_limited"
    assert_says_when(response, refused["structuredContent"]["data"])
    assert "retryAfterSeconds" in refused["structuredContent"]["nextAction"]
    assert agent.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "t", "version": "1"}}
                     ).status_code == 200
    assert agent.rpc("tools/list").status_code == 200
    assert agent.call("search_events", {"query": "web"})["isError"] is False


def test_reads_past_their_budget_say_when_and_other_connections_read_on(app, agent, visitor):
    """Connected agents behind one address (a hosted client's) each have their own budget;
    agents that carry no live token share their address's."""
    another = McpClient(app.test_client(), "legacy", token=connect_agent(visitor, "another"))
    app.config["RATELIMIT_READS_PER_ADDRESS"] = "3 per minute"  # a budget none has spent
    for _ in range(3):
        assert agent.rpc("tools/list").status_code == 200
    listing = agent.rpc("tools/list")
    assert listing.status_code == 429
    error = mcp_error(listing)
    assert error["data"]["retryable"] is True
    assert_says_when(listing, error["data"])
    searched = agent.rpc("tools/call", {"name": "search_events", "arguments": {}})
    assert searched.get_json()["result"]["structuredContent"]["status"] == "rate_limited"
    strangers = [McpClient(app.test_client(), "legacy", token=token)
                 for token in (None, "made-up-token")]
    assert [another.rpc("tools/list").status_code for _ in range(3)] == [200] * 3
    # Whatever a made-up token is answered, it spends its address's budget.
    assert [stranger.rpc("tools/list").status_code == 429
            for stranger in strangers * 2] == [False] * 3 + [True]


def test_connected_agents_spend_no_write_budget_of_their_address(app, agent, visitor):
    another = McpClient(app.test_client(), "legacy", token=connect_agent(visitor, "another"))
    app.config["RATELIMIT_WRITES_PER_ADDRESS"] = "2 per minute"  # a budget none has spent
    for connected in (agent, another):
        for _ in range(BUDGET):
            assert connected.call("save_event", {"event_id": EVENT})["structuredContent"][
                "status"] == "success"
    stranger = McpClient(app.test_client(), "legacy", token="made-up-token")
    answers = [stranger.rpc("tools/call", {"name": "save_event",
                                           "arguments": {"event_id": EVENT}})
               for _ in range(3)]
    # It acts for nobody (the answer says so), and spends its address's budget.
    assert ["rate_limited" in answer.get_data(as_text=True) for answer in answers] == [
        False, False, True]
