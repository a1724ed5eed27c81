"""Each search result is a card that is one link for people, while the choice of an event
stays the get_event_details tool's for agents (templates/events/_event_list.html): a tap
anywhere on a card opens the event, JavaScript or not, on a phone and a desktop; a screen
reader meets each title once, as a link, with no radio beside it; the agent still chooses
among the same events, by the same titles (its inputSchema is test_schemas.py's).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page
from playwright.sync_api import ViewportSize
from playwright.sync_api import expect

from .visit import Tab

pytestmark = pytest.mark.browser

SIZES: dict[str, ViewportSize] = {"phone": {"width": 390, "height": 844},
                                  "desktop": {"width": 1280, "height": 800}}
# What a screen reader says a name with: the roles of the nodes that only carry text.
TEXT_ROLES = {"StaticText", "InlineTextBox"}


def listed_titles(tab: Tab) -> dict[str, str]:
    """The events the page lists, id to title, as a JSON client is told them."""
    return {event["id"]: event["title"] for event in tab.ask("/events")["data"]["events"]}


def roles_named(page: Page, title: str) -> list[str]:
    """The roles of the nodes of Chromium's accessibility tree (what screen readers are given)
    named `title`, leaving out the text nodes that spell it."""
    session = page.context.new_cdp_session(page)
    nodes = session.send("Accessibility.getFullAXTree")["nodes"]
    session.detach()
    return [node["role"]["value"] for node in nodes
            if not node.get("ignored") and node.get("name", {}).get("value") == title
            and node["role"]["value"] not in TEXT_ROLES]


@pytest.mark.parametrize("size", SIZES)
def test_a_tap_anywhere_on_a_card_opens_its_event(tab, size):
    """Not on the title: on the card's corner, past its summary (JavaScript on and off)."""
    page = tab.page
    page.set_viewport_size(SIZES[size])
    tab.open("/events")
    titles = listed_titles(tab)
    event_id, title = list(titles.items())[-1]
    card = page.locator(".event-card", has=page.get_by_role("link", name=title, exact=True))
    box = card.bounding_box()
    assert box is not None
    card.scroll_into_view_if_needed()
    card.click(position={"x": box["width"] - 8, "y": box["height"] - 8})
    page.wait_for_url(f"**/events/{event_id}")
    expect(page.locator("h1")).to_have_text(title)


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_a_screen_reader_meets_each_title_once(js_tab):
    """In Chromium's accessibility tree each title names its heading and the link inside it
    (one thing said: "heading, link, title"), and nothing else: no radio of the same name.
    Playwright's aria snapshot of each card says the same."""
    page = js_tab.page
    js_tab.open("/events")
    titles = listed_titles(js_tab)
    for title in titles.values():
        assert roles_named(page, title) == ["heading", "link"], title
    cards = page.locator(".event-card")
    assert cards.count() == len(titles)
    for index, title in enumerate(titles.values()):
        snapshot = cards.nth(index).aria_snapshot()
        named = [line.strip().split(" ")[1] for line in snapshot.splitlines()
                 if f'"{title}"' in line]
        assert named == ["heading", "link"], snapshot
    expect(page.locator("#results").get_by_role("radio")).to_have_count(0)


def test_a_card_is_one_stop_for_the_keyboard_with_its_focus_ring_around_it(js_tab):
    """Tab goes from a card to the next, the focus ring drawn around the whole card."""
    page = js_tab.page
    js_tab.open("/events")
    links = page.locator(".event-card .event-title a")
    links.first.focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")  # from the keyboard, so :focus-visible
    page.keyboard.press("Tab")
    expect(links.nth(1)).to_be_focused()
    ring = "card => getComputedStyle(card).outlineStyle"
    assert page.locator(".event-card").nth(1).evaluate(ring) == "solid"
    assert page.locator(".event-card").nth(0).evaluate(ring) == "none"


def test_no_second_control_is_shown_beside_the_cards(tab):
    """Neither a radio nor the form's "Show details" button, JavaScript on or off; the radios
    are still in the form, one per card, for the agent."""
    page = tab.page
    tab.open("/events")
    expect(page.get_by_role("button", name=tab.text("Show details"))).to_have_count(0)
    radios = page.locator("#get_event_details input[type=radio]")
    assert radios.count() == page.locator(".event-card").count() > 0
    for index in range(radios.count()):
        box = radios.nth(index).bounding_box()
        assert box is not None and box["width"] <= 1 and box["height"] <= 1


def test_the_agent_still_chooses_among_the_cards(tab):
    """The tool offers the events on the cards, titled as they read, and an agent's call
    answers that event's details (JavaScript on: in the preview pane; off: its page)."""
    tab.open("/events")
    titles = listed_titles(tab)
    schema = tab.agent.tools()["get_event_details"].input_schema
    offered = {o["const"]: o["title"] for o in schema["properties"]["event_id"]["anyOf"]}
    assert offered == titles
    event_id = list(titles)[-1]
    details = tab.result(tab.call("get_event_details", {"event_id": event_id}))
    assert details["data"]["event"]["id"] == event_id
