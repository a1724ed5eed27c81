"""The official MCP Python SDK's `Client` against gunicorn with four workers, in both of its
modes: "legacy" (the initialize handshake) and "auto" (it probes `server/discover` and speaks
2026-07-28). It lists the catalog, calls every tool and gets what the JSON routes answer the
same visitor, and can prepare but never finish a registration or a cancellation.
`pytest -s` prints the tool list as the client read it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers import JSON
from helpers import confirmation_tokens
from mcp.shared.exceptions import MCPError
from mcp_sdk import connect_over_http
from mcp_sdk import in_thread
from mcp_sdk import sdk_client
from servers import HttpVisitor
from servers import gunicorn
from suite_clock import suite_start

from flask_webmcp.apidoc import envelope_json_schema
from flask_webmcp.input_schema import remote_input_schema
from webapp.domain.catalog import CATALOG

# An address without its site ("/events/…"): a page's words, not an agent's.
RELATIVE_ADDRESS = re.compile(r"(?<![\w:/.])/[a-z]")
MODES = {"legacy": "2025-11-25", "auto": "2026-07-28"}
EVENT = "evt-webmcp-intro"
ATTENDEE = {"attendee_name": "Ann Lee", "email": "ann@example.com"}


# When the module's server was started (monotonic seconds).
SERVER_STARTED: list[float] = []


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """The app under gunicorn (four workers: consecutive calls reach different ones)."""
    database = tmp_path_factory.mktemp("mcp") / "events.sqlite"
    SERVER_STARTED.append(time.monotonic())  # no worker's clock starts before this
    with gunicorn(database, workers=4, threads=2) as (base, _):
        yield base, database


@pytest.fixture(params=list(MODES))
def mode(request) -> str:
    return str(request.param)


def registrations(database: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(database) as conn:
        return conn.execute("SELECT event_id, state FROM registrations ORDER BY 1").fetchall()


def listed(base: str, mode: str, language: str = "en") -> tuple[str, list[Any]]:
    async def work() -> tuple[str, list[Any]]:
        async with sdk_client(base, mode, language=language) as client:
            return client.protocol_version, (await client.list_tools()).tools
    return in_thread(work)


def test_each_mode_lists_the_catalog(site, mode):
    base, _ = site
    version, tools = listed(base, mode)
    assert version == MODES[mode]
    assert [tool.name for tool in tools] == CATALOG.names
    for tool in tools:
        entry = CATALOG[tool.name]
        assert (tool.title, tool.description) == (str(entry.title), str(entry.description))
        assert tool.input_schema == remote_input_schema(entry)
        assert tool.output_schema == envelope_json_schema(entry.output)
        assert tool.annotations is not None
        hints = entry.hints
        assert (tool.annotations.read_only_hint, tool.annotations.destructive_hint,
                tool.annotations.idempotent_hint, tool.annotations.open_world_hint) == (
            hints.read_only, hints.destructive, hints.idempotent, False)
    print(f"\ntools/list as the SDK's Client read it (mode={mode!r}, protocol {version}):")
    for tool in tools:
        annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True)
        inputs = ", ".join(f"{name}{'*' if name in tool.input_schema['required'] else ''}"
                           for name in tool.input_schema["properties"])
        print(f"  {tool.name} ({tool.title}) [{inputs}] {json.dumps(annotations)}")
        print(f"    {tool.description}")


def test_the_list_reads_chinese_when_asked(site):
    base, _ = site
    _, tools = listed(base, "auto", "zh-TW")
    assert tools[0].title == "搜尋活動" and tools[0].name == "search_events"


def calls(base: str, mode: str, token: str | None,
          wanted: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The results of calling each (tool, arguments) in turn, on one client."""
    async def work() -> list[Any]:
        async with sdk_client(base, mode, token) as client:
            await client.list_tools()
            return [await client.call_tool(name, arguments) for name, arguments in wanted]
    return in_thread(work)


def without_time(envelope: dict[str, Any], *left_out: str) -> dict[str, Any]:
    """An envelope without the moment a review expires: five minutes after the server's
    "now", which its clock began at the suite's start (FLASK_CLOCK_START) as it booted; and
    without the keys `left_out`."""
    copy: dict[str, Any] = json.loads(json.dumps(envelope))
    for key in left_out:
        copy.pop(key, None)
    review = copy.get("data", {}).get("review")
    if review:
        expires = datetime.fromisoformat(review.pop("expiresAt"))
        running = timedelta(seconds=time.monotonic() - SERVER_STARTED[-1])
        assert timedelta(0) <= expires - suite_start() - timedelta(minutes=5) <= running
    return copy


