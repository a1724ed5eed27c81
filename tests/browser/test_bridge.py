"""The JS bridge with htmx: an agent's call is one request, logged as the agent's, and when the
answer arrives the page already offers what it describes (so the next call can follow at once).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Route

from .agent import Tool

pytestmark = pytest.mark.browser

# Not among the events /events lists first, so only the new results can offer it.
LATER_EVENT = "evt-k8s-production"
# htmx's own requests (those not sent for an agent) wait until the agent's save_event is under
# way, and the save waits until htmx has handled each of them: a request htmx sent for an
# agent's fill would land on the page while the save is pending, every time.
HOLD_HTMX_UNTIL_THE_SAVE = """
(() => {
  const fetchNow = window.fetch;
  let startSave;
  const saveStarted = new Promise((resolve) => { startSave = resolve; });
  let unhandled = 0;
  let allHandled = () => {};
  document.addEventListener("htmx:finally:request", () => {
    unhandled -= 1;
    if (unhandled <= 0) { allHandled(); }
  });
  window.fetch = (input, init = {}) => {
    const byAgent = (init.headers || {})["WebMCP-Agent-Invoked"] === "true";
    if (!byAgent) {
      unhandled += 1;
      return saveStarted.then(() => fetchNow(input, init));
    }
    if (String(input).endsWith("/save")) {
      const handled = unhandled <= 0 ? Promise.resolve()
        : new Promise((resolve) => { allHandled = resolve; });
      startSave();
      return handled.then(() => fetchNow(input, init));
    }
    return fetchNow(input, init);
  };
})();
"""
# A request the test sends itself after the page's: every request sent before it is seen then.
MARKER = "/health?marker"


class Fetches:
    """What htmx and the bridge fetch (not the page's own assets), in the order they are sent.

    The tab's clock must be installed before its page opens (see `settled`).
    """

    def __init__(self, page):
        self.page = page
        self.sent = []
        page.on("request", self._remember)

    def _remember(self, request) -> None:
        if request.resource_type == "fetch":
            self.sent.append(request)

    def settled(self) -> list[str]:
        """The paths fetched so far, and answered, once htmx's `delay:` triggers have fired.

        The page's clock jumps past the longest delay, so a request held back by one goes now;
        then a marker request is sent, after which nothing sent earlier can still appear.
        """
        self.page.clock.run_for(longest_htmx_delay(self.page) + 1)
        with self.page.expect_request(lambda request: request.url.endswith(MARKER)) as marker:
            self.page.evaluate("url => { fetch(url); }", MARKER)
        before = self.sent[:self.sent.index(marker.value)]
        for request in before:
            request.response()  # wait for the answer: the server has logged the request
        return [urlsplit(request.url).path for request in before]


def test_an_answer_arrives_once_the_page_offers_what_it_describes(js_tab):
    js_tab.open("/events")
    found = js_tab.call("search_events", {"query": "kubernetes"})
    assert [e["id"] for e in found.output["data"]["events"]] == [LATER_EVENT]
    assert event_ids_offered(found.page_tools["get_event_details"]) == [LATER_EVENT]
    shown = js_tab.call("get_event_details", {"event_id": LATER_EVENT})
    assert "save_event" in shown.page_tools  # "call save_event to keep it", says the answer


def test_a_search_updates_the_result_lists_tool_in_place(js_tab):
    """A search morphs the results: the result list's tool form stays the same element and
    Chromium updates its choices, where a form put in anew is registered only once the next
    frame is drawn (an agent's answer waits for that)."""
    page = js_tab.page
    js_tab.open("/events")
    page.evaluate("() => { window.listed = document.querySelector('#results form[toolname]'); }")
    found = js_tab.call("search_events", {"query": "kubernetes"})
    assert event_ids_offered(found.page_tools["get_event_details"]) == [LATER_EVENT]
    assert page.evaluate("() => document.querySelector('#results form[toolname]') === listed")


# How often the bridge asks Chromium for its tools (`getTools()`), and who had the focus when
# htmx finished its swap. The warm-up asks once the page is idle, before any call.
COUNT_TOOL_LISTS = """
(() => {
  window.toolLists = 0;
  const context = document.modelContext;
  const getTools = context.getTools.bind(context);
  context.getTools = () => { window.toolLists++; return getTools(); };
  document.addEventListener("htmx:after:swap", () => {
    window.focusedAtSwap = document.activeElement.className;
  });
})();
"""
ROOMY_EVENT = "evt-webmcp-spec-reading"  # 200 seats: a review is always prepared


def test_an_answer_that_changes_no_tool_does_not_wait_for_the_tools(js_tab):
    """Preparing a registration shows the review beside the form and clears the form's error
    messages, which htmx marks with its swap's classes: no tool changed, so the answer does
    not ask Chromium for its tools (asking lays the page out, on the agent's time). The
    review asks for the focus ([autofocus]) and gets it once the agent has its answer, not
    within the swap. A search, which changes the result list's tool, does ask."""
    page = js_tab.page
    page.add_init_script(COUNT_TOOL_LISTS)
    js_tab.open(f"/events/{ROOMY_EVENT}/register")
    page.wait_for_function("() => window.toolLists >= 1")  # the warm-up's
    page.evaluate("() => { window.toolLists = 0; }")
    answer = js_tab.call("prepare_event_registration",
                         {"attendee_name": "Ann Lee", "email": "ann@example.com"})
    assert answer.output["status"] == "confirmation_required"
    assert page.evaluate("window.toolLists") == 0
    assert page.evaluate("window.focusedAtSwap") != "review"
    page.wait_for_function("() => document.activeElement.classList.contains('review')")
    js_tab.open("/events")
    page.wait_for_function("() => window.toolLists >= 1")
    page.evaluate("() => { window.toolLists = 0; }")
    js_tab.call("search_events", {"query": "kubernetes"})
    assert page.evaluate("window.toolLists") >= 1


def test_the_same_tool_can_be_called_again_at_once(js_tab):
    """The swap after a save keeps the save form (a morph): replacing it would cancel a call."""
    js_tab.open(f"/events/{LATER_EVENT}")
    answers = [js_tab.call("save_event") for _ in range(3)]
    assert [a.status for a in answers] == ["Completed"] * 3
    assert [a.output["data"]["alreadySaved"] for a in answers] == [False, True, True]


def test_a_change_the_page_cannot_show_is_still_answered_as_made(js_tab):
    """Once the site has answered, the agent gets that answer, even when the page cannot show
    it (here the answer's HX-Retarget is no valid selector): the save went through, and the
    agent must not hear that the site was unreachable and nothing was changed."""
    js_tab.open(f"/events/{LATER_EVENT}")

    def retargeted(route: Route) -> None:
        response = route.fetch()
        route.fulfill(response=response, headers={**response.headers, "hx-retarget": "#["})

    js_tab.page.route(lambda url: urlsplit(url).path.endswith("/save"), retargeted)
    saved = js_tab.call("save_event")
    assert (saved.status, saved.output["status"]) == ("Completed", "success")
    assert saved.output["data"]["alreadySaved"] is False
    js_tab.page.unroute_all()
    assert js_tab.call("save_event").output["data"]["alreadySaved"] is True


# htmx's conveniences for people must not answer an agent's fill with a second request: one
# call, one request. The bridge holds each fill of a tool form for a task to learn whose it is
# (holdFillsUntilWeKnowWhoMadeThem, in webmcp-bridge.js): the next two tests check what it keeps
# from an agent, test_people_still_get_active_search and
# test_a_persons_fill_reaches_every_listener_once_as_it_happened what it lets through.


def test_an_agents_search_sets_off_no_active_search(js_tab):
    """The search form's active search (htmx, on `input`) stays still for an agent's fill."""
    js_tab.page.clock.install()
    js_tab.open("/events")
    fetches = Fetches(js_tab.page)
    js_tab.call("search_events", {"query": "kubernetes"})
    assert fetches.settled() == ["/en/events"]


def test_an_agents_choice_does_not_also_show_the_event(js_tab):
    """The result list's "show the chosen event" (htmx, on `change`) stays still for an agent's
    choice: the bridge's request alone fills the preview pane."""
    js_tab.page.clock.install()
    js_tab.open("/events")
    fetches = Fetches(js_tab.page)
    listed = js_tab.page.locator("#results input[name=event_id]").last.get_attribute("value")
    js_tab.call("get_event_details", {"event_id": listed})
    assert fetches.settled() == ["/en/events/details"]


def test_a_late_htmx_request_cannot_cancel_the_agents_next_call(js_tab):
    """Were htmx to answer an agent's fill with a request of its own, a late one would swap the
    preview pane while the agent's save_event on it is pending, and Chromium would cancel that
    call ("Tool execution cancelled, since tool definition was updated")."""
    js_tab.page.add_init_script(HOLD_HTMX_UNTIL_THE_SAVE)
    js_tab.open("/events")
    js_tab.call("search_events", {"query": "webmcp"})
    js_tab.call("get_event_details", {"event_id": "evt-webmcp-intro"})
    saved = js_tab.call("save_event")
    assert (saved.status, saved.error_text) == ("Completed", None)


def test_the_activity_log_names_the_agent(js_tab):
    js_tab.page.clock.install()
    js_tab.open("/events")
    fetches = Fetches(js_tab.page)
    js_tab.call("search_events", {"query": "kubernetes"})
    js_tab.call("get_event_details", {"event_id": LATER_EVENT})
    js_tab.call("save_event")  # the first write makes the visitor whose activity is logged
    js_tab.call("search_events", {"query": "webmcp"})
    js_tab.call("get_event_details", {"event_id": "evt-webmcp-intro"})
    fetches.settled()  # a request htmx sent by itself would be logged by now
    log = js_tab.new_tab()
    log.open("/registrations")
    rows = log.page.locator(".activity-what")
    assert [rows.nth(i).inner_text() for i in range(rows.count())] == [
        "Your agent looked at “WebMCP Intro Workshop”",
        "Your agent searched the events",
        "Your agent saved “Kubernetes in Production”",
    ]


def test_people_still_get_active_search(js_tab):
    """What the bridge holds back from an agent's fill still reaches htmx for a person."""
    js_tab.open("/events")
    js_tab.page.get_by_label("Keywords").press_sequentially("kubernetes")
    js_tab.page.locator("#results").get_by_text("Found 1 upcoming event").wait_for()
    choices = js_tab.page.locator("#results input[name=event_id]")
    assert [choices.nth(0).get_attribute("value"), choices.count()] == [LATER_EVENT, 1]


# The input and change events of tool forms, as the browser dispatched them (on window, before
# the bridge holds them) and as they reach the page's other listeners (on document, bubbling,
# after htmx's): each described by what a listener reads of it.
NOTE_EVENTS = """
window.dispatched = [];
window.delivered = [];
const describe = (event) => ({
  type: event.type, control: event.target.name, kind: event.constructor.name,
  inputType: event.inputType ?? null, data: event.data ?? null,
  bubbles: event.bubbles, cancelable: event.cancelable, composed: event.composed,
});
const ofToolForm = (event) => Boolean(event.target.form?.hasAttribute("toolname"));
for (const type of ["input", "change"]) {
  window.addEventListener(type, (event) => {
    if (event.isTrusted && ofToolForm(event)) { window.dispatched.push(describe(event)); }
  }, true);
  document.addEventListener(type, (event) => {
    if (ofToolForm(event)) { window.delivered.push(describe(event)); }
  });
}
"""


def test_a_persons_fill_reaches_every_listener_once_as_it_happened(js_tab):
    """What the bridge holds back from a person for a task reaches the page's other listeners
    after it, each event once (not the person's and then the copy), with what the browser said
    of it (which key, which kind of input). The test waits on what htmx does with the events
    (the results of the words typed, then the search of the place chosen): by then every copy
    has been dispatched."""
    page = js_tab.page
    page.add_init_script(NOTE_EVENTS)
    js_tab.open("/events")
    page.get_by_label("Keywords").press_sequentially("kubernetes")
    page.locator("#results").get_by_text("Found 1 upcoming event").wait_for()
    page.get_by_label("Location").focus()  # leaving the keywords: their change
    page.keyboard.press("ArrowDown")  # a choice from the keyboard: the first place
    page.wait_for_url("**/events?query=kubernetes&location=taipei")
    dispatched = page.evaluate("window.dispatched")
    assert [(e["type"], e["control"], e["data"]) for e in dispatched] == [
        *[("input", "query", letter) for letter in "kubernetes"],
        ("change", "query", None), ("input", "location", None), ("change", "location", None)]
    assert page.evaluate("window.delivered") == dispatched


# Notes the input and change events of the search form, before the bridge holds them.
NOTE_FILLS = """
window.fills = [];
for (const type of ["input", "change"]) {
  window.addEventListener(type, (event) => {
    if (event.target.form && event.target.form.id === "search_events") {
      window.fills.push(event.target.name);
    }
  }, true);
}
"""


def test_a_value_given_again_leaves_no_trace_in_the_page(js_tab):
    """Chromium fills a control only when the value given differs from the one it holds, and
    otherwise dispatches nothing: the page cannot tell a condition given again from one left
    out. So the bridge cannot reset the conditions a call left out without also dropping some
    it was given; search_events says instead that a condition left out stays (the
    appliedFilters of docs/design.md §4 show which were used). Were Chromium to tell, this
    test would fail."""
    js_tab.page.add_init_script(NOTE_FILLS)
    js_tab.open("/events")
    js_tab.call("search_events", {"location": "taipei", "level": "beginner"})
    assert sorted(set(js_tab.page.evaluate("window.fills"))) == ["level", "location"]
    js_tab.page.evaluate("window.fills = []")
    again = js_tab.call("search_events", {"location": "taipei", "query": "webmcp"})
    assert js_tab.page.evaluate("window.fills") == ["query", "query"]  # input, then change
    assert again.output["appliedFilters"] == {
        "location": "taipei", "level": "beginner", "query": "webmcp"}


def event_ids_offered(tool: Tool) -> list[str]:
    offered: list[str] = tool.input_schema["properties"]["event_id"]["enum"]
    return offered


def longest_htmx_delay(page) -> int:
    """The longest `delay:` (ms) of the page's htmx triggers."""
    triggers = page.locator("[hx-trigger]").evaluate_all(
        "elements => elements.map(e => e.getAttribute('hx-trigger'))")
    delays = [int(ms) for trigger in triggers for ms in re.findall(r"delay:(\d+)ms", trigger)]
    return max(delays, default=0)
