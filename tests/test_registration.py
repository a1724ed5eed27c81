"""prepare_event_registration and the human-only confirmation."""

from __future__ import annotations

from datetime import datetime
from datetime import timedelta

import pytest
from bs4 import BeautifulSoup
from bs4 import Tag
from helpers import HTMX
from helpers import JSON
from helpers import TOKEN_FIELD
from helpers import one
from helpers import query_database
from helpers import the_jsonld
from helpers import three_answers

from webapp.domain.actions import registrations
from webapp.domain.actions.registrations import CONFIRMATION_LIFETIME

# PostgreSQL runs the flows that prove it end to end (marked `both_backends`); the storage
# under every other test here is checked on both backends by test_storage_contract.py.


def registrations_in_db(app, event_id="evt-webmcp-intro"):
    return query_database(app.config["DATABASE"],
                          "SELECT id, state, email FROM registrations WHERE event_id = ?",
                          [event_id])


def test_preparing_registers_nobody(app, visitor):
    answer, token = visitor.prepare_registration(name="Ann Lee", email="ann@example.com")
    assert answer["status"] == "confirmation_required"
    assert answer["requiresUserDecision"] is True
    assert "do not submit" in answer["nextAction"].lower()
    review = answer["data"]["review"]
    assert review["attendeeName"] == "Ann Lee"
    assert review["email"] == "a***@example.com"
    assert review["event"]["id"] == "evt-webmcp-intro"
    assert token and token not in str(answer)
    assert registrations_in_db(app) == []
    assert visitor.seats() == 8


def test_the_three_renderings_of_prepare_agree(visitor):
    url = "/events/evt-webmcp-intro/register"
    data = {"attendee_name": "Ann", "email": "ann@example.com"}
    as_json = visitor.post(url, data, headers=JSON)
    partial = visitor.post(url, data, headers=HTMX)
    without_javascript = visitor.post(url, data)
    assert without_javascript.status_code == 303
    page = visitor.get(without_javascript.headers["Location"])
    # Each prepare issues its own token, which no envelope holds; the test clock stands still,
    # so the expiry moments match too: the three envelopes are equal.
    expected = as_json.get_json()
    assert the_jsonld(partial.data) == expected
    assert the_jsonld(page.data) == expected
    assert "confirmation_token" not in as_json.get_data(as_text=True)


def test_the_review_offers_a_human_only_confirm_form(visitor):
    response = visitor.post("/events/evt-webmcp-intro/register",
                            {"attendee_name": "Ann", "email": "ann@example.com"}, headers=HTMX)
    soup = BeautifulSoup(response.data, "html.parser")
    form = one(soup, "form.confirm-form")
    assert not form.has_attr("toolname") and not form.has_attr("toolautosubmit")
    assert form["action"] == "/en/registrations/confirm"
    assert len(form.find_all("button")) == 1
    hidden = {i["name"] for i in form.find_all("input", type="hidden")}
    assert hidden == {"csrf_token", "confirmation_token"}


@pytest.mark.both_backends
def test_confirming_takes_one_seat(app, visitor):
    _, token = visitor.prepare_registration()
    response = visitor.confirm_registration(token)
    assert response.status_code == 201
    body = response.get_json()
    assert body["status"] == "success" and body["action"] == "confirm_registration"
    registration = body["data"]["registration"]
    assert set(registration) == {"id", "eventId", "attendeeName", "email", "state"}
    assert registration["state"] == "active" and registration["email"] == "a***@example.com"
    assert visitor.seats() == 7
    assert registrations_in_db(app) == [(registration["id"], "active", visitor.email)]


def test_a_token_works_once(visitor):
    _, token = visitor.prepare_registration()
    assert visitor.confirm_registration(token).status_code == 201
    replay = visitor.confirm_registration(token)
    assert replay.status_code == 409
    assert replay.get_json()["status"] == "conflict"
    assert visitor.seats() == 7


