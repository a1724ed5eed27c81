"""The organizer area walked by people in Chromium, through the real pages, with the mail
delivered to a real SMTP server (issue 30) — in Chinese with JavaScript on, and in English
with JavaScript off:

1. an owner signs in from the mailed link, starts an organization, drafts an event (in the
   walk's language), puts up its cover picture, previews it and publishes it, and invites a
   manager, who opens the mailed invitation, signs in by mail, is led back to it and joins;
2. a visitor finds it by a word of its title on the search page, through WebMCP (the page's
   search tool, where JavaScript runs) and over `/mcp` (the official MCP SDK), sees its
   cover, registers, and is mailed;
3. the manager moves its start, and the attendee is mailed what changed;
4. the manager exports the attendees: a CSV for Excel, its BOM first, and the attendee's
   name, which starts with "=", kept from becoming a formula;
5. at the door, the QR code of the attendee's mail shown to the manager's phone's camera
   (Chromium's fake one) checks them in, and a second scan is refused; without JavaScript,
   the code typed from the mail does the same;
6. the manager cancels the event: the attendee is mailed, and the event's page and its
   `.ics` say it is cancelled.

Every wait ends on a condition (Playwright's auto-waiting, a mail's arrival), never a pause.
The times are the server's, which start at the suite's instant. Each walk runs once on SQLite
and once on PostgreSQL.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
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
from PIL import Image
from playwright.sync_api import Browser
from playwright.sync_api import Locator
from playwright.sync_api import expect
from services import fresh_schema
from suite_clock import suite_start

from webapp.domain.images import MAX_UPLOAD_BYTES

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
SIGN_IN_LINK = re.compile(r"https?://\S+/sign-in/[\w-]+")
INVITATION_LINK = re.compile(r"https?://\S+/organizer/invitations/[\w-]+")
CHECK_IN_CODE = re.compile(r"\b[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}\b")


@dataclass(frozen=True)
class Walk:
    """Who walks and in which words: the pages' language, whether JavaScript runs, and the
    event they run. What the pages and mails say is written out (not read from the catalog
    the pages use), so a wrong translation fails the walk."""

    language: str
    javascript: bool
    word: str  # in this walk's title alone: the seeded events and the other walk never use it
    title: str
    text_language: str  # what the organizer says they write the event in
    summary: str
    description: str
    organization: str
    attendee: str  # what a spreadsheet would take for a formula
    alt: str
    reason: str
    organizer_area: str
    subjects: dict[str, str]


def _chinese() -> Walk:
    title, organization = "螢火蟲之夜：無障礙表單工作坊", "台北網頁無障礙社群"
    return Walk(
        language="zh-TW", javascript=True, word="螢火蟲", title=title,
        text_language="zh-Hant-TW",
        summary="一個晚上，把一份報名表單改到螢幕閱讀器也好用。",
        description="我們從一份真實的報名表單開始。\n\n請帶筆電來。",
        organization=organization, attendee="=陳小安",
        alt="講者在台上示範螢幕閱讀器，台下約三十位聽眾", reason="講者臨時生病，改期再通知。",
        organizer_area="主辦者專區",
        subjects={"sign-in": "你的WebMCP 社群活動登入連結", "confirmed": f"報名成功：{title}",
                  "changed": f"活動已變更：{title}", "cancelled": f"活動取消：{title}",
                  "invitation": f"邀請你加入「{organization}」（WebMCP 社群活動）"})


def _english() -> Walk:
    title, organization = "Kingfisher night: accessible forms workshop", "Taipei Web Access"
    return Walk(
        language="en", javascript=False, word="Kingfisher", title=title, text_language="en",
        summary="One evening to make a registration form work well with screen readers.",
        description="We start from a real registration form.\n\nBring a laptop.",
        organization=organization, attendee="=Ann Chen",
        alt="A speaker shows a screen reader to about thirty people",
        reason="The speaker is ill; a new date will follow.",
        organizer_area="organizer area",
        subjects={"sign-in": "Your sign-in link for WebMCP Events",
                  "confirmed": f"You're registered: {title}", "changed": f"Changed: {title}",
                  "cancelled": f"Cancelled: {title}",
                  "invitation": f"Join {organization} on WebMCP Events"})


WALKS = {"zh-TW-js-on": _chinese(), "en-js-off": _english()}


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


def a_photo() -> bytes:
    """A picture as a phone would take it: a JPEG larger than the cover's largest size."""
    image = Image.new("RGB", (1600, 1000), (30, 90, 60))
    image.paste((240, 200, 40), (600, 350, 1000, 650))
    out = io.BytesIO()
    image.save(out, "JPEG")
    return out.getvalue()


