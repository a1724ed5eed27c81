"""*My registrations* as a person uses it: each row's quiet "Cancel registration" opens the
same review dialog the prepare_registration_cancellation tool leads to, JavaScript on
(htmx, a modal dialog) or off (a POST and the page it redirects to), while the agent's tool
offers what it did before (its inputSchema is test_schemas.py's).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator
from playwright.sync_api import expect

from .visit import Held
from .visit import Tab

pytestmark = pytest.mark.browser

# 200 seats each: the module's registrations never fill them.
ROOMY = {"evt-webmcp-spec-reading": "Reading the WebMCP Draft Together",
         "evt-htmx-online": "Hypermedia-Driven Apps with htmx"}


def row(tab: Tab, title: str) -> Locator:
    """The active registration's row on *My registrations* (the list the tool's form holds)."""
    return tab.page.locator("#prepare_registration_cancellation .registration-card",
                            has_text=title)


def registered_twice(tab: Tab) -> dict[str, str]:
    """The person registers for both roomy events: registration id to event title."""
    return {tab.register_as_person(event_id): title for event_id, title in ROOMY.items()}


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_a_person_cancels_from_a_row(tab):
    registrations = registered_twice(tab)
    (kept, kept_title), (cancelled, title) = registrations.items()
    tab.open("/registrations")
    tools = tab.agent.tools()
    choice = tools["prepare_registration_cancellation"].input_schema["properties"]
    assert list(choice) == ["registration_id"]
    assert set(choice["registration_id"]["enum"]) == {kept, cancelled}
    row(tab, title).get_by_role("button", name=tab.text("Cancel registration")).click()
    dialog = tab.page.get_by_role("dialog")
    expect(dialog).to_contain_text(title)
    expect(dialog).not_to_contain_text(kept_title)
    dialog.get_by_role("button", name=tab.text("Cancel my registration")).click()
    expect(tab.page.get_by_text(
        tab.text("Your registration is cancelled and its seat is free again."))).to_be_visible()
    expect(row(tab, title)).to_have_count(0)
    expect(row(tab, kept_title)).to_have_count(1)
    states = {r["id"]: r["state"] for r in
              tab.ask("/registrations/plans")["data"]["registrations"]}
    assert (states[kept], states[cancelled]) == ("active", "cancelled")


def test_a_rows_button_waits_while_its_review_is_on_its_way(js_tab):
    """Disabled from the press until the answer (htmx's hx-disable), so a second press
    prepares no second review."""
    (_, title), _ = registered_twice(js_tab).items()
    page = js_tab.page
    js_tab.open("/registrations")
    # Counted in the page: htmx would send a queued second press in the same task as the
    # first's htmx:finally:request, so once that has run, the count is final.
    page.evaluate("""() => {
        window.sent = 0; window.answered = 0;
        document.addEventListener('htmx:before:request', () => window.sent++);
        document.addEventListener('htmx:finally:request', () => window.answered++);
    }""")
    review = Held(page, "/registrations/cancellation")
    button = row(js_tab, title).get_by_role("button", name=js_tab.text("Cancel registration"))
    button.click()
    expect(button).to_be_disabled()
    button.evaluate("button => button.click()")  # a second press
    review.release()
    page.wait_for_function("() => window.answered >= 1")
    assert page.evaluate("window.sent") == 1
    expect(page.get_by_role("dialog")).to_contain_text(title)
    expect(button).to_be_enabled()
