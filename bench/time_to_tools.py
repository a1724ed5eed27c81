"""6: time to tools: from navigation start until every tool of a page is registered, in a
headless WebMCP Chromium, over cold loads (a new browser context each: empty cache).

Each load starts on a page of another site, as a visit does (from a link elsewhere or the
new-tab page). Started from the blank page of a fresh Playwright tab instead, every load would
also pay for starting a renderer process after the response, because the site's
Cross-Origin-Opener-Policy asks for a browsing context group of its own; a real visit pays
that before the response arrives (measured under load: 238 ms instead of 84 ms median).

The baseline, loaded in the same rounds, is the smallest page that registers a tool: one
declarative form, answered by the browser itself, so neither the server nor the site's CSS
and JS are in it. It shows what this machine allows at that moment.

Every page that offers tools is measured, as a visitor first opens it: the list, an event's
page, its registration page, and the visitor's registrations (for which the visitor of each
cold load has registered beforehand, or the page would offer no tool). Next to each, in the
same rounds, its tool forms alone, on a page the browser answers itself (no server, no CSS,
no script, nothing else): what the forms themselves cost. Date inputs, for one, take Chromium
longer to set up than text inputs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from bs4 import BeautifulSoup
from playwright.sync_api import Browser
from playwright.sync_api import BrowserContext

from .round_trip import register
from .stats import ratios
from .stats import spread

LOADS = 10
BASELINE_PATH = "/bench-baseline"
ELSEWHERE = "/bench-elsewhere"  # on localhost: another site than the server's 127.0.0.1
BASELINE_PAGE = ('<!doctype html><title>Baseline</title><form toolname="baseline_search" '
                 'tooldescription="Search events" action="/events"><label>Keywords '
                 '<input name="query"></label><button>Search</button></form>')
# Injected before the page's own scripts: polls the page's tools and notes, in ms since
# navigation start (performance.timeOrigin), when the last expected one appears.
WATCH_TOOLS = """
(() => {
  const expected = %s;
  window.__toolsReadyAt = null;
  const poll = () => document.modelContext.getTools().then((tools) => {
    const names = tools.map((tool) => tool.name);
    if (expected.every((name) => names.includes(name))) {
      window.__toolsReadyAt = performance.now();
    } else {
      setTimeout(poll, 1);
    }
  });
  poll();
})();
"""


def elsewhere(url: str) -> str:
    """A page of another site than `url` (the browser answers it itself)."""
    return f"http://localhost:{urlsplit(url).port}{ELSEWHERE}"


@dataclass(frozen=True)
class Page:
    """A page to load, the tools it offers, and what its visitor did before (if anything)."""

    path: str  # "{event}" is an open event with seats to spare
    tools: tuple[str, ...]
    registered: bool = False


# The pages people land on: those in Chinese, the site's default language.
PAGES = (
    Page("/zh-TW/events", ("search_events", "get_event_details")),
    Page("/zh-TW/events/{event}", ("get_event_details", "save_event")),
    Page("/zh-TW/events/{event}/register", ("prepare_event_registration",)),
    Page("/zh-TW/registrations", ("prepare_registration_cancellation",), registered=True),
)
# Seats `measure` takes, never given back: the visitor of each load of a page that needs a
# registration registers first (for its forms alone once, its warm-up once, each cold load).
REGISTRATIONS = (LOADS + 2) * sum(page.registered for page in PAGES)


def cold_load(browser: Browser, url: str, tools: tuple[str, ...], html: str | None = None,
              before: Callable[[BrowserContext], Any] | None = None) -> dict[str, float]:
    """One load in a fresh context: when the tools were ready, and when the HTML arrived.

    With `html`, the browser answers `url` itself with that page; `before` runs in the new
    context first (its requests do not touch the browser's cache).
    """
    context = browser.new_context()
    try:
        if before is not None:
            before(context)
        context.add_init_script(WATCH_TOOLS % json.dumps(list(tools)))
        if html is not None:
            context.route(url, lambda route: route.fulfill(
                status=200, content_type="text/html; charset=utf-8", body=html))
        start = elsewhere(url)
        context.route(start, lambda route: route.fulfill(
            status=200, content_type="text/html", body="<!doctype html><title>Elsewhere</title>"))
        page = context.new_page()
        page.goto(start)
        page.goto(url, wait_until="commit")
        page.wait_for_function("() => window.__toolsReadyAt !== null", timeout=10_000)
        timing = page.evaluate("() => performance.getEntriesByType('navigation')[0].toJSON()")
        return {"ready": page.evaluate("() => window.__toolsReadyAt"),
                "responseStart": timing["responseStart"], "responseEnd": timing["responseEnd"]}
    finally:
        context.close()


def forms_alone(browser: Browser, url: str, before: Callable[[BrowserContext], Any] | None
                ) -> str:
    """A page holding only the tool forms `url` shows its visitor."""
    context = browser.new_context()
    try:
        if before is not None:
            before(context)
        html = context.request.get(url).text()
    finally:
        context.close()
    forms = BeautifulSoup(html, "html.parser").select("form[toolname]")
    return ("<!doctype html><meta charset='utf-8'><title>Forms alone</title>"
            + "".join(str(form) for form in forms))


def measure(base: str, browser: Browser, event_id: str) -> list[dict[str, Any]]:
    """LOADS cold loads of the baseline, of every page and of its forms alone, interleaved."""
    def before(page: Page) -> Callable[[BrowserContext], Any] | None:
        return (lambda context: register(context, base, event_id)) if page.registered else None

    def url(page: Page) -> str:
        return base + page.path.format(event=event_id)

    alone = {page: forms_alone(browser, url(page), before(page)) for page in PAGES}
    runs: dict[tuple[Page | None, bool], Callable[[], dict[str, float]]] = {
        (None, True): lambda: cold_load(browser, base + BASELINE_PATH, ("baseline_search",),
                                        BASELINE_PAGE)}
    for page in PAGES:
        runs[page, False] = partial(cold_load, browser, url(page), page.tools,
                                    before=before(page))
        runs[page, True] = partial(cold_load, browser, f"{base}/bench-forms-alone",
                                   page.tools, alone[page])
    for run in runs.values():  # a worker's first load compiles its templates
        run()
    loads: dict[tuple[Page | None, bool], list[dict[str, float]]] = {key: [] for key in runs}
    for _ in range(LOADS):
        for key, run in runs.items():
            loads[key].append(run())

    def ready(key: tuple[Page | None, bool]) -> list[float]:
        return [sample["ready"] for sample in loads[key]]

    baseline = ready((None, True))
    rows: list[dict[str, Any]] = [{
        "page": "baseline: one form, no server", "tools": ["baseline_search"],
        "readyMs": spread(baseline), "readyOverBaseline": ratios(baseline, baseline),
        "responseStartMs": spread(sample["responseStart"] for sample in loads[None, True]),
        "responseEndMs": spread(sample["responseEnd"] for sample in loads[None, True])}]
    for page in PAGES:
        samples = loads[page, False]
        rows.append({
            "page": page.path.format(event=event_id), "tools": list(page.tools),
            "readyMs": spread(ready((page, False))),
            "readyOverBaseline": ratios(ready((page, False)), baseline),
            "formsAloneMs": spread(ready((page, True))),
            "formsAloneOverBaseline": ratios(ready((page, True)), baseline),
            "responseStartMs": spread(sample["responseStart"] for sample in samples),
            "responseEndMs": spread(sample["responseEnd"] for sample in samples)})
    return rows
