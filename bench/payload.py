"""5: what an agent and a browser pay in bytes: the JSON answer for a page of results, the
/events page and partial (raw and compressed), its JS and CSS, and a first visit as the
browser fetched it (requests and bytes on the wire, headers included).
"""

from __future__ import annotations

import gzip
import re
import urllib.request
from typing import Any

from helpers import HTMX
from helpers import JSON
from playwright.sync_api import Browser

from .floors import COMMON

ASSET = re.compile(r'(?:href|src)="(/static/[^"]+)"')
ONE_YEAR = 365 * 24 * 3600
# The events page people land on (a first visit to /events is redirected here by language).
PAGE = "/zh-TW/events"


def fetch(url: str, headers: dict[str, str]) -> tuple[bytes, Any]:
    """The body exactly as the server sent it (never decompressed), and the headers."""
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read(), response.headers


def sizes(url: str, headers: dict[str, str]) -> dict[str, Any]:
    """Raw bytes, gzip bytes (level 6), and what a browser accepting gzip is actually sent."""
    raw, _ = fetch(url, {**headers, "Accept-Encoding": "identity"})
    served, sent_headers = fetch(url, {**headers, "Accept-Encoding": "gzip"})
    return {"raw": len(raw), "gzip": len(gzip.compress(raw, 6)), "served": len(served),
            "contentEncoding": sent_headers.get("Content-Encoding", "identity"),
            "cacheControl": sent_headers.get("Cache-Control", ""), "body": raw}


def first_visit(browser: Browser, url: str) -> dict[str, Any]:
    """The requests a cold browser makes to show `url`, and their bytes on the wire."""
    context = browser.new_context()
    finished = []
    try:
        page = context.new_page()
        page.on("requestfinished", lambda request: finished.append(request))
        page.goto(url, wait_until="networkidle")
        wire = 0
        for request in finished:
            measured = request.sizes()
            wire += (measured["requestHeadersSize"] + measured["requestBodySize"]
                     + measured["responseHeadersSize"] + measured["responseBodySize"])
        return {"requests": len(finished), "wireBytes": wire,
                "urls": [request.url.removeprefix(url.rsplit("/", 1)[0]) for request in finished]}
    finally:
        context.close()


def measure(base: str, browser: Browser) -> dict[str, Any]:
    """Every size the goals name."""
    answer = sizes(base + COMMON.path, JSON)
    page = sizes(base + PAGE, {})
    partial = sizes(base + COMMON.path, HTMX)
    assets = {}
    for path in ASSET.findall(page["body"].decode()):
        asset = sizes(base + path.replace("&amp;", "&"), {})
        assets[path.split("?")[0]] = {key: value for key, value in asset.items() if key != "body"}
    own_assets = [a for name, a in assets.items() if "htmx" not in name]
    return {
        "jsonTenResults": answer["raw"],
        "page": {key: value for key, value in page.items() if key != "body"},
        "partial": {key: value for key, value in partial.items() if key != "body"},
        "assets": assets,
        "assetsCompressedAndCachedForAYear": all(
            a["contentEncoding"] == "gzip" and f"max-age={ONE_YEAR}" in a["cacheControl"]
            for a in assets.values()),
        "pageWithOwnAssetsServed": page["served"] + sum(a["served"] for a in own_assets),
        "firstVisit": first_visit(browser, base + PAGE),
    }
