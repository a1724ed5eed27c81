"""An organizer of the site under test, set up as people do it: signed in with a link made for
them, owning an organization with a logo, a second member, an invitation waiting for an
answer, a draft, and a published event with attendees, one of them checked in at the door.

Shared by the browser tests that open the organizer pages: in a Playwright tab (`sign_in`,
`start_organization`), or over HTTP for a whole organization (`organizer_with_an_event`),
whose cookies a tab (`let_in`) or Lighthouse (`Organizer.headers`) then carries.
"""

from __future__ import annotations

import io
import re
import secrets
from contextlib import closing
from dataclasses import dataclass
from datetime import timedelta
from zoneinfo import ZoneInfo

from helpers import unique_email
from PIL import Image
from playwright.sync_api import expect
from servers import HttpVisitor
from suite_clock import suite_start

from webapp.domain.images import LOGO
from webapp.domain.images import renditions
from webapp.domain.tokens import CheckInCodes
from webapp.domain.tokens import hash_token
from webapp.storage import OrganizationLogo
from webapp.storage.sqlite import SQLiteStorage

from .lighthouse import Visit
from .lighthouse import mailed
from .lighthouse import path_of
from .visit import Site
from .visit import Tab

SECRET = b"server test secret"  # what `servers.gunicorn` gives the server
# A seeded event the organization is made to run (upcoming on the server's clock).
EVENT = "evt-design-tokens-taipei"
ORGANIZATION_NAME = "台北網頁開發者聚會"
DESCRIPTION = "每月一次，聊網頁標準與無障礙。"
TAIPEI = ZoneInfo("Asia/Taipei")


def sign_in_path(site: Site, email: str, language: str) -> str:
    """The page of a sign-in link made for `email` (the mail is tested elsewhere), good for a
    day of the server's clock, which starts at the suite's start."""
    token = secrets.token_urlsafe(24)
    with closing(SQLiteStorage.open(site.database)) as storage:
        storage.create_sign_in_link(hash_token(token), email, suite_start(),
                                    suite_start() + timedelta(days=1))
    return f"/{language}/sign-in/{token}"


def sign_in(tab: Tab, site: Site) -> None:
    """Sign the tab's visitor in with a link made for them, pressing the link page's button
    as a person does."""
    tab.page.goto(site.url(sign_in_path(site, unique_email(), tab.language)))
    tab.page.locator("main form button[type=submit]").click()
    expect(tab.page).to_have_url(site.url(f"/{tab.language}/registrations"))


def start_organization(tab: Tab, site: Site) -> str:
    """The signed-in visitor of the tab starts an organization through its form: its id."""
    tab.page.goto(site.url(f"/{tab.language}/organizer/organizations/new"))
    tab.page.get_by_label(tab.text("Organization name")).fill(ORGANIZATION_NAME)
    tab.page.locator("main form button[type=submit]").click()
    expect(tab.page).to_have_url(re.compile(r".*/organizations/org-[\w-]+$"))
    return tab.page.url.rsplit("/", 1)[1]


def run_event(site: Site, organization_id: str, event_id: str = EVENT) -> None:
    """Make the organization the one that runs a seeded event (what publishing one does)."""
    with closing(SQLiteStorage.open(site.database)) as storage:
        assert storage.set_event_organization(event_id, organization_id)


def give_logo(site: Site, organization_id: str, account_id: str) -> None:
    """Give the organization a logo (what its logo form does; the form itself is tested in
    tests/test_organization_logos.py): a square of two colours, its name as alt text."""
    picture = io.BytesIO()
    image = Image.new("RGB", (512, 512), (20, 70, 140))
    image.paste((250, 190, 40), (128, 128, 384, 384))
    image.save(picture, "PNG")
    made = renditions(picture.getvalue(), LOGO)
    with closing(SQLiteStorage.open(site.database)) as storage, storage.transaction():
        storage.set_organization_logo(
            OrganizationLogo(organization_id=organization_id, alt=ORGANIZATION_NAME,
                             digest=made.digest, updated_at=suite_start()),
            made.images, account_id)


def signed_in_visitor(site: Site, email: str) -> HttpVisitor:
    """A new HTTP visitor signed in as `email`, by its link's page and button."""
    visitor = HttpVisitor(site.base_url)
    link = sign_in_path(site, email, "en")
    visitor.open_page(link)
    assert visitor.post(link).status == 200, "the sign-in link was refused"
    return visitor


