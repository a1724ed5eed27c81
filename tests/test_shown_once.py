"""What a page shows once stays on the server: after a form submitted without JavaScript, the
session cookie holds only the key of the result the next page shows, never the result.

The cookie is signed, not encrypted: anyone who holds a copy reads it, and can send that copy
again. So for each secret a page shows once (an agent's access token, the calendar address,
the token of a confirm form and the e-mail typed), the cookie the POST set must not contain
it, the page the redirect lands on must show it, and the same cookie sent again must not.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest
from bs4 import BeautifulSoup
from flask import Flask
from flask.sessions import SecureCookieSessionInterface
from helpers import CSRF_FIELD
from helpers import TOKEN_FIELD
from helpers import attribute
from helpers import hidden_value
from itsdangerous import URLSafeTimedSerializer
from mcp_helpers import ACCESS_TOKEN

from flask_webmcp.negotiation import CARRY_KEY
from flask_webmcp.negotiation import render_post_result
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from webapp.web.carried import LIFETIME

# PostgreSQL runs the flows that prove it end to end (marked `both_backends`); the storage
# under every other test here is checked on both backends by test_storage_contract.py.

EMAIL = "shown.once@example.com"


def access_token(page: str) -> list[str]:
    return ACCESS_TOKEN.findall(page)


def calendar_address(page: str) -> list[str]:
    """The token of the calendar address the page shows (the result holds only the token)."""
    return [urlsplit(attribute(field, "value")).path.rsplit("/", 1)[-1].removesuffix(".ics")
            for field in BeautifulSoup(page, "html.parser").select("#calendar-address")]


def review(page: str) -> list[str]:
    """The confirm form's token, and the e-mail typed, as the review page shows them."""
    return TOKEN_FIELD.findall(page) + ([EMAIL] if EMAIL in page else [])


@dataclass(frozen=True)
class ShownOnce:
    """A form whose result shows secrets once: where it is, what it sends, how the page
    after it shows them."""

    page: str
    fields: dict[str, str]
    secrets: Callable[[str], list[str]]
    expected: int  # how many the page shows


SHOWN_ONCE = {
    "agent access token": ShownOnce("/en/agents", {"label": "Ann's laptop"}, access_token, 1),
    "calendar address": ShownOnce("/en/registrations/calendar", {}, calendar_address, 1),
    "confirmation token and e-mail": ShownOnce(
        "/en/events/evt-webmcp-intro/register", {"attendee_name": "Ann", "email": EMAIL},
        review, 2),
}


def form_page(case: ShownOnce) -> str:
    """The page that holds the form (the calendar form is on the registrations page)."""
    return case.page.removesuffix("/calendar")


def signer(app) -> URLSafeTimedSerializer:
    """What signs the app's session cookies (and reads them)."""
    serializer = SecureCookieSessionInterface().get_signing_serializer(app)
    assert serializer is not None, "the app has no secret key"
    return serializer


def session_of(app, cookie: str) -> dict[str, Any]:
    """What a session cookie says, read as anyone holding it can (the key only checks the
    signature)."""
    data: dict[str, Any] = signer(app).loads(cookie)
    return data


class Browser:
    """A visitor without JavaScript whose session cookie the test reads and sends again."""

    def __init__(self, app, visitor):
        self.app = app
        self.client = visitor.client
        self.name = app.config["SESSION_COOKIE_NAME"]

    @property
    def cookie(self) -> str:
        found = self.client.get_cookie(self.name)
        assert found is not None, "no session cookie"
        return str(found.value)

    def submit(self, case: ShownOnce) -> str:
        """Submit the case's form as a browser without JavaScript: the redirect's address."""
        page = self.client.get(form_page(case)).get_data(as_text=True)
        posted = self.client.post(case.page, data={
            "csrf_token": hidden_value(CSRF_FIELD, page), **case.fields})
        assert posted.status_code == 303
        return str(posted.headers["Location"])

    def secrets_on(self, address: str, case: ShownOnce) -> list[str]:
        answer = self.client.get(address)
        assert answer.status_code == 200
        return case.secrets(answer.get_data(as_text=True))

    def send_again(self, cookie: str) -> None:
        self.client.set_cookie(self.name, cookie)


@pytest.fixture
def browser(app, visitor) -> Browser:
    return Browser(app, visitor)


@pytest.mark.both_backends
@pytest.mark.parametrize("case", SHOWN_ONCE.values(), ids=SHOWN_ONCE.keys())
def test_the_cookie_holds_a_key_never_the_secret(app, browser, case):
    landing = browser.submit(case)
    after_post = browser.cookie
    secrets = browser.secrets_on(landing, case)
    assert len(secrets) == case.expected  # the page shows them, this once
    readable = json.dumps(session_of(app, after_post), ensure_ascii=False, default=str)
    assert [secret for secret in secrets if secret in readable] == []
    assert isinstance(session_of(app, after_post)[CARRY_KEY], str)
    assert CARRY_KEY not in session_of(app, browser.cookie)  # the landing page spent it


@pytest.mark.parametrize("case", SHOWN_ONCE.values(), ids=SHOWN_ONCE.keys())
def test_the_same_cookie_sent_again_shows_nothing(browser, case):
    landing = browser.submit(case)
    after_post = browser.cookie
    assert len(browser.secrets_on(landing, case)) == case.expected
    browser.send_again(after_post)
    assert browser.secrets_on(landing, case) == []


@pytest.mark.both_backends
def test_a_result_not_fetched_in_time_is_never_shown(browser, clock):
    case = SHOWN_ONCE["agent access token"]
    landing = browser.submit(case)
    clock.advance(seconds=LIFETIME.total_seconds())
    assert browser.secrets_on(landing, case) == []


def test_a_second_post_before_the_page_drops_the_first_result(browser):
    """Only the latest POST's result can still be shown: the one before goes at once."""
    case = SHOWN_ONCE["agent access token"]
    browser.submit(case)
    first = browser.cookie
    landing = browser.submit(case)
    assert len(browser.secrets_on(landing, case)) == 1
    browser.send_again(first)
    assert browser.secrets_on(landing, case) == []


def test_a_cookie_from_before_holding_a_whole_result_is_ignored(app, browser):
    """Cookies made before results were kept on the server hold the result itself: the page
    answers as usual and shows none of it."""
    case = SHOWN_ONCE["agent access token"]
    browser.client.get(form_page(case))
    session = session_of(app, browser.cookie)
    session[CARRY_KEY] = {"path": case.page, "page_only": {"access_token": "wme_old"},
                          "result": {"action": "connect_agent", "status": "success",
                                     "message": "Connected."}}
    browser.send_again(signer(app).dumps(session))
    assert browser.secrets_on(case.page, case) == []
    assert CARRY_KEY not in session_of(app, browser.cookie)


def test_an_app_without_a_store_never_falls_back_to_the_cookie():
    """The toolkit has no default store: carrying a result without one fails, loudly."""
    bare = Flask(__name__)
    bare.secret_key = "bare"
    with bare.test_request_context("/things", method="POST"), pytest.raises(
            RuntimeError, match="no store for carried results"):
        render_post_result(ToolResult(action="add_thing", status=Status.SUCCESS,
                                      message="Added.", page_only={"token": "secret"}),
                           "page.html", "partial.html", redirect_to="/things")
