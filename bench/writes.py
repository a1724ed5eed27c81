"""4: many visitors confirming registrations for the same events at once (4 workers):
confirmations per second, latency, and checks that no event ever got more registrations
than it had seats and that every seat was sold.

`measure_both` runs it twice on other events: one confirmation at a time (what one
confirmation costs, no queue at the event's lock) and CLIENTS at once (the throughput).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

from helpers import query_database
from servers import HttpVisitor

from webapp.storage.sqlite import to_text

from .stats import percentile
from .stats import spread

VISITORS = 100  # per event: about twice its free seats, so most runs sell out
CLIENTS = 8  # confirmations in flight at once
RUNS = 3


def open_events(database: Path | str, count: int, skip: int = 0) -> list[tuple[str, int]]:
    """Upcoming events still open for registration, with 20 to 60 free seats each (after the
    first `skip` of them, which an earlier measure sold)."""
    moment = datetime.now(UTC)
    # SQLite stores times as text (in time order); PostgreSQL as timestamptz.
    now = moment if str(database).startswith("postgresql://") else to_text(moment)
    return [(row[0], row[1]) for row in query_database(
        database, "SELECT id, capacity - held_seats FROM events WHERE registration_deadline > ? "
        "AND capacity - held_seats BETWEEN 20 AND 60 ORDER BY starts_at, id LIMIT ? OFFSET ?",
        [now, count, skip])]


def active_registrations(database: Path | str, event_id: str) -> int:
    count: int = query_database(database, "SELECT count(*) FROM registrations "
                                          "WHERE event_id = ? AND state = 'active'",
                                [event_id])[0][0]
    return count


def confirm_at_once(base: str, event_id: str, clients: int
                    ) -> tuple[list[int], list[float], float]:
    """VISITORS people prepare a registration each, then confirm, `clients` at a time.

    Returns the answers' statuses, their latencies (ms) and the wall time of the confirmations.
    """
    visitors = [HttpVisitor(base) for _ in range(VISITORS)]
    with ThreadPoolExecutor(max_workers=clients) as pool:
        tokens = list(pool.map(
            lambda numbered: numbered[1].prepare_registration(
                event_id, f"Person {numbered[0]}", f"person{numbered[0]}@example.com"),
            enumerate(visitors)))

        def confirm(pair: tuple[HttpVisitor, str]) -> tuple[int, float]:
            visitor, token = pair
            started = time.perf_counter()
            answer = visitor.confirm_registration(token)
            return answer.status, (time.perf_counter() - started) * 1000

        started = time.perf_counter()
        answers = list(pool.map(confirm, zip(visitors, tokens, strict=True)))
        wall = time.perf_counter() - started
    return [status for status, _ in answers], [ms for _, ms in answers], wall


def measure(base: str, database: Path | str, clients: int = CLIENTS, skip: int = 0
            ) -> dict[str, Any]:
    """RUNS rounds, each on its own event; throughput and latency spread over the rounds."""
    runs: list[dict[str, Any]] = []
    for event_id, seats in open_events(database, RUNS, skip):
        statuses, latencies, wall = confirm_at_once(base, event_id, clients)
        active = active_registrations(database, event_id)
        runs.append({
            "event": event_id, "seats": seats, "created": statuses.count(201),
            "conflicts": statuses.count(409),
            "other": len(statuses) - statuses.count(201) - statuses.count(409),
            "active": active, "oversold": active > seats,
            # Every seat taken, each by a client told 201 (no lost or unreported registration).
            "soldOut": statuses.count(201) == active == min(seats, VISITORS),
            "perSecond": len(statuses) / wall,
            "p50Ms": percentile(latencies, 0.50), "p95Ms": percentile(latencies, 0.95),
        })
    return {
        "visitors": VISITORS, "clients": clients, "runs": runs,
        "confirmationsPerSecond": spread(r["perSecond"] for r in runs),
        "p50Ms": spread(r["p50Ms"] for r in runs),
        "p95Ms": spread(r["p95Ms"] for r in runs),
        "neverOversold": not any(r["oversold"] for r in runs),
        "soldOut": all(r["soldOut"] for r in runs),
    }


def measure_both(base: str, database: Path | str) -> dict[str, Any]:
    """One confirmation at a time, then CLIENTS at once, each on events of its own."""
    return {"alone": measure(base, database, clients=1),
            "contended": measure(base, database, skip=RUNS)}
