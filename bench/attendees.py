"""14: the CSV export of an event's attendees (issue 30), in the worker's own process.

One app on a new SQLite database seeded with the sample events; an owner signed in from the
mailed link (as the tests do) runs two events: one with `SMALL` attendees, one with `LARGE`.
Round by round, in turns: `/health` (the floor of a request), the small export and the large
one, each through the Flask test client and read to its last byte as a browser downloads it.
For each export: the time, the file's size, and tracemalloc's peak of the process's memory
while the export ran (started just before the request, read after its last byte). A streamed
export holds one batch (`domain.attendees.EXPORT_BATCH`) at a time, so its peak over the
floor (`/health`'s peak) grows with the batch, not with the file: 100 attendees fill less
than one batch, 10 000 fill twenty; the large export once more with batches of
`SMALL_BATCH` shows its peak shrink with the batch, the same file sent.

`python -m bench --only attendees` measures and prints it alone (about a minute).
"""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from helpers import Visitor
from servers import ONE_ADDRESS_CROWD
from test_accounts import Inbox
from test_accounts import sign_in
from test_organizers import start

from webapp import create_app
from webapp.domain import attendees as attendee_domain
from webapp.storage import Registration
from webapp.storage.connection import close_backend
from webapp.storage.connection import get_db

from .report import spread_text
from .report import table
from .stats import spread

SMALL = 100
LARGE = 10_000
# The export once more with batches this small: its peak shrinks with the batch, the file not.
SMALL_BATCH = 100
EVENTS = {SMALL: "evt-webmcp-intro", LARGE: "evt-design-tokens-taipei"}


def fill(app: Any, event_id: str, count: int) -> None:
    """Register `count` people for the event, in one transaction (names in both scripts)."""
    with app.app_context():
        db = get_db()
        now = app.config["CLOCK"]()
        with db.transaction():
            for number in range(count):
                visitor_id = f"bench-{event_id}-{number}"
                db.create_visitor(visitor_id, now, now + timedelta(days=1))
                db.create_registration(Registration(
                    id=f"reg-bench{number:07d}-{count}", event_id=event_id,
                    visitor_id=visitor_id, attendee_name=f"王小明 {number} Ann Lee",
                    email=f"attendee{number}@example.com", state="active",
                    created_at=now + timedelta(seconds=number), event_title="",
                    event_starts_at=now))


@contextmanager
def smaller_batches() -> Iterator[None]:
    """The export reading `SMALL_BATCH` attendees at a time instead of its own batch."""
    kept = attendee_domain.EXPORT_BATCH
    attendee_domain.EXPORT_BATCH = SMALL_BATCH
    try:
        yield
    finally:
        attendee_domain.EXPORT_BATCH = kept


def timed(person: Visitor, url: str) -> tuple[float, int, int]:
    """One download of `url` read to its end: seconds, bytes, and the traced peak memory."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    started = time.perf_counter()
    answer = person.get(url, buffered=False)
    size = sum(len(chunk) for chunk in answer.response)
    answer.close()
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert answer.status_code == 200, (url, answer.status_code)
    return elapsed, size, peak


def measure(rounds: int) -> dict[str, Any]:
    """The figures of table 13 (see the module's docstring)."""
    with tempfile.TemporaryDirectory(prefix="webmcp-bench-attendees-") as scratch:
        app = create_app({"SECRET_KEY": "bench", "TESTING": True,
                          "DATABASE": str(Path(scratch) / "events.sqlite"),
                          "RATELIMIT_STORAGE_URI": "memory://", **ONE_ADDRESS_CROWD})
        try:
            owner = Visitor(app)
            sign_in(app, Inbox(), owner, owner.email)
            organization_id = start(owner)
            urls = {}
            for count, event_id in EVENTS.items():
                with app.app_context():
                    get_db().set_event_organization(event_id, organization_id)
                fill(app, event_id, count)
                urls[count] = (f"/en/organizer/organizations/{organization_id}/events/"
                               f"{event_id}/attendees.csv")
            runs: dict[str, list[tuple[float, int, int]]] = {
                "health": [], "small": [], "large": [], "largeSmallBatches": []}
            for _ in range(rounds):
                runs["health"].append(timed(owner, "/health"))
                runs["small"].append(timed(owner, urls[SMALL]))
                runs["large"].append(timed(owner, urls[LARGE]))
                with smaller_batches():
                    runs["largeSmallBatches"].append(timed(owner, urls[LARGE]))
        finally:
            close_backend(app)
    return {name: {"ms": spread([run[0] * 1000 for run in found]),
                   "bytes": found[-1][1],
                   "peakKiB": spread([run[2] / 1024 for run in found])}
            for name, found in runs.items()}


def tables(found: dict[str, Any]) -> str:
    """Table 13 as text: time and peak memory of each export, against `/health` and the file."""
    health, small, large = found["health"], found["small"], found["large"]
    rows = []
    batch = attendee_domain.EXPORT_BATCH
    for label, figures in (("/health", health),
                           (f"export, {SMALL:,} attendees", small),
                           (f"export, {LARGE:,} attendees", large),
                           (f"export, {LARGE:,}, batches of {SMALL_BATCH} (not {batch})",
                            found["largeSmallBatches"])):
        above = figures["peakKiB"]["median"] - health["peakKiB"]["median"]
        exported = figures is not health
        rows.append([label, spread_text(figures["ms"]),
                     f"{figures['ms']['median'] / health['ms']['median']:.0f}×",
                     f"{figures['bytes'] / 1024:,.0f}", spread_text(figures["peakKiB"], 0),
                     f"{above:,.0f}" if exported else "—",
                     f"{above * 1024 / figures['bytes']:.2f}" if exported else "—"])
    times = large["ms"]["median"] / small["ms"]["median"]
    memory = large["peakKiB"]["median"] / small["peakKiB"]["median"]
    summary = (f"{LARGE:,} vs {SMALL:,} attendees: {times:.1f}× the time, {memory:.2f}× the "
               f"peak memory for {large['bytes'] / max(small['bytes'], 1):.0f}× the file")
    return table("14. CSV export of an event's attendees (in-process, SQLite)",
                 ["request", "ms median (range)", "× /health", "file KiB",
                  "peak KiB median (range)", "peak over /health KiB",
                  "that / file"], rows) + "\n" + summary
