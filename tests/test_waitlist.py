"""The waitlist of a full event: joining it (confirmed like a registration), a seat that frees
offered to the first one waiting with a hold, accepted by a person's POST or passed on when
declined or out of time, on the pages in both languages and in the mail."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from datetime import timedelta
from typing import Any

import pytest
from bs4 import BeautifulSoup
from helpers import HTMX
from helpers import TOKEN_FIELD
from helpers import Visitor
from helpers import attribute
from helpers import one
from helpers import query_database
from helpers import the_jsonld
from mcp_helpers import McpClient
from mcp_helpers import connect_agent

from webapp.domain.waitlist import offer_ends_at
from webapp.mail.message import build_message
from webapp.storage import Event
from webapp.storage import OutboxMail
from webapp.storage.connection import get_db
from webapp.storage.connection import open_storage

SMALL = "evt-waitlist-small"
SEATS = 2


def small_event(now: datetime, *, starts_in: timedelta = timedelta(days=10),
                closes_before: timedelta = timedelta(days=1), capacity: int = SEATS,
                held: int = 0, waitlist: bool = True) -> Event:
    """A small event whose waitlist is on, starting `starts_in` after `now`."""
    return Event(id=SMALL, title="小小讀書會 Study group", summary="Two seats.", description="",
                 starts_at=now + starts_in, ends_at=now + starts_in + timedelta(hours=2),
                 location="taipei", venue="Hall", price="free", level="beginner",
                 capacity=capacity, held_seats=held,
                 registration_deadline=now + starts_in - closes_before, waitlist=waitlist)


def add(app, event: Event) -> None:
    with app.app_context():
        get_db().import_events([event])


@pytest.fixture
def small(app, clock) -> Event:
    """SMALL, its seats all taken by two visitors (`filled`)."""
    event = small_event(clock())
    add(app, event)
    return event


def fill(app, count: int = SEATS) -> list[tuple[Visitor, dict[str, Any]]]:
    """`count` visitors, each registered for SMALL."""
    people = [Visitor(app) for _ in range(count)]
    return [(person, person.register(SMALL)) for person in people]


def prepare_joining(visitor: Visitor) -> tuple[dict[str, Any], str | None, str]:
    """The prepare answer on a full SMALL, its confirm token and the review's HTML."""
    response = visitor.post(f"/events/{SMALL}/register",
                            {"attendee_name": "Wen Chen", "email": visitor.email}, headers=HTMX)
    html = response.get_data(as_text=True)
    token = TOKEN_FIELD.search(html)
    return the_jsonld(response.data), token.group(1) if token else None, html


def join(visitor: Visitor) -> dict[str, Any]:
    """Prepare and confirm joining SMALL's waitlist: the answer."""
    _, token, _ = prepare_joining(visitor)
    answer: dict[str, Any] = visitor.post_json("/registrations/waitlist",
                                               {"confirmation_token": token}).get_json()
    return answer


def places(visitor: Visitor) -> list[tuple[str, str]]:
    """The visitor's places on waitlists as the database keeps them: (id, state)."""
    return [(row[0], row[1]) for row in query_database(
        visitor.client.application.config["DATABASE"],
        "SELECT w.id, w.state FROM waitlist w WHERE w.attendee_name = 'Wen Chen' "
        "AND w.email = ? ORDER BY w.place", [visitor.email])]


def waitlist_rows(app) -> list[tuple[str, str]]:
    return query_database(app.config["DATABASE"],
                          "SELECT email, state FROM waitlist ORDER BY place")


def cancel(visitor: Visitor, registration_id: str) -> None:
    _, token = visitor.prepare_cancellation(registration_id)
    assert visitor.confirm_cancellation(registration_id, token).status_code == 200


def queued_mail(app, kind: str) -> list[OutboxMail]:
    """The mail of one kind in the outbox, oldest first."""
    rows = query_database(app.config["DATABASE"],
                          "SELECT dedupe_key FROM outbox WHERE kind = ? ORDER BY id", [kind])
    with app.app_context():
        storage = open_storage()
        try:
            return [mail for (key,) in rows if (mail := storage.get_mail(key)) is not None]
        finally:
            storage.close()


def offered_mail(app) -> list[tuple[str, str, dict[str, Any]]]:
    return [(mail.recipient, mail.language, mail.payload)
            for mail in queued_mail(app, "waitlist_offer")]


# -- how long an offer holds ---------------------------------------------------------------

NOW = datetime(2026, 6, 15, 4, 0).astimezone()


