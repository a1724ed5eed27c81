"""The flows as a person lives them, with a keyboard and a screen reader in mind: what the
review shows, where the focus goes after an answer, a modal dialog, what is announced.
"""

from __future__ import annotations

import json
import re
from datetime import date

import pytest
from helpers import unique_email
from playwright.sync_api import Locator
from playwright.sync_api import expect

from .visit import Held
from .visit import Tab

pytestmark = pytest.mark.browser

# A row of the active registrations on My registrations (the list the cancellation tool holds).
ACTIVE_ROW = "#prepare_registration_cancellation .registration-card"

# 200 seats: the module's registrations never fill it.
ROOMY_EVENT = "evt-webmcp-spec-reading"
ROOMY_EVENT_TITLE = "Reading the WebMCP Draft Together"
TYPO = "ann@exmaple.com"


def focused_text(tab: Tab) -> str:
    """The text of the element that has the focus."""
    text: str = tab.page.evaluate("document.activeElement.textContent")
    return " ".join(text.split())


def review(tab: Tab, name: str, email: str) -> None:
    """The person fills in the registration form and asks to review it."""
    tab.open(f"/events/{ROOMY_EVENT}/register")
    tab.page.get_by_label(tab.text("Attendee name")).fill(name)
    tab.page.get_by_label(tab.text("E-mail")).fill(email)
    tab.page.get_by_role("button", name=tab.text("Next: check your details")).click()


def test_the_review_shows_the_email_as_typed_and_the_form_keeps_it(tab):
    """A typo in the address can be caught: the review shows it in full (the agent's envelope
    keeps it masked), and the form still holds it to correct and review again."""
    review(tab, "Ann Lee", TYPO)
    shown = tab.page.locator(".review")
    shown.get_by_text(TYPO).wait_for()
    assert tab.page.get_by_label(tab.text("E-mail")).input_value() == TYPO
    assert tab.page.get_by_label(tab.text("Attendee name")).input_value() == "Ann Lee"

    prepared = tab.result(tab.call("prepare_event_registration",
                                   {"attendee_name": "Ann Lee", "email": TYPO}))
    assert prepared["data"]["review"]["email"] == "a***@exmaple.com"
    tab.page.locator(".review").get_by_text(TYPO).wait_for()


def test_a_bad_field_is_marked_and_focused_then_cleared_by_a_good_review(tab):
    """With or without JavaScript the server's field error marks the field (aria-invalid) and
    the focus goes to it; once the review succeeds, no stale error stays under the field."""
    review(tab, "Ann Lee", "ann@example")  # the browser lets it through
    email = tab.page.get_by_label(tab.text("E-mail"))
    error = tab.page.locator("#prepare_event_registration-email-error")
    error.get_by_text(tab.text("Enter an e-mail address such as name@example.com.")).wait_for()
    assert email.get_attribute("aria-invalid") == "true"
    if tab.javascript:
        # Without JavaScript the page comes back at its top, which is where a person starts.
        tab.page.wait_for_function(
            "() => document.activeElement && document.activeElement.name === 'email'")

    email.fill(unique_email())
    tab.page.get_by_role("button", name=tab.text("Next: check your details")).click()
    tab.page.get_by_text(tab.text("Check and confirm")).wait_for()
    assert error.text_content() == ""
    assert tab.page.get_by_label(tab.text("E-mail")).get_attribute("aria-invalid") is None


def test_confirming_says_so_once_and_the_message_takes_the_focus(js_tab):
    """One success message, not "already registered" beside "you are registered"; the focus
    goes to it, not to the top of the page."""
    review(js_tab, "Ann Lee", unique_email())
    js_tab.press(js_tab.text("Confirm registration"),
                 then_shows=js_tab.text("You are registered: one seat is yours."))
    main = js_tab.page.locator("main").inner_text()
    assert main.count(js_tab.text("You are registered: one seat is yours.")) == 1
    assert js_tab.text("You are already registered for this event.").split(".")[0] not in main
    js_tab.page.wait_for_function(
        "() => document.activeElement.classList.contains('notice--ok')")
    assert js_tab.text("You are registered: one seat is yours.") in focused_text(js_tab)


