"""The rendered search_events form carries the WebMCP attributes and matches its schema."""

from __future__ import annotations

from bs4 import BeautifulSoup
from helpers import one
from marshmallow import fields
from marshmallow import validate

from webapp.domain.catalog import CATALOG
from webapp.domain.schemas import SearchEventsInput


def search_form(client):
    soup = BeautifulSoup(client.get("/en/events").data, "html.parser")
    return soup, one(soup, "form[toolname=search_events]")


def controls_of(soup, form):
    """The form's controls, including those linked to it with form="id" (DOM order)."""
    return [c for c in soup.find_all(["input", "select", "textarea"])
            if c.get("name") and c.get("type") != "hidden"
            and (c.find_parent("form") is form or c.get("form") == form["id"])]


def test_form_carries_the_catalog_entry(client):
    _, form = search_form(client)
    tool = CATALOG["search_events"]
    assert form["tooldescription"] == tool.form_description
    assert form["tooltitle"] == tool.title
    assert form.has_attr("toolautosubmit") is tool.autosubmit
    assert form["method"] == "get" and form["action"] == "/en/events"
    assert form["hx-get"] == "/en/events" and form["hx-push-url"] == "true"


def test_every_schema_field_is_a_control_and_nothing_else(client):
    soup, form = search_form(client)
    names = [c["name"] for c in controls_of(soup, form)]
    assert names == list(SearchEventsInput().load_fields)


def test_controls_carry_the_schema_constraints(client):
    soup, form = search_form(client)
    schema_fields = SearchEventsInput().load_fields
    for control in controls_of(soup, form):
        field = schema_fields[control["name"]]
        assert control.get("toolparamdescription") == field.metadata["description"]
        label = soup.find("label", attrs={"for": control["id"]})
        assert label.get_text(strip=True) == field.metadata["label"]
        assert control.has_attr("required") is field.required
        one_of = [v for v in field.validators if isinstance(v, validate.OneOf)]
        if one_of:
            assert control.name == "select"
            options = [(o["value"], o.get_text()) for o in control.find_all("option")]
            assert options[0] == ("", field.metadata["empty_label"])
            assert options[1:] == list(zip(one_of[0].choices, one_of[0].labels, strict=True))
        elif isinstance(field, fields.Date):
            bounds = next(v for v in field.validators if isinstance(v, validate.Range))
            assert control["type"] == "date"
            assert (control["min"], control["max"]) == (bounds.min.isoformat(),
                                                        bounds.max.isoformat())
        elif isinstance(field, fields.Integer):
            bounds = next(v for v in field.validators if isinstance(v, validate.Range))
            assert control["type"] == "number"
            assert (control["min"], control["max"], control["step"]) == (
                str(bounds.min), str(bounds.max), "1")
        else:
            length = next(v for v in field.validators if isinstance(v, validate.Length))
            assert control["type"] == "search"
            assert control["maxlength"] == str(length.max)


def test_submitted_values_are_shown_again(client):
    page = client.get("/en/events?query=web&location=online&date_from=2027-01-02")
    soup = BeautifulSoup(page.data, "html.parser")
    assert one(soup, "#search_events-query")["value"] == "web"
    assert one(soup, "#search_events-location option[selected]")["value"] == "online"
    assert one(soup, "#search_events-date_from")["value"] == "2027-01-02"
