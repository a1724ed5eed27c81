"""Crash safety attack: gunicorn workers killed with SIGKILL in the middle of 200 concurrent
confirmations and cancellations (many visitors, several events with few seats).

The operations go in waves of 20. While a wave is sent the test holds the database's write
lock, so its writes wait inside the workers; once the server has accepted all of them, a worker
holding some of them is killed, then the lock is released and the rest go through. So every
kill cuts requests in flight, however fast or slow the machine is.

gunicorn starts a new worker for each one killed. Afterwards the database must hold exactly
what the clients were told: every registration a client saw confirmed exists once, none a
client saw refused exists, every cancellation seen done is done and none seen refused is. A
request whose connection died has an unknown outcome: the test says how many there were and
settles each from the database (a confirmation is spent in the same transaction as its
effect, so a spent token means the effect happened). Seats must add up for every event, and
SQLite's integrity and foreign key checks must pass.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import HTMX
from helpers import JSON
from helpers import TOKEN_FIELD
from helpers import hidden_value
from helpers import query_database
from helpers import write_lock_held
from servers import HttpVisitor
from servers import gunicorn
from servers import port_of
from servers import wait_until_accepted
from servers import wait_until_ready

from webapp import create_app
from webapp.domain.tokens import hash_token
from webapp.storage.connection import prepare_database

pytestmark = pytest.mark.slow

# (capacity, seats held back). The cancellations' registrations are all on the large event;
# the confirmations spread over all four, so many meet a full event.
EVENTS = {"evt-crash-small": (6, 1), "evt-crash-medium": (20, 2), "evt-crash-large": (80, 5),
          "evt-crash-tiny": (3, 0)}
CANCELLED_EVENT = "evt-crash-large"
CONFIRMATIONS = 140
CANCELLATIONS = 60
KILLS = 10  # one per wave of 20 operations
WORKERS = 4
# Long enough for a wave's writes to wait out the test's hold on the write lock.
BUSY_TIMEOUT_MS = 30_000


@dataclass
class Operation:
    """One visitor's confirmation or cancellation, and what its client saw."""

    kind: str  # "confirm" or "cancel"
    visitor: HttpVisitor
    token: str
    registration: str | None = None  # known before (cancel) or from the answer (confirm)
    outcome: str = "not sent"  # "done", "refused" or "unknown" (the connection died)
    status: int | None = None


def import_events(database: Path | str, folder: Path) -> None:
    """The crash events, imported with the organizers' command before the server starts."""
    app = create_app({"TESTING": True, "SECRET_KEY": "x", "DATABASE": str(database)})
    with app.app_context():
        prepare_database()
    rows = [{"id": event, "title": f"Crash test {event}", "summary": "Seats for the crash test.",
             "location": "online", "venue": "Online", "price": "free", "level": "beginner",
             "capacity": capacity, "heldSeats": held,
             "schedule": {"startsInDays": 10, "startTime": "10:00", "durationMinutes": 60}}
            for event, (capacity, held) in EVENTS.items()]
    file = folder / "crash-events.json"
    file.write_text(json.dumps({"events": rows}))
    result = app.test_cli_runner().invoke(args=["import-events", str(file)])
    assert result.exit_code == 0, result.output


def worker_pids(master: int) -> list[int]:
    """The gunicorn master's children (its workers), from /proc."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            after_name = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # the process ended while we looked
        if int(after_name[1]) == master:
            pids.append(int(stat.parent.name))
    return pids


def busy_workers(master: int, port: int) -> list[int]:
    """The master's workers that hold at least one client connection (from `ss -p`)."""
    connections = subprocess.run(["ss", "-Htnp", "state", "established", f"( sport = :{port} )"],
                                 capture_output=True, text=True, check=True).stdout
    holders = {int(pid) for pid in re.findall(r"pid=(\d+)", connections)}
    return sorted(holders & set(worker_pids(master)))


def kill_a_busy_worker(master: int, port: int, rng: random.Random) -> int:
    """SIGKILL one of the workers holding requests, chosen at random; its pid."""
    busy = busy_workers(master, port)
    assert busy, "no worker holds a connection"
    victim = rng.choice(busy)
    os.kill(victim, signal.SIGKILL)
    return victim


def send_while_killing(operations: list[Operation], base: str, database: Path,
                       master: subprocess.Popen[bytes], rng: random.Random) -> list[int]:
    """Send the operations in concurrent waves and kill a worker in the middle of each.

    Each wave waits for every worker to be up (a new one prepares the database, which needs the
    write lock), then is sent while the lock is held, so its writes wait inside the workers until
    every one is accepted and a worker holding some of them is killed; returns the pids killed.
    """
    killed: list[int] = []
    wave = len(operations) // KILLS
    port = port_of(base)
    with ThreadPoolExecutor(max_workers=wave) as pool:
        for start in range(0, len(operations), wave):
            batch = operations[start:start + wave]
            wait_until_ready(database.with_suffix(".log"), WORKERS + len(killed), master)
            with write_lock_held(database):
                in_flight = [pool.submit(send, op) for op in batch]
                wait_until_accepted(port, len(batch))
                killed.append(kill_a_busy_worker(master.pid, port, rng))
            for future in in_flight:
                future.result()
    return killed


