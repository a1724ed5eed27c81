"""What waits for the person to confirm tells the truth (issue 29, item 4).

The count on My registrations and the review page it links to list the same things, and only
what pressing confirm could still carry out: a review confirmed in another tab, a second review
of a registration already taken or of a cancellation already done, and a cancellation the
person chose to keep ("Keep it") all leave at once.
"""

from __future__ import annotations

import re
from typing import Any

from bs4 import BeautifulSoup
from helpers import HTMX
from helpers import JSON
from helpers import TOKEN_FIELD
from helpers import one
from helpers import the_jsonld

COUNT = re.compile(r"\((\d+)\)")


def what_waits(visitor) -> tuple[int, int]:
    """(the count My registrations shows, the confirm forms of the page it links to); a
    count not shown is 0."""
    page = BeautifulSoup(visitor.get("/en/registrations").data, "html.parser")
    badge = page.select_one("a.pending-count")
    count = 0
    if badge is not None:
        assert badge["href"] == "/en/registrations/pending"
        found = COUNT.search(badge.get_text())
        assert found is not None, badge.get_text()
        count = int(found[1])
    review = BeautifulSoup(visitor.get("/en/registrations/pending").data, "html.parser")
    return count, len(review.select("form.confirm-form"))


def test_each_review_waits_until_it_is_done(visitor):
    registration = visitor.register("evt-webmcp-intro")
    visitor.prepare_registration("evt-agent-testing")
    visitor.prepare_cancellation(registration["id"])
    assert what_waits(visitor) == (2, 2)


def test_a_second_review_of_a_registration_leaves_once_one_is_confirmed(visitor):
    """Reviewed in two tabs (or prepared by an agent and by the person): once one is
    confirmed, nothing offers to register for the event again."""
    _, first = visitor.prepare_registration("evt-webmcp-intro")
    _, second = visitor.prepare_registration("evt-webmcp-intro")
    assert first and second and what_waits(visitor) == (2, 2)
    assert visitor.confirm_registration(first).status_code == 201
    assert what_waits(visitor) == (0, 0)


def test_a_review_for_an_address_that_took_a_seat_elsewhere_leaves(visitor, other_visitor):
    visitor.prepare_registration("evt-webmcp-intro", email="ann@example.com")
    other_visitor.register("evt-webmcp-intro", email="ann@example.com")
    assert what_waits(visitor) == (0, 0)


def test_a_second_review_of_a_cancellation_leaves_once_one_is_confirmed(visitor):
    """After cancelling, the count no longer leads to an empty review page."""
    registration = visitor.register()
    _, first = visitor.prepare_cancellation(registration["id"])
    visitor.prepare_cancellation(registration["id"])
    assert visitor.confirm_cancellation(registration["id"], first).status_code == 200
    assert what_waits(visitor) == (0, 0)


def test_keep_it_drops_the_prepared_cancellation(visitor):
    """With htmx: the panel comes back without the dialog and without the count, and the
    dropped review can no longer cancel anything."""
    registration = visitor.register()
    _, token = visitor.prepare_cancellation(registration["id"])
    assert what_waits(visitor) == (1, 1)
    response = visitor.post(f"/registrations/{registration['id']}/keep",
                            {"confirmation_token": token}, headers=HTMX)
    assert response.status_code == 200
    assert the_jsonld(response.data)["action"] == "discard_cancellation"
    soup = BeautifulSoup(response.data, "html.parser")
    assert soup.select_one("dialog") is None and soup.select_one("a.pending-count") is None
    assert "nothing was cancelled" in one(soup, ".notice").get_text()
    assert what_waits(visitor) == (0, 0)
    refused = visitor.confirm_cancellation(registration["id"], token)
    assert refused.status_code == 409
    assert visitor.seats() == 7


def test_keep_it_works_without_javascript(visitor):
    """The dialog's "Keep it" is a form of its own that posts, then lands on My
    registrations, which shows no dialog and nothing waiting."""
    registration = visitor.register()
    visitor.post("/registrations/cancellation", {"registration_id": registration["id"]})
    page = BeautifulSoup(visitor.get("/en/registrations").data, "html.parser")
    keep = one(page, "dialog form.keep-form")
    assert not keep.has_attr("toolname") and keep["method"] == "post"
    assert keep.select_one("button[autofocus]") is not None
    data = {field["name"]: field["value"] for field in keep.find_all("input", type="hidden")}
    kept = visitor.post(keep["action"], data, csrf=False)
    assert kept.status_code == 303 and kept.headers["Location"] == "/en/registrations"
    landing = BeautifulSoup(visitor.get("/en/registrations").data, "html.parser")
    assert landing.select_one("dialog") is None
    assert what_waits(visitor) == (0, 0)