def as_on_the_site(base: str, value: Any) -> Any:
    """An answer with its addresses relative, as the site's own answers mostly give them:
    over MCP every address is absolute (an agent there has no page to resolve one against)."""
    if isinstance(value, dict):
        return {key: as_on_the_site(base, item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_on_the_site(base, item) for item in value]
    if isinstance(value, str):
        return value.replace(base + "/", "/")
    return value


def test_every_tool_answers_the_sdk_as_its_route(site, mode):
    base, _ = site
    person, token, registration = registered_with_an_agent(base, "evt-agent-testing")
    wanted = [
        ("search_events", {"query": "webmcp", "location": "taipei"}),
        ("search_events", {"query": "no-event-has-this-word"}),
        ("get_event_details", {"event_id": EVENT}),
        ("get_event_details", {"event_id": "evt-no-such-event"}),
        ("save_event", {"event_id": EVENT}),
        ("prepare_event_registration", {"event_id": EVENT, **ATTENDEE}),
        ("prepare_event_registration", {"event_id": "evt-agent-testing", **ATTENDEE}),
        ("prepare_registration_cancellation", {"registration_id": registration}),
        ("prepare_registration_cancellation", {"registration_id": "reg-aaaaaaaaaaaa"}),
        ("get_my_plans", {}),
    ]
    assert {name for name, _ in wanted} == set(CATALOG.names)
    results = calls(base, mode, token, wanted)
    routes = [
        person.request("GET", "/events?query=webmcp&location=taipei", headers=JSON),
        person.request("GET", "/events?query=no-event-has-this-word", headers=JSON),
        person.request("GET", f"/events/details?event_id={EVENT}", headers=JSON),
        person.request("GET", "/events/details?event_id=evt-no-such-event", headers=JSON),
        person.post(f"/events/{EVENT}/save", headers=JSON),
        person.post(f"/events/{EVENT}/register", ATTENDEE, headers=JSON),
        person.post("/events/evt-agent-testing/register", ATTENDEE, headers=JSON),
        person.post("/registrations/cancellation", {"registration_id": registration},
                    headers=JSON),
        person.post("/registrations/cancellation", {"registration_id": "reg-aaaaaaaaaaaa"},
                    headers=JSON),
        person.request("GET", "/registrations/plans", headers=JSON),
    ]
    statuses = []
    for (name, _), result, answer in zip(wanted, results, routes, strict=True):
        from_route = answer.json()
        statuses.append(from_route["status"])
        over_mcp = result.structured_content
        if name == "save_event":  # the route saves second: "already saved"
            assert over_mcp["data"]["alreadySaved"] is False
            assert from_route["data"]["alreadySaved"] is True
            continue
        if name == "get_my_plans":  # the route reads after its own two prepares
            mcp_plans, route_plans = over_mcp["data"], from_route["data"]
            for key in ("registrations", "saved", "confirmedLately"):
                assert as_on_the_site(base, mcp_plans[key]) == route_plans[key], key
            assert len(route_plans["waiting"]) == len(mcp_plans["waiting"]) + 2
            continue
        # What to do next is told in the agent's own terms: tools to call and absolute
        # addresses, where the site's answer names its pages (webapp/domain/directions.py).
        said_over_mcp, said_on_the_site = over_mcp["nextAction"], from_route["nextAction"]
        assert not RELATIVE_ADDRESS.search(said_over_mcp), said_over_mcp
        if RELATIVE_ADDRESS.search(said_on_the_site):
            assert said_over_mcp != said_on_the_site
        assert (as_on_the_site(base, without_time(over_mcp, "nextAction"))
                == as_on_the_site(base, without_time(from_route, "nextAction"))), name
        assert json.loads(result.content[0].text) == over_mcp
        assert result.is_error is (from_route["status"] not in (
            "success", "no_results", "confirmation_required"))
    assert statuses == ["success", "no_results", "success", "not_found", "success",
                        "confirmation_required", "conflict", "confirmation_required",
                        "not_found", "success"]


def registered_with_an_agent(base: str, event_id: str) -> tuple[HttpVisitor, str, str]:
    """A person who connected an agent and registered for an event: the person, the agent's
    token and the registration's id."""
    person = HttpVisitor(base)
    token = connect_over_http(person)
    return person, token, register_as_person(person, event_id)


PEOPLE = itertools.count(1)


def register_as_person(person: HttpVisitor, event_id: str) -> str:
    """The person registers through the site (prepare, then the human-only confirm), with an
    e-mail address of their own (one address holds one seat of an event)."""
    token = person.prepare_registration(event_id, "Ann Lee", f"ann.{next(PEOPLE)}@example.com")
    confirmed = person.confirm_registration(token).json()
    assert confirmed["status"] == "success"
    registration: str = confirmed["data"]["registration"]["id"]
    return registration


def test_the_sdk_prepares_but_never_finishes(site, mode):
    base, database = site
    _, token, registration = registered_with_an_agent(base, "evt-ai-agents-taichung")
    before = registrations(database)

    async def work() -> list[Any]:
        answers: list[Any] = []
        async with sdk_client(base, mode, token) as client:
            await client.list_tools()
            for name, arguments in (
                    ("prepare_event_registration", {"event_id": EVENT, **ATTENDEE}),
                    ("prepare_registration_cancellation", {"registration_id": registration})):
                answers.append((await client.call_tool(name, arguments)).structured_content)
            for name in ("confirm_registration", "confirm_cancellation"):
                try:
                    await client.call_tool(name, {"confirmation_token": "x",
                                                  "registration_id": registration})
                except MCPError as refused:
                    answers.append(refused.error.code)
        return answers

    prepared_registration, prepared_cancellation, *refusals = in_thread(work)
    assert prepared_registration["status"] == "confirmation_required"
    assert prepared_cancellation["status"] == "confirmation_required"
    assert prepared_registration["data"]["reviewUrl"] == f"{base}/registrations/pending"
    assert refusals == [-32602, -32602]  # unknown tools: there are no confirm tools
    assert registrations(database) == before


def test_a_client_that_opens_urls_gets_the_review_page_then_the_answer(site):
    """URL-mode elicitation across workers: the retry's requestState is signed, not
    remembered, so whichever worker gets the retry answers it."""
    base, database = site
    person = HttpVisitor(base)
    token = connect_over_http(person)
    opened: list[str] = []

    async def work() -> Any:
        async def open_page(context: Any, params: Any) -> Any:
            import mcp_types as types
            opened.append(params.url)
            return types.ElicitResult(action="accept")

        async with sdk_client(base, "auto", token, elicitation=open_page) as client:
            await client.list_tools()
            return await client.call_tool("prepare_event_registration",
                                          {"event_id": "evt-agent-testing", **ATTENDEE})

    before = registrations(database)
    result = in_thread(work)
    assert opened == [f"{base}/registrations/pending"]
    assert result.structured_content["status"] == "confirmation_required"
    assert registrations(database) == before  # accepting opened a page; it confirmed nothing


def confirm_what_waits(person: HttpVisitor, action: str) -> None:
    """The person opens the review page in their own browser and confirms the one thing
    their agent prepared there (`action`: the form's address, as the page gives it)."""
    page = person.open_page("/en/registrations/pending")
    (token,) = confirmation_tokens(page.text)
    answer = person.post(action.format(token=token), {"confirmation_token": token}, JSON)
    assert answer.json()["status"] == "success", answer.text


def test_an_agent_goes_the_whole_way_with_the_person_confirming_twice(site, mode):
    """The issue's path over MCP: a search in Chinese finds an event written in English; the
    agent reads it, saves it and prepares a registration; the person confirms; the agent finds
    the registration's id in its plans, prepares the cancellation with it; the person confirms;
    the agent sees it cancelled. Nothing but the two confirmations is done by the person."""
    base, _ = site
    person = HttpVisitor(base)
    token = connect_over_http(person)
    email = f"whole.way.{next(PEOPLE)}@example.com"

    async def call(client: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await client.call_tool(name, arguments)
        envelope: dict[str, Any] = result.structured_content
        return envelope

    async def work() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with sdk_client(base, mode, token) as client:
            found = await call(client, "search_events", {"query": "工作坊"})
            written_in_english = [event for event in found["data"]["events"]
                                  if "工作坊" not in event["title"] + event["summary"]]
            assert written_in_english, found["data"]["events"]
            event_id = written_in_english[0]["id"]
            seen["details"] = await call(client, "get_event_details", {"event_id": event_id})
            seen["saved"] = await call(client, "save_event", {"event_id": event_id})
            seen["prepared"] = await call(client, "prepare_event_registration", {
                "event_id": event_id, "attendee_name": "Whole Way", "email": email})
            await asyncio.to_thread(confirm_what_waits, person, "/registrations/confirm")
            seen["registered"] = await call(client, "get_my_plans", {})
            (registration,) = [r for r in seen["registered"]["data"]["registrations"]
                               if r["eventId"] == event_id]
            seen["cancelling"] = await call(client, "prepare_registration_cancellation",
                                            {"registration_id": registration["id"]})
            await asyncio.to_thread(confirm_what_waits, person,
                                    f"/registrations/{registration['id']}/cancel")
            seen["cancelled"] = await call(client, "get_my_plans", {})
            seen["event_id"], seen["registration_id"] = event_id, registration["id"]
        return seen

    seen = in_thread(work)
    event_id, registration_id = seen["event_id"], seen["registration_id"]
    assert seen["details"]["status"] == "success"
    assert seen["details"]["data"]["event"]["url"] == f"{base}/events/{event_id}"
    assert seen["saved"]["status"] == "success"
    assert seen["prepared"]["status"] == "confirmation_required"
    plans = seen["registered"]["data"]
    assert [(r["id"], r["state"]) for r in plans["registrations"]] == [
        (registration_id, "active")]
    assert [s["id"] for s in plans["saved"]] == [event_id]
    assert [c["confirms"] for c in plans["confirmedLately"]] == ["confirm_registration"]
    assert seen["cancelling"]["status"] == "confirmation_required"
    after = seen["cancelled"]["data"]
    assert [(r["id"], r["state"]) for r in after["registrations"]] == [
        (registration_id, "cancelled")]
    assert after["waiting"] == []
    assert [c["confirms"] for c in after["confirmedLately"]] == [
        "confirm_cancellation", "confirm_registration"]
