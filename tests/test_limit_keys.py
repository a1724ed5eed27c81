"""The rate limits count what the schema loaded, never raw input: no spelling of an event's id
is another event's budget, no oversized id becomes a key, and a made-up access token is no
client of its own."""

from __future__ import annotations

import sqlite3

import pytest
from mcp_helpers import McpClient
from mcp_helpers import connect_agent

from webapp.web.limit_counters import HostCounters

EVENT = "evt-design-tokens-taipei"
# What `str.strip` removes, as the actions' input loading does: each once made a new counter.
PADDINGS = [" ", "\t", "\n", "\u3000", "\u00a0", "\u2003"]
OVERSIZED_CALLS = 1000
OVERSIZED_ID_CHARACTERS = 16 * 1024


@pytest.fixture
def agent(app, visitor) -> McpClient:
    """An agent the visitor connected."""
    return McpClient(app.test_client(), token=connect_agent(visitor))


def prepare(agent: McpClient, event_id: str, number: int) -> str:
    """The status of a prepare_event_registration call for one more attendee."""
    result = agent.call("prepare_event_registration", {
        "event_id": event_id, "attendee_name": f"Person {number}",
        "email": f"person{number}@example.com"})
    status: str = result["structuredContent"]["status"]
    return status


def counter_keys(app) -> list[str]:
    """Every key the app's limiter holds (its counters are in a file of this host)."""
    (limiter,) = app.extensions["limiter"]
    assert isinstance(limiter.storage, HostCounters)
    with sqlite3.connect(limiter.storage.path) as db:
        return [key for (key,) in db.execute("SELECT key FROM counters")]


@pytest.mark.parametrize("app_config", [
    {"RATELIMIT_REGISTRATIONS_PER_EVENT_ADDRESS": "2 per hour"}])
def test_padded_ids_spend_the_one_budget_of_their_event(agent):
    """The hoarding of the attack: " evt-x", "\\u3000evt-x"... each took seats under a budget
    of its own; they are one event, and one budget."""
    statuses = [prepare(agent, padding + EVENT + padding, number)
                for number, padding in enumerate(PADDINGS)]
    assert statuses == ["confirmation_required"] * 2 + ["rate_limited"] * (len(PADDINGS) - 2)


@pytest.mark.slow  # thousands of requests: about 10 s
def test_oversized_ids_never_become_keys(app, agent):
    """A thousand distinct ids of 16 KiB: each refused as invalid input, and not one is kept by
    the limiter; the keys it keeps are as long as the id's pattern allows, whatever was sent."""
    before = set(counter_keys(app))
    for number in range(OVERSIZED_CALLS):
        oversized = f"evt-{number:04d}-" + "x" * OVERSIZED_ID_CHARACTERS
        assert prepare(agent, oversized, number) == "invalid_input"
    for number in range(OVERSIZED_CALLS):  # well-formed ids of no event: keys of bounded size
        assert prepare(agent, f"evt-{number:04d}-" + "x" * 58, number) == "not_found"
    kept = set(counter_keys(app)) - before
    longest = max(len(key.encode()) for key in kept)
    print(f"\nlimiter after {OVERSIZED_CALLS} ids of {OVERSIZED_ID_CHARACTERS} characters and "
          f"{OVERSIZED_CALLS} well-formed ones: {len(kept)} new keys, the longest {longest} "
          f"bytes; in memory per worker at most one page cache of "
          f"{HostCounters.CACHE_KIB} KiB per thread (the keys are in the host's file, and "
          f"deleted once their window is over)")
    assert not any("x" * 100 in key for key in kept)
    assert longest < 200
    # Per well-formed event id: its budget per address, per e-mail address (of each call).
    assert len(kept) <= 2 * 2 * OVERSIZED_CALLS + 10


def test_made_up_tokens_share_the_budget_of_their_address(app, agent):
    """A made-up (or revoked) token is no client: every one spends its address's budget, not
    a fresh one of its own."""
    app.config["RATELIMIT_READS_PER_ADDRESS"] = "3 per minute"  # after the agent connected
    limited = []
    for number in range(5):
        stranger = McpClient(app.test_client(), token=f"made-up-token-{number}")
        answer = stranger.rpc("tools/call", {"name": "search_events",
                                             "arguments": {"query": "web"}})
        limited.append("rate_limited" in answer.get_data(as_text=True))
    assert limited == [False] * 3 + [True] * 2
    assert agent.call("search_events", {"query": "web"})["structuredContent"][
        "status"] == "success"  # a connected agent has a budget of its own
