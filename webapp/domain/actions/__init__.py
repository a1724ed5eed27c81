"""The site's actions: one function per tool or human-only step, `run(db, params, ctx)`.

A route (or the MCP endpoint) calls the action through the extension's pipeline
(`web.calls`): the input is loaded with the action's schema, and the action applies the
business rules through the storage layer and answers with a ToolResult. People and agents
reach the same action: `ctx.source` is recorded in the activity log, never consulted.

A tool's action is declared with `@CATALOG.action(name, answers=...)`, a step only people
take with `@human_action(name, schema=..., answers=...)`: the statuses each can answer are
declared there, so the routes, the OpenAPI document and the error answers learn them from it.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from flask_webmcp.actions import Action
from flask_webmcp.result import ToolResult

from ...storage import Account
from ...storage import Storage
from ..pages import Pages
from ..tokens import CheckInCodes
from ..tokens import ManageLinks
from ..tokens import ReviewTokens


@dataclass(frozen=True)
class ActionContext:
    """Who asks, when, and where: `pages` gives the addresses of the pages a person or an
    agent is sent to (the web layer's routes); `connection_lifetime` is how long an agent
    connection made now lasts; `language` is the one the person reads."""

    now: datetime
    timezone: ZoneInfo
    pages: Pages
    source: str = "human"
    visitor_id: str | None = None
    connection_lifetime: timedelta = timedelta(days=30)
    # Signed with the site's secret by the web layer; a context made elsewhere signs with a
    # key of its own, so its review tokens are good for nothing else.
    review_tokens: ReviewTokens = field(
        default_factory=lambda: ReviewTokens(secrets.token_bytes(32)))
    # Made with the site's secret by the web layer, like `review_tokens`.
    check_in_codes: CheckInCodes = field(
        default_factory=lambda: CheckInCodes(secrets.token_bytes(32)))
    # Made with the site's secret by the web layer, like `review_tokens`.
    manage_links: ManageLinks = field(
        default_factory=lambda: ManageLinks(secrets.token_bytes(32)))
    # The language of the request (a BCP 47 tag, "zh-TW" or "en"): mail it queues is
    # written in it.
    language: str = "zh-TW"
    # The account this browser is signed in to, and the hash of its session's id (what
    # signing out ends); None for an anonymous visitor or an agent.
    account: Account | None = None
    session_hash: str | None = None
    # How long a sign-in link works, and a signed-in session at most.
    sign_in_link_lifetime: timedelta = timedelta(minutes=15)
    session_lifetime: timedelta = timedelta(days=7)


SiteAction = Action[Callable[[Storage, Any, ActionContext], ToolResult]]
"""An action of this site: `run(db, params, ctx)` with the storage, the input the action's
schema loaded (typed by the TypedDict beside that schema in `schemas`), and the context of the
call."""
