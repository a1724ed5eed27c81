"""The official MCP Python SDK's OAuth client (`mcp.client.auth.OAuthClientProvider`) signs a
person in end to end against gunicorn, with the person in Chromium: the client reads without
a token, its first write is told 401, it discovers the metadata, registers (RFC 7591), sends
the person to the consent page, where the person (Playwright) approves in both languages; the
client exchanges the code with its PKCE verifier, retries the write, and the event is saved for
that person, as their own browser shows. Denying gives the client no token.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.exceptions import OAuthFlowError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult
from mcp.shared.auth import OAuthClientInformationFull
from mcp.shared.auth import OAuthClientMetadata
from mcp.shared.auth import OAuthToken
from playwright.sync_api import Route
from pydantic import AnyUrl

pytestmark = pytest.mark.browser

EVENT = "evt-webmcp-intro"
# Where the client listens for the person's browser after the consent page (RFC 8252: a
# loopback address); Playwright answers it, so nothing needs to listen there.
CALLBACK = "http://127.0.0.1:33418/callback"
IN_EACH_LANGUAGE = pytest.mark.parametrize("language", ["zh-TW", "en"])
WAIT = 60  # seconds any one step may take on a loaded machine (none is expected to)


class Memory:
    """The SDK's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Person:
    """The hand-over between the SDK (in a thread with its own loop) and the person's
    browser (Playwright's sync API, on the test's thread)."""

    def __init__(self) -> None:
        self.to_visit: queue.Queue[str] = queue.Queue()
        self.came_back: queue.Queue[str] = queue.Queue()

    async def open(self, url: str) -> None:
        self.to_visit.put(url)

    async def callback(self) -> AuthorizationCodeResult:
        address = await asyncio.to_thread(self.came_back.get, timeout=WAIT)
        params = httpx2.URL(address).params
        if "code" not in params:
            raise OAuthFlowError(f"the person said no: {params.get('error')}")
        # The issuer too (RFC 9207): the SDK checks it against the server's metadata.
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"),
                                       iss=params.get("iss"))


def save_with_oauth(base: str, person: Person, storage: Memory, mode: str = "legacy"
                    ) -> dict[str, Any]:
    """What the SDK's client gets for a search (no token) and then a save (which signs in)."""
    async def work() -> dict[str, Any]:
        auth = OAuthClientProvider(
            f"{base}/mcp", OAuthClientMetadata(
                client_name="SDK test client", redirect_uris=[AnyUrl(CALLBACK)],
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"], token_endpoint_auth_method="none"),
            storage, redirect_handler=person.open, callback_handler=person.callback)
        async with httpx2.AsyncClient(auth=auth, timeout=WAIT) as http:
            async with Client(streamable_http_client(f"{base}/mcp", http_client=http),
                              mode=mode) as client:
                found = await client.call_tool("search_events", {"query": "webmcp"})
                assert found.structured_content is not None
                saved = await client.call_tool("save_event", {"event_id": EVENT})
                assert saved.structured_content is not None
                return dict(saved.structured_content)
    return asyncio.run(work())


def approve_in_browser(tab, person: Person, decision: str) -> str:
    """The person opens the address the client sent them to and answers; where their
    browser was sent back to."""
    back: list[str] = []

    def catch(route: Route) -> None:
        back.append(route.request.url)
        route.fulfill(content_type="text/html", body="<!doctype html><title>Done</title>")

    tab.page.route(CALLBACK + "*", catch)
    tab.page.goto(person.to_visit.get(timeout=WAIT))
    assert f"/{tab.language}/oauth/authorize" in tab.page.url
    assert "SDK test client" in tab.page.content()
    tab.page.get_by_role("button", name=tab.text(decision)).click()
    tab.page.wait_for_url(CALLBACK + "*", timeout=WAIT * 1000)
    assert back
    return back[0]


@IN_EACH_LANGUAGE
@pytest.mark.parametrize("mode", ["legacy", "auto"])  # the handshake era, and 2026-07-28
def test_the_sdk_signs_in_with_oauth_and_saves_for_the_person(js_tab, language, mode):
    tab = js_tab
    tab.page.goto(tab.site.url("/events"))  # the person has been on the site before
    person, storage = Person(), Memory()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        agent = pool.submit(save_with_oauth, tab.site.base_url, person, storage, mode)
        person.came_back.put(approve_in_browser(tab, person, "Approve"))
        envelope = agent.result(timeout=WAIT * 2)
    assert envelope["status"] == "success", envelope
    assert storage.tokens is not None and storage.tokens.access_token.startswith("wmo_")
    assert storage.client is not None  # it registered (RFC 7591)
    # Saved for the person who approved: their own browser shows it, and lists the client.
    tab.page.goto(tab.site.url("/saved"))
    assert EVENT in tab.page.content()
    tab.page.goto(tab.site.url("/agents"))
    assert "SDK test client" in tab.page.content()


def test_a_person_who_denies_gives_the_sdk_nothing(js_tab):
    tab = js_tab
    person, storage = Person(), Memory()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        agent = pool.submit(save_with_oauth, tab.site.base_url, person, storage)
        person.came_back.put(approve_in_browser(tab, person, "Deny"))
        with pytest.raises(Exception) as refused:  # noqa: PT011 - the SDK wraps it its way
            agent.result(timeout=WAIT * 2)
    assert "access_denied" in repr(refused.value) or "said no" in repr(refused.value)
    assert storage.tokens is None