def test_another_visitors_token_is_not_found(visitor, other_visitor):
    _, token = visitor.prepare_registration()
    response = other_visitor.confirm_registration(token)
    assert response.status_code == 404
    assert response.get_json()["status"] == "not_found"
    assert visitor.confirm_registration(token).status_code == 201


def test_a_cancellation_token_cannot_confirm_a_registration(visitor):
    registration = visitor.register()
    _, cancel_token = visitor.prepare_cancellation(registration["id"])
    response = visitor.confirm_registration(cancel_token)
    assert response.status_code == 404


def test_registering_twice_is_a_conflict(visitor):
    visitor.register()
    answer, token = visitor.prepare_registration()
    assert answer["status"] == "conflict" and token is None
    assert "already registered" in answer["message"]


@pytest.mark.both_backends
def test_two_reviews_confirmed_register_once(visitor):
    _, first = visitor.prepare_registration()
    _, second = visitor.prepare_registration()
    assert visitor.confirm_registration(first).status_code == 201
    again = visitor.confirm_registration(second)
    assert again.status_code == 409 and "already registered" in again.get_json()["message"]
    assert visitor.seats() == 7


@pytest.mark.both_backends
def test_one_email_address_holds_one_seat_of_an_event(app, visitor, other_visitor):
    """Two browsers, one person's address: the second is told at once, and a review prepared
    before the first confirmed cannot take a second seat either."""
    _, early = other_visitor.prepare_registration(email=visitor.email)
    visitor.register()
    answer, token = other_visitor.prepare_registration(email=visitor.email)
    assert answer["status"] == "conflict" and token is None
    assert "e-mail address is already registered" in answer["message"]
    late = other_visitor.confirm_registration(early)
    assert late.status_code == 409
    assert "e-mail address is already registered" in late.get_json()["message"]
    assert [email for _, _, email in registrations_in_db(app)] == [visitor.email]


@pytest.mark.parametrize("spelling", [str.upper, lambda address: address.upper().translate(
    {code: code + 0xFEE0 for code in range(0x21, 0x7F)})], ids=["upper-case", "full-width"])
def test_another_spelling_of_the_address_is_the_same_address(visitor, other_visitor,
                                                            spelling):
    """Case and the full-width letters a Chinese input method types make no other address."""
    visitor.register()
    answer, _ = other_visitor.prepare_registration(email=spelling(visitor.email))
    assert answer["status"] == "conflict"
    assert "e-mail address is already registered" in answer["message"]


def test_a_cancelled_registration_frees_its_address(visitor, other_visitor):
    registration = visitor.register()
    _, token = visitor.prepare_cancellation(registration["id"])
    assert visitor.confirm_cancellation(registration["id"], token).status_code == 200
    assert other_visitor.register(email=visitor.email)["state"] == "active"


def test_one_address_may_register_for_several_events(visitor):
    visitor.register()
    assert visitor.register("evt-agent-testing")["state"] == "active"


@pytest.mark.parametrize(("typed", "kept"), [
    ("ＡＮＮ＠ＥＸＡＭＰＬＥ．ＣＯＭ", "ann@example.com"),
    ("Ann.Lee@Example.COM", "ann.lee@example.com"),
    ("王小明@例子.台灣", "王小明@例子.台灣"),
])
def test_an_address_is_kept_in_one_form(app, visitor, typed, kept):
    visitor.register(email=typed)
    assert [email for _, _, email in registrations_in_db(app)] == [kept]


