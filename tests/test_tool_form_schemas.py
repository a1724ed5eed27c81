"""Every page that shows a tool form: the schema an agent gets from the rendered form is the
one the catalog's marshmallow schema promises, and the form carries the catalog's metadata.

`synthesize_input_schema` reads the form as Chromium does (see test_schema_synthesis.py);
`expected_input_schema` derives the schema from the tool's marshmallow schema, with the
choices the page lists and the fields its address carries. Every page is checked in both
languages: descriptions, labels and option titles are in the page's language; names, values
and constraints are the same.
"""

from __future__ import annotations

from typing import Any

import pytest
from bs4 import BeautifulSoup
from bs4 import Tag
from helpers import HTMX
from helpers import JSON
from helpers import attribute
from routes import declared_app

from flask_webmcp.dev.schema import synthesize_input_schema
from flask_webmcp.input_schema import expected_input_schema
from flask_webmcp.routes import offering_routes
from flask_webmcp.routes import route_roles
from webapp.domain.catalog import CATALOG

EVENT_ID = "evt-webmcp-intro"


@pytest.fixture(params=["zh-TW", "en"])
def language(request) -> str:
    """Each test runs on the Chinese and on the English pages."""
    language: str = request.param
    return language


@pytest.fixture
def in_language(language):
    """`in_language(path)`: the address of a page in the test's language."""

    def address(path: str) -> str:
        return f"/{language}{path}"

    return address


def tool_forms(html: bytes | str) -> dict[str, Tag]:
    """The page's tool forms by name (a name may appear once per page)."""
    forms = BeautifulSoup(html, "html.parser").select("form[toolname]")
    names = [attribute(form, "toolname") for form in forms]
    assert len(names) == len(set(names)), f"a tool appears twice: {names}"
    return dict(zip(names, forms, strict=True))


def assert_forms_match(html: bytes | str, expected: dict[str, dict[str, Any]]) -> None:
    """The page shows exactly the `expected` tools, each with exactly its schema."""
    forms = tool_forms(html)
    assert set(forms) == set(expected)
    for name, form in forms.items():
        synthesized = synthesize_input_schema(form)
        assert synthesized == expected[name], name
        assert list(synthesized["properties"]) == list(expected[name]["properties"]), name


def listed_events(client, url: str) -> list[tuple[str, str]]:
    """(id, title) of the events a search page lists, from its JSON answer."""
    events = client.get(url, headers=JSON).get_json()["data"]["events"]
    return [(event["id"], event["title"]) for event in events]


@pytest.fixture
def expected(app, in_language):
    """`expected(tool, ...)`: the schema its form should give, read from the catalog in the
    test's language (as the page read it)."""

    def expected(name: str, **context: Any) -> dict[str, Any]:
        with app.test_request_context(in_language("/events")):
            return expected_input_schema(CATALOG[name], **context)

    return expected


@pytest.mark.parametrize("url", ["/events", "/events?query=webmcp", "/events?page=2",
                                 "/events?location=online&price=free&date_from=2000-01-01"])
def test_events_page(client, in_language, expected, url):
    shown = listed_events(client, url)
    assert shown, "the sample data lists events here"
    assert_forms_match(client.get(in_language(url)).data, {
        "search_events": expected("search_events"),
        "get_event_details": expected("get_event_details", choices={"event_id": shown}),
    })


def test_events_page_with_one_result(client, in_language, expected):
    """A radio group of one: Chromium describes it like a single control."""
    url = "/events?query=webmcp&location=kaohsiung"
    shown = listed_events(client, url)
    assert len(shown) == 1
    schema = expected("get_event_details", choices={"event_id": shown})
    with_many = expected("get_event_details", choices={"event_id": [*shown, *shown]})
    assert (schema["properties"]["event_id"]["description"]
            == with_many["properties"]["event_id"]["description"]), "not the event's title"
    assert_forms_match(client.get(in_language(url)).data, {
        "search_events": expected("search_events"), "get_event_details": schema})


