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
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Browser

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


def cold_load(browser: Browser, url: str, tools: list[str], html: str | None = None
              ) -> dict[str, float]:
    """One load in a fresh context: when the tools were ready, and when the HTML arrived.

    With `html`, the browser answers `url` itself with that page.
    """
    context = browser.new_context()
    try:
        context.add_init_script(WATCH_TOOLS % json.dumps(tools))
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


def measure(base: str, browser: Browser, event_id: str) -> list[dict[str, Any]]:
    """LOADS cold loads of the baseline, /events and one event's page, interleaved."""
    pages = {BASELINE_PATH: (["baseline_search"], BASELINE_PAGE),
             "/zh-TW/events": (["search_events", "get_event_details"], None),
             f"/zh-TW/events/{event_id}": (["get_event_details", "save_event"], None)}
    for path, (tools, html) in pages.items():  # a worker's first load compiles its templates
        cold_load(browser, base + path, tools, html)
    loads: dict[str, list[dict[str, float]]] = {path: [] for path in pages}
    for _ in range(LOADS):
        for path, (tools, html) in pages.items():
            loads[path].append(cold_load(browser, base + path, tools, html))
    baseline = [load["ready"] for load in loads[BASELINE_PATH]]
    return [{"page": "baseline: one form, no server" if path == BASELINE_PATH else path,
             "tools": tools,
             "readyMs": spread(load["ready"] for load in loads[path]),
             "readyOverBaseline": ratios([load["ready"] for load in loads[path]], baseline),
             "responseStartMs": spread(load["responseStart"] for load in loads[path]),
             "responseEndMs": spread(load["responseEnd"] for load in loads[path])}
            for path, (tools, _) in pages.items()]