@pytest.mark.parametrize(("starts_in", "hold"), [
    (timedelta(days=10), timedelta(hours=24)),
    (timedelta(days=3, minutes=1), timedelta(hours=24)),
    (timedelta(days=3), timedelta(hours=4)),
    (timedelta(days=1, minutes=1), timedelta(hours=4)),
    (timedelta(days=1), timedelta(hours=1)),
    (timedelta(hours=5), timedelta(hours=1)),
])
def test_an_offer_holds_longer_the_further_away_the_event_is(starts_in, hold):
    event = small_event(NOW, starts_in=starts_in, closes_before=timedelta(0))
    assert offer_ends_at(event, NOW) == NOW + hold


def test_an_offer_never_holds_past_the_registration_deadline():
    event = small_event(NOW, starts_in=timedelta(days=10),
                        closes_before=timedelta(days=9, hours=22))
    assert offer_ends_at(event, NOW) == event.registration_deadline == NOW + timedelta(hours=2)
    closed = small_event(NOW, starts_in=timedelta(days=10), closes_before=timedelta(days=10))
    assert offer_ends_at(closed, NOW) is None  # registration closed: nothing to offer


# -- joining --------------------------------------------------------------------------------

@pytest.mark.both_backends
def test_an_agent_preparing_on_a_full_event_is_told_plainly_it_is_the_waitlist(app, small):
    fill(app)
    answer, token, html = prepare_joining(Visitor(app))
    assert answer["status"] == "confirmation_required" and token
    assert "waitlist" in answer["message"] and "not a seat" in answer["message"]
    assert "Join the waitlist" in answer["nextAction"]
    assert set(answer["data"]["review"]) == {"event", "attendeeName", "email", "expiresAt"}
    soup = BeautifulSoup(html, "html.parser")
    form = one(soup, "form.confirm-form")
    assert attribute(form, "action").endswith("/registrations/waitlist")
    assert form.get("toolname") is None  # a person's step: no tool
    assert "Join the waitlist" in form.get_text()
    assert "Press “Join the waitlist” within 5 minutes" in one(soup, ".review-expiry").get_text()


def test_an_mcp_agent_hears_it_is_the_waitlist_and_the_person_joins_on_the_review_page(
        app, small, visitor):
    fill(app)
    agent = McpClient(app.test_client(), "modern", connect_agent(visitor))
    result = agent.call("prepare_event_registration",
                        {"event_id": SMALL, "attendee_name": "Wen Chen", "email": visitor.email})
    envelope = result["structuredContent"]
    assert envelope["status"] == "confirmation_required" and "not a seat" in envelope["message"]
    page = BeautifulSoup(visitor.get("/en/registrations/pending").data, "html.parser")
    assert "Join the waitlist of this event?" in page.get_text()
    form = one(page, "form.confirm-form")
    assert attribute(form, "action").endswith("/registrations/waitlist")
    token = attribute(one(form, "input[name=confirmation_token]"), "value")
    joined = visitor.post_json("/registrations/waitlist", {"confirmation_token": token})
    assert joined.status_code == 201 and places(visitor) and waitlist_rows(app) == [
        (visitor.email, "waiting")]


def test_a_full_event_without_a_waitlist_still_refuses(app, clock):
    add(app, small_event(clock(), waitlist=False))
    fill(app)
    answer, token, _ = prepare_joining(Visitor(app))
    assert answer["status"] == "conflict" and token is None and "full" in answer["message"]


def test_a_waitlist_token_registers_nobody_and_a_registration_token_joins_nothing(app, small):
    fill(app)
    person = Visitor(app)
    _, token, _ = prepare_joining(person)
    assert person.confirm_registration(token).status_code == 404
    assert waitlist_rows(app) == []
    _, seat_token = Visitor(app).prepare_registration()
    assert person.post_json("/registrations/waitlist",
                            {"confirmation_token": seat_token}).status_code == 404


@pytest.mark.both_backends
def test_people_join_in_line_and_the_seats_stay_full(app, small):
    fill(app)
    first, second = Visitor(app), Visitor(app)
    answers = [join(first), join(second)]
    assert [a["status"] for a in answers] == ["success", "success"]
    assert [a["data"]["waitlist"]["position"] for a in answers] == [1, 2]
    assert "number 2" in answers[1]["message"]
    assert waitlist_rows(app) == [(first.email, "waiting"), (second.email, "waiting")]
    assert first.seats(SMALL) == 0
    again, token, _ = prepare_joining(first)
    assert again["status"] == "conflict" and "already on the waitlist" in again["message"]
    assert "already on the waitlist" in again["nextAction"]