@pytest.mark.parametrize("language", ["en", "zh-TW"])
def test_on_a_phone_the_review_comes_into_view_and_takes_the_focus(js_tab):
    """The review arrives below the form: on a phone it is brought into view, whole, and takes
    the focus (as the confirmation after it does), so the person sees what to check."""
    page = js_tab.page
    page.set_viewport_size({"width": 390, "height": 844})
    review(js_tab, "Ann Lee", unique_email())
    page.locator(".review").wait_for()
    page.wait_for_function(
        "() => { const box = document.querySelector('.review').getBoundingClientRect();"
        " return box.top >= 0 && box.bottom <= innerHeight; }")
    page.wait_for_function("() => document.activeElement.classList.contains('review')")
    assert js_tab.text("Check and confirm") in focused_text(js_tab)


@pytest.mark.parametrize("javascript", [True, False])
def test_on_the_review_the_confirm_button_is_the_one_primary_action(open_tab, javascript):
    """The button that asked for the review turns quiet once the review shows (with htmx the
    form is not drawn again: the stylesheet does it), and the confirm button is the larger."""
    tab = open_tab(javascript=javascript)
    review(tab, "Ann Lee", unique_email())
    tab.page.locator(".review").wait_for()
    asked = tab.page.locator("#prepare_event_registration button[type=submit]")
    confirm = tab.page.locator(".review .confirm-form button")
    background = "button => getComputedStyle(button).backgroundColor"
    ink = "button => getComputedStyle(button).color"
    # Quiet: the accent is its text, no longer its background.
    assert asked.evaluate(background) != confirm.evaluate(background)
    assert asked.evaluate(ink) == confirm.evaluate(background)
    asked_box, confirm_box = asked.bounding_box(), confirm.bounding_box()
    assert asked_box is not None and confirm_box is not None
    assert confirm_box["height"] > asked_box["height"]


def open_cancel_dialog(tab: Tab) -> None:
    """A registered person asks to cancel their registration, on its row."""
    tab.register_as_person(ROOMY_EVENT)
    tab.open("/registrations")
    tab.page.locator(ACTIVE_ROW, has_text=ROOMY_EVENT_TITLE).get_by_role(
        "button", name=tab.text("Cancel registration")).click()
    tab.page.get_by_role("dialog").wait_for()


def test_the_cancel_dialog_is_modal_and_gives_the_focus_back(js_tab):
    """Tab stays in the dialog, the page behind is inert, Esc closes it and the focus returns
    to the button that opened it."""
    open_cancel_dialog(js_tab)
    page = js_tab.page
    assert page.evaluate("document.querySelector('dialog').matches(':modal')")
    # Past its last button the focus may leave for the browser's own controls (the body has it
    # then), never for the page behind.
    places = set()
    for _ in range(4):
        page.keyboard.press("Tab")
        places.add(page.evaluate("document.activeElement.closest('dialog') ? 'dialog'"
                                 " : document.activeElement.tagName"))
    assert "dialog" in places and places <= {"dialog", "BODY"}
    page.keyboard.press("Escape")
    page.get_by_role("dialog").wait_for(state="hidden")
    # The dialog's close event comes in a task of its own, after it is hidden.
    page.wait_for_function("() => !document.activeElement.closest('dialog')")
    assert focused_text(js_tab) == js_tab.text("Cancel registration")


def waiting_count(tab: Tab) -> Locator:
    """The link to what waits for the person's confirmation, with its count."""
    return tab.page.locator("#registrations-panel a.pending-count")


def test_keep_it_closes_the_dialog_without_javascript(open_tab):
    """"Keep it" posts: the page comes back without the dialog and with nothing waiting."""
    tab = open_tab(javascript=False)
    open_cancel_dialog(tab)
    expect(waiting_count(tab)).to_have_count(1)
    tab.page.get_by_role("button", name=tab.text("Keep it")).click()
    tab.page.get_by_role("dialog").wait_for(state="hidden")
    expect(waiting_count(tab)).to_have_count(0)
    tab.open("/registrations/pending")
    expect(tab.page.locator("form.confirm-form")).to_have_count(0)


