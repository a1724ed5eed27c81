"""7: an agent's call, round trip: DevTools `WebMCP.invokeTool` until `WebMCP.toolResponded`,
for every tool, with JavaScript on (the bridge answers) and off (the form navigates), the first
call after a cold load and calls repeated on the same page.

The floor, measured in the same rounds, is the same tool form alone on a static page (served
by the browser itself, on the site's origin, so it shares the visitor's cookies) whose submit
handler answers with `respondWith(fetch(…))`: the same request, answered by the same server as
JSON. What a call costs above its floor is what the bridge, htmx and the page add.

"First call" is the first call on a page loaded in a fresh context (empty cache, new
visitor), made once the page has loaded, its tools are registered and it has been idle once
(an agent reads the tool list before it calls); "repeated" is the median of the next ten
calls on the same page (without JavaScript each call navigates: the next call is made from the
answer's page when it offers the tool with the same arguments, else from the first page,
opened again).
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from statistics import median
from typing import Any

from bs4 import BeautifulSoup
from helpers import CSRF_FIELD
from helpers import HTMX
from helpers import JSON
from helpers import TOKEN_FIELD
from playwright.sync_api import Browser
from playwright.sync_api import BrowserContext
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page

from .load import interleaved
from .stats import ratios
from .stats import spread

REPEATS = 10  # calls after the first one, on the same page
TIMEOUT_S = 15
FLOOR_PATH = "/bench-floor"
# The floor's whole script: answer an agent's submit with the JSON of the same request.
FLOOR_SCRIPT = """
document.addEventListener("submit", (event) => {
  if (!event.agentInvoked) { return; }
  event.preventDefault();
  const form = event.target;
  const url = new URL(form.getAttribute("action"), location.href);
  const init = { method: form.method.toUpperCase(), headers: { Accept: "application/json" } };
  const body = new FormData(form);
  if (init.method === "GET") {
    body.forEach((value, key) => url.searchParams.append(key, value));
  } else {
    init.body = new URLSearchParams(body);
  }
  event.respondWith(fetch(url, init).then((response) => response.json()));
});
"""
VARIANTS = ("floor", "js-on", "js-off")
PERSON = {"attendee_name": "Ann Lee", "email": "ann@example.com"}


@dataclass(frozen=True, eq=False)  # each call is itself (its arguments are not hashable)
class Call:
    """One tool called on one page; successive calls cycle through `arguments`."""

    tool: str
    page: str  # a path; "{event}" and "{listed}" are filled in (see `Site`)
    arguments: tuple[dict[str, Any], ...] = ({},)
    registered: bool = False  # the visitor needs an active registration first
    answers: tuple[str, ...] = ("success",)

    @property
    def name(self) -> str:
        return f"{self.tool} on {self.page}"


# Each tool on the page people land on (in Chinese, the site's default language).
CALLS = (
    Call("search_events", "/zh-TW/events",
         ({"query": "{word}"}, {"query": "{word}", "level": ""}), answers=("success",)),
    Call("get_event_details", "/zh-TW/events",
         ({"event_id": "{listed}"}, {"event_id": "{listed2}"})),
    Call("get_event_details", "/zh-TW/events/{event}"),
    Call("save_event", "/zh-TW/events/{event}"),
    Call("prepare_event_registration", "/zh-TW/events/{event}/register", (PERSON,),
         answers=("confirmation_required",)),
    Call("prepare_registration_cancellation", "/zh-TW/registrations",
         ({"registration_id": "{registration}"},), registered=True,
         answers=("confirmation_required",)),
)


@dataclass
class Site:
    """The server under test and the values the calls are filled with."""

    base: str
    values: dict[str, str]

    def fill(self, text: str, extra: dict[str, str]) -> str:
        return text.format(**self.values, **extra)


@dataclass
class Invoker:
    """An agent on one tab, through DevTools: knows the registered tools and times calls."""

    page: Page
    tools: dict[str, set[str]] = field(default_factory=dict)  # name -> its parameters
    answered: dict[str, tuple[float, dict[str, Any]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        cdp = self.cdp = self.page.context.new_cdp_session(self.page)
        cdp.on("Page.frameNavigated", self._navigated)
        cdp.on("WebMCP.toolsAdded", self._added)
        cdp.on("WebMCP.toolsRemoved", self._removed)
        cdp.on("WebMCP.toolResponded", self._responded)
        cdp.send("Page.enable")
        cdp.send("WebMCP.enable")

    def _added(self, event: dict[str, Any]) -> None:
        for tool in event["tools"]:
            self.tools[tool["name"]] = set(tool.get("inputSchema", {}).get("properties", {}))

    def _removed(self, event: dict[str, Any]) -> None:
        for tool in event["tools"]:
            self.tools.pop(tool["name"], None)

    def offers(self, tool: str, arguments: dict[str, Any]) -> bool:
        """Whether the page offers `tool` taking these arguments."""
        return tool in self.tools and set(arguments) <= self.tools[tool]

    def _navigated(self, event: dict[str, Any]) -> None:
        if "parentId" not in event["frame"]:
            self.tools.clear()  # a new document starts with no tools (and no toolsRemoved)

    def _responded(self, event: dict[str, Any]) -> None:
        self.answered[event["invocationId"]] = (time.perf_counter(), event)

    def wait_for(self, tool: str) -> None:
        """Until `tool` is registered on the page."""
        deadline = time.monotonic() + TIMEOUT_S
        while tool not in self.tools:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{tool} was never registered on {self.page.url}")
            self.page.wait_for_timeout(1)

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[float, Any]:
        """Invoke `tool` once it is registered; (ms until Chromium's answer, its output)."""
        self.wait_for(tool)
        frame = self.cdp.send("Page.getFrameTree")["frameTree"]["frame"]["id"]
        started = time.perf_counter()
        invocation = self.cdp.send("WebMCP.invokeTool", {
            "frameId": frame, "toolName": tool, "input": arguments})["invocationId"]
        deadline = time.monotonic() + TIMEOUT_S
        while invocation not in self.answered:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{tool}: no answer in {TIMEOUT_S} s")
            self.page.wait_for_timeout(1)
        answered_at, event = self.answered.pop(invocation)
        if event["status"] != "Completed":
            raise RuntimeError(f"{tool}: {event['status']} {event.get('errorText')}")
        return (answered_at - started) * 1000, event["output"]


def status_of(output: Any) -> str:
    """The status word of an answer: the bridge's object or the landing page's one block."""
    envelope = output[0] if isinstance(output, list) else output
    word: str = envelope["status"]
    return word


def register(context: BrowserContext, base: str, event: str) -> str:
    """The context's visitor registers for `event` as a person would (review, then confirm,
    over HTTP with the context's cookies); the registration id."""
    api = context.request
    page = api.get(f"{base}/events/{event}/register").text()
    csrf = CSRF_FIELD.search(page)
    review = api.post(f"{base}/events/{event}/register", headers=HTMX,
                      form={"csrf_token": csrf.group(1) if csrf else "", **PERSON,
                            # One address holds one seat of an event: each visitor has its own.
                            "email": f"ann.{uuid.uuid4().hex[:12]}@example.com"}).text()
    token = TOKEN_FIELD.search(review)
    if token is None:
        raise RuntimeError(f"no review to confirm for {event}: {review[:200]}")
    confirmed = api.post(f"{base}/registrations/confirm", headers=JSON, form={
        "csrf_token": csrf.group(1) if csrf else "", "confirmation_token": token.group(1)})
    registration: str = confirmed.json()["data"]["registration"]["id"]
    return registration


def floor_page(context: BrowserContext, url: str, tool: str) -> str:
    """The static floor: the tool's form as `url` renders it for this visitor, alone, without
    htmx attributes, and the script that answers with a fetch."""
    html = context.request.get(url).text()
    form = BeautifulSoup(html, "html.parser").find("form", attrs={"toolname": tool})
    if form is None:
        raise RuntimeError(f"{url} has no {tool} form")
    for name in [name for name in form.attrs if name.startswith("hx-")]:
        del form[name]
    return (f"<!doctype html><meta charset='utf-8'><title>Floor</title>{form}"
            f"<script>{FLOOR_SCRIPT}</script>")


@contextmanager
def tab(browser: Browser, javascript: bool) -> Iterator[Page]:
    context = browser.new_context(java_script_enabled=javascript)
    try:
        yield context.new_page()
    finally:
        context.close()


def run(browser: Browser, site: Site, call: Call, variant: str) -> dict[str, float]:
    """A cold load of the call's page, its first call, then REPEATS calls on the same page.

    A renderer that crashed (it happens to headless Chromium under load, rarely) spoils the
    run, not the benchmark: it is run once more, and said so.
    """
    try:
        return measured_run(browser, site, call, variant)
    except PlaywrightError as error:
        if "crashed" not in error.message:
            raise
        print(f"  {call.name} ({variant}): the page crashed; run again", file=sys.stderr)
        return measured_run(browser, site, call, variant)


def measured_run(browser: Browser, site: Site, call: Call, variant: str) -> dict[str, float]:
    """One run (see `run`)."""
    with tab(browser, javascript=variant != "js-off") as page:
        extra = ({"registration": register(page.context, site.base, site.values["event"])}
                 if call.registered else {})
        url = site.base + site.fill(call.page, extra)
        if variant == "floor":
            floor = floor_page(page.context, url, call.tool)
            url = site.base + FLOOR_PATH
            page.context.route(url, lambda route: route.fulfill(
                status=200, content_type="text/html; charset=utf-8", body=floor))
        invoker = Invoker(page)
        page.goto(url)
        invoker.wait_for(call.tool)
        if variant != "js-off":  # an agent reads the tools before it calls: the page idles
            page.evaluate("() => new Promise((resolve) => requestIdleCallback(resolve))")
        times = []
        for number in range(1 + REPEATS):
            arguments = {name: site.fill(value, extra)
                         for name, value in call.arguments[number % len(call.arguments)].items()}
            if variant == "js-off" and number:
                # The last call navigated: call again from there if that page offers the tool
                # with these arguments (once Chromium registered it), else from the first page.
                if page.locator(f"form[toolname='{call.tool}']").count():
                    invoker.wait_for(call.tool)
                if not invoker.offers(call.tool, arguments):
                    page.goto(url)
            ms, output = invoker.call(call.tool, arguments)
            if status_of(output) not in call.answers:
                raise RuntimeError(f"{call.name} ({variant}) answered {output}")
            times.append(ms)
        return {"first": times[0], "repeated": median(times[1:])}


def registrations_made(rounds: int) -> int:
    """How many seats `measure` takes over `rounds`: each run of a call that needs an active
    registration registers its visitor once (the seats are never given back)."""
    runs_per_call = (rounds + 1) * len(VARIANTS)  # the warm-up runs too
    return runs_per_call * sum(call.registered for call in CALLS)


def site_values(base: str, browser: Browser, word: str, seats_needed: int) -> dict[str, str]:
    """What the calls are made with: `word` to search, among its first matches still open for
    registration (the soonest ones may have closed) the one with the most seats left, which
    must hold the `seats_needed` registrations the benchmark makes (a full event offers no
    registration form), and the two events /events lists first."""
    with tab(browser, javascript=True) as page:
        api = page.context.request
        listed = api.get(f"{base}/events", headers=JSON).json()["data"]["events"]
        open_events: list[dict[str, Any]] = []
        for number in range(1, 11):
            found = api.get(f"{base}/events?query={word}&page={number}",
                            headers=JSON).json()["data"]["events"]
            details = [api.get(f"{base}/events/{event['id']}", headers=JSON).json()
                       ["data"]["event"] for event in found]
            open_events = [event for event in details if event["state"] == "open"
                           and event["remainingSeats"] >= seats_needed]
            if open_events:
                break
    if not open_events:
        raise RuntimeError(f"no event open for registration with {seats_needed} seats left "
                           f"among the first matches of {word}")
    roomy = max(open_events, key=lambda event: event["remainingSeats"])
    return {"event": roomy["id"], "listed": listed[0]["id"], "listed2": listed[1]["id"],
            "word": word}


def measure(base: str, browser: Browser, values: dict[str, str], rounds: int,
            calls: tuple[Call, ...] | list[Call] = CALLS) -> list[dict[str, Any]]:
    """Every call in every variant, interleaved over `rounds` (after one untimed warm-up)."""
    site = Site(base, values)
    runs = {(call, variant): (lambda c=call, v=variant: run(browser, site, c, v))
            for call in calls for variant in VARIANTS}
    for warm_up in runs.values():  # a worker's first request compiles its templates
        warm_up()
    results = interleaved(runs, rounds)
    rows = []
    for call in calls:
        row: dict[str, Any] = {"call": call.name}
        floor = results[call, "floor"]
        for variant in VARIANTS:
            measured = results[call, variant]
            row[variant] = {
                moment: {"ms": spread(m[moment] for m in measured),
                         "overFloor": ratios([m[moment] for m in measured],
                                             [f[moment] for f in floor])}
                for moment in ("first", "repeated")}
        rows.append(row)
    return rows


def main() -> None:
    """`python -m bench.round_trip`: this table (and table 6) alone, on 10 000 events: quicker
    to iterate on than the whole `make bench`."""
    import argparse
    import tempfile
    from pathlib import Path

    from servers import gunicorn

    from webapp.datasets.synthetic import COMMON_WORD

    from . import time_to_tools
    from .browser import chromium
    from .datasets import working_copy
    from .report import round_trip_table
    from .report import time_to_tools_table

    parser = argparse.ArgumentParser(prog="python -m bench.round_trip", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--time-to-tools", action="store_true", help="table 6 first")
    parser.add_argument("--only", default="", help="only the calls whose name holds this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="webmcp-bench-") as scratch:
        database = working_copy(10_000, Path(scratch))
        with gunicorn(database, workers=2) as (base, _), chromium() as browser:
            seats = registrations_made(args.rounds) + (
                time_to_tools.REGISTRATIONS if args.time_to_tools else 0)
            values = site_values(base, browser, COMMON_WORD, seats)
            if args.time_to_tools:
                print(time_to_tools_table(time_to_tools.measure(base, browser,
                                                                values["event"])))
            rows = measure(base, browser, values, args.rounds,
                           [call for call in CALLS if args.only in call.name])
    print(round_trip_table(rows))


if __name__ == "__main__":
    main()
