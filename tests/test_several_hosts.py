"""Several app hosts sharing only PostgreSQL, Redis and the secret key: two gunicorn masters
on different ports, several workers each, keep the guarantees of one.

- 40 visitors at 8 seats, through both hosts at once: exactly 8 succeed.
- One client's writes, alternating between the hosts, draw from one rate-limit budget (in
  memory each of the 6 workers would count alone).
- Workers SIGKILLed on both hosts during 200 confirmations and cancellations: nothing is
  lost or duplicated (the checks of test_crash_safety, on PostgreSQL).
- Confirmations through one host and then through two, in the same run: each sells every
  seat exactly once, and the test prints both throughputs side by side (a figure, not a
  verdict: this machine's cores are shared by both hosts).

Sessions are signed cookies: a visitor who prepared on one host confirms on the other.
"""

from __future__ import annotations

import json
import random
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from helpers import JSON
from helpers import query_database
from servers import HttpVisitor
from servers import confirm_at_once
from servers import gunicorn
from servers import port_of
from servers import socket_counts
from servers import wait_until_ready
from services import fresh_schema
from test_crash_safety import CANCELLATIONS
from test_crash_safety import CONFIRMATIONS
from test_crash_safety import EVENTS
from test_crash_safety import KILLS
from test_crash_safety import Operation
from test_crash_safety import import_events
from test_crash_safety import kill_a_busy_worker
from test_crash_safety import prepare
from test_crash_safety import send
from test_crash_safety import verify

from webapp import create_app
from webapp.storage.connection import prepare_database

pytestmark = pytest.mark.slow

HOSTS = 2
WORKERS = 3  # per host
VISITORS = 40
EVENT = "evt-webmcp-intro"  # 8 seats
WRITES_BUDGET = 12  # one client's writes, all hosts together (a window of a day: no boundary)


@pytest.fixture
def shared(postgres_database, redis_url) -> tuple[str, str]:
    """What the hosts share: a new PostgreSQL schema and the run's Redis (flushed)."""
    import redis

    with redis.Redis.from_url(redis_url) as counters:
        counters.flushall()
    return fresh_schema(postgres_database), redis_url


@contextmanager
def hosts(database: str, counters: str, folder: Path, env: dict[str, str] | None = None,
          count: int = HOSTS) -> Iterator[list[tuple[str, subprocess.Popen[bytes]]]]:
    """`count` independent gunicorn masters on one database and one Redis; [(base, master)]."""
    settings = {"FLASK_RATELIMIT_STORAGE_URI": counters, **(env or {})}
    with ExitStack() as stack:
        yield [stack.enter_context(gunicorn(database, workers=WORKERS, threads=4, env=settings,
                                            log=folder / f"host-{count}-{number}.log"))
               for number in range(count)]


def test_forty_visitors_through_two_hosts_take_exactly_eight_seats(shared, tmp_path):
    database, counters = shared
    with hosts(database, counters, tmp_path) as servers:
        bases = [base for base, _ in servers]
        visitors = [HttpVisitor(bases[number % HOSTS]) for number in range(VISITORS)]
        tokens = [v.prepare_registration(EVENT, f"Person {i}", f"p{i}@example.com")
                  for i, v in enumerate(visitors)]
        for number, visitor in enumerate(visitors):  # confirm on the other host
            visitor.base = bases[(number + 1) % HOSTS]
        answers = confirm_at_once(visitors, tokens)
        remaining = [HttpVisitor(base).request("GET", f"/events/{EVENT}", headers=JSON)
                     .json()["data"]["event"]["remainingSeats"] for base in bases]
    statuses = Counter(answer.status for answer in answers)
    active = query_database(database, "SELECT count(*) FROM registrations "
                                      "WHERE event_id = ? AND state = 'active'", [EVENT])[0][0]
    print(f"\nseveral hosts: {VISITORS} visitors, 8 seats, {HOSTS} hosts x {WORKERS} workers "
          f"on one PostgreSQL: {statuses[201]} succeeded, {statuses[409]} refused (full), "
          f"{max(active - 8, 0)} oversold; remaining seats seen by each host: {remaining}")
    assert statuses == {201: 8, 409: VISITORS - 8}
    assert active == 8
    assert remaining == [0] * HOSTS