@pytest.mark.parametrize(("email", "says"), [
    ("ann@exam\u200bple.com", "Remove the invisible character U+200B ZERO WIDTH SPACE"),
    ("ann@example.com\u2060", "Remove the invisible character U+2060 WORD JOINER"),
    ("ann@exam\u00adple.com", "Remove the invisible character U+00AD SOFT HYPHEN"),
    ("ann@example.com\ufe0f", "Enter an e-mail address such as name@example.com."),
])
def test_addresses_with_invisible_characters_are_refused(app, visitor, email, says):
    """A look-alike of another address would show as that address on the review, and count
    apart from it."""
    response = visitor.post("/events/evt-webmcp-intro/register",
                            {"attendee_name": "Ann Lee", "email": email}, headers=JSON)
    assert response.status_code == 422
    assert any(says in message for message in response.get_json()["errors"]["email"])
    assert registrations_in_db(app) == []


def test_a_full_event_cannot_be_prepared_and_its_page_says_so(visitor):
    answer, token = visitor.prepare_registration("evt-semantic-html")
    assert answer["status"] == "conflict" and token is None
    assert "full" in answer["message"]
    soup = BeautifulSoup(visitor.get("/en/events/evt-semantic-html/register").data, "html.parser")
    assert soup.select_one("form[toolname]") is None
    assert "This event is full" in soup.get_text()


@pytest.mark.both_backends
def test_a_closed_event_cannot_be_prepared(visitor, clock):
    event = visitor.get("/en/events/evt-webmcp-intro", headers=JSON).get_json()["data"]["event"]
    clock.now = datetime.fromisoformat(event["registrationDeadline"]) + timedelta(seconds=1)
    answer, _ = visitor.prepare_registration()
    assert answer["status"] == "conflict" and "closed" in answer["message"]
    soup = BeautifulSoup(visitor.get("/en/events/evt-webmcp-intro/register").data, "html.parser")
    assert soup.select_one("form[toolname]") is None


@pytest.mark.both_backends
def test_confirming_rechecks_the_deadline(visitor, clock):
    event = visitor.get("/en/events/evt-webmcp-intro", headers=JSON).get_json()["data"]["event"]
    deadline = datetime.fromisoformat(event["registrationDeadline"])
    clock.now = deadline - timedelta(minutes=2)
    answer, token = visitor.prepare_registration()
    assert answer["status"] == "confirmation_required"
    clock.now = deadline + timedelta(seconds=1)  # the deadline passes while the review is open
    response = visitor.confirm_registration(token)
    assert response.status_code == 409
    assert "closed" in response.get_json()["message"]
    assert visitor.seats() == 8


@pytest.mark.both_backends
def test_the_last_seat_goes_to_the_first_confirmation(app):
    from helpers import Visitor
    visitors = [Visitor(app) for _ in range(9)]
    tokens = [v.prepare_registration()[1] for v in visitors]
    codes = [v.confirm_registration(t).status_code for v, t in zip(visitors, tokens, strict=True)]
    assert codes == [201] * 8 + [409]
    assert visitors[0].seats() == 0
    assert visitors[0].get("/en/events/evt-webmcp-intro", headers=JSON).get_json()[
        "data"]["event"]["state"] == "full"


@pytest.mark.parametrize(("data", "field"), [
    ({"email": "ann@example.com"}, "attendee_name"),
    ({"attendee_name": "A" * 81, "email": "ann@example.com"}, "attendee_name"),
    ({"attendee_name": "Ann"}, "email"),
    ({"attendee_name": "Ann", "email": "not-an-address"}, "email"),
    ({"attendee_name": "Ann", "email": "a" * 250 + "@example.com"}, "email"),
    ({"attendee_name": "Ann", "email": "ann@example.com", "seats": "2"}, "seats"),
    ({"attendee_name": "Ann", "email": "ann@example.com", "event_id": "evt-agent-testing"},
     "event_id"),
])
def test_bad_registration_input(app, visitor, data, field):
    response = visitor.post("/events/evt-webmcp-intro/register", data, headers=JSON)
    assert response.status_code == 422
    assert field in response.get_json()["errors"]
    assert registrations_in_db(app) == []