@pytest.mark.parametrize("dismiss", ["Keep it", "Escape"])
def test_keep_it_drops_the_cancellation_and_gives_the_focus_back(js_tab, dismiss):
    """With htmx, "Keep it" (or Esc, which presses it) drops the prepared cancellation: the
    dialog closes, the count of what waits leaves the panel, the registration is still
    listed, and the focus returns to the button that opened the dialog."""
    open_cancel_dialog(js_tab)
    page = js_tab.page
    with page.expect_response(lambda response: response.url.endswith("/keep")):
        if dismiss == "Escape":
            page.keyboard.press("Escape")
        else:
            page.get_by_role("button", name=js_tab.text("Keep it")).click()
    page.get_by_role("dialog").wait_for(state="detached")
    expect(waiting_count(js_tab)).to_have_count(0)
    expect(page.locator(ACTIVE_ROW, has_text=ROOMY_EVENT_TITLE)).to_have_count(1)
    page.wait_for_function("() => document.activeElement !== document.body")
    assert focused_text(js_tab) == js_tab.text("Cancel registration")
    js_tab.open("/registrations")  # the panel as a new visit draws it
    expect(waiting_count(js_tab)).to_have_count(0)
    js_tab.open("/registrations/pending")
    expect(page.locator("form.confirm-form")).to_have_count(0)


def test_a_search_is_announced_in_one_short_line(js_tab):
    """The list is no live region (every keystroke would read it all again): a status line
    says "Searching…", then the answer's one sentence."""
    page = js_tab.page
    js_tab.open("/events")
    assert page.locator("[aria-live], [role=status]").evaluate_all(
        "nodes => nodes.map(node => node.id)") == ["search-status"]
    status = page.locator("#search-status")
    with page.expect_response(lambda response: "query=webmcp" in response.url):
        page.get_by_label(js_tab.text("Keywords")).fill("webmcp")
    page.wait_for_function(
        "() => document.querySelector('#search-status').textContent.includes('4')")
    assert status.text_content() == page.locator(".results-summary").text_content()


def test_a_search_pushes_a_clean_address(js_tab):
    """Only the conditions given end up in the address (and the history entry), for a
    person's search and an agent's: not every empty filter. (Without JavaScript the browser
    sends the form as it is.)"""
    js_tab.open("/events")
    js_tab.page.get_by_label(js_tab.text("Keywords")).fill("python")
    js_tab.page.wait_for_url("**/events?query=python")
    js_tab.result(js_tab.call("search_events", {"query": "webmcp"}))
    js_tab.page.wait_for_url("**/events?query=webmcp")


