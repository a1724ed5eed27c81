"""The site's actions: one function per tool or human-only step, `action(db, params, ctx)`.

A route loads the input with the action's schema and calls the action; the action applies the
business rules through the storage layer and answers with a ToolResult. People and agents
reach the same action: `ctx.source` is recorded in the activity log, never consulted.

Each action is declared with `@action(name, answers=...)`: its name (a tool of the catalog or
a human-only step) and the statuses it can answer, so the routes, the OpenAPI document and the
error answers all learn them from here.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from datetime import datetime
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from marshmallow import Schema

from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult

from ...storage import Storage
from ..catalog import CATALOG
from ..tokens import ReviewTokens


@dataclass(frozen=True)
class ActionContext:
    """Who asks, when, and where: `site_address` gives the site's address as the request
    reached it (scheme and host), for the addresses a person is sent to; `connection_lifetime`
    is how long an agent connection made now lasts."""

    now: datetime
    timezone: ZoneInfo
    source: str = "human"
    visitor_id: str | None = None
    # A function, not a string: working the address out of the request's headers costs more
    # than a search spends anywhere else outside storage, and only a few actions need it.
    site_address: Callable[[], str] = str
    connection_lifetime: timedelta = timedelta(days=30)
    # Signed with the site's secret by the web layer; a context made elsewhere signs with a
    # key of its own, so its review tokens are good for nothing else.
    review_tokens: ReviewTokens = field(
        default_factory=lambda: ReviewTokens(secrets.token_bytes(32)))

    @property
    def site_url(self) -> str:
        """The site's address as the request reached it (scheme and host)."""
        return self.site_address()


ActionFunction = Callable[[Storage, dict[str, Any], ActionContext], ToolResult]


@dataclass(frozen=True)
class Action:
    """An action with what callers need to know of it: its name, the schema of its input,
    the statuses it answers (beyond the ones every call may meet, such as invalid_input), and
    whether its success creates something (HTTP 201)."""

    name: str
    run: ActionFunction
    schema: type[Schema]
    answers: tuple[Status, ...]
    creates: bool = False

    def __call__(self, db: Storage, params: dict[str, Any], ctx: ActionContext) -> ToolResult:
        result = self.run(db, params, ctx)
        if self.creates and result.status is Status.SUCCESS:
            return replace(result, http_status=201)
        return result


def action(name: str, answers: Iterable[Status], schema: type[Schema] | None = None,
           creates: bool = False) -> Callable[[ActionFunction], Action]:
    """Declare an action: a tool takes its schema from the catalog, a human-only step names
    its own."""

    def declare(run: ActionFunction) -> Action:
        if schema is None and name not in CATALOG:
            raise ValueError(f"{name} is not a tool of the catalog: give its schema")
        return Action(name=name, run=run, schema=schema or CATALOG[name].schema,
                      answers=tuple(answers), creates=creates)

    return declare
