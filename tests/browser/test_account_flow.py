"""Signing in by e-mail link, the issue's acceptance test, in Chromium against gunicorn and a
real SMTP server on loopback (aiosmtpd, `smtp_server.py`) fed by the delivery loop running as
`flask --app webapp mail run`, on SQLite and on PostgreSQL, in Chinese and in English, with
JavaScript on and off:

1. a person registers for an event by clicking through its page (no sign-in), and the
   confirmation mail arrives in the page's language, with the event's `.ics` attached and the
   check-in QR code shown inside its HTML (a `cid:` image);
2. in another browser (none of the first one's cookies) they ask for a sign-in link through
   the header's link; the mailed link opens a page with a button, which signs nobody in until
   pressed; pressed, *My registrations* shows the registration made in the first browser;
3. they cancel it there, through the review dialog, and the cancellation mail arrives.

Each backend runs with each language, JavaScript on in two of the four passes and off in the
other two (`javascript`): each value of each axis at least once, not every combination. Every
wait ends on a condition: Playwright's auto-waiting, or a mail's arrival at the SMTP server
(with its timeout); never a pause. With SCREENSHOTS set to a folder, the sign-in page, the
link's page and the account page are written there at phone and desktop size, for a person to
look at (never a verdict).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest
from helpers import unique_email
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator
from playwright.sync_api import ViewportSize
from playwright.sync_api import expect
from services import fresh_schema

from .mail_site import MailSite
from .mail_site import html_part
from .mail_site import mail_to
from .mail_site import serving_with_mail
from .mail_site import text_part
from .visit import Site
from .visit import Tab

pytestmark = pytest.mark.browser

# A row of the active registrations on My registrations (the list the cancellation tool holds).
ACTIVE_ROW = "#prepare_registration_cancellation .registration-card"

EVENT = "evt-webmcp-spec-reading"  # 200 seats: the module's registrations never fill it
EVENT_TITLE = "Reading the WebMCP Draft Together"
# Each backend with each language (one server per backend), JavaScript on for Chinese on
# SQLite and English on PostgreSQL, off for the other two: each value of each axis at least
# once, four passes in all (see `javascript`).
BACKENDS = ["sqlite", "postgresql"]
LANGUAGES = ["zh-TW", "en"]
# What each mail says, written out (not read from the catalog the pages use): a Chinese
# page's mail is in Chinese, an English page's in English.
ATTENDEE = {"zh-TW": "陳小安", "en": "Ann Lee"}
SUBJECTS = {
    "zh-TW": {"confirmed": f"報名成功：{EVENT_TITLE}", "sign-in": "你的WebMCP 社群活動登入連結",
              "cancelled": f"已取消報名：{EVENT_TITLE}"},
    "en": {"confirmed": f"You're registered: {EVENT_TITLE}",
           "sign-in": "Your sign-in link for WebMCP Events",
           "cancelled": f"Registration cancelled: {EVENT_TITLE}"},
}
WORDS = {
    "zh-TW": {"confirmed": "入場時出示", "sign-in": "打開這個連結即可登入",
              "cancelled": "你已取消以下活動的報名"},
    "en": {"confirmed": "at the entrance", "sign-in": "Open this link to sign in",
           "cancelled": "you cancelled your registration"},
}
LINK = re.compile(r"https?://\S+/sign-in/[\w-]+")
SIZES: dict[str, ViewportSize] = {"phone": {"width": 390, "height": 844},
                                  "desktop": {"width": 1280, "height": 800}}


@pytest.fixture(scope="module")
def backend(request: pytest.FixtureRequest) -> str:
    """The database the module's server runs on (the test parametrizes it)."""
    return str(request.param)


@pytest.fixture(scope="module")
def mail_site(backend: str, tmp_path_factory: pytest.TempPathFactory,
              request: pytest.FixtureRequest) -> Iterator[MailSite]:
    """The site with its mail delivered to a real SMTP server, on a fresh database of
    `backend`."""
    folder = tmp_path_factory.mktemp(f"account-{backend}")
    if backend == "postgresql":
        database = fresh_schema(request.getfixturevalue("postgres_database"))
    else:
        database = str(folder / "events.sqlite")
    with serving_with_mail(database, folder) as served:
        yield served


@pytest.fixture
def javascript(backend: str, language: str) -> bool:
    """Whether the person's browsers run JavaScript: on for sqlite-zh-TW and postgresql-en,
    off for sqlite-en and postgresql-zh-TW."""
    return (backend == "sqlite") == (language == "zh-TW")


@pytest.fixture(scope="module")
def site(mail_site: MailSite) -> Site:
    """The browser fixtures' site (tests/browser/conftest.py): this module's, with its mail."""
    return mail_site.site


def header_link(tab: Tab, name: str) -> Locator:
    """A link of the header's main navigation, by its text in the tab's language."""
    main = tab.page.get_by_role("navigation", name=tab.text("Main"))
    return main.get_by_role("link", name=tab.text(name), exact=True)


def shoot(tab: Tab, name: str, case: str) -> None:
    """The page at phone and desktop size into $SCREENSHOTS, when set: for a person to look
    at, never a verdict (a picture that cannot be written is said, not failed)."""
    folder = os.environ.get("SCREENSHOTS")
    if not folder:
        return
    shown = tab.page.viewport_size
    for size, viewport in SIZES.items():
        path = Path(folder) / f"{name}.{tab.language}.{size}.{case}.png"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tab.page.set_viewport_size(viewport)
            tab.page.screenshot(path=str(path), full_page=True)
        except (OSError, PlaywrightError) as error:
            print(f"screenshot {path} not written: {error}")
    if shown is not None:
        tab.page.set_viewport_size(shown)  # the flow goes on as it would without pictures


