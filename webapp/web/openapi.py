"""`GET /openapi.json`: every route that runs an action, as OpenAPI 3.1.

Derived from the route declarations (`routes.tool_route`): each route's input is the schema
its action validates with, and its answers are the statuses its action declares plus those
every call of its kind may meet (docs/design.md §4 gives their HTTP codes).
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from flask import Blueprint
from flask import Flask
from flask import Response
from flask import current_app
from flask import jsonify
from flask_babel import force_locale
from werkzeug.routing import Rule

from flask_webmcp.actions import Action
from flask_webmcp.result import Status
from flask_webmcp.routes import page_route
from flask_webmcp.routes import route_roles

from ..domain.catalog import CATALOG
from .caching import public

bp = Blueprint("openapi", __name__)

DESCRIPTION = (
    "The routes behind the site's WebMCP tool forms and its human-only confirm forms. Every "
    "route answers the same result envelope: as JSON when the request prefers "
    "application/json, otherwise as an HTML page or htmx partial embedding it as JSON-LD. "
    "Confirm routes are for people: no agent tool submits them.\n\n"
    "The same six tools are served to MCP clients at POST /mcp (Streamable HTTP, JSON-RPC "
    "2.0, application/json answers; protocol versions 2025-06-18 and 2025-11-25 with the "
    "initialize handshake, and 2026-07-28 with server/discover). tools/list gives each tool's "
    "input schema and, as its output schema, the Envelope below; tools/call answers the "
    "envelope as structuredContent. Reading events needs nothing; writes and get_my_plans "
    "(the visitor's own registrations and saved events) act for the visitor who "
    "connected the agent at /agents (send its access token as Authorization: Bearer ...). "
    "Registrations and cancellations are only prepared over MCP: the person confirms each one "
    "at /registrations/pending in their own browser.")


def route_answers(rule: Rule, action: Action[Any]) -> tuple[Status, ...]:
    """Every status a route can answer: its action's, and those of any call of its kind."""
    # Every request spends a budget of its client's (web/limits.py), reads included.
    answers = [*action.answers, Status.INVALID_INPUT, Status.RATE_LIMITED,
               Status.INTERNAL_ERROR]
    if rule.arguments:
        answers.append(Status.NOT_FOUND)  # an id in the address that cannot be one
    if "POST" in (rule.methods or ()):
        answers.append(Status.SESSION_EXPIRED)  # a write needs a live session and its token
    return tuple(status for status in Status if status in answers)


def openapi_document(app: Flask) -> dict[str, Any]:
    """The OpenAPI 3.1 document of `app`'s routes that run an action."""
    # The generator is only needed by this rarely asked route: import it on first use.
    from flask_webmcp.apidoc import Operation
    from flask_webmcp.apidoc import add_operation
    from flask_webmcp.apidoc import new_spec

    spec = new_spec("webmcp-events", metadata.version("webmcp-events"), DESCRIPTION)
    for rule, role in route_roles(app):
        action = role.action
        if action is None:
            continue
        is_tool = action.name in CATALOG
        if is_tool:
            tool = CATALOG[action.name]
            summary, description = str(tool.title), str(tool.description)
        else:
            doc = app.view_functions[rule.endpoint].__doc__ or ""
            summary, _, more = doc.partition("\n")
            summary, description = summary.strip(), more.strip() or summary.strip()
        add_operation(spec, Operation(
            rule, "post" if "POST" in (rule.methods or ()) else "get", action.schema, summary,
            description, route_answers(rule, action),
            tool=action.name if is_tool else None, created=action.creates))
    return spec.to_dict()


@public(max_age=3600)
@page_route(bp, "/openapi.json", "openapi")
def openapi_json() -> Response:
    """The document, generated from the schemas on each request (it is small). It is for
    developers and has no language prefix: always English (tool titles and descriptions in
    the catalog's source language)."""
    with force_locale("en"):
        return jsonify(openapi_document(current_app))