def test_another_visitor_cannot_drop_a_review(visitor, other_visitor):
    registration = visitor.register()
    _, token = visitor.prepare_cancellation(registration["id"])
    stolen = other_visitor.post(f"/registrations/{registration['id']}/keep",
                                {"confirmation_token": token}, headers=HTMX)
    assert stolen.status_code == 404
    assert what_waits(visitor) == (1, 1)
    assert TOKEN_FIELD.search(stolen.get_data(as_text=True)) is None


def pending_forms(visitor, language="en") -> list[Any]:
    """The review sections of the waiting page."""
    page = BeautifulSoup(visitor.get(f"/{language}/registrations/pending").data, "html.parser")
    return page.select("section.review")


def test_dont_register_drops_a_prepared_registration(visitor):
    """The waiting page's quiet "Don't register" (say, for what an agent prepared): with htmx
    the list comes back in place without it and says so, and its review can register nothing."""
    seats = visitor.seats("evt-agent-testing")
    _, token = visitor.prepare_registration("evt-agent-testing")
    assert what_waits(visitor) == (1, 1)
    drop = one(pending_forms(visitor)[0], "form.keep-form")
    assert not drop.has_attr("toolname") and drop["hx-target"] == "#pending"
    review_token = one(drop, "input[name=confirmation_token]")["value"]
    response = visitor.post(drop["action"], {"confirmation_token": review_token},
                            headers=HTMX)
    assert response.status_code == 200
    assert the_jsonld(response.data)["action"] == "discard_registration"
    soup = BeautifulSoup(response.data, "html.parser")
    assert "Nothing was registered" in one(soup, ".notice").get_text()
    assert soup.select("section.review") == []
    assert what_waits(visitor) == (0, 0)
    assert visitor.confirm_registration(token).status_code == 409
    assert visitor.seats("evt-agent-testing") == seats


def test_dont_register_works_without_javascript(visitor):
    visitor.prepare_registration("evt-agent-testing")
    drop = one(pending_forms(visitor)[0], "form.keep-form")
    data = {field["name"]: field["value"] for field in drop.find_all("input", type="hidden")}
    dropped = visitor.post(drop["action"], data, csrf=False)
    assert dropped.status_code == 303
    assert dropped.headers["Location"] == "/en/registrations/pending"
    landing = BeautifulSoup(visitor.get("/en/registrations/pending").data, "html.parser")
    assert "Nothing was registered" in one(landing, ".notice").get_text()
    assert what_waits(visitor) == (0, 0)


def test_keep_it_on_the_waiting_page_drops_the_prepared_cancellation(visitor):
    registration = visitor.register()
    visitor.prepare_cancellation(registration["id"])
    keep = one(pending_forms(visitor)[0], "form.keep-form")
    assert str(keep["action"]).endswith(f"/registrations/{registration['id']}/keep")
    data = {field["name"]: field["value"] for field in keep.find_all("input", type="hidden")}
    assert visitor.post(keep["action"], data, csrf=False).status_code == 303
    assert what_waits(visitor) == (0, 0)
    assert visitor.seats() == 7


def test_another_visitor_cannot_drop_a_prepared_registration(visitor, other_visitor):
    _, token = visitor.prepare_registration("evt-agent-testing")
    stolen = other_visitor.post("/registrations/pending/discard",
                                {"confirmation_token": token}, headers=HTMX)
    assert stolen.status_code == 404
    assert what_waits(visitor) == (1, 1)


def test_a_waiting_registration_shows_its_span_price_and_minutes_left(visitor):
    """The waiting page says what the event page says (start–end, price) and the time left
    in words, like the review beside the form; in Chinese, once, without a zone on the time."""
    visitor.prepare_registration("evt-agent-testing")
    event = visitor.get("/events/evt-agent-testing", headers=JSON).get_json()["data"]["event"]
    for language in ("en", "zh-TW"):
        section = pending_forms(visitor, language)[0]
        facts = section.select_one("dl.facts").get_text(" ", strip=True)
        assert event["endsAt"][11:16] in facts, facts
        expiry = one(section, ".review-expiry").get_text()
        assert ("within 5 minutes" in expiry if language == "en"
                else "5 分鐘內" in expiry), expiry
        assert "UTC" not in expiry
    price = "Free" if event["price"] == "free" else "NT$"
    assert price in pending_forms(visitor)[0].get_text()
