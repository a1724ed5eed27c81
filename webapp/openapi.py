"""`GET /openapi.json`: the tool routes and the human-only confirm routes, as OpenAPI 3.1.

Generated from the same marshmallow schemas that validate each route (see
`webapp.webmcp.apidoc`); the statuses each route can answer are the ones its action returns
(DESIGN.md §4 gives their HTTP codes).
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from flask import Blueprint
from flask import Flask
from flask import current_app
from flask import jsonify

from .schemas import ConfirmCancellationInput
from .schemas import ConfirmInput
from .tools import CATALOG
from .webmcp.apidoc import Operation
from .webmcp.apidoc import add_operation
from .webmcp.apidoc import new_spec
from .webmcp.apidoc import statuses

bp = Blueprint("openapi", __name__)

# Every write may also meet an expired session (CSRF) or the rate limit.
WRITES = ("session_expired", "rate_limited", "internal_error")
# endpoint -> the tool it runs and the statuses its action answers
TOOL_ROUTES = {
    "events.search": ("search_events", statuses(
        "success", "no_results", "invalid_input", "internal_error")),
    "events.preview": ("get_event_details", statuses(
        "success", "invalid_input", "not_found", "internal_error")),
    "events.detail": ("get_event_details", statuses(
        "success", "invalid_input", "not_found", "internal_error")),
    "events.save": ("save_event", statuses("success", "invalid_input", "not_found", *WRITES)),
    "registrations.prepare": ("prepare_event_registration", statuses(
        "confirmation_required", "invalid_input", "not_found", "conflict", *WRITES)),
    "registrations.prepare_cancellation": ("prepare_registration_cancellation", statuses(
        "confirmation_required", "invalid_input", "not_found", "conflict", *WRITES)),
}
# endpoint -> the schema of the human-only form and its statuses
HUMAN_ROUTES = {
    "registrations.confirm": (ConfirmInput, statuses(
        "success", "invalid_input", "not_found", "conflict", *WRITES)),
    "registrations.confirm_cancellation": (ConfirmCancellationInput, statuses(
        "success", "invalid_input", "not_found", "conflict", *WRITES)),
}
CREATED = {"registrations.confirm"}  # a confirmed registration answers 201

DESCRIPTION = (
    "The routes behind the site's WebMCP tool forms and its human-only confirm forms. Every "
    "route answers the same result envelope: as JSON when the request prefers "
    "application/json, otherwise as an HTML page or htmx partial embedding it as JSON-LD. "
    "Confirm routes are for people: no agent tool submits them.")


def openapi_document(app: Flask) -> dict[str, Any]:
    """The OpenAPI 3.1 document of `app`'s tool and confirm routes."""
    spec = new_spec("webmcp-events", metadata.version("webmcp-events"), DESCRIPTION)
    for endpoint, (name, answers) in TOOL_ROUTES.items():
        tool = CATALOG[name]
        for rule in app.url_map.iter_rules(endpoint):
            add_operation(spec, Operation(rule, _method(rule), tool.schema, tool.title,
                                          tool.description, answers, tool=name))
    for endpoint, (schema, answers) in HUMAN_ROUTES.items():
        summary, _, more = (app.view_functions[endpoint].__doc__ or "").partition("\n")
        for rule in app.url_map.iter_rules(endpoint):
            add_operation(spec, Operation(rule, _method(rule), schema, summary.strip(),
                                          more.strip() or summary.strip(), answers,
                                          created=endpoint in CREATED))
    return spec.to_dict()


def _method(rule: Any) -> str:
    return "post" if "POST" in rule.methods else "get"


@bp.get("/openapi.json")
def openapi_json():
    """The document, generated from the schemas on each request (it is small)."""
    return jsonify(openapi_document(current_app))
