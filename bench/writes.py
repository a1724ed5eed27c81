"""4: many visitors confirming registrations for the same events at once (4 workers):
confirmations per second, latency, and checks that no event ever got more registrations
than it had seats and that every seat was sold.

`measure_both` runs it three times on other events: one confirmation at a time (what one
confirmation costs, no queue at the event's lock), CLIENTS at once on one event, and CLIENTS
at once over SPREAD events (where PostgreSQL's row locks let confirmations of different
events go on together and SQLite's one write lock does not).
"""

from __future__ import annotations

import os
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


def machine_cpu_seconds() -> float:
    """CPU time the whole machine has spent working since it started (every process on every
    core: user, nice, system, interrupts), from Linux's /proc/stat."""
    busy = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:8]
    idle, iowait = 3, 4
    ticks = sum(int(value) for index, value in enumerate(busy) if index not in (idle, iowait))
    return ticks / os.sysconf("SC_CLK_TCK")


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


def confirm_at_once(base: str, events: list[str], clients: int
                    ) -> tuple[dict[str, list[int]], dict[int, list[float]], float, float]:
    """VISITORS people per event prepare a registration each, then confirm, `clients` at a
    time, the events' visitors taking turns.

    Returns each event's answers' statuses, the latencies (ms) by status, and the wall time
    and the machine's CPU time (seconds: every process, client, server and database alike)
    of the confirmations.
    """
    people = [(event_id, HttpVisitor(base)) for _ in range(VISITORS) for event_id in events]
    with ThreadPoolExecutor(max_workers=clients) as pool:
        tokens = list(pool.map(
            lambda numbered: numbered[1][1].prepare_registration(
                numbered[1][0], f"Person {numbered[0]}", f"person{numbered[0]}@example.com"),
            enumerate(people)))

        def confirm(pair: tuple[tuple[str, HttpVisitor], str]) -> tuple[str, int, float]:
            (event_id, visitor), token = pair
            started = time.perf_counter()
            answer = visitor.confirm_registration(token)
            return event_id, answer.status, (time.perf_counter() - started) * 1000

        started, cpu = time.perf_counter(), machine_cpu_seconds()
        answers = list(pool.map(confirm, zip(people, tokens, strict=True)))
        wall, cpu = time.perf_counter() - started, machine_cpu_seconds() - cpu
    statuses = {event_id: [status for event, status, _ in answers if event == event_id]
                for event_id in events}
    latencies: dict[int, list[float]] = {}
    for _, status, ms in answers:
        latencies.setdefault(status, []).append(ms)
    return statuses, latencies, wall, cpu


def measure(base: str, database: Path | str, clients: int = CLIENTS, skip: int = 0,
            together: int = 1) -> dict[str, Any]:
    """RUNS rounds, each on `together` events of its own (their visitors confirming in
    turns); throughput and latency spread over the rounds."""
    runs: list[dict[str, Any]] = []
    chosen = open_events(database, RUNS * together, skip)
    for first in range(0, len(chosen), together):
        seats = dict(chosen[first:first + together])
        by_event, by_status, wall, cpu = confirm_at_once(base, list(seats), clients)
        latencies = [ms for answered in by_status.values() for ms in answered]
        active = {event_id: active_registrations(database, event_id) for event_id in seats}
        statuses = [status for answers in by_event.values() for status in answers]
        runs.append({
            "event": ", ".join(seats), "seats": sum(seats.values()),
            "created": statuses.count(201), "conflicts": statuses.count(409),
            "other": len(statuses) - statuses.count(201) - statuses.count(409),
            "active": sum(active.values()),
            "oversold": any(active[event_id] > seats[event_id] for event_id in seats),
            # Every seat taken, each by a client told 201 (no lost or unreported registration).
            "soldOut": all(by_event[event_id].count(201) == active[event_id]
                           == min(seats[event_id], VISITORS) for event_id in seats),
            "perSecond": len(statuses) / wall,
            "cpuMsPerConfirmation": cpu * 1000 / len(statuses),
            "p50Ms": percentile(latencies, 0.50), "p95Ms": percentile(latencies, 0.95),
            # The two answers apart: a seat taken (201) writes; "full" (409) only reads. The
            # p50 of both together falls between them, wherever the event's seats end.
            "seatP50Ms": percentile(by_status[201], 0.50),
            "fullP50Ms": percentile(by_status.get(409, [0.0]), 0.50),
        })
    return {
        "visitors": VISITORS, "clients": clients, "events": together, "runs": runs,
        "confirmationsPerSecond": spread(r["perSecond"] for r in runs),
        "p50Ms": spread(r["p50Ms"] for r in runs),
        "p95Ms": spread(r["p95Ms"] for r in runs),
        "seatP50Ms": spread(r["seatP50Ms"] for r in runs),
        "fullP50Ms": spread(r["fullP50Ms"] for r in runs),
        "cpuMsPerConfirmation": spread(r["cpuMsPerConfirmation"] for r in runs),
        "neverOversold": not any(r["oversold"] for r in runs),
        "soldOut": all(r["soldOut"] for r in runs),
    }


# Events confirmed at the same time when the writes are spread: one event's confirmers queue
# at its lock on either backend; confirmers of different events queue only at SQLite's.
SPREAD = 3


def measure_both(base: str, database: Path | str) -> dict[str, Any]:
    """One confirmation at a time; CLIENTS at once on one event; CLIENTS at once over SPREAD
    events. Each on events of its own."""
    return {"alone": measure(base, database, clients=1),
            "contended": measure(base, database, skip=RUNS),
            "spread": measure(base, database, skip=2 * RUNS, together=SPREAD)}
