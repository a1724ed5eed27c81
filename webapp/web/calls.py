"""What a call does on this site, given to the extension's pipeline (`flask_webmcp.calls`) as
its hooks: an action runs with the site's storage and a context of the request (its clock, its
time zone, the visitor it acts for), each call is logged in the visitor's activity (in the
same transaction as what it did, when it may change something), and a storage failure is
answered with a safe `internal_error`.

Routes call `run_tool()`, which runs the action their declaration names (`tool_route`,
`human_route`); the MCP endpoint calls `CALLS.call` for the visitor who connected the agent.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from datetime import timedelta
from typing import Any

from flask import current_app
from flask import g
from flask import request

from flask_webmcp.calls import CallRecord
from flask_webmcp.calls import Calls
from flask_webmcp.calls import Ran
from flask_webmcp.result import ToolResult
from flask_webmcp.routes import current_role

from ..clock import site_now
from ..clock import site_timezone
from ..domain.actions import ActionContext
from ..domain.actions import SiteAction
from ..domain.catalog import CATALOG
from ..domain.tokens import CheckInCodes
from ..domain.tokens import ManageLinks
from ..domain.tokens import ReviewTokens
from ..storage import Activity
from ..storage import StorageError
from ..storage.connection import get_db
from .addresses import AgentPages
from .addresses import SitePages
from .languages import current_language
from .visitors import cookie_visitor
from .visitors import live_visitor
from .visitors import session_hash
from .visitors import visitor_for_write

# The source of the calls of agents shown no page (MCP clients, `mcp.py`).
MCP_SOURCE = "mcp"


def action_context(visitor_id: str | None, source: str = "human") -> ActionContext:
    """The context of the current request (an MCP client's calls are given full addresses
    and next steps worded as tools: it is shown no page)."""
    config = current_app.config
    return ActionContext(
        now=site_now(),
        timezone=site_timezone(),
        pages=AgentPages() if source == MCP_SOURCE else SitePages(),
        source=source,
        visitor_id=visitor_id,
        connection_lifetime=timedelta(seconds=int(config["AGENT_CONNECTION_TTL"])),
        review_tokens=ReviewTokens(_secret()),
        check_in_codes=CheckInCodes(_secret()),
        manage_links=ManageLinks(_secret()),
        language=current_language().code,
        account=g.get("account"),
        session_hash=session_hash(),
        sign_in_link_lifetime=timedelta(seconds=int(config["SIGN_IN_LINK_TTL"])),
        session_lifetime=timedelta(seconds=int(config["SESSION_LIFETIME"])),
    )


def _secret() -> bytes:
    """The app's secret key as bytes (Flask takes it as text or bytes)."""
    key = current_app.secret_key
    return key if isinstance(key, bytes) else str(key).encode()


def execute(action: SiteAction, params: dict[str, Any], visitor_id: str | None,
            source: str) -> ToolResult:
    """Run `action` with the site's storage, for `visitor_id`."""
    return action.run(get_db(), params, action_context(visitor_id, source))


def record(call: CallRecord) -> None:
    """Log a call in the visitor's activity (who, what, outcome, target; no free text).

    Nobody can read an anonymous line, so calls that act for no visitor are not logged.
    """
    if call.principal is not None:
        get_db().record_activity(Activity(
            at=site_now(), visitor_id=call.principal, source=call.source, action=call.action,
            status=call.result.status.word, target_id=call.result.target))


def unit_of_work(action: SiteAction) -> AbstractContextManager[Any] | None:
    """What a call runs in: one transaction when it may change something, from extending the
    session of whom it acts for to its line in the activity log (one commit where there were
    three; on PostgreSQL each waits for the disk). A read-only tool's call needs none (on
    SQLite a transaction would take the write lock, and readers go on while another process
    writes): its line in the log is written on its own, and never fails the call."""
    if action.name in CATALOG and CATALOG[action.name].hints.read_only:
        return None
    return get_db().transaction()


CALLS = Calls(execute=execute, record=record, failures=(StorageError,), unit=unit_of_work)


def run_tool(bound: dict[str, Any] | None = None, needs_visitor: bool = True) -> Ran:
    """Run the action of the route handling this request on its input, for its visitor.

    A POST is a write: it needs a live visitor (created on the first write), unless
    `needs_visitor` is False (signing in: a browser whose visitor ended may still sign in).
    Values `bound` by the page address that do not validate mean there is nothing at that
    address.
    """
    if request.method == "POST" and not needs_visitor:
        return CALLS.route_call(acting_for=lambda: live_visitor(get_db()),
                                asker=cookie_visitor(), bound=bound)
    if request.method == "POST":
        return CALLS.route_call(acting_for=lambda: visitor_for_write(get_db()),
                                asker=cookie_visitor(), bound=bound)
    if _personal():
        # What it reads is the visitor's own: only while their session lives (an ended one
        # reads as nobody's, as the pages show it), and a read never extends it.
        return CALLS.route_call(acting_for=lambda: live_visitor(get_db()),
                                asker=cookie_visitor(), bound=bound)
    return CALLS.route_call(acting_for=cookie_visitor, asker=cookie_visitor(), bound=bound)


def _personal() -> bool:
    """Whether the route handling this request runs a personal tool (the catalog says so)."""
    role = current_role()
    return role is not None and role.name in CATALOG and CATALOG[role.name].personal
