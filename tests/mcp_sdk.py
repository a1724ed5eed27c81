"""The official MCP Python SDK's `Client`, as an agent outside the browser uses the site.

Each use runs in a thread of its own with its own event loop (`in_thread`), so the sync
Playwright API of the browser tests and the SDK's asyncio never share a loop; the protocol
is stateless, so every use may open a new client.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Coroutine
from contextlib import asynccontextmanager
from typing import Any
from typing import TypeVar

import httpx2
import mcp_types as types
from helpers import CSRF_FIELD
from mcp import Client
from mcp.client.session import ElicitationFnT
from mcp.client.streamable_http import streamable_http_client
from mcp_helpers import ACCESS_TOKEN
from servers import HttpVisitor

T = TypeVar("T")


async def open_urls_later(context: Any, params: types.ElicitRequestParams
                          ) -> types.ElicitResult:
    """An elicitation callback (so the client declares it opens URLs) that declines: a test
    that means to open the page drives the retry itself."""
    return types.ElicitResult(action="decline")


@asynccontextmanager
async def sdk_client(base: str, mode: str = "auto", token: str | None = None,
                     language: str = "en", elicitation: ElicitationFnT | None = None
                     ) -> AsyncIterator[Client]:
    """An SDK client of the site's `/mcp`, sending `token` (if any) and `language`; with an
    `elicitation` callback it declares that it can open URLs for its user."""
    headers = {"Accept-Language": language}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        transport = streamable_http_client(f"{base}/mcp", http_client=http)
        async with Client(transport, mode=mode,
                          elicitation_callback=elicitation) as client:
            yield client


def in_thread(work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine `work()` makes on a loop of its own, in a thread of its own."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(work())).result(timeout=120)


def connect_over_http(visitor: HttpVisitor, label: str = "the SDK") -> str:
    """A person connects an agent on the page of a real server; the token it shows once."""
    page = visitor.open_page("/en/agents")
    assert page.status == 200 and visitor.csrf
    shown = visitor.post("/en/agents", {"label": label})  # the 303 lands on the page
    found = ACCESS_TOKEN.search(shown.text)
    assert found, f"no token shown ({shown.status})"
    assert CSRF_FIELD.search(shown.text)
    return found.group(1)
