"""Agents outside the browser (MCP clients) act for the visitor who connected them.

A person connects an agent on a human-only page: that makes an access token bound to their
visitor, shown once on that page and stored only as a hash, which expires and which they can
revoke there. The agent sends it with every call (`Authorization: Bearer …`); reads need no
token, writes act for its visitor. Whatever an agent does, a person still confirms every
registration and cancellation on the site (see `registrations`).
"""

from __future__ import annotations

import secrets
from datetime import datetime
from datetime import timedelta
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from flask_webmcp.actions import human_action
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.result import not_found

from ...storage import AgentConnection
from ...storage import Storage
from ..activity import logged_as
from ..projections import local_time
from ..schemas import ConnectAgentInput
from ..schemas import ConnectAgentParams
from ..schemas import DisconnectAgentInput
from ..schemas import DisconnectAgentParams
from ..tokens import hash_token
from . import ActionContext

# Marks an access token for what it is (secret scanners, people reading a config file).
TOKEN_PREFIX = "wme_"  # noqa: S105 - a prefix, not a secret
# How often "last used" is written: an agent's every call would otherwise be a write.
LAST_USED_PRECISION = timedelta(minutes=1)


@logged_as(_l("Connect an agent"),
           _l("%(who)s connected an agent"))
@human_action("connect_agent", schema=ConnectAgentInput, creates=True,
              answers=(Status.SUCCESS,))
def connect_agent(db: Storage, params: ConnectAgentParams, ctx: ActionContext) -> ToolResult:
    """A person connects an agent: a new access token for their visitor, shown only once."""
    assert ctx.visitor_id is not None, "a connection belongs to a visitor"
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    connection = AgentConnection(
        id=f"agt-{secrets.token_urlsafe(9)}", visitor_id=ctx.visitor_id,
        label=params.get("label", ""), created_at=ctx.now,
        expires_at=ctx.now + ctx.connection_lifetime, language=ctx.language)
    db.create_agent_connection(connection, hash_token(token))
    return ToolResult(
        action="connect_agent",
        status=Status.SUCCESS,
        message=_("Your agent is connected. Copy its access token now: it is shown only this "
                  "once."),
        data={"connection": connection_view(connection, ctx)},
        target=connection.id,
        page_only={"access_token": token},
    )


@logged_as(_l("Disconnect an agent"),
           _l("%(who)s disconnected an agent"))
@human_action("disconnect_agent", schema=DisconnectAgentInput,
              answers=(Status.SUCCESS, Status.NOT_FOUND))
def disconnect_agent(db: Storage, params: DisconnectAgentParams, ctx: ActionContext) -> ToolResult:
    """A person disconnects one of their agents: its token stops working at once."""
    assert ctx.visitor_id is not None, "disconnecting needs a visitor"
    if not db.revoke_agent_connection(ctx.visitor_id, params["connection_id"]):
        return not_found("disconnect_agent", _("You have no connected agent with this id."))
    return ToolResult(action="disconnect_agent", status=Status.SUCCESS,
                      message=_("The agent is disconnected: its access token no longer works."),
                      data={"connectionId": params["connection_id"]},
                      target=params["connection_id"])


def connection_view(connection: AgentConnection, ctx: ActionContext) -> dict[str, Any]:
    """A connection as its page lists it (never its token)."""
    return {
        "id": connection.id,
        "label": connection.label,
        "createdAt": local_time(connection.created_at, ctx.timezone),
        "expiresAt": local_time(connection.expires_at, ctx.timezone),
        "lastUsedAt": (local_time(connection.last_used_at, ctx.timezone)
                       if connection.last_used_at else None),
        # Granted to an app that signed in with OAuth (its name is the app's own words), not
        # made with a pasted token.
        "oauth": connection.client_id is not None,
    }


def agent_connections(db: Storage, ctx: ActionContext) -> list[dict[str, Any]]:
    """The visitor's connections that still work, newest first."""
    if ctx.visitor_id is None:
        return []
    return [connection_view(connection, ctx)
            for connection in db.visitor_agent_connections(ctx.visitor_id)
            if connection.expires_at > ctx.now]


def connection_for(db: Storage, token: str, now: datetime) -> AgentConnection | None:
    """The live connection an access token stands for (noting that it was used), or None for
    a token that is unknown, revoked or expired."""
    connection = db.agent_connection(hash_token(token))
    if connection is None or connection.expires_at <= now:
        return None
    used = connection.last_used_at
    if used is None or now - used >= LAST_USED_PRECISION:
        db.agent_connection_used(connection.id, now)
    return connection
