"""The door page's camera, as Chromium sees it: the QR code of a registration mail shown to a
fake camera (a Y4M video made from the code, as `mail.parts.qr_png` draws it) checks the
attendee in, and a second scan is refused (issue 30, the door).

Headless Chromium on Linux has no BarcodeDetector, so this walks the vendored jsQR path.
"""

from __future__ import annotations

import re
from contextlib import closing
from pathlib import Path

import pytest
from playwright.sync_api import Browser
from playwright.sync_api import expect
from servers import HttpVisitor

from webapp.domain.tokens import CheckInCodes
from webapp.mail.parts import qr_png
from webapp.storage.sqlite import SQLiteStorage

from .camera import camera_showing
from .camera import y4m_of
from .test_organizer_pages import sign_in
from .visit import Site
from .visit import Tab

pytestmark = pytest.mark.browser

EVENT = "evt-design-tokens-taipei"
SECRET = b"server test secret"  # what `servers.gunicorn` gives the server


def registered_code(site: Site, email: str = "scan.me@example.com") -> str:
    """Someone registers for the event as people do; the code of their registration mail."""
    visitor = HttpVisitor(site.base_url)
    token = visitor.prepare_registration(EVENT, "王小明", email)
    registration = visitor.confirm_registration(token).json()["data"]["registration"]
    return CheckInCodes(SECRET).code_for(registration["id"])


def test_a_scanned_qr_code_checks_in_once(chromium: Browser, site: Site, tmp_path: Path):
    code = registered_code(site)
    video = y4m_of(qr_png(code), tmp_path / "qr.y4m")
    with camera_showing(chromium, video) as camera:
        context = camera.new_context(locale="en", permissions=["camera"])
        tab = Tab(context.new_page(), site, javascript=True)
        sign_in(tab, site)
        tab.page.goto(site.url("/en/organizer/organizations/new"))
        tab.page.get_by_label("Organization name").fill("台北網頁開發者聚會")
        tab.page.locator("main form button[type=submit]").click()
        expect(tab.page).to_have_url(re.compile(r".*/organizations/org-[\w-]+$"))
        organization_id = tab.page.url.rsplit("/", 1)[1]
        with closing(SQLiteStorage.open(site.database)) as storage:
            assert storage.set_event_organization(EVENT, organization_id)
        tab.page.goto(site.url(
            f"/en/organizer/organizations/{organization_id}/events/{EVENT}/door"))
        assert tab.page.locator("[toolname]").count() == 0
        expect(tab.page.locator("#check_in-code")).to_be_focused()
        answer = tab.page.locator(".door-answer")
        tab.page.get_by_role("button", name="Scan the QR code").click()
        expect(answer).to_contain_text("Checked in", timeout=15_000)
        expect(answer).to_contain_text("王小明")
        expect(tab.page.locator(".door-counts")).to_contain_text("1 checked in of 1")
        # The form is ready for the next code, and the same QR code is refused.
        expect(tab.page.locator("#check_in-code")).to_have_value("")
        tab.page.get_by_role("button", name="Scan the QR code").click()
        expect(answer).to_contain_text("Already checked in", timeout=15_000)
        expect(answer).to_contain_text("by you")
        context.close()


def test_a_lost_answer_is_said_and_pressing_again_never_checks_in_twice(open_tab, site: Site):
    """The check-in reaches the site but its answer is lost on the way back: the door says the
    connection failed, keeps the code, and a second press answers "already checked in"."""
    code = registered_code(site, "lost.answer@example.com")
    tab = open_tab(language="en")
    sign_in(tab, site)
    tab.page.goto(site.url("/en/organizer/organizations/new"))
    tab.page.get_by_label("Organization name").fill("台北網頁開發者聚會")
    tab.page.locator("main form button[type=submit]").click()
    expect(tab.page).to_have_url(re.compile(r".*/organizations/org-[\w-]+$"))
    organization_id = tab.page.url.rsplit("/", 1)[1]
    with closing(SQLiteStorage.open(site.database)) as storage:
        assert storage.set_event_organization(EVENT, organization_id)
    door = site.url(f"/en/organizer/organizations/{organization_id}/events/{EVENT}/door")
    tab.page.goto(door)

    def lose_the_answer(route) -> None:
        route.fetch()  # the site checks the attendee in…
        route.abort("connectionreset")  # …and the answer never arrives

    tab.page.route(door, lose_the_answer)
    tab.page.locator("#check_in-code").fill(code.lower())
    tab.page.get_by_role("button", name="Check in", exact=True).click()
    failed = tab.page.locator("#door-connection")
    expect(failed).to_be_visible()
    expect(failed).to_contain_text("the connection failed")
    expect(tab.page.locator("#check_in-code")).to_have_value(code.lower())
    tab.page.unroute(door)
    tab.page.get_by_role("button", name="Check in", exact=True).click()
    answer = tab.page.locator(".door-answer")
    expect(answer).to_contain_text("Already checked in")
    expect(answer).to_contain_text("by you")
    expect(failed).to_be_hidden()
    with closing(SQLiteStorage.open(site.database)) as storage:
        assert storage.door_counts(EVENT)[0] >= 1
