"""*My registrations* has no one big button to puzzle over: each registration's row offers
what a person does with it (view it, add it to their calendar, cancel it), all quiet; the
cancellation tool's form stays for agents, and a row's "Cancel registration" is a form of
its own asking the tool's route for the same review (templates/registrations/_panel.html)."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from bs4 import Tag
from helpers import JSON
from helpers import one

from webapp.domain.catalog import CATALOG

CANCELLATION = "prepare_registration_cancellation"
WORDS = {"zh-TW": "取消報名", "en": "Cancel registration"}


def row_form(soup: BeautifulSoup, row: Tag) -> Tag:
    """The form the row's "Cancel registration" button submits (its `form` attribute)."""
    button = one(row, ".row-actions button")
    return one(soup, f"form#{button['form']}")


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_each_row_offers_its_own_actions_and_no_button_shouts(visitor, language):
    first = visitor.register("evt-webmcp-intro")
    second = visitor.register("evt-agent-testing")
    soup = BeautifulSoup(visitor.get(f"/{language}/registrations").data, "html.parser")
    rows = soup.select(".registration-list .registration-card")
    assert len(rows) == 2
    for row in rows:
        registration_id = str(row.select_one("input[name=registration_id]")["value"])  # type: ignore[index]
        event_id = {first["id"]: first["eventId"], second["id"]: second["eventId"]}[
            registration_id]
        links = {str(link["href"]) for link in row.select(".row-actions a")}
        assert links == {f"/{language}/registrations/{registration_id}",
                         f"/calendar/{event_id}.ics"}
        assert one(row, ".row-actions button").get_text(strip=True) == WORDS[language]
    loud = [button.get_text(strip=True) for button in soup.select("main .button, main button")
            if "button--quiet" not in (button.get("class") or [])]
    assert loud == []


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_a_rows_cancel_is_a_form_for_people_beside_the_agents_tool(visitor, language):
    """The row's button belongs to a form without toolname, outside the tool's form, holding
    only the CSRF token and that row's registration, and posting where the tool posts; the
    tool's form keeps exactly its one choice, whose radios only an agent fills."""
    registration = visitor.register("evt-webmcp-intro")
    soup = BeautifulSoup(visitor.get(f"/{language}/registrations").data, "html.parser")
    tool = one(soup, f"form[toolname={CANCELLATION}]")
    form = row_form(soup, one(soup, ".registration-list .registration-card"))
    assert form is not tool and tool not in form.parents and form not in tool.parents
    assert not form.has_attr("toolname")
    assert (form["method"], form["action"], form["hx-post"]) == (
        "post", tool["action"], tool["hx-post"])
    fields = {str(field["name"]): field.get("value") for field in form.select("input")}
    assert fields.pop("registration_id") == registration["id"]
    assert list(fields) == ["csrf_token"]
    names = {str(control["name"]) for control in tool.select("input, select, textarea")
             if control.get("type") != "hidden"}
    assert names == set(CATALOG[CANCELLATION].schema().fields) == {"registration_id"}
    for radio in tool.select("input[type=radio]"):
        assert radio.has_attr("inert") and radio["aria-hidden"] == "true"


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_a_rows_cancel_opens_the_review_of_that_registration(visitor, language):
    """The row's form posted as a browser without JavaScript sends it: the answer is the page
    with the review dialog of that registration, as after the agent's call."""
    visitor.register("evt-webmcp-intro")
    other = visitor.register("evt-agent-testing")
    title = visitor.get("/events/evt-agent-testing", headers=JSON).get_json()["data"]["event"][
        "title"]
    soup = BeautifulSoup(visitor.get(f"/{language}/registrations").data, "html.parser")
    row = next(row for row in soup.select(".registration-list .registration-card")
               if title in row.get_text())
    form = row_form(soup, row)
    fields = {str(field["name"]): str(field["value"]) for field in form.select("input")}
    posted = visitor.post(str(form["action"]), data=fields, csrf=False)
    assert posted.status_code == 303
    page = BeautifulSoup(visitor.get(posted.headers["Location"]).data, "html.parser")
    dialog = one(page, "dialog")
    assert title in dialog.get_text()
    assert one(dialog, "form.confirm-form")["action"] == (
        f"/{language}/registrations/{other['id']}/cancel")
