"""What a person copies into another application (an agent's access token and configuration,
their calendar address), on a phone: the page never grows wider than the screen, its buttons
keep their words whole, and one tap copies the exact text and says so; without JavaScript
the text is there to copy by hand.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import expect

from .visit import LOCALES
from .visit import Tab

pytestmark = pytest.mark.browser

# The narrowest phones still sold, and the usual one (an iPhone's 390 CSS pixels).
PHONE_WIDTHS = (320, 390)
PHONE_HEIGHT = 844


def a_new_agent(tab: Tab) -> None:
    """The person connects an agent: the page shows its token and configuration once, and
    lists the connection with its Disconnect button."""
    tab.open("/agents")
    tab.page.get_by_role("button", name=tab.text("Connect an agent")).click()
    tab.page.locator("#access-token").wait_for()


def a_new_calendar_address(tab: Tab) -> None:
    """The person makes the private address of their registrations' calendar feed."""
    tab.open("/registrations")
    tab.press(tab.text("Make a calendar address"), then_shows=tab.text("Private calendar address"))


STATES: dict[str, Callable[[Tab], None]] = {
    "a new agent": a_new_agent,
    "a new calendar address": a_new_calendar_address,
}

# Each button's text, as lines on the screen: a line box per distinct top of its text.
BUTTON_LINES = """() => [...document.querySelectorAll("button, .button")]
  .filter(button => button.getClientRects().length > 0)
  .map(button => {
    const range = document.createRange();
    range.selectNodeContents(button);
    const tops = new Set([...range.getClientRects()].filter(r => r.width > 0)
                         .map(r => Math.round(r.top)));
    return [button.textContent.trim(), tops.size];
  })"""


@pytest.mark.parametrize("width", PHONE_WIDTHS)
@pytest.mark.parametrize("language", LOCALES)
@pytest.mark.parametrize("state", STATES)
def test_a_phone_never_scrolls_sideways_and_buttons_keep_their_words(tab: Tab, width: int,
                                                                      state: str):
    """A token, a configuration or an address as long as a line scrolls or wraps in its own
    box: the page stays as wide as the screen, and no button breaks its label over more
    than two lines (a squeezed table once broke 中斷連接 one character per line)."""
    tab.page.set_viewport_size({"width": width, "height": PHONE_HEIGHT})
    STATES[state](tab)
    widths = tab.page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    assert widths[0] <= widths[1], widths
    lines = dict(tab.page.evaluate(BUTTON_LINES))
    assert lines and all(count <= 2 for count in lines.values()), lines


# What one tap copies: the state that shows it, the element holding it, the button and what
# the status line then says.
COPIES = {
    "the access token": (a_new_agent, "#access-token", "Copy the token", "Token copied"),
    "the configuration": (a_new_agent, "#agent-configuration", "Copy the configuration",
                          "Configuration copied"),
    "the calendar address": (a_new_calendar_address, "#calendar-address", "Copy the address",
                             "Address copied"),
}


@pytest.mark.parametrize("language", LOCALES)
@pytest.mark.parametrize("copied", COPIES)
def test_one_tap_copies_the_exact_text_and_says_so(tab: Tab, copied: str):
    """With JavaScript the button puts exactly the text shown on the clipboard and its
    status line (a live region) says so; focusing the text selects all of it. Without
    JavaScript the button is hidden (it could not work) and the text is in a readonly box."""
    reach, holder, button_label, done = COPIES[copied]
    page = tab.page
    reach(tab)
    box = page.locator(holder)
    is_field = box.evaluate("element => element.matches('input')")
    text = box.input_value() if is_field else box.text_content()
    assert text and text.strip() == text
    if is_field:
        assert box.get_attribute("readonly") is not None
    button = page.get_by_role("button", name=tab.text(button_label))
    if not tab.javascript:
        assert button.count() == 0  # hidden: no button that cannot work
        return
    box.focus()
    selected = ("element => element.value.slice(element.selectionStart, element.selectionEnd)"
                if is_field else "() => getSelection().toString()")
    assert box.evaluate(selected) == text
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    button.click()
    status = page.locator(f"#{button.get_attribute('data-status')}")
    expect(status).to_have_text(tab.text(done))
    assert status.get_attribute("role") == "status"
    assert page.evaluate("navigator.clipboard.readText()") == text
