"""The organizer area walked by people, in Chinese, in Chromium, through the real pages, with
the mail delivered to a real SMTP server (issue 30):

1. an owner signs in from the mailed link, starts an organization, drafts an event in
   Chinese, previews it and publishes it, and invites a manager, who opens the mailed
   invitation, signs in by mail, is led back to it and joins;
2. a visitor finds it by a Chinese word of its title on the search page, through WebMCP (the
   page's search tool) and over `/mcp` (the official MCP SDK), registers, and is mailed;
3. the manager moves its start, and the attendee is mailed what changed;
4. the manager exports the attendees: a CSV for Excel, its BOM first, and the attendee's
   name, which starts with "=", kept from becoming a formula;
5. at the door, the QR code of the attendee's mail shown to the manager's phone's camera
   (Chromium's fake one) checks them in, and a second scan is refused;
6. the manager cancels the event: the attendee is mailed, and the event's page and its
   `.ics` say it is cancelled.

Every wait ends on a condition (Playwright's auto-waiting, a mail's arrival), never a pause.
The times are the server's, which start at the suite's instant. It walks once on SQLite and
once on PostgreSQL.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Callable
from collections.abc import Iterator
from datetime import datetime
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from helpers import unique_email
from mcp_sdk import in_thread
from mcp_sdk import sdk_client
from playwright.sync_api import Browser
from playwright.sync_api import Locator
from playwright.sync_api import expect
from services import fresh_schema
from suite_clock import suite_start

from .camera import camera_showing
from .camera import y4m_of
from .mail_site import MailSite
from .mail_site import mail_to
from .mail_site import serving_with_mail
from .mail_site import text_part
from .test_account_flow import header_link
from .visit import Site
from .visit import Tab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TAIPEI = ZoneInfo("Asia/Taipei")
LANGUAGE = "zh-TW"
WORD = "螢火蟲"  # in this title alone: the seeded events never use it
TITLE = f"{WORD}之夜：無障礙表單工作坊"
ORGANIZATION = "台北網頁無障礙社群"
ATTENDEE = "=陳小安"  # what a spreadsheet would take for a formula
# What the Chinese pages and mails say, written out (not read from the catalog the pages use).
ORGANIZER_AREA = "主辦者專區"
SUBJECTS = {"sign-in": "你的WebMCP 社群活動登入連結", "confirmed": f"報名成功：{TITLE}",
            "changed": f"活動已變更：{TITLE}", "cancelled": f"活動取消：{TITLE}",
            "invitation": f"邀請你加入「{ORGANIZATION}」（WebMCP 社群活動）"}
SIGN_IN_LINK = re.compile(r"https?://\S+/sign-in/[\w-]+")
INVITATION_LINK = re.compile(r"https?://\S+/organizer/invitations/[\w-]+")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def mail_site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[MailSite]:
    """The site on a fresh database of each backend, with its mail delivered to a real SMTP
    server."""
    folder = tmp_path_factory.mktemp(f"organizer-walk-{request.param}")
    if request.param == "postgresql":
        database = fresh_schema(request.getfixturevalue("postgres_database"))
    else:
        database = str(folder / "events.sqlite")
    with serving_with_mail(database, folder) as served:
        yield served


@pytest.fixture(scope="module")
def site(mail_site: MailSite) -> Site:
    """The browser fixtures' site (tests/browser/conftest.py): this module's, with its mail."""
    return mail_site.site


def local(moment: datetime) -> str:
    """A time as a person types it into a date-time control (Taipei time)."""
    return moment.strftime("%Y-%m-%dT%H:%M")


def hidden_named(tab: Tab, message: str, title: str) -> re.Pattern[str]:
    """What a screen reader hears of a link whose words name the event only to it (a visually
    hidden part): the message's translation without its markup, the parts joined by whatever
    space Chromium puts around the hidden one."""
    parts = re.split(r"<[^>]+>", tab.text(message) % {"title": title})
    return re.compile(r"\s*".join(re.escape(part.strip()) for part in parts if part.strip()))


def event_link(tab: Tab, message: str) -> Locator:
    """On the organization's page, a link of the event's row, by what it is heard as."""
    return tab.page.get_by_role("link", name=hidden_named(tab, message, TITLE))


def sign_in_by_mail(tab: Tab, mail_site: MailSite, email: str) -> None:
    """On the sign-in page, ask for a link for `email`, open the mailed one, press its
    button."""
    page = tab.page
    page.get_by_label(tab.text("E-mail"), exact=True).fill(email)
    page.get_by_role("button", name=tab.text("Mail me a sign-in link")).click()
    found = SIGN_IN_LINK.search(text_part(mail_to(mail_site.inbox, email, SUBJECTS["sign-in"])))
    assert found, "the sign-in mail carries no link"
    page.goto(found.group(0))
    page.get_by_role("button", name=tab.text("Sign in"), exact=True).click()
    expect(header_link(tab, "Account")).to_be_visible()


def invite_a_manager(owner: Tab, mail_site: MailSite, email: str) -> str:
    """The owner invites `email` as a manager on the organization's page; the mailed link."""
    page = owner.page
    page.get_by_label(owner.text("Their e-mail address")).fill(email)
    page.get_by_label(owner.text("Manager"), exact=True).check()
    page.get_by_role("button", name=owner.text("Mail the invitation")).click()
    expect(page.locator("#invite-title ~ .member-list")).to_contain_text(email)
    mailed = text_part(mail_to(mail_site.inbox, email, SUBJECTS["invitation"]))
    found = INVITATION_LINK.search(mailed)
    assert found, mailed
    return found.group(0)