def hidden_named(tab: Tab, message: str, title: str) -> re.Pattern[str]:
    """What a screen reader hears of a link whose words name the event only to it (a visually
    hidden part): the message's translation without its markup, the parts joined by whatever
    space Chromium puts around the hidden one."""
    parts = re.split(r"<[^>]+>", tab.text(message) % {"title": title})
    return re.compile(r"\s*".join(re.escape(part.strip()) for part in parts if part.strip()))


def event_link(tab: Tab, walk: Walk, message: str) -> Locator:
    """On the organization's page, a link of the event's row, by what it is heard as."""
    return tab.page.get_by_role("link", name=hidden_named(tab, message, walk.title))


def sign_in_by_mail(tab: Tab, walk: Walk, mail_site: MailSite, email: str) -> None:
    """On the sign-in page, ask for a link for `email`, open the mailed one, press its
    button."""
    page = tab.page
    page.get_by_label(tab.text("E-mail"), exact=True).fill(email)
    page.get_by_role("button", name=tab.text("Mail me a sign-in link")).click()
    found = SIGN_IN_LINK.search(text_part(mail_to(mail_site.inbox, email,
                                                  walk.subjects["sign-in"])))
    assert found, "the sign-in mail carries no link"
    page.goto(found.group(0))
    page.get_by_role("button", name=tab.text("Sign in"), exact=True).click()
    expect(header_link(tab, "Account")).to_be_visible()


def invite_a_manager(owner: Tab, walk: Walk, mail_site: MailSite, email: str) -> str:
    """The owner invites `email` as a manager on the organization's page; the mailed link."""
    page = owner.page
    page.get_by_label(owner.text("Their e-mail address")).fill(email)
    page.get_by_label(owner.text("Manager"), exact=True).check()
    page.get_by_role("button", name=owner.text("Mail the invitation")).click()
    expect(page.locator("#invite-title ~ .member-list")).to_contain_text(email)
    mailed = text_part(mail_to(mail_site.inbox, email, walk.subjects["invitation"]))
    found = INVITATION_LINK.search(mailed)
    assert found, mailed
    return found.group(0)


def join_by_the_link(tab: Tab, walk: Walk, mail_site: MailSite, email: str, link: str
                     ) -> None:
    """Someone not signed in opens their invitation: signing in by mail leads back to it,
    and they accept, landing on the organization's page."""
    tab.page.goto(link)
    sign_in_by_mail(tab, walk, mail_site, email)
    tab.page.get_by_role("button", name=tab.text("Accept and join")).click()
    expect(tab.page.get_by_role("heading", level=1)).to_have_text(walk.organization)
    expect(tab.page.get_by_role("main")).to_contain_text(
        tab.text("Your role: %(role)s") % {"role": tab.text("Manager")})


def start_an_organization(tab: Tab, walk: Walk) -> str:
    """From the account page to the organizer area and a new organization; its page's path."""
    page = tab.page
    header_link(tab, "Account").click()
    page.get_by_role("link", name=walk.organizer_area, exact=True).click()
    page.get_by_role("link", name=tab.text("Start an organization")).click()
    page.get_by_label(tab.text("Organization name")).fill(walk.organization)
    page.get_by_role("button", name=tab.text("Start the organization")).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(walk.organization)
    return page.url.removeprefix(tab.site.base_url)


