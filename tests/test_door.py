"""The door page of an event an organization runs: typed (or scanned) check-in codes check an
attendee in once, whoever sends them and however they are typed (issue 30, the door).

Every test runs on both backends; pages are read as people read them, without JavaScript (a
POST, then the page it leads to) and with htmx (the door's panel in place).
"""

from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from bs4 import BeautifulSoup
from helpers import HTMX
from helpers import Visitor
from helpers import one
from helpers import query_database
from helpers import the_jsonld
from test_accounts import Inbox
from test_accounts import sign_in
from test_organizers import account_id_of
from test_organizers import signed_in
from test_organizers import start

from webapp.domain.actions.door import masked_email
from webapp.domain.tokens import CheckInCodes
from webapp.domain.tokens import canonical_check_in_code
from webapp.storage.connection import get_db

pytestmark = pytest.mark.both_backends

EVENT = "evt-design-tokens-taipei"
OTHER_EVENT = "evt-a11y-audit-taipei"
TAIPEI = ZoneInfo("Asia/Taipei")


def runs(app, event_id: str, organization_id: str) -> None:
    """Give a seed event to the organization (as creating it there will)."""
    with app.app_context():
        assert get_db().set_event_organization(event_id, organization_id)


def door_of(organization_id: str, event_id: str = EVENT, language: str = "en") -> str:
    return f"/{language}/organizer/organizations/{organization_id}/events/{event_id}/door"


def code_of(app, registration_id: str) -> str:
    """The check-in code the registration's mail shows."""
    key = app.secret_key
    codes = CheckInCodes(key if isinstance(key, bytes) else str(key).encode())
    return str(codes.code_for(registration_id))


def attendee(app, name: str = "王小明", event_id: str = EVENT) -> tuple[Visitor, str]:
    """Someone registered for the event: their browser, and their registration's code."""
    person = Visitor(app)
    registration = person.register(event_id, name=name)
    return person, code_of(app, registration["id"])


def add_member(app, organization_id: str, role: str) -> Visitor:
    """A signed-in person given `role` in the organization."""
    person = signed_in(app)
    with app.app_context():
        get_db().add_member(organization_id, account_id_of(app, person), role,
                            app.config["CLOCK"]())
    return person


def check_in(person: Visitor, door: str, code: str):
    """Post a code as a browser without JavaScript: the answer, and the page it leads to
    (itself, unless it redirects)."""
    answer = person.post(door, {"code": code})
    page = person.get(answer.headers["Location"]) if answer.status_code == 303 else answer
    return answer, BeautifulSoup(page.data, "html.parser")


def answer_text(page: BeautifulSoup) -> str:
    return one(page, ".door-answer").get_text(" ", strip=True)


def local_clock(app) -> str:
    """The app clock's time of day in Taiwan, as the door says it (19:02)."""
    now: datetime = app.config["CLOCK"]()
    return now.astimezone(TAIPEI).strftime("%H:%M")


@pytest.fixture
def door(app):
    """An owner, their organization running EVENT, and its door page."""
    owner = signed_in(app)
    organization_id = start(owner)
    runs(app, EVENT, organization_id)
    return owner, organization_id, door_of(organization_id)


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_a_typed_code_checks_the_attendee_in_once(app, door, language):
    owner, organization_id, _ = door
    guest, code = attendee(app)
    address = door_of(organization_id, language=language)
    empty = BeautifulSoup(owner.get(address).data, "html.parser")
    field = one(empty, "form#check_in input[name=code]")
    assert field.has_attr("autofocus") and field["autocomplete"] == "off"
    assert "0" in one(empty, ".door-counts").get_text()
    answer, page = check_in(owner, address, code)
    assert answer.status_code == 303
    said = answer_text(page)
    assert ("Checked in" if language == "en" else "已報到") in said
    assert "王小明" in said and guest.email in said  # an owner sees the whole address
    assert re.search(r"1\D+1\b", one(page, ".door-counts").get_text()), \
        one(page, ".door-counts").get_text()
    # The form is ready for the next code: empty, focused.
    assert one(page, "form#check_in input[name=code]")["value"] == ""
    again, refused = check_in(owner, address, code)
    assert again.status_code == 409
    said = answer_text(refused)
    assert local_clock(app) in said
    assert ("already checked in" if language == "en" else "已經報到") in said
    assert ("by you" if language == "en" else "經手：你") in said
    assert the_jsonld(again.data)["data"]["outcome"] == "already"


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_a_check_in_of_another_day_is_told_with_its_day(app, clock, door, language):
    """The same day in Taiwan, the time says enough; later, the day is said too (by the app's
    clock: at each of its edges, a minute before midnight included)."""
    owner, organization_id, _ = door
    _, code = attendee(app)
    address = door_of(organization_id, language=language)
    assert check_in(owner, address, code)[0].status_code == 303
    checked_at = clock().astimezone(TAIPEI)
    day = (f"{checked_at.month} 月 {checked_at.day} 日" if language == "zh-TW"
           else f"on {checked_at.day} {checked_at:%b} at")
    said = answer_text(check_in(owner, address, code)[1])
    assert checked_at.strftime("%H:%M") in said and day not in said, said
    clock.advance(days=1)
    sign_in(app, Inbox(), owner, owner.email)  # a day later, as door staff would
    said = answer_text(check_in(owner, address, code)[1])
    assert f"{day} {checked_at:%H:%M}" in said, said
    assert ("by you" if language == "en" else "經手：你") in said


