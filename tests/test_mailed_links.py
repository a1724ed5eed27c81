"""What every mail about a registration carries, and the mail sent the day before: a manage
link shows that one registration on any device and cancels it through the usual review; a
reminder goes once per registration, in the language it was made in, never for a cancelled
one, and not to someone who registered within the last day.

Mail is read as it is sent (`test_accounts.Inbox`, the delivery loop's real messages).
"""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from helpers import CSRF_FIELD
from helpers import JSON
from helpers import TOKEN_FIELD
from helpers import hidden_value
from test_accounts import Inbox
from test_accounts import deliver
from test_accounts import text_of

pytestmark = pytest.mark.both_backends

EVENT = "evt-webmcp-intro"
OPEN_UNTIL_IT_STARTS = "evt-a11y-101-online"  # registration closes as it starts
MANAGE_LINK = re.compile(r"https?://\S+/registrations/reg-[\w-]+/manage/[\w-]+")


@pytest.fixture
def inbox() -> Inbox:
    return Inbox()


def mail_to(app, inbox: Inbox, email: str, subject_has: str):
    """The last message sent to `email` whose subject holds `subject_has`."""
    deliver(app, inbox)
    found = [m for m in inbox.messages if m["To"] == email and subject_has in m["Subject"]]
    assert found, f"no mail about {subject_has!r} reached {email}"
    return found[-1]


def path_of(link: str) -> str:
    return "/" + link.split("/", 3)[3]


def manage_link(message) -> str:
    """The manage link a mail carries (its full address)."""
    found = MANAGE_LINK.search(text_of(message))
    assert found, text_of(message)
    return str(found.group(0))


def test_a_manage_link_cancels_through_the_review_on_any_device(app, inbox, visitor,
                                                                other_visitor):
    registered = visitor.register(EVENT)["id"]
    confirmed = mail_to(app, inbox, visitor.email, "registered")
    link = path_of(manage_link(confirmed))
    # Another device, not signed in: opening the link shows the registration, changes nothing.
    page = other_visitor.get(link)
    assert page.status_code == 200 and "Ann Lee" in page.get_data(as_text=True)
    assert registered in visitor.get("/en/registrations").get_data(as_text=True)
    csrf = hidden_value(CSRF_FIELD, page.get_data(as_text=True))
    asked = other_visitor.post(link, {"csrf_token": csrf})
    assert asked.status_code == 303 and asked.headers["Location"].endswith("/pending")
    review = other_visitor.get(asked.headers["Location"]).get_data(as_text=True)
    token = hidden_value(TOKEN_FIELD, review)
    seats = other_visitor.seats(EVENT)
    assert other_visitor.confirm_cancellation(registered, token).status_code == 200
    assert other_visitor.seats(EVENT) == seats + 1
    cancelled = mail_to(app, inbox, visitor.email, "cancelled")
    assert manage_link(cancelled).endswith(link)


def test_an_altered_manage_link_shows_nothing(app, inbox, visitor, other_visitor):
    visitor.register(EVENT)
    link = path_of(manage_link(mail_to(app, inbox, visitor.email, "registered")))
    altered = link[:-1] + ("A" if not link.endswith("A") else "B")
    page = other_visitor.get(altered)
    assert page.status_code == 404 and "Ann Lee" not in page.get_data(as_text=True)
    assert other_visitor.post(altered, {}, headers=JSON).status_code == 404


def starts_at(visitor, event_id: str) -> datetime:
    body = visitor.get(f"/events/{event_id}", headers=JSON).get_json()
    return datetime.fromisoformat(body["data"]["event"]["startsAt"])


def remind(app) -> str:
    result = app.test_cli_runner().invoke(args=["mail", "remind"])
    assert result.exit_code == 0, result.output
    return str(result.output)


def test_a_reminder_goes_once_the_day_before_in_the_registrations_language(
        app, inbox, visitor, other_visitor):
    assert visitor.csrf
    visitor.get("/zh-TW/events")  # the site remembers the language last chosen
    visitor.register(EVENT)
    kept = other_visitor.register(EVENT)["id"]
    _, token = other_visitor.prepare_cancellation(kept)
    other_visitor.confirm_cancellation(kept, token)
    start = starts_at(visitor, EVENT)
    clock = app.config["CLOCK"]
    assert start > clock()
    clock.advance(seconds=(start - clock()).total_seconds() - 23 * 3600)
    assert remind(app).startswith("1 reminder")  # not the cancelled one
    assert remind(app).startswith("0 reminder")  # once
    reminder = mail_to(app, inbox, visitor.email, "明天")
    assert manage_link(reminder).split("/")[3] == "zh-TW"
    assert any(part.get_content_type() == "text/calendar" for part in reminder.iter_attachments())


def test_no_reminder_for_a_registration_made_within_the_day(app, inbox, visitor):
    start = starts_at(visitor, OPEN_UNTIL_IT_STARTS)
    clock = app.config["CLOCK"]
    clock.advance(seconds=(start - clock()).total_seconds() - 20 * 3600)
    assert visitor.register(OPEN_UNTIL_IT_STARTS)["state"] == "active"
    assert remind(app).startswith("0 reminder")