def registered(site: Site, name: str, event_id: str = EVENT) -> str:
    """Someone registers for the event as people do: the check-in code of their mail."""
    visitor = HttpVisitor(site.base_url)
    token = visitor.prepare_registration(event_id, name, unique_email())
    confirmed = visitor.confirm_registration(token).json()
    assert confirmed["status"] == "success", confirmed
    return CheckInCodes(SECRET).code_for(confirmed["data"]["registration"]["id"])


def draft_fields(title: str) -> dict[str, str]:
    """The event form's fields of an event three weeks after the server's clock starts."""
    starts = (suite_start() + timedelta(days=21)).astimezone(TAIPEI).replace(
        hour=19, minute=0, second=0, microsecond=0)
    return {
        "title": title, "summary": "一個晚上，把一份表單改到螢幕閱讀器也好用。",
        "description": "我們從一份真實的報名表單開始。\n\n帶筆電來。",
        "starts_at": starts.strftime("%Y-%m-%dT%H:%M"),
        "ends_at": (starts + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M"),
        "registration_deadline": (starts - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M"),
        "location": "taipei", "venue": "台北市大安區復興南路一段 390 號", "level": "beginner",
        "capacity": "30", "waitlist": "False", "price_amount": "0", "price_currency": "TWD",
        "language": "zh-Hant-TW"}


@dataclass(frozen=True)
class Organizer:
    """The owner of an organization, as set up by `organizer_with_an_event`, and the ids its
    pages' addresses name."""

    visitor: HttpVisitor
    organization: str
    event: str  # published and run by the organization, with attendees
    draft: str
    code: str  # the check-in code of an attendee not yet checked in

    def visit(self) -> Visit:
        """This organizer as Lighthouse opens pages: its Cookie, and the ids the organizer
        pages' addresses name."""
        cookie = "; ".join(f"{c.name}={c.value}" for c in self.visitor.cookies)
        return Visit(headers={"Cookie": cookie},
                     names={"organization": self.organization, "event": self.event,
                            "draft": self.draft})


def organizer_with_an_event(site: Site) -> Organizer:
    """An owner whose organization has a manager, an invitation waiting, a draft, and runs
    EVENT, where two people registered and one was checked in at the door."""
    owner = signed_in_visitor(site, unique_email())
    owner.open_page("/en/organizer/organizations/new")
    # urllib follows the answer's redirect: the text is the new organization's page.
    started = owner.post("/en/organizer/organizations",
                         {"name": ORGANIZATION_NAME, "description": DESCRIPTION})
    organization_id = the_first(r"/organizer/organizations/(org-[\w-]+)", started.text)
    home = f"/en/organizer/organizations/{organization_id}"
    manager_email = unique_email()
    invite(owner, home, manager_email)
    manager = signed_in_visitor(site, manager_email)
    link = path_of(mailed(site.database, "organization_invitation")["link"])
    manager.open_page(link)
    assert manager.post(link).status == 200, "the invitation was refused"
    invite(owner, home, unique_email())  # left waiting for an answer
    drafted = owner.post(f"{home}/events", draft_fields("無障礙網頁工作坊：從表單開始"))
    draft_id = the_first(r"/events/(evt-[a-z0-9-]+)", drafted.text)
    run_event(site, organization_id)
    # Its pages, and its event's, are checked as they look with a logo.
    give_logo(site, organization_id, "acc-browser-setup")
    codes = [registered(site, name) for name in ("王小明", "林小安")]
    door = f"{home}/events/{EVENT}/door"
    owner.open_page(door)
    assert owner.post(door, {"code": codes[0]}).status == 200
    return Organizer(owner, organization_id, EVENT, draft_id, codes[1])


def invite(owner: HttpVisitor, home: str, email: str) -> None:
    """The owner invites `email` as a manager from the organization's page at `home`."""
    owner.open_page(home)
    assert owner.post(f"{home}/invitations", {"email": email, "role": "manager"}).status == 200


def the_first(pattern: str, text: str) -> str:
    """The first group of the first match of `pattern` in `text`."""
    found = re.search(pattern, text)
    assert found, f"{pattern} is not on the page"
    return found.group(1)


def let_in(tab: Tab, organizer: Organizer) -> None:
    """The tab's browser carries the organizer's cookies: it is that organizer's."""
    tab.page.context.add_cookies([{"name": c.name, "value": c.value, "url": tab.site.base_url}
                                  for c in organizer.visitor.cookies if c.value is not None])