@pytest.mark.parametrize("shape", [str.lower, lambda code: code.replace("-", ""),
                                   lambda code: " ".join(code.replace("-", "")),
                                   lambda code: code.replace("-", " - ").lower(),
                                   # full-width, as a Chinese input method types it
                                   lambda code: "".join(chr(ord(c) + 0xFEE0) for c in code)])
def test_a_code_is_taken_in_any_case_with_or_without_dashes(app, door, shape):
    owner, _, address = door
    _, code = attendee(app)
    answer, page = check_in(owner, address, shape(code))
    assert answer.status_code == 303, answer.data[:300]
    assert "Checked in" in answer_text(page)


def test_door_staff_see_a_masked_address_and_are_named_on_a_second_check_in(app, door, clock):
    owner, organization_id, address = door
    staff = add_member(app, organization_id, "check_in")
    guest, code = attendee(app, "Wang Xiaoming")
    answer, page = check_in(staff, address, code)
    assert answer.status_code == 303
    said = answer_text(page)
    assert masked_email(guest.email) in said and guest.email not in said
    assert guest.email not in page.get_text()
    checked_at = local_clock(app)
    clock.advance(minutes=30)
    again, refused = check_in(owner, address, code)
    assert again.status_code == 409
    said = answer_text(refused)
    assert f"at {checked_at} by {staff.email}" in said
    assert guest.email in said  # the owner may see it whole


def test_masked_addresses():
    assert masked_email("wang@example.com") == "w***@example.com"
    assert masked_email("a@example.com") == "a***@example.com"


def test_codes_typed_in_other_shapes_are_the_same_code():
    assert canonical_check_in_code("k7qm 2xpa 64td") == "K7QM-2XPA-64TD"
    assert canonical_check_in_code("K7QM2XPA64TD") == "K7QM-2XPA-64TD"
    assert canonical_check_in_code("k7qm—2xpa–64td") == "K7QM-2XPA-64TD"
    # The digits base32 never uses are the letters they look like.
    assert canonical_check_in_code("K7QM-2XPA-64T0") == "K7QM-2XPA-64TO"
    for garbage in ("", "hello", "K7QM-2XPA-64T", "K7QM-2XPA-64TD-A", "K7QM-2XPA-64T9"):
        assert canonical_check_in_code(garbage) is None


def test_a_cancelled_registration_another_events_code_and_garbage_are_each_said(app, door):
    owner, organization_id, address = door
    # A registration for another of the organization's events.
    runs(app, OTHER_EVENT, organization_id)
    _, elsewhere = attendee(app, event_id=OTHER_EVENT)
    answer, page = check_in(owner, address, elsewhere)
    assert answer.status_code == 404
    assert "another event" in answer_text(page) and "Accessibility" in answer_text(page)
    # One for an event nobody here runs: no such code at this door.
    _, unknown = attendee(app, event_id="evt-html-css-basics")
    answer, page = check_in(owner, address, unknown)
    assert answer.status_code == 404 and "No registration for this event" in answer_text(page)
    assert one(page, "input[name=code]")["value"] == unknown  # kept, to correct it
    # A cancelled one.
    guest, code = attendee(app, "Lin Mei")
    registration_id = the_registration_id(app, guest.email)
    _, token = guest.prepare_cancellation(registration_id)
    assert guest.confirm_cancellation(registration_id, token).status_code == 200
    answer, page = check_in(owner, address, code)
    assert answer.status_code == 409 and "cancelled" in answer_text(page)
    assert "Lin Mei" in answer_text(page)
    # Garbage: the field says what a code looks like, and what was typed stays.
    answer, page = check_in(owner, address, "hello")
    assert answer.status_code == 422
    assert "12 letters and digits" in one(page, "#check_in-code-error").get_text()
    assert one(page, "input[name=code]")["value"] == "hello"
    with app.app_context():
        assert get_db().door_counts(EVENT) == (0, 0)  # its one registration cancelled