@pytest.mark.parametrize(("name", "named"), [
    ("Ann\x00Lee", "U+0000"),  # NUL
    ("Ann\x07", "U+0007"),  # a bell: controls inside a name
    ("\u202eeeL nnA", "U+202E RIGHT-TO-LEFT OVERRIDE"),  # shows as "Ann Leee"
    ("Ann \u2066Lee\u2069", "U+2066 LEFT-TO-RIGHT ISOLATE"),
    ("Ann\u200bLee", "U+200B ZERO WIDTH SPACE"),  # looks like "AnnLee", is not
    ("Ann\ufeffLee", "U+FEFF ZERO WIDTH NO-BREAK SPACE"),
    ("Ann\u2028Lee", "U+2028 LINE SEPARATOR"),
])
def test_names_with_invisible_characters_are_refused(app, visitor, name, named):
    """What an organizer reads on the attendee list is what the person typed: no character
    that hides, or reorders, the others."""
    response = visitor.post("/events/evt-webmcp-intro/register",
                            {"attendee_name": name, "email": "ann@example.com"}, headers=JSON)
    assert response.status_code == 422
    assert response.get_json()["errors"] == {"attendee_name": [
        f"Remove the invisible character {named}: use only characters people can see "
        "(no control, direction-changing or zero-width characters)."]}
    assert registrations_in_db(app) == []


@pytest.mark.parametrize("name", ["王小明", "Zoë O'Brien-Smith", "José María Núñez",
                                  "Nguyễn Thị Minh Khai", "李 大同 (Tony)", "علي"])
def test_names_in_any_script_are_welcome(visitor, name):
    prepared, token = visitor.prepare_registration(name=name)
    assert prepared["status"] == "confirmation_required" and token
    assert prepared["data"]["review"]["attendeeName"] == name


@pytest.mark.parametrize("event_id", ["evt-no-such-event", "0"])
def test_preparing_for_no_such_event_answers_alike_in_every_rendering(visitor, event_id):
    """No event, so no form to show again: every rendering carries the same answer."""
    data = {"attendee_name": "Ann", "email": "ann@example.com"}
    as_json, partial, page = three_answers(visitor, f"/events/{event_id}/register", "post",
                                           data=data)
    assert as_json.status_code == partial.status_code == page.status_code
    assert as_json.get_json()["status"] in ("not_found", "invalid_input")
    assert the_jsonld(partial.data) == the_jsonld(page.data) == as_json.get_json()


def test_invalid_input_without_javascript_keeps_what_was_typed(visitor):
    response = visitor.post("/events/evt-webmcp-intro/register",
                            {"attendee_name": "Ann", "email": "nope"})
    assert response.status_code == 422
    soup = BeautifulSoup(response.data, "html.parser")
    assert one(soup, "#prepare_event_registration-attendee_name")["value"] == "Ann"
    email = one(soup, "#prepare_event_registration-email")
    assert email["value"] == "nope" and email["aria-invalid"] == "true"
    assert the_jsonld(response.data)["status"] == "invalid_input"


@pytest.mark.both_backends
def test_the_whole_flow_without_javascript(app, visitor):
    response = visitor.post("/events/evt-webmcp-intro/register",
                            {"attendee_name": "Ann", "email": "ann@example.com"})
    assert response.status_code == 303
    review = visitor.get(response.headers["Location"])
    answer = the_jsonld(review.data)
    assert answer["status"] == "confirmation_required"
    soup = BeautifulSoup(review.data, "html.parser")
    form = one(soup, "form.confirm-form")
    data = {i["name"]: i["value"] for i in form.find_all("input", type="hidden")}
    confirmed = visitor.post(form["action"], data, csrf=False)
    assert confirmed.status_code == 303
    assert confirmed.headers["Location"].startswith("/en/registrations/reg-")
    landing = visitor.get(confirmed.headers["Location"])
    result = the_jsonld(landing.data)
    assert result["status"] == "success" and result["action"] == "confirm_registration"
    assert registrations_in_db(app)[0][1] == "active"


