"""axe-core finds nothing in the states people reach, at desktop and phone sizes: a refused
search, the lists, a preview, the event page, a refused form, the review, the confirmation, the
modal cancel dialog, the calendar address; a full event's waitlist (its page, the review of
joining, joined, the place on My registrations) and a seat it offers, in Chinese and English
(on My registrations, on what waits, the event's page); a mail's manage link, signing in (the
page, a refused address, a link sent, the link's page, signed in, the account page, a link that
no longer works); and the organizer area in Chinese and English (the dashboard, a new
organization, an organization's page with its people, invitations and audit log, a new event's
form empty and refused, the edit form, a draft's preview, the attendee list, the door empty,
after a check-in and after a refused code, the cancel confirmation) with the organization's
public page.

axe runs in the page through Playwright (axe-playwright-python bundles axe-core), so it needs
JavaScript: the states are reached with it on (a tab without it cannot run axe at all).
What it reports is listed rule by rule with the elements concerned.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator

import pytest
from axe_playwright_python.sync_playwright import Axe
from helpers import unique_email
from playwright.sync_api import ViewportSize

from .lighthouse import full_event_with_a_waitlist
from .lighthouse import mailed
from .lighthouse import path_of
from .lighthouse import release_the_held_seat
from .organizer_setup import Organizer
from .organizer_setup import let_in
from .organizer_setup import organizer_with_an_event
from .visit import Site
from .visit import Tab

pytestmark = pytest.mark.browser

# A row of the active registrations on My registrations (the list the cancellation tool holds).
ACTIVE_ROW = "#prepare_registration_cancellation .registration-card"

EVENT = "evt-webmcp-spec-reading"  # 200 seats
EVENT_TITLE = "Reading the WebMCP Draft Together"
WAITLIST_EVENT = "evt-python-study-taichung"  # full (every seat held), its waitlist on
SIZES: dict[str, ViewportSize] = {"desktop": {"width": 1280, "height": 800},
                                  "phone": {"width": 390, "height": 844}}
AXE = Axe()


def violations(tab: Tab) -> list[str]:
    """What axe finds on the page as it is now: rule, then the elements."""
    found = AXE.run(tab.page).response["violations"]
    return [f"{v['id']}: {[node['target'] for node in v['nodes']]}" for v in found]


def register_and_review(tab: Tab) -> Iterator[str]:
    tab.open(f"/events/{EVENT}/register")
    tab.page.get_by_label(tab.text("Attendee name")).fill("Ann Lee")
    tab.page.get_by_label(tab.text("E-mail")).fill("ann@example")  # the browser lets it through
    tab.press(tab.text("Next: check your details"),
              then_shows=tab.text("Enter an e-mail address such as name@example.com."))
    yield "a refused field"
    tab.page.get_by_label(tab.text("E-mail")).fill(unique_email())
    tab.press(tab.text("Next: check your details"), then_shows=tab.text("Check and confirm"))
    yield "the review"
    tab.press(tab.text("Confirm registration"),
              then_shows=tab.text("You are registered: one seat is yours."))
    yield "the confirmation"
    tab.open("/registrations")
    tab.page.locator(ACTIVE_ROW, has_text=EVENT_TITLE).get_by_role(
        "button", name=tab.text("Cancel registration")).click()
    tab.page.get_by_role("dialog").wait_for()
    yield "the cancel dialog"
    tab.open("/registrations")
    tab.press(tab.text("Make a calendar address"), then_shows=tab.text("Private calendar address"))
    yield "the calendar address"


def join_the_waitlist(tab: Tab) -> Iterator[str]:
    tab.open(f"/events/{WAITLIST_EVENT}")
    tab.page.get_by_role("link", name=tab.text("Join the waitlist")).wait_for()
    yield "a full event with a waitlist"
    tab.open(f"/events/{WAITLIST_EVENT}/register")
    tab.page.get_by_label(tab.text("Attendee name")).fill("Ann Lee")
    tab.page.get_by_label(tab.text("E-mail")).fill(unique_email())
    tab.press(tab.text("Next: check your details"),
              then_shows=tab.text("Check and join the waitlist"))
    yield "the review of joining"
    tab.press(tab.text("Join the waitlist"), then_shows=tab.text("All my registrations"))
    yield "joined"
    tab.open("/registrations")
    tab.page.get_by_role("button", name=tab.text("Leave the waitlist")).wait_for()
    yield "the place in line"


def offered_a_seat(tab: Tab) -> Iterator[str]:
    """The person joins a full event's waitlist; its held seat is released, so the seat is
    offered to them (held until a time) with Accept and Decline."""
    event = full_event_with_a_waitlist(tab.site.database)
    tab.open(f"/events/{event.id}/register")
    tab.page.get_by_label(tab.text("Attendee name")).fill("林小安")
    tab.page.get_by_label(tab.text("E-mail")).fill(unique_email())
    tab.press(tab.text("Next: check your details"),
              then_shows=tab.text("Check and join the waitlist"))
    tab.press(tab.text("Join the waitlist"), then_shows=tab.text("All my registrations"))
    release_the_held_seat(tab.site.database, event)
    tab.open("/registrations")
    tab.page.get_by_role("button", name=tab.text("Accept the seat")).wait_for()
    yield "a seat offered, on My registrations"
    tab.open("/registrations/pending")
    tab.page.get_by_role("button", name=tab.text("Accept the seat")).wait_for()
    yield "a seat offered, on what waits"
    tab.open(f"/events/{event.id}")
    tab.page.get_by_text(tab.text("A seat is held for you")).first.wait_for()
    yield "a seat offered, the event's page"


def search_and_look(tab: Tab) -> Iterator[str]:
    tab.open("/events?level=guru&date_from=soon")
    tab.page.locator(".error-list").wait_for()
    yield "a refused search"
    tab.open("/events")
    yield "the events list"
    # People open an event's page from its card; the preview pane shows an agent's choice.
    first = tab.page.locator("#get_event_details input[name=event_id]").first
    tab.result(tab.call("get_event_details", {"event_id": first.get_attribute("value")}))
    tab.page.locator("#preview h2").wait_for()
    yield "a preview"
    tab.page.get_by_role("link", name=tab.text("Next"), exact=True).click()
    tab.page.locator(".pager-position").get_by_text("2").wait_for()
    yield "the second page"
    tab.open(f"/events/{EVENT}")
    tab.press(tab.text("Save for later"), then_shows=tab.text("Saved ✓"))
    yield "a saved event's page"


def sign_in(tab: Tab) -> Iterator[str]:
    tab.open("/sign-in")
    yield "the sign-in page"
    address = tab.page.get_by_role("textbox", name=tab.text("E-mail"))
    address.fill("ann@example")  # the browser lets it through
    tab.press(tab.text("Mail me a sign-in link"),
              then_shows=tab.text("Enter an e-mail address such as name@example.com."))
    yield "a refused address"
    email = unique_email()
    tab.register_as_person(EVENT, email=email)
    tab.open(path_of(mailed(tab.site.database, "registration_confirmed")["manageUrl"]))
    tab.page.get_by_role("button", name=tab.text("Cancel this registration…")).wait_for()
    yield "a manage link"
    tab.open("/sign-in")
    address.fill(email)
    tab.press(tab.text("Mail me a sign-in link"), then_shows=tab.text("Sign in"))
    tab.page.locator(".notice--ok").wait_for()
    yield "a link sent"
    tab.open(path_of(mailed(tab.site.database, "sign_in_link")["link"]))
    yield "the link's page"
    tab.press(tab.text("Sign in"), then_shows=EVENT_TITLE)
    yield "signed in, the registrations"
    tab.open("/account")
    tab.page.get_by_text(email).first.wait_for()
    yield "the account page"
    tab.open("/sign-in/a-link-that-never-was")
    yield "a link that no longer works"


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("walk", [search_and_look, register_and_review, join_the_waitlist,
                                  sign_in],
                         ids=["finding", "registering", "waiting", "signing in"])
def test_axe_finds_nothing(js_tab: Tab, size: str, walk: Callable[[Tab], Iterator[str]]):
    js_tab.page.set_viewport_size(SIZES[size])
    found = {state: violations(js_tab) for state in walk(js_tab)}
    assert found and all(not problems for problems in found.values()), found


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_axe_finds_nothing_when_a_waitlist_offers_a_seat(js_tab: Tab, size: str):
    js_tab.page.set_viewport_size(SIZES[size])
    found = {state: violations(js_tab) for state in offered_a_seat(js_tab)}
    assert len(found) == 3
    assert {state: problems for state, problems in found.items() if problems} == {}


@pytest.fixture(scope="module")
def organizer(site: Site) -> Organizer:
    """The owner of an organization with people, a draft and an event with attendees."""
    return organizer_with_an_event(site)


def organize(tab: Tab, organizer: Organizer) -> Iterator[str]:
    """The organizer's pages, in the tab's language, as the organization's owner."""
    area = f"/{tab.language}/organizer"
    home = f"{area}/organizations/{organizer.organization}"
    event = f"{home}/events/{organizer.event}"
    arrive(tab, f"{area}/")
    yield "the dashboard"
    arrive(tab, f"{area}/organizations/new")
    yield "a new organization"
    arrive(tab, home)
    tab.page.locator("#audit-title").wait_for()
    yield "the organization's page"
    arrive(tab, f"{home}/events/new")
    yield "a new event's form"
    # As a browser that lets every field through: the site's own refusal, each field's error.
    tab.page.locator("main form.stacked-form").evaluate("form => { form.noValidate = true; }")
    tab.press(tab.text("Save the draft"),
              then_shows=tab.text("Please correct the fields marked below."))
    yield "a refused new event"
    arrive(tab, f"{event}/edit")
    yield "the edit form"
    arrive(tab, f"{home}/events/{organizer.draft}")
    yield "a draft's preview"
    arrive(tab, f"{event}/attendees")
    yield "the attendee list"
    arrive(tab, f"{event}/door")
    yield "the door"
    check_in(tab, organizer.code)
    tab.page.locator(".door-answer--checked_in, .door-answer--already").wait_for()
    yield "a check-in"
    check_in(tab, "NOPE-NOPE-NOPE")
    tab.page.locator(".door-answer--not_found, .door-answer--invalid_input").wait_for()
    yield "a refused code"
    arrive(tab, f"{event}/cancel")
    yield "the cancel confirmation"
    arrive(tab, f"/{tab.language}/organizations/{organizer.organization}")
    yield "the organization in public"


def arrive(tab: Tab, path: str) -> None:
    """Open an organizer's page, which must be there (a page not found would pass axe too)."""
    answer = tab.page.goto(tab.site.url(path))
    assert answer is not None and answer.status == 200, path


def check_in(tab: Tab, code: str) -> None:
    """The door's person types a code and presses the button."""
    tab.page.get_by_label(tab.text("Check-in code")).fill(code)
    tab.page.get_by_role("button", name=tab.text("Check in"), exact=True).click()


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_axe_finds_nothing_on_the_organizer_pages(js_tab: Tab, organizer: Organizer, size: str):
    let_in(js_tab, organizer)
    js_tab.page.set_viewport_size(SIZES[size])
    found = {state: violations(js_tab) for state in organize(js_tab, organizer)}
    assert found
    assert {state: problems for state, problems in found.items() if problems} == {}