def join_by_the_link(tab: Tab, mail_site: MailSite, email: str, link: str) -> None:
    """Someone not signed in opens their invitation: signing in by mail leads back to it,
    and they accept, landing on the organization's page."""
    tab.page.goto(link)
    sign_in_by_mail(tab, mail_site, email)
    tab.page.get_by_role("button", name=tab.text("Accept and join")).click()
    expect(tab.page.get_by_role("heading", level=1)).to_have_text(ORGANIZATION)
    expect(tab.page.get_by_role("main")).to_contain_text(
        tab.text("Your role: %(role)s") % {"role": tab.text("Manager")})


def start_an_organization(tab: Tab) -> str:
    """From the account page to the organizer area and a new organization; its page's path."""
    page = tab.page
    header_link(tab, "Account").click()
    page.get_by_role("link", name=ORGANIZER_AREA).click()
    page.get_by_role("link", name=tab.text("Start an organization")).click()
    page.get_by_label(tab.text("Organization name")).fill(ORGANIZATION)
    page.get_by_role("button", name=tab.text("Start the organization")).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(ORGANIZATION)
    return page.url.removeprefix(tab.site.base_url)


def draft_preview_and_publish(tab: Tab, starts: datetime) -> str:
    """Draft the event in Chinese (the fields the form requires), check its preview, publish
    it; its id."""
    page = tab.page
    page.get_by_role("link", name=tab.text("Draft an event")).click()
    assert page.locator("[toolname]").count() == 0  # organizer pages offer agents nothing
    typed = {
        "Title": TITLE,
        "Summary, in one or two sentences": "一個晚上，把一份報名表單改到螢幕閱讀器也好用。",
        "Description": "我們從一份真實的報名表單開始。\n\n請帶筆電來。",
        "Starts (Taipei time)": local(starts),
        "Ends (Taipei time)": local(starts + timedelta(hours=2)),
        "Registration closes (Taipei time)": local(starts - timedelta(days=1)),
        "Venue": "台北市大安區復興南路一段 390 號",
        "Seats": "30", "Price (0: free)": "0"}
    chosen = {"City, or online": "taipei", "Level": "beginner",
              "When it is full, people may wait for a seat": "False"}
    for label, text in typed.items():
        page.get_by_label(tab.text(label), exact=True).fill(text)
    for label, value in chosen.items():
        page.get_by_label(tab.text(label), exact=True).select_option(value)
    page.get_by_role("button", name=tab.text("Save the draft")).click()

    expect(page.get_by_text(tab.text("Draft: only your organization sees it"))).to_be_visible()
    expect(page.get_by_role("heading", level=1)).to_have_text(TITLE)
    found = re.search(r"/events/(evt-[a-z0-9-]+)$", page.url)
    assert found, page.url
    page.get_by_role("button", name=tab.text("Publish")).click()
    expect(page.get_by_text(tab.text("Published"), exact=True)).to_be_visible()
    return found.group(1)