def test_events_page_without_results_offers_only_the_search(client, in_language, expected):
    url = "/events?query=nothing-matches-this"
    assert listed_events(client, url) == []
    assert_forms_match(client.get(in_language(url)).data,
                       {"search_events": expected("search_events")})


def test_preview_partial(client, in_language, expected):
    partial = client.get(in_language(f"/events/details?event_id={EVENT_ID}"), headers=HTMX)
    assert_forms_match(partial.data, {"save_event": expected("save_event", bound=["event_id"])})


def test_event_page(client, in_language, expected):
    assert_forms_match(client.get(in_language(f"/events/{EVENT_ID}")).data, {
        "get_event_details": expected("get_event_details", bound=["event_id"]),
        "save_event": expected("save_event", bound=["event_id"]),
    })


def test_registration_page(client, in_language, expected):
    page = client.get(in_language(f"/events/{EVENT_ID}/register"))
    assert_forms_match(page.data, {
        "prepare_event_registration": expected("prepare_event_registration", bound=["event_id"]),
    })


@pytest.mark.parametrize("events", [["evt-webmcp-intro"],
                                    ["evt-webmcp-intro", "evt-webmcp-spec-reading"]])
def test_registrations_page(visitor, in_language, expected, events):
    titles = [visitor.get(f"/events/{event_id}", headers=JSON).get_json()["data"]["event"]["title"]
              for event_id in events]
    choices = [(visitor.register(event_id)["id"], title)
               for event_id, title in zip(events, titles, strict=True)]
    # Every tool the page declares; the cancellation's choices are the registrations.
    with_choices = {"prepare_registration_cancellation": {"registration_id": choices}}
    assert_forms_match(visitor.get(in_language("/registrations")).data, {
        name: expected(name, choices=with_choices.get(name, {}))
        for name in offered_on("/registrations")})


def test_registrations_page_without_active_registrations_offers_no_cancellation(
        visitor, in_language):
    forms = tool_forms(visitor.get(in_language("/registrations")).data)
    assert "prepare_registration_cancellation" not in forms
    assert set(forms) <= offered_on("/registrations")


DECLARED = declared_app()


def offered_on(url: str) -> set[str]:
    """The tools the route answering `url` declares its page offers (`offers=`)."""
    endpoint, _ = DECLARED.url_map.bind("localhost").match(url.split("?")[0])
    return next(set(role.offers) for rule, role in route_roles(DECLARED)
                if rule.endpoint == endpoint)


# Pages a visitor with a registration sees: each shows every tool its route declares.
PAGES = ["/events", "/events?query=webmcp", f"/events/{EVENT_ID}",
         f"/events/{EVENT_ID}/register", "/registrations", "/saved"]


def test_the_pages_declare_what_the_design_asks():
    """The declarations the test below holds the pages to, where the design names them."""
    assert offered_on("/events") == {"search_events", "get_event_details"}
    assert offered_on(f"/events/{EVENT_ID}") >= {"get_event_details", "save_event"}
    assert "prepare_registration_cancellation" in offered_on("/registrations")
    assert offered_on("/saved") == set()


@pytest.mark.parametrize("url", PAGES)
def test_forms_carry_the_catalog_entry(app, visitor, in_language, url):
    visitor.register("evt-webmcp-spec-reading")
    forms = tool_forms(visitor.get(in_language(url)).data)
    assert set(forms) == offered_on(url)
    for name, form in forms.items():
        tool = CATALOG[name]
        with app.test_request_context(in_language(url)):
            assert form["tooldescription"] == tool.form_description
            assert form["tooltitle"] == str(tool.title)
        assert form.has_attr("toolautosubmit") is tool.autosubmit
        offered = offering_routes(app)[name]
        assert url.split("?")[0] in {page.replace("<event_id>", EVENT_ID)
                                     for page in offered}, f"{name} is not declared for {url}"


def test_every_tool_appears_on_some_page(visitor, in_language):
    visitor.register("evt-webmcp-spec-reading")
    shown = set()
    for url in PAGES:
        shown |= set(tool_forms(visitor.get(in_language(url)).data))
    assert shown == set(CATALOG.names)
