"""Graceful shutdown attack: SIGTERM to the gunicorn master while writes are in flight.

The writes are made slow the way real ones get slow: another writer holds the database's
write lock, so they wait in their busy timeout, inside the app. Once the server has accepted
every one of them, the master gets SIGTERM; once its log says it is handling the signal, the
lock is released. Each in-flight write must complete with its normal answer (201, no
connection reset, nothing lost), and the master must then exit cleanly.
"""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest
from helpers import write_lock_held
from servers import HttpVisitor
from servers import gunicorn
from servers import port_of
from servers import wait_until_accepted
from servers import wait_until_logged

pytestmark = pytest.mark.slow

IN_FLIGHT = 6  # below the 2 x 4 request threads: every write is inside the app at once
# What the gunicorn master logs when it takes the SIGTERM (then it stops the workers).
SHUTDOWN_BEGUN = "Handling signal: term"


def test_sigterm_finishes_the_writes_in_flight_then_exits(tmp_path):
    database = tmp_path / "events.sqlite"
    env = {"FLASK_DATABASE_BUSY_TIMEOUT_MS": "20000"}
    with gunicorn(database, workers=2, threads=4, env=env) as (base, master):
        visitors = [HttpVisitor(base) for _ in range(IN_FLIGHT)]
        tokens = [visitor.prepare_registration("evt-agent-testing", f"Person {i}",
                                               f"p{i}@example.com")
                  for i, visitor in enumerate(visitors)]
        with ThreadPoolExecutor(max_workers=IN_FLIGHT) as pool:
            with write_lock_held(database):  # the slow part: writes wait for this lock
                answers = [pool.submit(visitor.confirm_registration, token)
                           for visitor, token in zip(visitors, tokens, strict=True)]
                wait_until_accepted(port_of(base), IN_FLIGHT)
                master.terminate()  # SIGTERM, with every write waiting inside the app
                wait_until_logged(database.with_suffix(".log"), SHUTDOWN_BEGUN, master)
                assert master.poll() is None, "the master exited with writes in flight"
            finished = [answer.result(timeout=60) for answer in answers]
        exit_code = master.wait(timeout=60)

    assert [answer.status for answer in finished] == [201] * IN_FLIGHT
    assert {answer.json()["status"] for answer in finished} == {"success"}
    assert exit_code == 0
    with sqlite3.connect(database) as conn:
        stored = conn.execute("SELECT count(*) FROM registrations WHERE state = 'active'"
                              ).fetchone()[0]
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert stored == IN_FLIGHT
    print(f"\ngraceful shutdown: SIGTERM with {IN_FLIGHT} writes in flight; all {IN_FLIGHT} "
          f"completed 201 (no reset), {stored} registrations stored, master exited {exit_code}")