def register_from_the_event_page(tab: Tab, name: str, email: str) -> None:
    """A person opens the event's page, follows its register link, fills the form, reviews
    and confirms, by clicking."""
    page = tab.page
    page.goto(tab.site.url(f"/events/{EVENT}"))
    expect(page).to_have_url(re.compile(rf"/{tab.language}/events/{EVENT}$"))
    page.get_by_role("link", name=tab.text("Register now")).click()
    page.get_by_label(tab.text("Attendee name")).fill(name)
    page.get_by_label(tab.text("E-mail")).fill(email)
    tab.press(tab.text("Next: check your details"), then_shows=tab.text("Check and confirm"))
    tab.press(tab.text("Confirm registration"),
              then_shows=tab.text("You are registered: one seat is yours."))


def check_the_confirmation(message: EmailMessage, language: str, name: str) -> None:
    """The "you are registered" mail: its language, the QR code inside the HTML by `cid:`,
    the event's calendar file attached."""
    assert message["Content-Language"] == language
    text, html = text_part(message), html_part(message)
    assert WORDS[language]["confirmed"] in text and WORDS[language]["confirmed"] in html
    assert name in text
    images = [part for part in message.walk() if part.get_content_type() == "image/png"]
    assert len(images) == 1, [part.get_content_type() for part in message.walk()]
    assert images[0].get_content().startswith(b"\x89PNG\r\n\x1a\n")
    assert f'src="cid:{images[0]["Content-ID"].strip("<>")}"' in html
    (attached,) = message.iter_attachments()
    assert attached.get_content_type() == "text/calendar"
    assert attached.get_filename() == f"{EVENT}.ics"
    calendar = attached.get_content()
    assert "BEGIN:VEVENT" in calendar and EVENT_TITLE in calendar


def ask_for_a_link(tab: Tab, email: str, case: str) -> None:
    """From an ordinary page, the header's sign-in link, then the form for a mailed link."""
    page = tab.page
    page.goto(tab.site.url("/events"))
    header_link(tab, "Sign in").click()
    expect(page).to_have_url(re.compile(rf"/{tab.language}/sign-in$"))
    expect(page.get_by_role("heading", level=1)).to_have_text(tab.text("Sign in"))
    shoot(tab, "sign-in", case)
    page.get_by_label(tab.text("E-mail"), exact=True).fill(email)
    page.get_by_role("button", name=tab.text("Mail me a sign-in link")).click()
    expect(page.get_by_role("status")).to_contain_text(email)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_register_sign_in_elsewhere_by_mail_and_cancel_there(
        mail_site: MailSite, open_tab: Callable[..., Tab], backend: str, language: str,
        javascript: bool):
    inbox, email, name = mail_site.inbox, unique_email(), ATTENDEE[language]
    case = f"{backend}-{'js-on' if javascript else 'js-off'}"
    subjects = SUBJECTS[language]

    # A person, not signed in, registers in browser A.
    first = open_tab(javascript=javascript, language=language)
    register_from_the_event_page(first, name, email)
    check_the_confirmation(mail_to(inbox, email, subjects["confirmed"]), language, name)

    # In browser B (none of A's cookies) they ask for a sign-in link with the same address.
    other = open_tab(javascript=javascript, language=language)
    page = other.page
    ask_for_a_link(other, email, case)
    mailed = mail_to(inbox, email, subjects["sign-in"])
    assert mailed["Content-Language"] == language
    text = text_part(mailed)
    assert WORDS[language]["sign-in"] in text
    found = LINK.search(text)
    assert found, text
    link = found.group(0)
    assert link.startswith(mail_site.site.url(f"/{language}/sign-in/")), link

    # Opening the link shows a button, and signs nobody in.
    page.goto(link)
    expect(page.get_by_role("heading", level=2)).to_have_text(
        other.text("Sign in as %(email)s?") % {"email": email})
    expect(header_link(other, "Sign in")).to_be_visible()
    expect(header_link(other, "Account")).to_have_count(0)
    shoot(other, "link", case)
    page.get_by_role("button", name=other.text("Sign in"), exact=True).click()

    # Signed in: My registrations shows the one made in A, and the header offers the account.
    expect(page).to_have_url(re.compile(rf"/{language}/registrations$"))
    registration = page.locator(ACTIVE_ROW, has_text=EVENT_TITLE)
    expect(registration).to_have_count(1)
    header_link(other, "Account").click()
    expect(page.get_by_role("heading", level=2).first).to_have_text(
        other.text("Signed in as %(email)s") % {"email": email})
    shoot(other, "account", case)

    # It is cancelled there, through the review dialog.
    header_link(other, "My registrations").click()
    registration = page.locator(ACTIVE_ROW, has_text=EVENT_TITLE)
    expect(registration).to_have_count(1)
    registration.get_by_role("button", name=other.text("Cancel registration")).click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text(EVENT_TITLE)
    dialog.get_by_role("button", name=other.text("Cancel my registration")).click()
    expect(page.get_by_text(
        other.text("Your registration is cancelled and its seat is free again."))).to_be_visible()
    expect(page.locator(ACTIVE_ROW, has_text=EVENT_TITLE)).to_have_count(0)

    cancelled = mail_to(inbox, email, subjects["cancelled"])
    assert cancelled["Content-Language"] == language
    assert WORDS[language]["cancelled"] in text_part(cancelled)