def the_registration_id(app, email: str) -> str:
    ((found,),) = query_database(app.config["DATABASE"],
                                 "SELECT id FROM registrations WHERE email = ?", (email,))
    return str(found)


def test_two_door_phones_sending_one_code_at_once_check_it_in_once(app, door):
    """The check-in is one statement on the registration's key: of two at the same moment,
    one checks in, the other is refused."""
    owner, organization_id, _ = door
    guest, _ = attendee(app)
    registration_id = the_registration_id(app, guest.email)
    account_id = account_id_of(app, owner)
    together = threading.Barrier(2)

    def phone() -> bool:
        with app.app_context():
            db = get_db()
            together.wait()
            return db.check_in(registration_id, EVENT, account_id, app.config["CLOCK"]())

    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = sorted(pool.map(lambda _: phone(), range(2)))
    assert outcomes == [False, True]
    assert query_database(app.config["DATABASE"], "SELECT count(*) FROM check_ins "
                          "WHERE registration_id = ?", (registration_id,)) == [(1,)]


def test_only_the_organizations_own_events_have_a_door(app, door):
    owner, organization_id, _ = door
    other_owner = signed_in(app)
    other = start(other_owner, "Kaohsiung AI")
    runs(app, OTHER_EVENT, other)
    _, code = attendee(app, event_id=OTHER_EVENT)
    # Another organization's event, and an event no organization runs, are not found here.
    for event_id in (OTHER_EVENT, "evt-html-css-basics"):
        assert owner.get(door_of(organization_id, event_id)).status_code == 404
        assert owner.post(door_of(organization_id, event_id), {"code": code}).status_code == 404
    # Nor is this organization's door for someone of another organization.
    assert other_owner.get(door_of(organization_id)).status_code == 404
    assert query_database(app.config["DATABASE"], "SELECT count(*) FROM check_ins") == [(0,)]


def test_a_check_in_is_audited_with_its_event_and_registration(app, door):
    owner, organization_id, address = door
    staff = add_member(app, organization_id, "check_in")
    guest, code = attendee(app)
    check_in(staff, address, code)
    registration_id = the_registration_id(app, guest.email)
    assert query_database(
        app.config["DATABASE"], "SELECT account_id, event_id, target FROM audit_log "
        "WHERE organization_id = ? AND action = 'check_in'", (organization_id,)) == [
        (account_id_of(app, staff), EVENT, registration_id)]
    log = BeautifulSoup(owner.get(f"/en/organizer/organizations/{organization_id}").data,
                        "html.parser")
    assert f"{staff.email} checked an attendee in" in one(log, ".activity-list").get_text()
    # Nothing of the attendee is written in the log.
    assert guest.email not in one(log, ".activity-list").get_text()


def test_with_htmx_the_answer_replaces_the_door_panel(app, door):
    owner, _, address = door
    guest, code = attendee(app)
    answer = owner.post(address, {"code": code}, headers=HTMX)
    assert answer.status_code == 200
    panel = BeautifulSoup(answer.data, "html.parser")
    assert "Checked in" in answer_text(panel) and guest.email in answer_text(panel)
    field = one(panel, "form#check_in input[name=code]")
    assert field["value"] == "" and field.has_attr("autofocus")
    assert one(panel, "form#check_in")["hx-target"] == "#door"
    assert panel.select("html, head") == []  # a panel, not a page
    again = owner.post(address, {"code": code}, headers=HTMX)
    assert again.status_code == 409
    assert "already checked in" in answer_text(BeautifulSoup(again.data, "html.parser"))


def test_the_door_page_may_use_the_camera_and_offers_agents_nothing(app, door):
    owner, _, address = door
    answer = owner.get(address)
    assert "camera=(self)" in answer.headers["Permissions-Policy"]
    assert answer.headers["Cache-Control"] == "private, no-store"
    assert answer.headers["Referrer-Policy"] == "no-referrer"
    page = BeautifulSoup(answer.data, "html.parser")
    assert page.select("[toolname]") == []
    scripts = [str(script.get("src", "")) for script in page.select("script")]
    assert not any("webmcp-bridge" in src for src in scripts)
    assert any("/js/door.js" in src for src in scripts)
    assert "/js/jsqr-1.4.0.js" in str(one(page, ".door-scanner")["data-jsqr"])
    # The scan button waits for the script to show it: without JavaScript, only typing.
    assert one(page, "#door-scan").has_attr("hidden")
    # No other page may use the camera.
    assert "camera=()" in owner.get("/en/organizer/").headers["Permissions-Policy"]
