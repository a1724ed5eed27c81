"""An agent outside the browser (the official MCP SDK's `Client`) and the person in Chromium,
JavaScript on and off, in both languages: the person connects the agent on the page, the
agent prepares a registration and later its cancellation, and only the person's press on the
review page's confirm buttons takes or frees the seat. A client that can open URLs is sent to
that same page.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from helpers import new_person
from mcp_helpers import ACCESS_TOKEN
from mcp_sdk import in_thread
from mcp_sdk import open_urls_later
from mcp_sdk import sdk_client

pytestmark = pytest.mark.browser

EVENT = "evt-webmcp-spec-reading"  # 200 seats: this module's registrations never fill it
IN_EACH_LANGUAGE = pytest.mark.parametrize("language", ["zh-TW", "en"])


def connect(tab) -> str:
    """The person connects an agent on the page; the token it shows them once."""
    tab.page.goto(tab.site.url("/agents"))
    tab.page.get_by_role("button", name=tab.text("Connect an agent")).click()
    tab.page.get_by_text(tab.text("Your agent's access token")).wait_for()
    found = ACCESS_TOKEN.search(tab.page.content())
    assert found
    return found.group(1)


def call(tab, token: str, name: str, arguments: dict[str, Any], mode: str = "auto") -> Any:
    """The agent calls a tool (reading the page's language)."""
    async def work() -> Any:
        async with sdk_client(tab.site.base_url, mode, token, tab.language) as client:
            await client.list_tools()
            return await client.call_tool(name, arguments)
    return in_thread(work)


def seats(tab) -> int:
    left: int = tab.seats(EVENT)
    return left


def confirm_on_the_review_page(tab, address: str, button: str, then_shows: str) -> None:
    """The person opens the address the agent was given, in their own browser, and presses
    the confirm button of what waits there."""
    tab.page.goto(address)
    assert tab.page.url.endswith(f"/{tab.language}/registrations/pending")
    tab.press(tab.text(button), then_shows=tab.text(then_shows))


@IN_EACH_LANGUAGE
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_agent_prepares_and_the_person_confirms_in_the_browser(tab, mode):
    token = connect(tab)
    before = seats(tab)
    prepared = call(tab, token, "prepare_event_registration", {"event_id": EVENT, **new_person()},
                    mode)
    envelope = prepared.structured_content
    assert envelope["status"] == "confirmation_required" and seats(tab) == before
    confirm_on_the_review_page(tab, envelope["data"]["reviewUrl"], "Confirm registration",
                               "You are registered: one seat is yours.")
    assert seats(tab) == before - 1
    registration = tab.page.url.rsplit("/", 1)[-1]
    assert registration.startswith("reg-")

    cancelling = call(tab, token, "prepare_registration_cancellation",
                      {"registration_id": registration}, mode)
    assert cancelling.structured_content["status"] == "confirmation_required"
    assert seats(tab) == before - 1
    confirm_on_the_review_page(tab, cancelling.structured_content["data"]["reviewUrl"],
                               "Cancel my registration",
                               "Your registration is cancelled and its seat is free again.")
    assert seats(tab) == before


def test_a_client_that_opens_urls_sends_the_person_to_the_review_page(js_tab):
    """URL-mode elicitation, driven as a client would: it gets the page's address, the person
    confirms there, and the retry answers what the call did (the person did the rest)."""
    tab = js_tab
    token = connect(tab)
    before = seats(tab)
    arguments = {"event_id": EVENT, **new_person()}

    async def ask() -> Any:
        async with sdk_client(tab.site.base_url, "auto", token,
                              elicitation=open_urls_later) as client:
            await client.list_tools()
            return await client.session.call_tool("prepare_event_registration", arguments,
                                                  allow_input_required=True)

    asked = in_thread(ask)
    assert isinstance(asked, types.InputRequiredResult) and asked.input_requests
    (request,) = asked.input_requests.values()
    assert isinstance(request.params, types.ElicitRequestURLParams)  # never a form
    confirm_on_the_review_page(tab, request.params.url, "Confirm registration",
                               "You are registered: one seat is yours.")

    async def retry() -> Any:
        async with sdk_client(tab.site.base_url, "auto", token,
                              elicitation=open_urls_later) as client:
            await client.list_tools()
            return await client.call_tool(
                "prepare_event_registration", arguments, request_state=asked.request_state,
                input_responses={"review": types.ElicitResult(action="accept")})

    answered = in_thread(retry)
    assert answered.structured_content["status"] == "confirmation_required"
    assert seats(tab) == before - 1  # one seat: the person's press, not the retry


def test_the_review_page_is_the_persons_own(open_tab):
    """Another browser opening the address the agent was given finds nothing to confirm."""
    person, stranger = open_tab(), open_tab()
    token = connect(person)
    prepared = call(person, token, "prepare_event_registration",
                    {"event_id": EVENT, **new_person()})
    stranger.page.goto(prepared.structured_content["data"]["reviewUrl"])
    stranger.page.get_by_text(stranger.text(
        "Nothing is waiting for your confirmation in this browser. If your agent sent you "
        "here, open this page in the browser where you connected it, or ask it to prepare "
        "again: what it prepares waits five minutes.")).wait_for()
    assert stranger.page.get_by_role("button", name=stranger.text("Confirm registration")
                                     ).count() == 0
