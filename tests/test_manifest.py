"""`flask webmcp manifest`: the catalog as JSON, stable enough for CI to diff."""

from __future__ import annotations

import json
from typing import Any

import pytest
from routes import declared_app

from flask_webmcp.input_schema import expected_input_schema
from flask_webmcp.routes import offering_routes
from webapp import create_app
from webapp.domain.catalog import CATALOG


def manifest(runner) -> dict[str, Any]:
    result = runner.invoke(args=["webmcp", "manifest"])
    assert result.exit_code == 0, result.output
    catalog: dict[str, Any] = json.loads(result.output)
    return catalog


@pytest.fixture(scope="module")
def listed(tmp_path_factory) -> dict[str, Any]:
    """The manifest, made once for the tests that only read it (each making walks every
    sample page of two sandbox apps: seconds)."""
    database = tmp_path_factory.mktemp("manifest") / "events.sqlite"
    app = create_app({"TESTING": True, "SECRET_KEY": "manifest", "DATABASE": str(database)})
    return manifest(app.test_cli_runner())


def test_lists_every_tool_with_its_catalog_entry(listed):
    tools = listed["tools"]
    assert [tool["name"] for tool in tools] == CATALOG.names
    for entry in tools:
        tool = CATALOG[entry["name"]]
        assert (entry["title"], entry["description"], entry["formDescription"],
                entry["autosubmit"]) == (tool.title, tool.description, tool.form_description,
                                         tool.autosubmit)
        assert entry["forms"], f"no sample page shows {tool.name}"


def test_lists_the_pages_each_route_declares_it_offers(listed):
    pages = {tool["name"]: tool["pages"] for tool in listed["tools"]}
    assert pages == offering_routes(declared_app())
    # What that declaration says of the list and of the cancellation, as the design has it.
    assert pages["search_events"] == ["/events"]
    assert {"/registrations", "/registrations/cancellation",
            "/registrations/<registration_id>/cancel"} <= set(
        pages["prepare_registration_cancellation"])


def test_gives_the_schema_of_each_form(listed):
    forms = {(tool["name"], form["route"]): form
             for tool in listed["tools"] for form in tool["forms"]}
    search = forms["search_events", "/events"]
    assert search["inputSchema"] == expected_input_schema(CATALOG["search_events"])
    assert search["choicesFromPage"] == []
    details = forms["get_event_details", "/events"]
    assert details["choicesFromPage"] == ["event_id"]
    assert details["inputSchema"]["properties"]["event_id"]["enum"] == []
    assert forms["get_event_details", "/events/<event_id>"]["inputSchema"]["properties"] == {}


def test_is_the_same_every_time(runner, listed):
    """Page data (event and registration ids) stays out, so only tool changes show in a diff:
    another app, on another database, lists the same."""
    assert manifest(runner) == listed