@pytest.mark.both_backends
def test_each_person_joining_is_mailed_their_place_once(app, small, clock):
    fill(app)
    first, second = Visitor(app), Visitor(app)
    join(first)
    join(second)
    mails = queued_mail(app, "waitlist_joined")
    assert [(m.recipient, m.payload["position"]) for m in mails] == [(first.email, 1),
                                                                     (second.email, 2)]
    assert all(m.payload["registrationsUrl"].endswith("/en/registrations") for m in mails)
    with app.test_request_context():
        message = build_message(mails[1], clock())
    plain = message.get_body(("plain",))
    assert plain is not None
    text = plain.get_content()
    assert message["Subject"].startswith("On the waitlist:")
    assert "number 2 on its waitlist" in text and mails[1].payload["registrationsUrl"] in text
    assert "Nothing is registered yet" in text


@pytest.mark.both_backends
def test_a_place_offered_at_once_is_mailed_as_an_offer_only(app, small):
    (holder, registration), _ = fill(app)
    person = Visitor(app)
    prepared, token, _ = prepare_joining(person)  # reviewed while the event is full
    cancel(holder, registration["id"])  # a seat frees before they confirm
    answer = person.post_json("/registrations/waitlist", {"confirmation_token": token}
                              ).get_json()
    assert answer["data"]["waitlist"]["state"] == "offered"
    assert queued_mail(app, "waitlist_joined") == []
    assert [recipient for recipient, _, _ in offered_mail(app)] == [person.email]


# -- offers ---------------------------------------------------------------------------------

@pytest.mark.both_backends
def test_a_cancelled_seat_is_offered_to_the_first_one_waiting_and_mailed(app, small, clock):
    (holder, registration), _ = fill(app)
    first, second = Visitor(app), Visitor(app)
    join(first)
    join(second)
    cancel(holder, registration["id"])
    assert waitlist_rows(app) == [(first.email, "offered"), (second.email, "waiting")]
    assert holder.seats(SMALL) == 0  # the seat is held for the first one waiting
    ((recipient, language, payload),) = offered_mail(app)
    assert (recipient, language) == (first.email, "en")
    assert datetime.fromisoformat(payload["offerEndsAt"]) == clock() + timedelta(hours=24)
    assert payload["acceptUrl"].endswith("/en/registrations")


@pytest.mark.both_backends
def test_accepting_an_offer_makes_it_a_registration(app, small):
    (holder, registration), _ = fill(app)
    waiting = Visitor(app)
    join(waiting)
    cancel(holder, registration["id"])
    ((place, state),) = places(waiting)
    assert state == "offered"
    accepted = waiting.post_json(f"/registrations/waitlist/{place}/accept")
    assert accepted.status_code == 201
    taken = accepted.get_json()["data"]["registration"]
    assert taken["eventId"] == SMALL and taken["state"] == "active"
    assert places(waiting) == [(place, "accepted")]
    assert waiting.seats(SMALL) == 0
    again = waiting.post_json(f"/registrations/waitlist/{place}/accept")
    assert again.status_code == 409  # one seat, however often pressed


def test_another_visitor_cannot_accept_an_offer(app, small):
    (holder, registration), _ = fill(app)
    waiting = Visitor(app)
    join(waiting)
    cancel(holder, registration["id"])
    ((place, _),) = places(waiting)
    assert Visitor(app).post_json(f"/registrations/waitlist/{place}/accept").status_code == 404
    assert places(waiting) == [(place, "offered")]


@pytest.mark.both_backends
def test_a_declined_offer_passes_to_the_next_one_waiting(app, small):
    (holder, registration), _ = fill(app)
    first, second = Visitor(app), Visitor(app)
    join(first)
    join(second)
    cancel(holder, registration["id"])
    ((place, _),) = places(first)
    assert first.post_json(f"/registrations/waitlist/{place}/leave").status_code == 200
    assert waitlist_rows(app) == [(first.email, "declined"), (second.email, "offered")]
    assert [mail[0] for mail in offered_mail(app)] == [first.email, second.email]


@pytest.mark.both_backends
def test_an_offer_out_of_time_passes_on_without_the_job(app, small, clock):
    (holder, registration), _ = fill(app)
    first, second = Visitor(app), Visitor(app)
    join(first)
    join(second)
    cancel(holder, registration["id"])
    ((place, _),) = places(first)
    clock.advance(hours=24)
    late = first.post_json(f"/registrations/waitlist/{place}/accept")
    assert late.status_code == 409 and "ended" in late.get_json()["message"]
    assert waitlist_rows(app) == [(first.email, "expired"), (second.email, "offered")]


@pytest.mark.both_backends
def test_the_job_passes_expired_offers_on_once(app, small, clock, runner):
    (holder, registration), _ = fill(app)
    first, second = Visitor(app), Visitor(app)
    join(first)
    join(second)
    cancel(holder, registration["id"])
    clock.advance(hours=23, minutes=59)
    assert "0 seat(s) offered" in runner.invoke(args=["waitlist", "pass-on"]).output
    clock.advance(minutes=1)
    assert "1 seat(s) offered" in runner.invoke(args=["waitlist", "pass-on"]).output
    assert waitlist_rows(app) == [(first.email, "expired"), (second.email, "offered")]
    assert "0 seat(s) offered" in runner.invoke(args=["waitlist", "pass-on"]).output
    assert len(offered_mail(app)) == 2


