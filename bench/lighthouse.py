"""11: Lighthouse's performance score of the pages people land on, as a phone and as a desktop
(the pages and the runner are the browser test's: tests/browser/lighthouse.py).

The browser test asserts accessibility, best practices and SEO; performance is timing, so it
is only reported, here. Lighthouse simulates its throttling (a slow phone on a slow network,
or a desktop) from one load's trace, one run at a time.

The baseline, run in the same session in each form factor, is the smallest page: a title and
a sentence, answered by a server of its own on loopback, with no CSS, script or font. It shows
what this machine and Lighthouse's simulation allow at that moment; each page's largest
contentful paint is also given as a ratio of the baseline's.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from browser.lighthouse import FORM_FACTORS
from browser.lighthouse import PAGES
from browser.lighthouse import Report
from browser.lighthouse import run
from browser.lighthouse import visitor_with_registrations
from servers import gunicorn

BASELINE_PAGE = (b'<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" '
                 b'content="width=device-width, initial-scale=1"><title>Baseline</title>'
                 b'<p>The smallest page.</p></html>')
METRICS = {"fcpMs": "first-contentful-paint", "lcpMs": "largest-contentful-paint",
           "tbtMs": "total-blocking-time", "cls": "cumulative-layout-shift",
           "speedIndexMs": "speed-index"}


class BaselineHandler(BaseHTTPRequestHandler):
    """Answers every GET with the baseline page."""

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(BASELINE_PAGE)))
        self.end_headers()
        self.wfile.write(BASELINE_PAGE)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - its signature
        """Quiet: the benchmark prints its own figures."""


@contextmanager
def baseline_server() -> Iterator[str]:
    """The baseline page served on a free loopback port until the block ends; its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaselineHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def figures(report: Report) -> dict[str, float]:
    """The performance score (0-100) and the metrics it is made of."""
    found: dict[str, float] = {"score": round(report.score("performance") * 100)}
    for name, audit in METRICS.items():
        found[name] = report.data["audits"][audit]["numericValue"]
    return found


def measure() -> list[dict[str, Any]]:
    """Every page of the browser test in each form factor, after the baseline in that one."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="webmcp-bench-") as scratch, \
            gunicorn(Path(scratch) / "events.sqlite", workers=2) as (base, _), \
            baseline_server() as baseline:
        visit = visitor_with_registrations(base, Path(scratch) / "events.sqlite")
        for form_factor in FORM_FACTORS:
            floor = figures(run(baseline, form_factor, ("performance",)))
            rows.append({"page": "baseline", "formFactor": form_factor, **floor,
                         "lcpOverBaseline": 1.0})
            for page in PAGES:
                print(f"   {page.name}, {form_factor}…", flush=True)
                found = figures(run(base + page.address(visit), form_factor, ("performance",),
                                    visit.headers if page.personal else None))
                rows.append({"page": page.name, "path": page.path, "formFactor": form_factor,
                             **found, "lcpOverBaseline": found["lcpMs"] / floor["lcpMs"]})
    return rows
