"""Signing in with a mailed link: the link's GET changes nothing and its POST signs in, once,
within its lifetime; every registration made with the address shows after signing in, from
any browser; sessions end when idle, when too old, and everywhere at once on request.

The links are read from the mail as it is sent (the delivery loop with a sender that keeps
what it is given), so each test also reads the mail a person would.
"""

from __future__ import annotations

import re
from datetime import datetime
from email.message import EmailMessage

import pytest
from helpers import CSRF_FIELD
from helpers import HTMX
from helpers import JSON
from helpers import Visitor
from helpers import hidden_value
from helpers import query_database
from helpers import unique_email

from webapp.mail.delivery import Delivery
from webapp.mail.delivery import DeliverySettings
from webapp.mail.message import build_message
from webapp.storage.connection import open_storage

pytestmark = pytest.mark.both_backends

LINK = re.compile(r"https?://\S+/sign-in/[\w-]+")
NOT_SIGNED_IN = "/en/sign-in"


class Inbox:
    """A sender that keeps every message it is given: the tests' mailbox."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []

    def send(self, message: EmailMessage, mail: object) -> None:
        self.messages.append(message)

    def close(self) -> None:
        pass


@pytest.fixture
def inbox(app) -> Inbox:
    return Inbox()


def deliver(app, inbox: Inbox) -> None:
    """Send what the outbox holds into `inbox`, as the delivery loop would."""
    with app.app_context():
        Delivery(open_storage=open_storage, open_sender=lambda: inbox, build=build_message,
                 clock=app.config["CLOCK"],
                 settings=DeliverySettings.from_config(app.config)).deliver_due()


def text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


def mailed_link(app, inbox: Inbox, email: str) -> str:
    """The path of the last sign-in link mailed to `email`."""
    deliver(app, inbox)
    links = [LINK.search(text_of(m)) for m in inbox.messages if m["To"] == email]
    found = [link.group(0) for link in links if link]
    assert found, f"no sign-in link reached {email}"
    return "/" + found[-1].split("/", 3)[3]


def ask_for_link(app, inbox: Inbox, person: Visitor, email: str) -> str:
    answer = person.post(NOT_SIGNED_IN, {"email": email})
    assert answer.status_code == 303, answer.get_data(as_text=True)[:300]
    return mailed_link(app, inbox, email)


def press_sign_in(person: Visitor, link: str):
    """Open the link and press its button, as a person does."""
    page = person.get(link)
    assert page.status_code == 200, page.status_code
    csrf = hidden_value(CSRF_FIELD, page.get_data(as_text=True))
    answer = person.post(link, {"csrf_token": csrf})
    person.new_session()
    return answer


def sign_in(app, inbox: Inbox, person: Visitor, email: str) -> None:
    answer = press_sign_in(person, ask_for_link(app, inbox, person, email))
    assert answer.status_code == 303 and answer.headers["Location"].endswith("/registrations")


def signed_in_as(person: Visitor) -> str | None:
    """The address the account page names, or None when it sends the browser to sign in."""
    page = person.get("/en/account")
    if page.status_code == 303:
        assert page.headers["Location"].endswith(NOT_SIGNED_IN)
        return None
    found = re.search(r"Signed in as (\S+)</h2>", page.get_data(as_text=True))
    assert found, page.get_data(as_text=True)[:500]
    return found.group(1)


def registration_ids(person: Visitor) -> set[str]:
    page = person.get("/en/registrations").get_data(as_text=True)
    return set(re.findall(r'value="(reg-[\w-]+)"', page))


def test_the_link_signs_in_with_its_button_once(app, inbox, visitor):
    email = unique_email()
    link = ask_for_link(app, inbox, visitor, email)
    # Opening it (a mail scanner, a preview) changes nothing, however often.
    for _ in range(2):
        page = visitor.get(link)
        assert page.status_code == 200 and email in page.get_data(as_text=True)
    assert signed_in_as(visitor) is None
    answer = press_sign_in(visitor, link)
    assert answer.status_code == 303
    assert signed_in_as(visitor) == email
    # Spent: opening or pressing it again answers 410 with the form for a new link.
    again = visitor.get(link)
    assert again.status_code == 410 and 'name="email"' in again.get_data(as_text=True)
    replayed = visitor.post(link, {"csrf_token": hidden_value(CSRF_FIELD, again.text)})
    assert replayed.status_code == 410


def test_an_expired_or_altered_link_answers_410(app, inbox, visitor):
    link = ask_for_link(app, inbox, visitor, unique_email())
    assert visitor.get(link[:-2] + ("aa" if not link.endswith("aa") else "bb")).status_code == 410
    app.config["CLOCK"].advance(minutes=15, seconds=1)
    assert visitor.get(link).status_code == 410
    gone = visitor.get(link)
    assert visitor.post(link, {"csrf_token": hidden_value(CSRF_FIELD, gone.text)}
                        ).status_code == 410
    assert signed_in_as(visitor) is None


def test_every_address_gets_the_same_answer(app, inbox, visitor, other_visitor):
    known = unique_email()
    sign_in(app, inbox, other_visitor, known)
    answers = [visitor.post(NOT_SIGNED_IN, {"email": email}, headers=JSON).get_json()
               for email in (known, unique_email())]
    assert [a["status"] for a in answers] == ["success", "success"]
    assert answers[0]["message"].replace(known, "X") == answers[1]["message"].replace(
        answers[1]["data"]["email"], "X")


def test_bad_input_keeps_what_was_typed_with_a_field_error(visitor):
    page = visitor.post(NOT_SIGNED_IN, {"email": "ann@"})
    assert page.status_code == 422
    text = page.get_data(as_text=True)
    assert 'value="ann@"' in text and "Enter an e-mail address" in text


def test_registrations_made_with_the_address_show_after_signing_in_anywhere(
        app, inbox, visitor, other_visitor):
    registered = visitor.register(email=visitor.email)["id"]
    assert registered not in registration_ids(other_visitor)
    sign_in(app, inbox, other_visitor, visitor.email)
    assert registered in registration_ids(other_visitor)
    # The owner cancels it there, through the same review as ever.
    _, token = other_visitor.prepare_cancellation(registered)
    assert other_visitor.confirm_cancellation(registered, token).status_code == 200


def test_a_registration_outlives_a_short_visitor_session_once_signed_in(
        app, inbox, visitor):
    app.config["VISITOR_TTL"] = 30
    registered = visitor.register()["id"]
    app.config["CLOCK"].advance(seconds=60)
    # The anonymous session ended: the page no longer shows the seat it holds ...
    assert registered not in registration_ids(visitor)
    sign_in(app, inbox, visitor, visitor.email)
    # ... and signing in with the address it was made with shows it, for good.
    assert registered in registration_ids(visitor)
    app.config["CLOCK"].advance(hours=11)
    assert registered in registration_ids(visitor)


def test_what_the_browser_did_joins_the_account(app, inbox, visitor, other_visitor):
    assert visitor.save()["status"] == "success"
    sign_in(app, inbox, visitor, visitor.email)
    assert "evt-webmcp-intro" in visitor.get("/en/saved").get_data(as_text=True)
    # The account keeps it on another device too.
    sign_in(app, inbox, other_visitor, visitor.email)
    assert "evt-webmcp-intro" in other_visitor.get("/en/saved").get_data(as_text=True)


def test_sessions_end_when_idle_and_when_too_old(app, inbox, visitor, clock):
    email = visitor.email
    sign_in(app, inbox, visitor, email)
    clock.advance(hours=11, minutes=59)
    assert signed_in_as(visitor) == email
    clock.advance(hours=12, seconds=1)
    assert signed_in_as(visitor) is None
    sign_in(app, inbox, visitor, email)
    for _ in range(15):  # used every 11 hours: never idle, but 7 days is the most
        clock.advance(hours=11)
        if signed_in_as(visitor) is None:
            break
    assert 6 * 24 <= _ * 11 + 11 <= 7 * 24 + 11, "the session did not end at 7 days"


def test_prune_forgets_sessions_that_ended(app, inbox, visitor, other_visitor, clock):
    """Idle past SESSION_IDLE, or older than SESSION_LIFETIME: the row goes; a session in
    use stays (and still signs its browser in)."""
    def sessions() -> int:
        return int(query_database(app.config["DATABASE"],
                                  "SELECT count(*) FROM account_sessions")[0][0])

    def pruned() -> str:
        return str(app.test_cli_runner().invoke(args=["prune"]).output)

    sign_in(app, inbox, visitor, visitor.email)
    sign_in(app, inbox, other_visitor, other_visitor.email)
    for _ in range(3):  # 33 hours: the other browser keeps using the site, this one not
        clock.advance(hours=11)
        assert signed_in_as(other_visitor) == other_visitor.email
    assert "Removed 1 ended sign-in session(s)." in pruned()
    assert sessions() == 1 and signed_in_as(other_visitor) == other_visitor.email
    for _ in range(12):  # used every 11 hours, to 6 days and 21 hours old
        clock.advance(hours=11)
        assert signed_in_as(other_visitor) == other_visitor.email
    assert "Removed 0 ended sign-in session(s)." in pruned()
    clock.advance(hours=11)  # past 7 days: too old, however often it was used
    assert "Removed 1 ended sign-in session(s)." in pruned() and sessions() == 0


def test_signing_out_everywhere_ends_every_session(app, inbox, visitor, other_visitor):
    email = unique_email()
    sign_in(app, inbox, visitor, email)
    sign_in(app, inbox, other_visitor, email)
    answer = other_visitor.post("/en/account/sign-out-everywhere", headers=HTMX)
    assert answer.status_code == 200
    assert signed_in_as(visitor) is None and signed_in_as(other_visitor) is None


def test_signing_out_forgets_the_account_in_this_browser_only(app, inbox, visitor,
                                                              other_visitor):
    email = unique_email()
    sign_in(app, inbox, visitor, email)
    sign_in(app, inbox, other_visitor, email)
    assert visitor.post("/en/account/sign-out").status_code == 303
    visitor.new_session()
    assert signed_in_as(visitor) is None and signed_in_as(other_visitor) == email


@pytest.mark.parametrize("app_config", [{"RATELIMIT_SIGN_IN_PER_EMAIL": "2 per hour"}])
def test_links_to_one_address_are_limited_whoever_asks(app, visitor, other_visitor):
    email = unique_email()
    statuses = [person.post(NOT_SIGNED_IN, {"email": email}, headers=JSON).status_code
                for person in (visitor, other_visitor, Visitor(app))]
    assert statuses == [200, 200, 429]
    assert visitor.post(NOT_SIGNED_IN, {"email": unique_email()},
                        headers=JSON).status_code == 200


def test_the_registration_form_says_how_personal_data_is_used(visitor):
    page = visitor.get("/en/events/evt-webmcp-intro/register").get_data(as_text=True)
    assert "Personal Data Protection Act, Art. 8" in page
    assert "Until 90 days after the event" in page


def test_a_signed_in_person_downloads_what_the_site_holds_of_them(app, inbox, visitor):
    assert visitor.get("/en/account/data").status_code == 303  # nobody to download yet
    registered = visitor.register()["id"]
    visitor.save()
    sign_in(app, inbox, visitor, visitor.email)
    answer = visitor.get("/en/account/data")
    assert answer.status_code == 200 and "attachment" in answer.headers["Content-Disposition"]
    data = answer.get_json()
    assert data["account"]["email"] == visitor.email
    assert [r["id"] for r in data["registrations"]] == [registered]
    assert data["registrations"][0]["email"] == visitor.email
    assert [e["id"] for e in data["savedEvents"]] == ["evt-webmcp-intro"]


def test_deleting_an_account_gives_seats_back_and_keeps_no_name(app, inbox, visitor,
                                                                 other_visitor):
    registered = visitor.register()["id"]
    seats = visitor.seats()
    sign_in(app, inbox, other_visitor, visitor.email)
    refused = other_visitor.post("/en/account/delete", {"email": unique_email()})
    assert refused.status_code == 422 and visitor.email in refused.get_data(as_text=True)
    deleted = other_visitor.post("/en/account/delete", {"email": visitor.email})
    assert deleted.status_code == 303
    other_visitor.new_session()
    assert signed_in_as(other_visitor) is None
    assert visitor.seats() == seats + 1
    with app.app_context():
        storage = open_storage()
        try:
            kept = storage.get_registration(registered)
        finally:
            storage.close()
    assert kept is not None and kept.state == "cancelled"
    assert (kept.attendee_name, kept.email) == ("", "")
    # Signing in again with the address finds an empty account.
    sign_in(app, inbox, other_visitor, visitor.email)
    assert registration_ids(other_visitor) == set()


def test_attendees_are_erased_some_days_after_their_event(app, visitor):
    registered = visitor.register()["id"]
    ends = datetime.fromisoformat(
        visitor.get("/events/evt-webmcp-intro", headers=JSON).get_json()["data"]["event"][
            "endsAt"])
    clock = app.config["CLOCK"]
    clock.advance(seconds=(ends - clock()).total_seconds() + 89 * 86400)
    runner = app.test_cli_runner()
    assert "of 0 attendee(s)" in runner.invoke(args=["prune"]).output
    clock.advance(days=1, seconds=1)
    assert "of 1 attendee(s)" in runner.invoke(args=["prune"]).output
    with app.app_context():
        storage = open_storage()
        try:
            kept = storage.get_registration(registered)
        finally:
            storage.close()
    assert kept is not None and (kept.attendee_name, kept.email) == ("", "")


def test_agents_connected_while_signed_in_belong_to_the_account(app, inbox, visitor,
                                                                other_visitor):
    email = unique_email()
    sign_in(app, inbox, visitor, email)
    connected = visitor.post("/en/agents", {"label": "laptop"})
    assert connected.status_code == 303
    sign_in(app, inbox, other_visitor, email)
    assert "laptop" in other_visitor.get("/en/agents").get_data(as_text=True)
