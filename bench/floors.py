"""1 and 2: search against the framework floor (/health, same server, same rounds) and
against the storage floor (the same query run in-process on the same database).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from functools import partial
from pathlib import Path
from statistics import median
from typing import Any
from typing import cast
from urllib.parse import parse_qsl
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from helpers import HTMX
from helpers import JSON

from flask_webmcp.inputs import load_input
from webapp.config import SITE_TIMEZONE as DEFAULT_SITE_TIMEZONE
from webapp.datasets.synthetic import COMMON_WORD
from webapp.datasets.synthetic import RARE_TOPICS
from webapp.domain.actions.events import event_query
from webapp.domain.schemas import PAGE_SIZE
from webapp.domain.schemas import SEARCH_COUNT_CAP
from webapp.domain.schemas import SearchEventsInput
from webapp.domain.schemas import SearchEventsParams
from webapp.storage import EventQuery
from webapp.storage.sqlite import SQLiteStorage

from . import load
from .stats import ratios
from .stats import spread

CONCURRENCIES = (1, 8)
RARE_WORD = RARE_TOPICS[0].en


@dataclass(frozen=True)
class Endpoint:
    """A request to measure; `searches` when it runs a search (the storage floor is measured)."""

    name: str
    path: str
    headers: dict[str, str]
    searches: bool = True

    def storage_query(self) -> EventQuery:
        """The query the server asks the storage for this search, built by the app's code."""
        loaded = load_input(SearchEventsInput, dict(parse_qsl(urlsplit(self.path).query)))
        params = cast(SearchEventsParams, loaded)  # what that schema loads
        return event_query(params, datetime.now(UTC), ZoneInfo(DEFAULT_SITE_TIMEZONE))


HEALTH = Endpoint("GET /health (floor)", "/health", JSON, searches=False)
FILTERS = Endpoint("JSON, filters only", "/events?location=taipei&price=free&level=beginner",
                   JSON)
RARE = Endpoint("JSON, rare word", f"/events?query={RARE_WORD}", JSON)
COMMON = Endpoint("JSON, common word", f"/events?query={COMMON_WORD}", JSON)
ENDPOINTS = (
    HEALTH, FILTERS, RARE, COMMON,
    Endpoint("JSON, common word + filters",
             f"/events?query={COMMON_WORD}&location=taipei&level=beginner", JSON),
    Endpoint("htmx partial, common word", f"/events?query={COMMON_WORD}", HTMX),
    # The page itself, as a link to it (or the language redirect of a first visit) leads there.
    Endpoint("full page /zh-TW/events", "/zh-TW/events", {}),
)


def storage_p50(storage: SQLiteStorage, endpoint: Endpoint, repeats: int = 100) -> float:
    """The median time (ms) of the storage call a search makes, on an open connection."""
    times = []
    for _ in range(repeats):
        query = endpoint.storage_query()
        started = time.perf_counter()
        storage.search_events(query, limit=PAGE_SIZE, offset=0, count_cap=SEARCH_COUNT_CAP,
                              count_seats=True)
        times.append((time.perf_counter() - started) * 1000)
    return median(times)


def measure(base: str, database: Path, rounds: int, seconds: int) -> list[dict[str, Any]]:
    """Every endpoint at each concurrency and its storage query, interleaved over `rounds`."""
    for endpoint in ENDPOINTS:
        load.warm_up(base + endpoint.path, endpoint.headers)
    storage = SQLiteStorage.open(database)
    # Loads over HTTP (by concurrency) and storage timings (ms), interleaved in one set.
    runs: dict[tuple[str, int | str], Callable[[], Any]] = {}
    for endpoint in ENDPOINTS:
        for concurrency in CONCURRENCIES:
            runs[endpoint.name, concurrency] = partial(load.run, base + endpoint.path,
                                                       endpoint.headers, concurrency, seconds)
        if endpoint.searches:
            runs[endpoint.name, "storage"] = partial(storage_p50, storage, endpoint)
    try:
        results = load.interleaved(runs, rounds)
    finally:
        storage.close()

    rows = []
    for endpoint in ENDPOINTS:
        row: dict[str, Any] = {"endpoint": endpoint.name, "path": endpoint.path,
                               "headers": endpoint.headers}
        for concurrency in CONCURRENCIES:
            loads = results[endpoint.name, concurrency]
            floor = results[HEALTH.name, concurrency]
            row[f"c{concurrency}"] = {
                "p50Ms": spread(r.p50 for r in loads),
                "p95Ms": spread(r.p95 for r in loads),
                "requestsPerSecond": spread(r.rps for r in loads),
                "p50OverHealth": ratios([r.p50 for r in loads], [r.p50 for r in floor]),
            }
        if endpoint.searches:
            raw = results[endpoint.name, "storage"]
            row["storage"] = {
                "rawP50Ms": spread(raw),
                "serverP50OverRaw": ratios([r.p50 for r in results[endpoint.name, 1]], raw),
            }
        rows.append(row)
    return rows

