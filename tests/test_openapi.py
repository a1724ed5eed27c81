"""`GET /openapi.json` is a valid OpenAPI 3.1 document that agrees with the tool forms and
with what the routes really answer."""

from __future__ import annotations

import re
from typing import Any

import pytest
from helpers import JSON
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

from flask_webmcp.input_schema import expected_input_schema
from flask_webmcp.result import Status
from flask_webmcp.routes import route_roles
from webapp.domain.catalog import CATALOG

EVENT_ID = "evt-webmcp-intro"


@pytest.fixture
def document(client):
    response = client.get("/openapi.json")
    assert response.status_code == 200
    return response.get_json()


def operations(document):
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation


def test_is_a_valid_openapi_31_document(document):
    assert document["openapi"] == "3.1.0"
    validate(document)


def openapi_path(rule: str) -> str:
    """A Flask rule as OpenAPI writes a path (`<name>` becomes `{name}`)."""
    return re.sub(r"<(?:[^<>:]+:)?([^<>:]+)>", r"{\1}", rule)


def test_documents_every_tool_and_every_human_only_step(app, document):
    documented = {(path, method): operation for path, method, operation in operations(document)}
    tools = {operation.get("x-webmcp-tool") for operation in documented.values()}
    assert tools - {None} == set(CATALOG.names)
    human = {key for key, operation in documented.items() if "x-webmcp-tool" not in operation}
    # Every step for people the routes declare (a new one is expected here the day it is).
    assert human == {(openapi_path(rule.rule), method.lower())
                     for rule, role in route_roles(app) if role.human_only
                     for method in rule.methods or () if method in ("POST", "PUT", "DELETE")}
    assert len(human) >= 8
    routes = {(openapi_path(rule.rule), method.lower())
              for rule in app.url_map.iter_rules() for method in rule.methods}
    assert set(documented) <= routes


def test_posts_document_the_csrf_token(document):
    for _, method, operation in operations(document):
        if method == "post":
            assert {"$ref": "#/components/parameters/X-CSRFToken"} in operation["parameters"]
            form = operation["requestBody"]["content"]["application/x-www-form-urlencoded"]
            assert "csrf_token" in form["schema"]["properties"]


def test_status_codes_follow_the_envelope_statuses(document):
    """Each response names the statuses it carries, at their HTTP codes (docs/design.md §4)."""
    extra = {"405": "invalid_input (wrong method)", "413": "invalid_input (body too large)",
             "201": "success",
             "403": "invalid_input (marked as an agent's call: only a person submits this)"}
    for _, _, operation in operations(document):
        # Human-only steps refuse a request marked as an agent's call; tools never do.
        assert ("403" in operation["responses"]) is (operation["tags"] == ["human-only"])
        for code, response in operation["responses"].items():
            if code == "303":
                continue
            for word in response["description"].removeprefix("status: ").split(", "):
                assert word == extra.get(code) or Status.from_word(word).http_status == int(code)
    assert document["components"]["schemas"]["Envelope"]["properties"]["status"]["enum"] == [
        status.word for status in Status]


def request_schema(document, path: str, method: str) -> dict[str, Any]:
    """The agent-fillable inputs of an operation, as one object schema (no CSRF, no path)."""
    operation = document["paths"][path][method]
    if method == "get":
        parameters = [p for p in operation["parameters"] if p.get("in") == "query"]
        return {"properties": {p["name"]: dict(p["schema"]) for p in parameters},
                "required": [p["name"] for p in parameters if p["required"]]}
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    return {"properties": body["properties"], "required": body.get("required", [])}


# Formats the API documents that Chromium's schema of the same input never has
# (flask-webmcp/docs/chromium.md §3).
API_ONLY_FORMATS = {"email"}

# The same tool, as its form shows it on a page and as OpenAPI documents its route.
FORMS = [
    ("search_events", {}, "/events", "get"),
    ("get_event_details", {"choices": {"event_id": [(EVENT_ID, "WebMCP Intro Workshop")]}},
     "/events/details", "get"),
    ("get_event_details", {"bound": ["event_id"]}, "/events/{event_id}", "get"),
    ("save_event", {"bound": ["event_id"]}, "/events/{event_id}/save", "post"),
    ("prepare_event_registration", {"bound": ["event_id"]}, "/events/{event_id}/register",
     "post"),
    ("prepare_registration_cancellation",
     {"choices": {"registration_id": [("reg-abcdefgh", "An event")]}},
     "/registrations/cancellation", "post"),
]


@pytest.mark.parametrize(("tool", "context", "path", "method"), FORMS)
def test_request_schema_matches_the_tool_form(document, tool, context, path, method):
    """Names, types, enums and required agree with the form's schema.

    Intended differences: a form's optional select also offers "" (the API reads a blank as
    "not given", so it is no value to document); `page` is a number to the browser and an
    integer to the API; ids the page lists are an enum in the form and a pattern in the API; an
    e-mail has its `format` in the API only (Chromium gives an email input none).
    """
    form = expected_input_schema(CATALOG[tool], **context)
    api = request_schema(document, path, method)
    assert list(api["properties"]) == list(form["properties"])
    assert api["required"] == form["required"]
    for name, field in form["properties"].items():
        documented = api["properties"][name]
        kind = "number" if documented["type"] == "integer" else documented["type"]
        assert kind == field["type"], name
        documented_format = documented.get("format")
        if documented_format in API_ONLY_FORMATS:
            documented_format = None
        assert documented_format == field.get("format"), name
        if "enum" in documented:
            assert documented["enum"] == [v for v in field["enum"] if v != ""], name
        elif "enum" in field:
            assert name in context.get("choices", {}), f"{name}: only page-listed ids lack enum"


def test_json_answers_match_the_envelope_schema(document, visitor):
    envelope = Draft202012Validator({"$ref": "#/components/schemas/Envelope",
                                     "components": document["components"]})
    answers = [
        visitor.get("/events", headers=JSON),
        visitor.get("/events?query=nothing-matches-this", headers=JSON),
        visitor.get("/events?date_from=soon", headers=JSON),
        visitor.get(f"/events/{EVENT_ID}", headers=JSON),
        visitor.get("/events/evt-no-such-event", headers=JSON),
        visitor.post_json(f"/events/{EVENT_ID}/save"),
        visitor.post_json(f"/events/{EVENT_ID}/register",
                          {"attendee_name": "Ann Lee", "email": "ann@example.com"}),
        visitor.post_json("/registrations/confirm", {"confirmation_token": "used-or-unknown"}),
        visitor.post_json("/registrations/cancellation", csrf=False),
    ]
    seen = set()
    for answer in answers:
        body = answer.get_json()
        envelope.validate(body)
        seen.add(body["status"])
    assert seen == {"success", "no_results", "invalid_input", "not_found",
                    "confirmation_required", "session_expired"}