def find_it_three_ways(tab: Tab, event_id: str) -> None:
    """The visitor finds the event by WORD: typed into the search page, through the page's
    search tool (WebMCP), and over `/mcp` with the official SDK; then opens its page."""
    page = tab.page
    tab.open(f"/{LANGUAGE}/events")
    page.get_by_label(tab.text("Keywords")).fill(WORD)
    page.get_by_role("button", name=tab.text("Search"), exact=True).click()
    card = page.get_by_role("link", name=TITLE)
    expect(card).to_have_count(1)

    found = tab.result(tab.call("search_events", {"query": WORD}))
    assert [event["id"] for event in found["data"]["events"]] == [event_id]

    async def over_mcp() -> Any:
        async with sdk_client(tab.site.base_url, language=LANGUAGE) as client:
            return (await client.call_tool("search_events", {"query": WORD})).structured_content
    assert [event["id"] for event in in_thread(over_mcp)["data"]["events"]] == [event_id]

    card.click()
    expect(page).to_have_url(re.compile(rf"/{LANGUAGE}/events/{event_id}$"))


def register(tab: Tab, email: str) -> None:
    """The visitor registers from the event's page, as ATTENDEE."""
    tab.page.get_by_role("link", name=tab.text("Register now")).click()
    tab.page.get_by_label(tab.text("Attendee name")).fill(ATTENDEE)
    tab.page.get_by_label(tab.text("E-mail")).fill(email)
    tab.press(tab.text("Next: check your details"), then_shows=tab.text("Check and confirm"))
    tab.press(tab.text("Confirm registration"),
              then_shows=tab.text("You are registered: one seat is yours."))


def qr_code_of(confirmation: EmailMessage) -> bytes:
    """The check-in QR code the confirmation mail shows (its one PNG)."""
    images = [part for part in confirmation.walk() if part.get_content_type() == "image/png"]
    assert len(images) == 1, [part.get_content_type() for part in confirmation.walk()]
    picture: bytes = images[0].get_content()
    return picture


