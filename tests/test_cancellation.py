"""prepare_registration_cancellation and the human-only confirmation."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from helpers import HTMX
from helpers import JSON
from helpers import one
from helpers import the_jsonld

# PostgreSQL runs the flows that prove it end to end (marked `both_backends`); the storage
# under every other test here is checked on both backends by test_storage_contract.py.


def test_preparing_a_cancellation_changes_nothing(visitor):
    registration = visitor.register()
    answer, token = visitor.prepare_cancellation(registration["id"])
    assert answer["status"] == "confirmation_required"
    assert answer["requiresUserDecision"] is True
    review = answer["data"]["review"]
    assert review["registration"]["id"] == registration["id"]
    assert "frees one seat" in review["effect"]
    assert token
    assert visitor.seats() == 7


def test_the_dialog_confirm_form_is_human_only(visitor):
    registration = visitor.register()
    response = visitor.post("/registrations/cancellation",
                            {"registration_id": registration["id"]}, headers=HTMX)
    soup = BeautifulSoup(response.data, "html.parser")
    dialog = one(soup, "dialog")
    assert dialog.has_attr("open")
    form = one(dialog, "form.confirm-form")
    assert not form.has_attr("toolname")
    assert form["action"] == f"/en/registrations/{registration['id']}/cancel"
    # "Keep it" posts too (it drops the prepared cancellation), human-only, and has the focus.
    keep = one(dialog, "form.keep-form")
    assert not keep.has_attr("toolname")
    assert keep["action"] == f"/en/registrations/{registration['id']}/keep"
    assert keep.select_one("button[autofocus]")


@pytest.mark.both_backends
def test_cancelling_frees_one_seat_once(visitor):
    registration = visitor.register()
    _, token = visitor.prepare_cancellation(registration["id"])
    first = visitor.confirm_cancellation(registration["id"], token)
    assert first.status_code == 200
    assert first.get_json()["data"]["alreadyCancelled"] is False
    assert first.get_json()["data"]["registration"]["state"] == "cancelled"
    assert visitor.seats() == 8
    again = visitor.confirm_cancellation(registration["id"], token)
    assert again.status_code == 200
    assert again.get_json()["data"]["alreadyCancelled"] is True
    assert visitor.seats() == 8


def test_a_cancelled_registration_cannot_be_prepared_again(visitor):
    registration = visitor.register()
    _, token = visitor.prepare_cancellation(registration["id"])
    visitor.confirm_cancellation(registration["id"], token)
    answer, token = visitor.prepare_cancellation(registration["id"])
    assert answer["status"] == "conflict" and token is None


@pytest.mark.both_backends
def test_another_visitor_cannot_see_or_cancel_a_registration(visitor, other_visitor):
    registration = visitor.register()
    answer, token = other_visitor.prepare_cancellation(registration["id"])
    assert answer["status"] == "not_found" and token is None
    assert other_visitor.get(f"/en/registrations/{registration['id']}").status_code == 404
    _, token = visitor.prepare_cancellation(registration["id"])
    stolen = other_visitor.confirm_cancellation(registration["id"], token)
    assert stolen.status_code == 404
    assert visitor.seats() == 7
    page = other_visitor.get("/en/registrations").get_data(as_text=True)
    assert registration["id"] not in page


def test_a_token_for_one_registration_cannot_cancel_another(visitor):
    first = visitor.register("evt-webmcp-intro")
    second = visitor.register("evt-agent-testing")
    _, token_for_first = visitor.prepare_cancellation(first["id"])
    response = visitor.confirm_cancellation(second["id"], token_for_first)
    assert response.status_code == 404
    assert visitor.seats("evt-agent-testing") == 24 - 1


def test_the_registrations_page_without_active_registrations(visitor):
    soup = BeautifulSoup(visitor.get("/en/registrations").data, "html.parser")
    assert soup.select_one("form[toolname=prepare_registration_cancellation]") is None
    assert "no active registrations" in soup.get_text()


def test_the_registrations_page_offers_the_active_ones(visitor):
    kept = visitor.register("evt-webmcp-intro")
    gone = visitor.register("evt-agent-testing")
    _, token = visitor.prepare_cancellation(gone["id"])
    visitor.confirm_cancellation(gone["id"], token)
    soup = BeautifulSoup(visitor.get("/en/registrations").data, "html.parser")
    form = one(soup, "form[toolname=prepare_registration_cancellation]")
    assert [r["value"] for r in form.select("input[type=radio]")] == [kept["id"]]
    past = one(soup, ".registration-list--past")
    assert "Agent Testing in Practice" in past.get_text()
    assert one(past, "a")["href"] == f"/en/registrations/{gone['id']}"


@pytest.mark.both_backends
def test_the_whole_flow_without_javascript(visitor):
    registration = visitor.register()
    response = visitor.post("/registrations/cancellation",
                            {"registration_id": registration["id"]})
    assert response.status_code == 303 and response.headers["Location"] == "/en/registrations"
    page = visitor.get("/en/registrations")
    assert the_jsonld(page.data)["action"] == "prepare_registration_cancellation"
    form = one(BeautifulSoup(page.data, "html.parser"), "dialog form.confirm-form")
    data = {i["name"]: i["value"] for i in form.find_all("input", type="hidden")}
    confirmed = visitor.post(form["action"], data, csrf=False)
    assert confirmed.status_code == 303
    landing = visitor.get("/en/registrations")
    assert the_jsonld(landing.data)["data"]["alreadyCancelled"] is False
    assert visitor.seats() == 8


def test_confirming_via_htmx_refreshes_the_list(visitor):
    registration = visitor.register()
    _, token = visitor.prepare_cancellation(registration["id"])
    response = visitor.post(f"/registrations/{registration['id']}/cancel",
                            {"confirmation_token": token}, headers=HTMX)
    soup = BeautifulSoup(response.data, "html.parser")
    assert soup.select_one("form[toolname=prepare_registration_cancellation]") is None
    assert "cancelled" in one(soup, ".notice").get_text()
    assert the_jsonld(response.data)["status"] == "success"
    again = visitor.post(f"/registrations/{registration['id']}/cancel",
                         {"confirmation_token": token}, headers=JSON)
    assert again.get_json()["data"]["alreadyCancelled"] is True


def test_confirming_via_htmx_refreshes_the_activity_too(visitor):
    registration = visitor.register()
    _, token = visitor.prepare_cancellation(registration["id"])
    response = visitor.post(f"/registrations/{registration['id']}/cancel",
                            {"confirmation_token": token}, headers=HTMX)
    rows = BeautifulSoup(response.data, "html.parser").select(".activity-what")
    newest = rows[0].get_text(" ", strip=True)
    assert newest == "You cancelled the registration for “WebMCP Intro Workshop”"
    # The activity speaks of the event; the id shows only as the registration's number, the
    # one its mails give, for the person to quote (issue 28).
    soup = BeautifulSoup(response.data, "html.parser")
    activity, number = soup.select_one(".activity"), soup.select_one(".registration-id")
    assert activity is not None and number is not None
    assert registration["id"] not in activity.get_text()
    assert number.get_text(strip=True) == (
        f"Registration number: {registration['id']}")