def test_the_full_email_never_leaves_the_server(visitor):
    registration = visitor.register(email="secret.person@example.com")
    pages = [visitor.get("/en/registrations"),
             visitor.get(f"/en/registrations/{registration['id']}"),
             visitor.get(f"/en/registrations/{registration['id']}", headers=JSON),
             visitor.prepare_cancellation(registration["id"])[0]]
    for page in pages:
        text = page if isinstance(page, dict) else page.get_data(as_text=True)
        assert "secret.person@example.com" not in str(text)


def test_confirming_via_htmx_refreshes_the_seats_and_removes_the_form(visitor):
    """Nothing on the page stays stale: the brief's seats and the form area swap out of band,
    so an agent is no longer offered a tool that could only answer "already registered"."""
    _, token = visitor.prepare_registration()
    response = visitor.post("/registrations/confirm", {"confirmation_token": token},
                            headers=HTMX)
    assert response.status_code == 201
    soup = BeautifulSoup(response.data, "html.parser")
    brief = one(soup, "#event-brief")
    assert brief["hx-swap-oob"] == "true"
    label = brief.find("dt", string="Seats left")
    seats = label.find_next_sibling("dd") if label else None
    assert seats is not None and seats.get_text() == "7"
    area = one(soup, "#registration-form")
    assert area["hx-swap-oob"] == "true"
    assert area.select_one("form[toolname]") is None
    # One message says it, once: the form area does not add "already registered" beside it.
    assert area.get_text().strip() == ""
    assert "already registered" not in soup.get_text()
    assert soup.get_text().count("You are registered") == 1


def test_the_person_reviews_the_email_in_full_and_the_agent_gets_it_masked(visitor):
    """The review shows the address as typed (the one field a typo ruins), while the envelope,
    what an agent receives, keeps it masked; without JavaScript the form keeps what was typed."""
    typed = {"attendee_name": "Ann Lee", "email": "ann@exmaple.com"}
    partial = visitor.post("/en/events/evt-webmcp-intro/register", typed, headers=HTMX)
    assert the_jsonld(partial.data)["data"]["review"]["email"] == "a***@exmaple.com"
    review = one(BeautifulSoup(partial.data, "html.parser"), ".review")
    assert "ann@exmaple.com" in review.get_text()

    redirected = visitor.post("/en/events/evt-webmcp-intro/register", typed)
    assert redirected.status_code == 303
    page = visitor.get(redirected.headers["Location"])
    assert the_jsonld(page.data)["data"]["review"]["email"] == "a***@exmaple.com"
    soup = BeautifulSoup(page.data, "html.parser")
    assert "ann@exmaple.com" in one(soup, ".review").get_text()
    form = one(soup, "form[toolname=prepare_event_registration]")
    assert {name: one(form, f"input[name={name}]")["value"] for name in typed} == typed


def test_a_valid_review_clears_the_field_errors_of_the_earlier_try(visitor):
    """With htmx the form stays on screen: the review also empties the messages under fields
    that are now valid."""
    visitor.post("/en/events/evt-webmcp-intro/register",
                 {"attendee_name": "Ann Lee", "email": "not an address"}, headers=HTMX)
    fixed = visitor.post("/en/events/evt-webmcp-intro/register",
                         {"attendee_name": "Ann Lee", "email": "ann@example.com"}, headers=HTMX)
    soup = BeautifulSoup(fixed.data, "html.parser")
    error = one(soup, "#prepare_event_registration-email-error")
    assert error["hx-swap-oob"] == "innerMorph" and error.get_text() == ""


# -- the review: one primary button, how long it holds, the event's time and price (issue 29)

PAID = "evt-a11y-audit-taipei"  # NT$500


def review_of(response) -> Tag:
    return one(BeautifulSoup(response.data, "html.parser"), ".review")