def move_the_start(tab: Tab, organization: str, starts: datetime) -> None:
    """The organizer edits the published event's start (its end stays)."""
    page = tab.page
    page.goto(tab.site.url(organization))
    event_link(tab, "Edit<span class=\"visually-hidden\"> %(title)s</span>").click()
    expect(page.get_by_label(tab.text("Title"))).to_have_value(TITLE)  # the form holds it
    page.get_by_label(tab.text("Starts (Taipei time)")).fill(local(starts))
    page.get_by_role("button", name=tab.text("Save"), exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(TITLE)  # back on the preview


def export_attendees(tab: Tab, organization: str) -> bytes:
    """The organizer downloads the attendee list from its page; the file's bytes."""
    page = tab.page
    page.goto(tab.site.url(organization))
    event_link(tab, "Attendees<span class=\"visually-hidden\"> of %(title)s</span>").click()
    with page.expect_download() as download:
        page.get_by_role("link", name=tab.text("Export all attendees (CSV)")).click()
    return Path(download.value.path()).read_bytes()


def check_in_at_the_door(tab: Tab, organization: str) -> None:
    """At the door, the camera reads the attendee's QR code: checked in; shown again: refused."""
    page = tab.page
    page.goto(tab.site.url(organization))
    event_link(tab, "Door<span class=\"visually-hidden\"> of %(title)s</span>").click()
    answer = page.locator(".door-answer")
    page.get_by_role("button", name=tab.text("Scan the QR code")).click()
    expect(answer).to_contain_text(tab.text("Checked in"), timeout=15_000)
    expect(answer).to_contain_text(ATTENDEE)
    page.get_by_role("button", name=tab.text("Scan the QR code")).click()
    expect(answer).to_contain_text(tab.text("Already checked in"), timeout=15_000)
    expect(answer).to_contain_text(ATTENDEE)


def cancel_the_event(tab: Tab, organization: str) -> None:
    """The organizer cancels the event from its row, saying why."""
    page = tab.page
    page.goto(tab.site.url(organization))
    event_link(tab, "Cancel<span class=\"visually-hidden\"> %(title)s</span>").click()
    expect(page.get_by_role("main")).to_contain_text(tab.text(
        "We will mail %(num)d attendee that the event is cancelled.") % {"num": 1})
    page.get_by_label(tab.text("Why it is cancelled (optional)")).fill("講者臨時生病，改期再通知。")
    page.get_by_role("button", name=tab.text("Cancel the event and mail its attendees")).click()
    expect(page.get_by_text(tab.text("This event is cancelled."), exact=True)).to_be_visible()


def test_organizers_publish_run_and_cancel_an_event_a_visitor_found(
        mail_site: MailSite, open_tab: Callable[..., Tab], chromium: Browser, tmp_path: Path):
    inbox = mail_site.inbox
    starts = (suite_start() + timedelta(days=21)).astimezone(TAIPEI).replace(
        hour=19, minute=0, second=0, microsecond=0)

    # 1. The owner signs in from the mailed link, starts an organization, publishes, and
    #    invites a manager, who joins from the mailed invitation.
    owner = open_tab(language=LANGUAGE)
    owner.page.goto(owner.site.url("/events"))
    header_link(owner, "Sign in").click()
    sign_in_by_mail(owner, mail_site, unique_email())
    organization = start_an_organization(owner)
    event_id = draft_preview_and_publish(owner, starts)
    owner.page.goto(owner.site.url(organization))
    manager, manager_email = open_tab(language=LANGUAGE), unique_email()
    join_by_the_link(manager, mail_site, manager_email,
                     invite_a_manager(owner, mail_site, manager_email))

    # 2. A visitor finds it by a Chinese word of its title, three ways, and registers.
    visitor, email = open_tab(language=LANGUAGE), unique_email()
    find_it_three_ways(visitor, event_id)
    register(visitor, email)
    confirmation = mail_to(inbox, email, SUBJECTS["confirmed"])
    assert ATTENDEE in text_part(confirmation)

    # 3. The manager moves the start half an hour later: the attendee is told what changed.
    move_the_start(manager, organization, starts + timedelta(minutes=30))
    changed = text_part(mail_to(inbox, email, SUBJECTS["changed"]))
    assert re.search(r"19:00.*→.*19:30", changed), changed

    # 4. The export opens in Excel as written: BOM first, the name never a formula.
    exported = export_attendees(manager, organization)
    assert exported.startswith(codecs.BOM_UTF8)
    rows = list(csv.reader(io.StringIO(exported.decode("utf-8-sig"), newline="")))
    assert len(rows) == 2, rows  # the header, in the page's language, and the one attendee
    assert rows[0][:2] == [manager.text("Name"), manager.text("E-mail")]
    assert rows[1][0] == f"'{ATTENDEE}" and email in rows[1]

    # 5. At the door, on a phone whose camera films the mail's QR code, the manager
    #    (their session carried over) checks the attendee in once.
    video = y4m_of(qr_code_of(confirmation), tmp_path / "qr.y4m")
    with camera_showing(chromium, video) as camera:
        phone = camera.new_context(locale=LANGUAGE, permissions=["camera"],
                                   storage_state=manager.page.context.storage_state())
        try:
            check_in_at_the_door(Tab(phone.new_page(), mail_site.site, True, LANGUAGE),
                                 organization)
        finally:
            phone.close()

    # 6. The manager cancels: the attendee is mailed, the page and the .ics say so.
    cancel_the_event(manager, organization)
    assert "講者臨時生病" in text_part(mail_to(inbox, email, SUBJECTS["cancelled"]))
    visitor.page.goto(mail_site.site.url(f"/{LANGUAGE}/events/{event_id}"))
    expect(visitor.page.locator(".event-cancelled")).to_contain_text(visitor.text(
        "This event is cancelled. It will not take place, and registration is closed."))
    with visitor.page.expect_download() as download:
        visitor.page.get_by_role("link", name=visitor.text("Calendar file (.ics)")).click()
    assert "STATUS:CANCELLED" in Path(download.value.path()).read_text(encoding="utf-8")
