"""The inputSchema Chromium builds from each tool form, checked against both sides of the toolkit.

For every tool on every page that shows it, in both languages, Chromium's schema must equal
- `synthesize_input_schema(form)` of the same form, read from the page as the browser has it
  now (this validates the synthesizer against the real browser), and
- `expected_input_schema(tool, **context)`, derived from the tool's marshmallow schema in the
  page's language (this proves the rendered form and the schema agree).
"""

from __future__ import annotations

from typing import Any

import pytest
from bs4 import BeautifulSoup
from helpers import one

from flask_webmcp.dev.schema import synthesize_input_schema
from flask_webmcp.input_schema import expected_input_schema
from webapp import create_app
from webapp.domain.catalog import CATALOG

pytestmark = [pytest.mark.browser, pytest.mark.parametrize("language", ["zh-TW", "en"])]

EVENT = "evt-webmcp-intro"
# Where the tests register: 200 seats, so the module's registrations never fill it.
ROOMY_EVENT = "evt-webmcp-spec-reading"
ROOMY_EVENT_TITLE = "Reading the WebMCP Draft Together"


@pytest.fixture(scope="module")
def catalog_app(tmp_path_factory):
    """A copy of the app to read the catalog with, in a page's language (no database)."""
    return create_app({"TESTING": True, "SECRET_KEY": "catalog",
                       "DATABASE": str(tmp_path_factory.mktemp("catalog") / "unused.sqlite")})


@pytest.fixture
def assert_agent_sees(catalog_app):
    def assert_agent_sees(tab, tool: str, **context: Any) -> None:
        """Chromium's schema of `tool` on the tab's page is the synthesized and the expected
        one (in the page's language)."""
        tools = tab.agent.tools()
        assert tool in tools, f"{tool} is not a tool of {tab.page.url}"
        assert f"/{tab.language}/" in tab.page.url
        chromium = tools[tool].input_schema
        form = one(BeautifulSoup(tab.page.content(), "html.parser"), f"form[toolname={tool}]")
        assert chromium == synthesize_input_schema(form), "the synthesizer misreads this form"
        with catalog_app.test_request_context(f"/{tab.language}/events"):
            expected = expected_input_schema(CATALOG[tool], **context)
        assert chromium == expected, "the form and its marshmallow schema disagree"

    return assert_agent_sees


def listed_events(tab, path: str) -> list[tuple[str, str]]:
    """The (id, title) of the events a search page lists, as a JSON client gets them."""
    return [(event["id"], event["title"]) for event in tab.ask(path)["data"]["events"]]


def test_search_events(tab, assert_agent_sees):
    tab.open("/events")
    assert_agent_sees(tab, "search_events")


@pytest.mark.parametrize("path", ["/events", "/events?query=webmcp", "/events?page=2"])
def test_get_event_details_over_the_listed_events(tab, assert_agent_sees, path):
    tab.open(path)
    assert_agent_sees(tab, "get_event_details", choices={"event_id": listed_events(tab, path)})


@pytest.mark.parametrize("tool", ["get_event_details", "save_event"])
def test_tools_bound_to_the_event_page(tab, assert_agent_sees, tool):
    tab.open(f"/events/{EVENT}")
    assert_agent_sees(tab, tool, bound=["event_id"])


def test_save_event_in_the_preview_pane(js_tab, assert_agent_sees):
    js_tab.open("/events")
    js_tab.call("get_event_details", {"event_id": EVENT})
    assert_agent_sees(js_tab, "save_event", bound=["event_id"])


def test_prepare_event_registration(tab, assert_agent_sees):
    tab.open(f"/events/{EVENT}/register")
    assert_agent_sees(tab, "prepare_event_registration", bound=["event_id"])


def test_prepare_registration_cancellation_over_active_registrations(tab, assert_agent_sees):
    first = tab.register_as_person(ROOMY_EVENT)
    second = tab.register_as_person("evt-htmx-online")
    tab.open("/registrations")
    assert_agent_sees(tab, "prepare_registration_cancellation", choices={
        "registration_id": [(first, ROOMY_EVENT_TITLE),
                            (second, "Hypermedia-Driven Apps with htmx")]})


def test_a_group_of_one_registration_keeps_its_description(tab, assert_agent_sees):
    """Chromium describes a one-radio group like a single control (see the `radio` macro)."""
    only = tab.register_as_person(ROOMY_EVENT)
    tab.open("/registrations")
    assert_agent_sees(tab, "prepare_registration_cancellation",
                      choices={"registration_id": [(only, ROOMY_EVENT_TITLE)]})
    description = tab.agent.tools()["prepare_registration_cancellation"].input_schema[
        "properties"]["registration_id"]["description"]
    assert ROOMY_EVENT_TITLE not in description