# Per run: events of 30 free seats, each confirmed by as many visitors, 16 at a time.
THROUGHPUT_EVENTS = 3
THROUGHPUT_SEATS = 30
THROUGHPUT_CLIENTS = 16


def confirm_through(bases: list[str], events: list[str]) -> tuple[list[int], float]:
    """Every seat of `events` confirmed by its own visitor, the visitors spread over the
    hosts; the answers' statuses and the confirmations per second."""
    def prepared(number: int) -> tuple[HttpVisitor, str]:
        visitor = HttpVisitor(bases[number % len(bases)])
        event = events[number // THROUGHPUT_SEATS]
        return visitor, visitor.prepare_registration(event, f"Person {number}",
                                                     f"t{number}@example.com")

    with ThreadPoolExecutor(max_workers=THROUGHPUT_CLIENTS) as pool:
        pairs = list(pool.map(prepared, range(len(events) * THROUGHPUT_SEATS)))
        started = time.perf_counter()
        answers = list(pool.map(lambda pair: pair[0].confirm_registration(pair[1]), pairs))
        seconds = time.perf_counter() - started
    return [answer.status for answer in answers], len(answers) / seconds


def test_confirmations_through_one_host_then_two(shared, tmp_path):
    database, counters = shared
    runs = {1: [f"evt-throughput-one-{n}" for n in range(THROUGHPUT_EVENTS)],
            HOSTS: [f"evt-throughput-two-{n}" for n in range(THROUGHPUT_EVENTS)]}
    import_throughput_events(database, tmp_path, [e for events in runs.values() for e in events])
    measured = {}
    for count, events in runs.items():
        with hosts(database, counters, tmp_path, count=count) as servers:
            statuses, per_second = confirm_through([base for base, _ in servers], events)
        active = query_database(database, "SELECT count(*) FROM registrations WHERE "
                                          "state = 'active' AND event_id = ANY(?)", [events])
        measured[count] = (statuses, active[0][0], per_second)
    print(f"\nseveral hosts, throughput: {len(runs[1]) * THROUGHPUT_SEATS} confirmations, "
          f"{THROUGHPUT_CLIENTS} in flight, {WORKERS} workers a host: "
          + "; ".join(f"{count} host{'s' if count > 1 else ''} {per_second:.0f}/s"
                      for count, (_, _, per_second) in measured.items())
          + f" ({measured[HOSTS][2] / measured[1][2]:.2f}x)")
    for statuses, active, _ in measured.values():
        assert statuses == [201] * THROUGHPUT_EVENTS * THROUGHPUT_SEATS
        assert active == THROUGHPUT_EVENTS * THROUGHPUT_SEATS


def import_throughput_events(database: str, folder: Path, events: list[str]) -> None:
    """Events of THROUGHPUT_SEATS free seats each, imported before the hosts start."""
    app = create_app({"TESTING": True, "SECRET_KEY": "x", "DATABASE": database})
    with app.app_context():
        prepare_database()
    rows = [{"id": event, "title": f"Throughput {event}", "summary": "Seats to confirm.",
             "location": "online", "venue": "Online", "price": "free", "level": "beginner",
             "capacity": THROUGHPUT_SEATS, "heldSeats": 0,
             "schedule": {"startsInDays": 10, "startTime": "10:00", "durationMinutes": 60}}
            for event in events]
    file = folder / "throughput-events.json"
    file.write_text(json.dumps({"events": rows}))
    result = app.test_cli_runner().invoke(args=["import-events", str(file)])
    assert result.exit_code == 0, result.output


def test_one_clients_writes_through_both_hosts_draw_from_one_budget(shared, tmp_path):
    database, counters = shared
    env = {"FLASK_RATELIMIT_WRITES": f"{WRITES_BUDGET} per day"}
    with hosts(database, counters, tmp_path, env) as servers:
        bases = [base for base, _ in servers]
        client = HttpVisitor(bases[0])
        client.open_page(f"/events/{EVENT}")
        statuses = []
        for number in range(2 * WRITES_BUDGET):
            client.base = bases[number % HOSTS]
            statuses.append(client.post(f"/events/{EVENT}/save", headers=JSON).status)
    by_host = [Counter(statuses[number::HOSTS]) for number in range(HOSTS)]
    print(f"\nseveral hosts: one client, {len(statuses)} writes alternating over {HOSTS} hosts "
          f"x {WORKERS} workers, budget {WRITES_BUDGET}: {statuses.count(200)} accepted, "
          f"{statuses.count(429)} refused (per host: "
          f"{', '.join(f'{c[200]} accepted/{c[429]} refused' for c in by_host)}); "
          f"budget honoured: {statuses.count(200) == 1 + WRITES_BUDGET}")
    # The first write, before there is a visitor, counts for the browser session (as on one
    # host: test_rate_limiting); every later one for the visitor, whichever host serves it.
    assert statuses == [200] * (1 + WRITES_BUDGET) + [429] * (WRITES_BUDGET - 1)


@contextmanager
def confirmations_locked(database: str) -> Iterator[None]:
    """Hold the confirmations table so that no transaction can lock a row of it: every
    confirmation and cancellation waits inside its worker (reads still go on)."""
    with psycopg.connect(database) as holder:
        holder.execute("LOCK TABLE confirmations IN EXCLUSIVE MODE")
        yield
        holder.rollback()


def test_workers_killed_on_both_hosts_lose_and_duplicate_nothing(shared, tmp_path):
    database, counters = shared
    import_events(database, tmp_path)
    rng = random.Random(2026)
    with hosts(database, counters, tmp_path) as servers:
        bases = [base for base, _ in servers]
        operations = prepare(bases[0], [rng.choice(list(EVENTS)) for _ in range(CONFIRMATIONS)])
        rng.shuffle(operations)
        for number, operation in enumerate(operations):
            operation.visitor.base = bases[number % HOSTS]
        killed = send_while_killing(operations, database, servers, tmp_path, rng)
        seats = {event: HttpVisitor(bases[1]).request("GET", f"/events/{event}", headers=JSON)
                 .json()["data"]["event"]["remainingSeats"] for event in EVENTS}
        masters_alive = all(master.poll() is None for _, master in servers)
    verified = verify(database, operations, seats)
    counts = Counter(operation.outcome for operation in operations)
    print(f"\nseveral hosts, crash safety: {len(operations)} confirmations and cancellations "
          f"({CONFIRMATIONS} + {CANCELLATIONS}) over {HOSTS} hosts, {len(killed)} workers "
          f"SIGKILLed; clients saw {counts['done']} done, {counts['refused']} refused, "
          f"{counts['unknown']} unknown (of which {verified['unknown went through']} went "
          f"through); {verified['rows']} rows verified: nothing lost, nothing duplicated, "
          f"seats add up for {len(EVENTS)} events")
    assert masters_alive, "a gunicorn master died"
    assert len(killed) == KILLS
    assert counts["done"] and counts["refused"]
    assert counts["unknown"] > 0, "no kill cut a request in flight"


def send_while_killing(operations: list[Operation], database: str, servers, folder: Path,
                       rng: random.Random) -> list[int]:
    """Send the operations in concurrent waves, each while the confirmations are held, and
    kill a worker holding some of them, on each host in turn; returns the pids killed."""
    killed: list[int] = []
    wave = len(operations) // KILLS
    with ThreadPoolExecutor(max_workers=wave) as pool:
        for number, start in enumerate(range(0, len(operations), wave)):
            batch = operations[start:start + wave]
            for host, (_, master) in enumerate(servers):  # a killed worker's successor too
                replaced = len(range(host, number, HOSTS))
                wait_until_ready(folder / f"host-{HOSTS}-{host}.log", WORKERS + replaced, master)
            base, master = servers[number % HOSTS]
            with confirmations_locked(database):
                in_flight = [pool.submit(send, operation) for operation in batch]
                wait_until_accepted(batch, [base for base, _ in servers])
                killed.append(kill_a_busy_worker(master.pid, port_of(base), rng))
            for future in in_flight:
                future.result()
    return killed


def wait_until_accepted(batch: list[Operation], bases: list[str], timeout: float = 30) -> None:
    """Until each host has accepted the connections of the batch sent to it, none waiting."""
    wanted = {port_of(base): sum(op.visitor.base == base for op in batch) for base in bases}
    deadline = time.monotonic() + timeout
    while any(socket_counts(port) != (0, count) for port, count in wanted.items()):
        assert time.monotonic() < deadline, "the hosts did not accept the batch"
        time.sleep(0.05)