def send(operation: Operation) -> Operation:
    """Send the operation once; record what the client saw (no retry)."""
    visitor = operation.visitor
    try:
        if operation.kind == "confirm":
            answer = visitor.confirm_registration(operation.token)
        else:
            answer = visitor.post(f"/registrations/{operation.registration}/cancel",
                                  {"confirmation_token": operation.token}, JSON)
    except (OSError, http.client.HTTPException):
        operation.outcome = "unknown"  # reset, refused or cut off: the client cannot know
        return operation
    operation.status = answer.status
    body = answer.json()
    if operation.kind == "confirm" and answer.status == 201:
        operation.outcome = "done"
        operation.registration = body["data"]["registration"]["id"]
    elif operation.kind == "cancel" and answer.status == 200:
        assert body["data"]["alreadyCancelled"] is False  # each is sent once
        operation.outcome = "done"
    else:
        assert body["status"] in ("conflict", "not_found", "internal_error"), body
        operation.outcome = "refused"
    return operation


def prepare(base: str, events: list[str]) -> list[Operation]:
    """The visitors and their tokens, made before any worker is killed."""

    def to_confirm(index: int) -> Operation:
        visitor = HttpVisitor(base)
        token = visitor.prepare_registration(events[index], f"Person {index}",
                                             f"p{index}@example.com")
        return Operation("confirm", visitor, token)

    def to_cancel(index: int) -> Operation:
        visitor = HttpVisitor(base)
        token = visitor.prepare_registration(CANCELLED_EVENT, f"Canceller {index}",
                                             f"c{index}@example.com")
        registered = visitor.confirm_registration(token)
        assert registered.status == 201, registered.text[:200]
        registration = registered.json()["data"]["registration"]["id"]
        review = visitor.post("/registrations/cancellation", {"registration_id": registration},
                              HTMX)
        token = hidden_value(TOKEN_FIELD, review.text)
        return Operation("cancel", visitor, token, registration)

    with ThreadPoolExecutor(max_workers=16) as pool:
        return [*pool.map(to_confirm, range(CONFIRMATIONS)),
                *pool.map(to_cancel, range(CANCELLATIONS))]


def test_workers_killed_mid_write_lose_and_invent_nothing(tmp_path):
    database = tmp_path / "events.sqlite"
    import_events(database, tmp_path)
    rng = random.Random(2026)
    env = {"FLASK_DATABASE_BUSY_TIMEOUT_MS": str(BUSY_TIMEOUT_MS)}
    with gunicorn(database, workers=WORKERS, threads=4, env=env) as (base, master):
        operations = prepare(base, [rng.choice(list(EVENTS)) for _ in range(CONFIRMATIONS)])
        rng.shuffle(operations)
        killed = send_while_killing(operations, base, database, master, rng)
        done = operations
        seats = {event: HttpVisitor(base).request("GET", f"/events/{event}", headers=JSON)
                 .json()["data"]["event"]["remainingSeats"] for event in EVENTS}
        master_alive = master.poll() is None

    with sqlite3.connect(database) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    verified = verify(database, done, seats)
    counts = {outcome: sum(op.outcome == outcome for op in done)
              for outcome in ("done", "refused", "unknown")}
    refusals = Counter(op.status for op in done if op.outcome == "refused")
    print(f"\ncrash safety: {len(done)} concurrent confirmations and cancellations "
          f"({CONFIRMATIONS} + {CANCELLATIONS}), {len(killed)} workers killed with "
          f"SIGKILL; clients saw {counts['done']} done, {counts['refused']} refused "
          f"({', '.join(f'{n} with {code}' for code, n in sorted(refusals.items()))}), "
          f"{counts['unknown']} unknown (of which {verified['unknown went through']} went "
          f"through); {verified['rows']} rows verified, seats add up for {len(EVENTS)} events, "
          "integrity_check ok")
    assert master_alive, "the gunicorn master died"
    assert len(killed) == KILLS
    assert counts["done"] and counts["refused"]
    assert counts["unknown"] > 0, "no kill cut a request in flight"


def verify(database: Path | str, operations: list[Operation], seats: dict[str, int]
           ) -> dict[str, int]:
    """Compare the database (either backend) with what every client saw; returns counts."""
    confirmations = {row[0]: row for row in query_database(
        database, "SELECT token_hash, visitor_id, used_at FROM confirmations")}
    registrations = query_database(database, "SELECT id, visitor_id, state FROM registrations")
    active = dict(query_database(database, "SELECT event_id, count(*) FROM registrations "
                                           "WHERE state = 'active' GROUP BY event_id"))
    by_visitor: dict[str, list[tuple[str, str, str]]] = {}
    for row in registrations:
        by_visitor.setdefault(row[1], []).append(row)
    went_through = 0
    for op in operations:
        _, visitor_id, used_at = confirmations[hash_token(op.token)]
        # The token is spent in the transaction that does its work: spent means it happened.
        happened = used_at is not None
        if op.outcome == "unknown":
            went_through += happened
        else:
            assert happened is (op.outcome == "done"), (op.kind, op.outcome, op.status)
        rows = by_visitor.get(visitor_id, [])
        if op.kind == "confirm":
            assert len(rows) == (1 if happened else 0), (op.outcome, rows)
            if op.outcome == "done":
                assert rows == [(op.registration, visitor_id, "active")]
        else:
            assert rows == [(op.registration, visitor_id,
                             "cancelled" if happened else "active")]
    for event, (capacity, held) in EVENTS.items():
        assert active.get(event, 0) <= capacity - held, f"{event} sold past capacity"
        assert seats[event] == capacity - held - active.get(event, 0), event
    return {"rows": len(registrations) + len(operations), "unknown went through": went_through}
