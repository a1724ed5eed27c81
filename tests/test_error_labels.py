"""An error list names each field as its form labels it, in the reader's language: for every
form people use (search, register, cancel, and the event list's details form), with and
without htmx. Saving has no field to name (its event is in its address).
"""

from __future__ import annotations

from typing import Any

import pytest
from bs4 import BeautifulSoup
from helpers import HTMX
from helpers import JSON

# form id: (the page that shows the form, how it is sent, where, input every field rejects)
FORMS: dict[str, tuple[str, str, str, dict[str, str]]] = {
    "search_events": ("/events", "GET", "/events",
                      {"query": "x" * 201, "location": "mars", "price": "gratis", "level": "guru",
                       "date_from": "soon", "date_to": "later", "page": "0"}),
    "prepare_event_registration": ("/events/evt-webmcp-intro/register", "POST",
                                   "/events/evt-webmcp-intro/register",
                                   {"attendee_name": "", "email": "ann@"}),
    "prepare_registration_cancellation": ("/registrations", "POST", "/registrations/cancellation",
                                          {"registration_id": "reg-?"}),
    "get_event_details": ("/events", "GET", "/events/details", {"event_id": "evt-?"}),
}


def labels_shown(html: bytes, form_id: str) -> dict[str, str]:
    """Each control of the form by name, with the text of its label (a radio group's legend)."""
    soup = BeautifulSoup(html, "html.parser")
    shown = {}
    for control in soup.select(f'[id^="{form_id}-"]'):
        name = str(control["id"]).removeprefix(f"{form_id}-")
        label = (control.find("legend", recursive=False) if control.name == "fieldset"
                 else soup.find("label", attrs={"for": control["id"]}))
        if label is not None:
            shown[name] = label.get_text(strip=True)
    return shown


def listed_fields(html: bytes) -> list[tuple[str, str | None]]:
    """The field names of the page's error list, with the control each one links to."""
    soup = BeautifulSoup(html, "html.parser")
    named = soup.select(".error-list li > a, .error-list li > .error-field")
    return [(name.get_text(strip=True), str(name["href"]) if name.has_attr("href") else None)
            for name in named]


def send(visitor, language: str, form_id: str, headers: dict[str, str]) -> Any:
    _, method, action, data = FORMS[form_id]
    path = f"/{language}{action}"
    if method == "GET":
        return visitor.get(path, query_string=data, headers=headers)
    return visitor.post(path, data, headers=headers)


@pytest.mark.parametrize("htmx", [False, True], ids=["page", "htmx"])
@pytest.mark.parametrize("language", ["en", "zh-TW"])
@pytest.mark.parametrize("form_id", FORMS)
def test_an_error_list_names_the_fields_as_their_form_labels_them(visitor, form_id, language,
                                                                  htmx):
    visitor.register("evt-webmcp-spec-reading")  # an active registration: the cancel form shows
    page, *_ = FORMS[form_id]
    shown = labels_shown(visitor.get(f"/{language}{page}").data, form_id)
    rejected = send(visitor, language, form_id, JSON).get_json()["errors"]
    assert rejected and set(rejected) <= set(shown), "every rejected field is on the form"

    answer = send(visitor, language, form_id, HTMX if htmx else {})
    assert answer.status_code == 422
    listed = listed_fields(answer.data)
    assert sorted(name for name, _ in listed) == sorted(shown[field] for field in rejected)
    for name, link in listed:
        if link is not None:  # the form is beside the list: the name leads to its control
            assert shown[link.removeprefix(f"#{form_id}-")] == name