@pytest.mark.both_backends
def test_released_held_seats_and_a_raised_capacity_are_offered(app, clock):
    add(app, small_event(clock(), held=SEATS))  # full: every seat held
    first, second, third = Visitor(app), Visitor(app), Visitor(app)
    for person in (first, second, third):
        join(person)
    add(app, small_event(clock(), held=SEATS - 1))  # one held seat released
    # Nobody ran the job: the first one waiting sees the offer on their page all the same.
    page = first.get("/en/registrations").get_data(as_text=True)
    assert "A seat is held for you until" in page and "Accept the seat" in page
    add(app, small_event(clock(), capacity=SEATS + 1, held=SEATS - 1))  # one seat more
    second.get("/en/registrations")
    assert [state for _, state in waitlist_rows(app)] == ["offered", "offered", "waiting"]


@pytest.mark.both_backends
def test_an_import_that_releases_a_held_seat_offers_it_at_once(app, clock, runner, tmp_path):
    add(app, small_event(clock(), held=SEATS))
    waiting = Visitor(app)
    join(waiting)
    event = small_event(clock(), held=SEATS - 1)
    released = tmp_path / "events.json"
    released.write_text(json.dumps({"events": [{
        "id": SMALL, "title": event.title, "summary": event.summary, "location": "taipei",
        "venue": "Hall", "price": "free", "level": "beginner", "capacity": SEATS,
        "heldSeats": SEATS - 1, "waitlist": True, "startsAt": event.starts_at.isoformat(),
        "endsAt": event.ends_at.isoformat(),
        "registrationDeadline": event.registration_deadline.isoformat()}]}))
    imported = runner.invoke(args=["import-events", str(released)])
    assert "1 seat(s) offered from waitlists." in imported.output, imported.output
    assert [state for _, state in places(waiting)] == ["offered"]
    assert [mail[0] for mail in offered_mail(app)] == [waiting.email]


# -- pages ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("language", "join_button", "position"), [
    ("en", "Join the waitlist", "On the waitlist: number 1."),
    ("zh-TW", "加入候補", "候補第 1 位。"),
])
def test_the_pages_offer_joining_and_show_the_place(app, small, language, join_button, position):
    fill(app)
    person = Visitor(app)
    event_page = BeautifulSoup(person.get(f"/{language}/events/{SMALL}").data, "html.parser")
    assert join_button in one(event_page, ".event-actions").get_text()
    register = BeautifulSoup(person.get(f"/{language}/events/{SMALL}/register").data,
                             "html.parser")
    assert register.select_one("form[toolname=prepare_event_registration]") is not None
    join(person)
    mine = BeautifulSoup(person.get(f"/{language}/registrations").data, "html.parser")
    assert position in one(mine, ".registration-list--waitlist").get_text()


@pytest.mark.parametrize(("language", "held_until", "accept"), [
    ("en", "A seat is held for you until", "Accept the seat"),
    ("zh-TW", "已為你保留一個名額，保留到", "接受名額"),
])
def test_an_offer_shows_on_my_registrations_and_the_pending_page(app, small, language,
                                                                 held_until, accept):
    (holder, registration), _ = fill(app)
    waiting = Visitor(app)
    join(waiting)
    cancel(holder, registration["id"])
    for page in (f"/{language}/registrations", f"/{language}/registrations/pending"):
        soup = BeautifulSoup(waiting.get(page).data, "html.parser")
        listed = one(soup, ".registration-list--waitlist")
        assert held_until in listed.get_text(), page
        form = one(listed, "form[action$='/accept']")
        assert accept in one(form, "button").get_text()
        assert form.get("toolname") is None  # a person's step: no tool


def test_the_offer_mail_reads_in_both_languages(app, small):
    (holder, registration), _ = fill(app)
    waiting = Visitor(app)
    join(waiting)
    cancel(holder, registration["id"])
    rows = query_database(app.config["DATABASE"],
                          "SELECT dedupe_key FROM outbox WHERE kind = 'waitlist_offer'")
    with app.app_context():
        storage = open_storage()
        try:
            mail = storage.get_mail(rows[0][0])
            assert mail is not None
            for language, words in (("en", "A seat is yours"), ("zh-TW", "候補")):
                message = build_message(replace(mail, language=language), mail.created_at)
                assert words in str(message["Subject"]), language
                text = message.get_body(("plain",))
                assert text is not None and mail.payload["acceptUrl"] in text.get_content()
        finally:
            storage.close()