def expect_the_cover_shown(tab: Tab, walk: Walk) -> None:
    """The page shows the cover picture, loaded, described by its alt text."""
    cover = tab.page.locator(".event-cover img")
    cover.scroll_into_view_if_needed()  # loaded lazily, below a phone's first screen
    expect(cover).to_have_attribute("alt", walk.alt)
    expect(cover).to_have_js_property("complete", True)
    assert cover.evaluate("image => image.naturalWidth") > 0  # decoded, not a broken image
    assert re.search(r"/(600|1200)\.jpg$", cover.evaluate("image => image.currentSrc"))


def draft_preview_and_publish(tab: Tab, walk: Walk, starts: datetime) -> str:
    """Draft the event (the fields the form requires), put up its cover picture, check the
    preview, publish it; its id."""
    page = tab.page
    page.get_by_role("link", name=tab.text("Draft an event")).click()
    assert page.locator("[toolname]").count() == 0  # organizer pages offer agents nothing
    typed = {
        "Title": walk.title,
        "Summary, in one or two sentences": walk.summary,
        "Description": walk.description,
        "Starts (Taipei time)": local(starts),
        "Ends (Taipei time)": local(starts + timedelta(hours=2)),
        "Registration closes (Taipei time)": local(starts - timedelta(days=1)),
        "Venue": "台北市大安區復興南路一段 390 號",
        "Seats": "30", "Price (0: free)": "0"}
    chosen = {"The language you write this event in": walk.text_language,
              "City, or online": "taipei", "Level": "beginner",
              "When it is full, people may wait for a seat": "False"}
    for label, text in typed.items():
        page.get_by_label(tab.text(label), exact=True).fill(text)
    for label, value in chosen.items():
        page.get_by_label(tab.text(label), exact=True).select_option(value)
    page.get_by_role("button", name=tab.text("Save the draft")).click()

    expect(page.get_by_text(tab.text("Draft: only your organization sees it"))).to_be_visible()
    expect(page.get_by_role("heading", level=1)).to_have_text(walk.title)
    found = re.search(r"/events/(evt-[a-z0-9-]+)$", page.url)
    assert found, page.url

    # The cover: a phone's photo, cut and drawn anew by the site, shown on the preview.
    page.get_by_role("link", name=tab.text("Cover picture"), exact=True).click()
    page.get_by_label(tab.text("Cover picture (JPEG, PNG or WebP, at most %(megabytes)d MB)")
                      % {"megabytes": MAX_UPLOAD_BYTES // (1024 * 1024)}).set_input_files(
        {"name": "IMG_0412.jpg", "mimeType": "image/jpeg", "buffer": a_photo()})
    page.get_by_label(tab.text("What the picture shows (for people who cannot see it)")
                      ).fill(walk.alt)
    page.get_by_role("button", name=tab.text("Save the cover picture")).click()
    expect(page.locator(".event-cover figcaption")).to_contain_text(walk.alt)
    page.get_by_role("link", name=tab.text("← The event")).click()
    expect_the_cover_shown(tab, walk)

    page.get_by_role("button", name=tab.text("Publish")).click()
    expect(page.get_by_text(tab.text("Published"), exact=True)).to_be_visible()
    return found.group(1)


def find_it(tab: Tab, walk: Walk, event_id: str) -> None:
    """The visitor finds the event by its word: typed into the search page, through the page's
    search tool (WebMCP) where JavaScript runs, and over `/mcp` with the official SDK; then
    opens its page, whose cover is the one its links preview."""
    page = tab.page
    tab.open(f"/{walk.language}/events")
    page.get_by_label(tab.text("Keywords")).fill(walk.word)
    page.get_by_role("button", name=tab.text("Search"), exact=True).click()
    card = page.get_by_role("link", name=walk.title)
    expect(card).to_have_count(1)

    if tab.javascript:
        found = tab.result(tab.call("search_events", {"query": walk.word}))
        assert [event["id"] for event in found["data"]["events"]] == [event_id]

    async def over_mcp() -> Any:
        async with sdk_client(tab.site.base_url, language=walk.language) as client:
            return (await client.call_tool("search_events", {"query": walk.word})
                    ).structured_content
    assert [event["id"] for event in in_thread(over_mcp)["data"]["events"]] == [event_id]

    card.click()
    expect(page).to_have_url(re.compile(rf"/{walk.language}/events/{event_id}$"))
    expect_the_cover_shown(tab, walk)
    preview = page.locator("meta[property='og:image']").get_attribute("content") or ""
    assert re.search(rf"/events/{event_id}/cover/\w+/1200\.jpg$", preview), preview


def register(tab: Tab, walk: Walk, email: str) -> None:
    """The visitor registers from the event's page, as the walk's attendee."""
    tab.page.get_by_role("link", name=tab.text("Register now")).click()
    tab.page.get_by_label(tab.text("Attendee name")).fill(walk.attendee)
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


def move_the_start(tab: Tab, walk: Walk, organization: str, starts: datetime) -> None:
    """The organizer edits the published event's start (its end stays)."""
    page = tab.page
    page.goto(tab.site.url(organization))
    event_link(tab, walk, "Edit<span class=\"visually-hidden\"> %(title)s</span>").click()
    expect(page.get_by_label(tab.text("Title"))).to_have_value(walk.title)  # the form holds it
    page.get_by_label(tab.text("Starts (Taipei time)")).fill(local(starts))
    page.get_by_role("button", name=tab.text("Save"), exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(walk.title)  # the preview


def export_attendees(tab: Tab, walk: Walk, organization: str) -> bytes:
    """The organizer downloads the attendee list from its page; the file's bytes."""
    page = tab.page
    page.goto(tab.site.url(organization))
    event_link(tab, walk,
               "Attendees<span class=\"visually-hidden\"> of %(title)s</span>").click()
    with page.expect_download() as download:
        page.get_by_role("link", name=tab.text("Export all attendees (CSV)")).click()
    return Path(download.value.path()).read_bytes()


def open_the_door(tab: Tab, walk: Walk, organization: str) -> Locator:
    """From the organization's page to the event's door; where its answers show."""
    tab.page.goto(tab.site.url(organization))
    event_link(tab, walk, "Door<span class=\"visually-hidden\"> of %(title)s</span>").click()
    return tab.page.locator(".door-answer")


def scan_at_the_door(tab: Tab, walk: Walk, organization: str) -> None:
    """At the door, the camera reads the attendee's QR code: checked in; shown again: refused."""
    answer = open_the_door(tab, walk, organization)
    for headline in ("Checked in", "Already checked in"):
        tab.page.get_by_role("button", name=tab.text("Scan the QR code")).click()
        expect(answer).to_contain_text(tab.text(headline), timeout=15_000)
        expect(answer).to_contain_text(walk.attendee)


def type_at_the_door(tab: Tab, walk: Walk, organization: str, code: str) -> None:
    """At the door without JavaScript, the code typed from the mail: checked in; typed again:
    refused."""
    answer = open_the_door(tab, walk, organization)
    for headline in ("Checked in", "Already checked in"):
        tab.page.get_by_label(tab.text("Check-in code")).fill(code)
        tab.page.get_by_role("button", name=tab.text("Check in"), exact=True).click()
        expect(answer).to_contain_text(tab.text(headline))
        expect(answer).to_contain_text(walk.attendee)


def cancel_the_event(tab: Tab, walk: Walk, organization: str) -> None:
    """The organizer cancels the event from its row, saying why."""
    page = tab.page
    page.goto(tab.site.url(organization))
    event_link(tab, walk, "Cancel<span class=\"visually-hidden\"> %(title)s</span>").click()
    expect(page.get_by_role("main")).to_contain_text(tab.text(
        "We will mail %(whom)s that the event is cancelled.") % {
            "whom": tab.plural("%(num)d attendee", "%(num)d attendees", 1)})
    page.get_by_label(tab.text("Why it is cancelled (optional)")).fill(walk.reason)
    page.get_by_role("button", name=tab.text("Cancel the event and mail its attendees")).click()
    expect(page.get_by_text(tab.text("This event is cancelled."), exact=True)).to_be_visible()


@pytest.mark.parametrize("walk", WALKS.values(), ids=WALKS.keys())
def test_organizers_publish_run_and_cancel_an_event_a_visitor_found(
        walk: Walk, mail_site: MailSite, open_tab: Callable[..., Tab], chromium: Browser,
        tmp_path: Path):
    inbox = mail_site.inbox
    starts = (suite_start() + timedelta(days=21)).astimezone(TAIPEI).replace(
        hour=19, minute=0, second=0, microsecond=0)

    def person() -> Tab:
        return open_tab(javascript=walk.javascript, language=walk.language)

    # 1. The owner signs in from the mailed link, starts an organization, publishes, and
    #    invites a manager, who joins from the mailed invitation.
    owner = person()
    owner.page.goto(owner.site.url("/events"))
    header_link(owner, "Sign in").click()
    sign_in_by_mail(owner, walk, mail_site, unique_email())
    organization = start_an_organization(owner, walk)
    event_id = draft_preview_and_publish(owner, walk, starts)
    owner.page.goto(owner.site.url(organization))
    manager, manager_email = person(), unique_email()
    join_by_the_link(manager, walk, mail_site, manager_email,
                     invite_a_manager(owner, walk, mail_site, manager_email))

    # 2. A visitor finds it by a word of its title, and registers.
    visitor, email = person(), unique_email()
    find_it(visitor, walk, event_id)
    register(visitor, walk, email)
    confirmation = mail_to(inbox, email, walk.subjects["confirmed"])
    assert walk.attendee in text_part(confirmation)

    # 3. The manager moves the start half an hour later: the attendee is told what changed.
    move_the_start(manager, walk, organization, starts + timedelta(minutes=30))
    changed = text_part(mail_to(inbox, email, walk.subjects["changed"]))
    assert re.search(r"19:00.*→.*19:30", changed), changed

    # 4. The export opens in Excel as written: BOM first, the name never a formula.
    exported = export_attendees(manager, walk, organization)
    assert exported.startswith(codecs.BOM_UTF8)
    rows = list(csv.reader(io.StringIO(exported.decode("utf-8-sig"), newline="")))
    assert len(rows) == 2, rows  # the header, in the page's language, and the one attendee
    assert rows[0][:2] == [manager.text("Name"), manager.text("E-mail")]
    assert rows[1][0] == f"'{walk.attendee}" and email in rows[1]

    # 5. At the door the manager (their session carried over to a phone) checks the attendee
    #    in once: by the camera filming the mail's QR code, or by the code typed from it.
    if walk.javascript:
        video = y4m_of(qr_code_of(confirmation), tmp_path / "qr.y4m")
        with camera_showing(chromium, video) as camera:
            phone = camera.new_context(locale=walk.language, permissions=["camera"],
                                       storage_state=manager.page.context.storage_state())
            try:
                scan_at_the_door(Tab(phone.new_page(), mail_site.site, True, walk.language),
                                 walk, organization)
            finally:
                phone.close()
    else:
        code = CHECK_IN_CODE.search(text_part(confirmation))
        assert code, text_part(confirmation)
        type_at_the_door(manager, walk, organization, code.group(0))

    # 6. The manager cancels: the attendee is mailed, the page and the .ics say so.
    cancel_the_event(manager, walk, organization)
    assert walk.reason in text_part(mail_to(inbox, email, walk.subjects["cancelled"]))
    visitor.page.goto(mail_site.site.url(f"/{walk.language}/events/{event_id}"))
    expect(visitor.page.locator(".event-cancelled")).to_contain_text(visitor.text(
        "This event is cancelled. It will not take place, and registration is closed."))
    with visitor.page.expect_download() as download:
        visitor.page.get_by_role("link", name=visitor.text("Calendar file (.ics)")).click()
    assert "STATUS:CANCELLED" in Path(download.value.path()).read_text(encoding="utf-8")