def test_paging_starts_the_list_at_its_top_and_says_where_it_is(js_tab):
    page = js_tab.page
    js_tab.open("/events")
    pages = -(-js_tab.ask("/events")["data"]["count"] // 10)
    where = js_tab.text("Page %(page)s of %(pages)s")
    assert page.locator(".pager-position").inner_text() == where % {"page": 1, "pages": pages}
    page.get_by_role("link", name=js_tab.text("Next"), exact=True).click()
    page.locator(".pager-position").get_by_text(where % {"page": 2, "pages": pages}).wait_for()
    page.wait_for_function("() => document.activeElement.classList.contains('results-summary')")
    assert page.evaluate("document.querySelector('#results').getBoundingClientRect().top") <= 1


def test_register_is_on_a_phones_first_screen(tab):
    tab.page.set_viewport_size({"width": 390, "height": 844})
    tab.open(f"/events/{ROOMY_EVENT}")
    box = tab.page.get_by_role("link", name=tab.text("Register now")).bounding_box()
    assert box is not None and box["y"] + box["height"] <= 844


def test_saved_can_be_undone_on_the_event_page(tab):
    tab.open(f"/events/{ROOMY_EVENT}")
    tab.press(tab.text("Save for later"), then_shows=tab.text("Saved ✓"))
    tab.press(tab.text("Remove from saved"), then_shows=tab.text("Removed from your saved list."))
    assert tab.page.get_by_role("button", name=tab.text("Save for later")).is_visible()


def test_on_a_phone_the_filters_fold_so_results_come_first(tab):
    """Folded as served, JavaScript on or off (no script folds them after the first paint,
    moving the results), also when the search uses one (its chip above the results says so);
    unfolded when one is wrong; always shown on a wide screen."""
    page = tab.page
    page.set_viewport_size({"width": 390, "height": 844})
    tab.open("/events")
    assert not page.get_by_label(tab.text("Location")).is_visible()
    first = page.locator(".event-card").first.bounding_box()
    assert first is not None and first["y"] < 844
    page.get_by_text(tab.text("Filters")).click()
    assert page.get_by_label(tab.text("Location")).is_visible()
    # The agent still has every filter.
    assert "location" in tab.agent.tools()["search_events"].input_schema["properties"]
    tab.open("/events?location=taipei")
    assert not page.get_by_label(tab.text("Location")).is_visible()
    condition = page.locator(".results-head .chip", has_text=tab.text("Taipei"))
    assert condition.is_visible() and condition.bounding_box()["y"] < 844
    tab.open("/events?date_from=yesterday")
    assert page.get_by_label(tab.text("From")).is_visible()
    page.set_viewport_size({"width": 1280, "height": 800})
    tab.open("/events")
    assert page.get_by_label(tab.text("Location")).is_visible()
    assert not page.get_by_text(tab.text("Filters"), exact=True).is_visible()


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_this_weekend_in_taipei_is_two_taps_on_a_phone(tab):
    """From the list of events, a tap on "This weekend" and one on "Taipei", each on the
    first screen of a phone, and the search holds both (the form shows them as chosen)."""
    page = tab.page
    page.set_viewport_size({"width": 390, "height": 844})
    tab.open("/events")
    taps = 0
    for label in ("This weekend", "Taipei"):
        link = page.locator("nav.quick-picks").get_by_role("link", name=tab.text(label),
                                                            exact=True)
        box = link.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 844, label
        with page.expect_navigation():
            link.click()
        taps += 1
    assert taps == 2
    assert page.locator("select[name=location]").input_value() == "taipei"
    first = date.fromisoformat(page.locator("input[name=date_from]").input_value())
    last = date.fromisoformat(page.locator("input[name=date_to]").input_value())
    assert {first.weekday(), last.weekday()} <= {5, 6} and last.weekday() == 6
    chosen = page.locator("nav.quick-picks a[aria-current=true]")
    expect(chosen).to_have_text([tab.text("This weekend"), tab.text("Taipei")])


SENDING = re.compile(r"\bhtmx-request\b")


def turning(button: Locator) -> bool:
    """Whether the stylesheet shows the button's spinner (its turning ::after)."""
    shown: bool = button.evaluate(
        "button => { const after = getComputedStyle(button, '::after');"
        " return after.content === '\"\"' && after.animationName === 'turn'; }")
    return shown


def test_a_sending_form_shows_it_and_cannot_be_sent_twice(js_tab):
    """While the answer is on its way, htmx disables the form's button (hx-disable) and marks
    the form (htmx-request), whose button then turns; pressing again sends nothing. Once
    answered, the button works again."""
    page = js_tab.page
    js_tab.open(f"/events/{ROOMY_EVENT}")
    # htmx would queue a second submit and send it once the first is answered, in the same
    # task as the first's htmx:finally:request: counted here, it cannot be missed.
    page.evaluate("""() => {
        window.sent = 0; window.answered = 0;
        document.addEventListener('htmx:before:request', () => window.sent++);
        document.addEventListener('htmx:finally:request', () => window.answered++);
    }""")
    form = page.locator("form[toolname=save_event]")
    button = form.locator("button")
    save = Held(page, f"/events/{ROOMY_EVENT}/save")
    button.click()
    expect(button).to_be_disabled()
    expect(form).to_have_class(SENDING)
    assert turning(button)
    button.evaluate("button => button.click()")  # a second press
    save.release()
    page.wait_for_function("() => window.answered >= 1")
    assert page.evaluate("window.sent") == 1
    page.get_by_text(js_tab.text("Saved to your list.")).wait_for()
    expect(form).not_to_have_class(SENDING)
    expect(page.get_by_role("button", name=js_tab.text("Saved ✓"))).to_be_enabled()
    assert not turning(button)


def test_a_search_on_its_way_shows_it(js_tab):
    """A search's indicators are its form and the results (hx-indicator): the button turns
    and is disabled, the list dims, the status line says "Searching…"; all undone once the
    answer is in."""
    page = js_tab.page
    js_tab.open("/events")
    form = page.locator("form[toolname=search_events]")
    button = form.get_by_role("button", name=js_tab.text("Search"))
    results = page.locator("#results")
    search = Held(page, "/events")
    page.get_by_label(js_tab.text("Keywords")).fill("webmcp")
    expect(form).to_have_class(SENDING)
    expect(results).to_have_class(SENDING)
    expect(button).to_be_disabled()
    expect(page.locator("#search-status")).to_have_text(js_tab.text("Searching…"))
    assert turning(button)
    search.release()
    expect(page.locator("#search-status")).not_to_have_text(js_tab.text("Searching…"))
    expect(form).not_to_have_class(SENDING)
    expect(results).not_to_have_class(SENDING)
    expect(button).to_be_enabled()


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_an_events_link_is_copied_in_one_tap_or_there_to_copy_by_hand(tab):
    """With JavaScript, the copy button puts the event's address on the clipboard and says
    so; without it, the button stays hidden and the address is there to select."""
    page = tab.page
    tab.open(f"/events/{ROOMY_EVENT}")
    address = page.get_by_label(tab.text("Link to this event")).input_value()
    assert address == tab.site.url(f"/{tab.language}/events/{ROOMY_EVENT}")
    line = page.get_by_role("link", name=tab.text("Share on LINE"))
    assert line.is_visible()
    copy = page.get_by_role("button", name=tab.text("Copy link"))
    if not tab.javascript:
        assert copy.count() == 0  # hidden: no button that cannot work
        return
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    copy.click()
    expect(page.locator(".share-status")).to_have_text(tab.text("Link copied"))
    assert page.evaluate("navigator.clipboard.readText()") == address


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_the_form_an_agent_is_using_says_so_and_nothing_moves(js_tab):
    """While the visitor's agent uses a form, its outline says so in the page's language; the
    sentence sits on the outline, so the form's fields and the list below it stay where they
    were (in the flow, it pushed them a line down as the call began, and back up after)."""
    page = js_tab.page
    page.set_viewport_size({"width": 390, "height": 844})  # the results below the form
    js_tab.open("/events")
    form = page.locator("form[toolname=search_events]")
    watched = [form.get_by_label(js_tab.text("Keywords")), page.locator("#results")]
    where = [part.bounding_box() for part in watched]
    search = Held(page, "/events")
    call = js_tab.agent.start("search_events", {"query": "webmcp"})
    expect(form).to_have_attribute("aria-busy", "true")  # its request is sent, and held
    sentence = form.get_attribute("data-agent-at-work")  # the extension's, translated
    assert sentence
    assert said_before(form) == json.dumps(sentence, ensure_ascii=False)
    assert [part.bounding_box() for part in watched] == where
    # On its way, what the form holds is dimmed, never the sentence (the form's own opacity).
    assert opacity(form) == "1"
    assert {opacity(part) for part in form.locator(":scope > *").all()} == {"0.75"}
    search.release()
    assert js_tab.agent.answer(call).status == "Completed"
    assert said_before(form) == "none"


def opacity(element: Locator) -> str:
    """The element's own computed opacity (an ancestor's does not show in it)."""
    value: str = element.evaluate("element => getComputedStyle(element).opacity")
    return value


def said_before(form: Locator) -> str:
    """What the stylesheet puts before the form (its ::before content, as computed)."""
    content: str = form.evaluate("form => getComputedStyle(form, '::before').content")
    return content