def test_the_form_says_what_happens_next(visitor):
    for language, intro, button in [
            ("en", "Fill in your details, then press Next to check them; you are registered "
                   "only once you press “Confirm registration”.", "Next: check your details"),
            ("zh-TW", "填寫資料後按下一步確認；按下「確認報名」才算完成報名。",
             "下一步：確認資料")]:
        soup = BeautifulSoup(visitor.get(f"/{language}/events/{PAID}/register").data,
                             "html.parser")
        area = one(soup, "#registration-form")
        assert intro in area.get_text()
        assert one(area, "form[toolname] button[type=submit]").get_text(strip=True) == button


@pytest.mark.parametrize("rendering", ["partial", "page"])
def test_the_review_says_when_where_what_it_costs_and_how_long_it_holds(visitor, clock,
                                                                         rendering):
    """Its confirm button is the one primary action; it says the event's start–end and price
    as the page beside it does, and by when to confirm: within the token's lifetime, at the
    time of day that lifetime ends."""
    typed = {"attendee_name": "Ann Lee", "email": "ann@example.com"}
    for language in ("en", "zh-TW"):
        path = f"/{language}/events/{PAID}/register"
        answer = visitor.post(path, typed, headers=HTMX if rendering == "partial" else {})
        if rendering == "page":
            answer = visitor.get(answer.headers["Location"])
        expires = datetime.fromisoformat(the_jsonld(answer.data)["data"]["review"]["expiresAt"])
        assert expires == clock.now + CONFIRMATION_LIFETIME
        minutes, time = CONFIRMATION_LIFETIME // timedelta(minutes=1), expires.strftime("%H:%M")
        review = review_of(answer)
        assert [b.get_text(strip=True) for b in review.select("button")] == [
            {"en": "Confirm registration", "zh-TW": "確認報名"}[language]]
        assert "button--commit" in one(review, "button")["class"]
        expiry = one(review, ".review-expiry").get_text(strip=True)
        assert expiry == {"en": f"Confirm within {minutes} minutes (before {time}).",
                          "zh-TW": f"請在 {minutes} 分鐘內（{time} 前）按「確認報名」。"}[language]
        page = BeautifulSoup(visitor.get(f"/{language}/events/{PAID}").data, "html.parser")
        facts = review.get_text(" ", strip=True)
        assert one(page, ".event-meta").get_text(" ", strip=True) in facts
        assert "NT$500" in facts


def test_the_minutes_are_the_tokens_lifetime(visitor, clock, monkeypatch):
    """Nothing says "5" but the lifetime: made longer, the review and the refusal after it
    say so."""
    monkeypatch.setattr(registrations, "CONFIRMATION_LIFETIME", timedelta(minutes=7))
    response = visitor.post("/en/events/evt-webmcp-intro/register",
                            {"attendee_name": "Ann Lee", "email": "ann@example.com"},
                            headers=HTMX)
    assert one(review_of(response), ".review-expiry").get_text().startswith(
        "Confirm within 7 minutes")
    token = TOKEN_FIELD.search(response.get_data(as_text=True))
    assert token is not None
    clock.advance(minutes=7)
    refused = visitor.confirm_registration(token[1]).get_json()
    assert refused["message"] == (
        "More than 7 minutes have passed: press “Next: check your details” again.")


def test_an_expired_review_says_which_button_to_press_again(visitor, clock):
    for language, says in [
            ("en", "More than 5 minutes have passed: press “Next: check your details” again."),
            ("zh-TW", "已超過 5 分鐘，請再按一次「下一步：確認資料」。")]:
        _, token = visitor.prepare_registration()
        clock.advance(seconds=CONFIRMATION_LIFETIME.total_seconds())
        response = visitor.post(f"/{language}/registrations/confirm",
                                {"confirmation_token": token}, headers=HTMX)
        assert response.status_code == 409
        minutes = str(CONFIRMATION_LIFETIME // timedelta(minutes=1))
        assert one(BeautifulSoup(response.data, "html.parser"), ".notice").get_text(
            strip=True) == says.replace("5", minutes)
