"""Database fault attacks on a running gunicorn server: the file removed, replaced by a
directory or by something that is not a database, made unreadable, or locked by another
writer past the busy timeout.

While the fault lasts, every request that needs the database answers `internal_error` (503,
retryable) with the fixed safe message, in JSON, partial and page renderings, and the cause
stays in the server log. Nothing half-written remains, and once the fault clears the next
request succeeds: a confirmation refused during the fault goes through, exactly once.

Why "unreadable" takes more than chmod here: tests run as root, and root reads any file
whatever its mode, through the capabilities CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH. The
server is therefore started without them (`setpriv --bounding-set`), as a service account
would run it, and then a file of mode 000 stops it like anyone else.
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3

import pytest
from faults import removed
from faults import replaced_by
from faults import unreadable
from helpers import FAULT_MARKERS
from helpers import HTMX
from helpers import JSON
from helpers import assert_no_leak
from helpers import stored_rows
from helpers import the_jsonld
from helpers import write_lock_held
from servers import HttpVisitor
from servers import gunicorn
from servers import ready_workers
from servers import wait_until_ready

from flask_webmcp.result import internal_error

pytestmark = pytest.mark.slow

EVENT = "evt-agent-testing"
BUSY_TIMEOUT_MS = 300
SAFE_MESSAGE = internal_error("any").message
NO_FILE_PERMISSION_OVERRIDE = ("setpriv", "--bounding-set", "-dac_override,-dac_read_search",
                               "--inh-caps", "-dac_override,-dac_read_search", "--")


def summarize(counts) -> str:
    return (f"database faults: {counts['faults']} faults injected into a running gunicorn, "
            f"{counts['refused']} requests answered internal_error during them, "
            f"{counts['recovered']} recoveries with the refused confirmation going through once, "
            f"{counts['rows']} stored rows verified unchanged")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("faults")
    wrapper = NO_FILE_PERMISSION_OVERRIDE if os.geteuid() == 0 else ()
    with gunicorn(folder / "events.sqlite", workers=2, threads=2, wrapper=wrapper,
                  env={"FLASK_DATABASE_BUSY_TIMEOUT_MS": str(BUSY_TIMEOUT_MS)}) as (base, process):
        yield base, folder / "events.sqlite", process


# Each fault, and what the server log (not the answer) says of its cause.
FAULTS = {
    "removed": (removed, "unable to open database file"),
    "replaced by a directory": (lambda db: replaced_by(db, None),
                                "unable to open database file"),
    "replaced by a non-database": (lambda db: replaced_by(db, b"not a database, " * 4096),
                                   "file is not a database"),
    # An empty file is an empty SQLite database: it opens, and holds none of the site's tables.
    "replaced by an empty file": (lambda db: replaced_by(db, b""), "no such table"),
    "unreadable": (unreadable, "unable to open database file"),
    "locked by another writer": (write_lock_held, "database is locked"),
}


def assert_internal_error(tally, answer, html: bool) -> None:
    assert answer.status == 503, answer.text[:200]
    envelope = the_jsonld(answer.text) if html else answer.json()
    assert envelope["status"] == "internal_error" and envelope["retryable"] is True
    assert envelope["message"] == SAFE_MESSAGE
    assert_no_leak(answer.text, markers=FAULT_MARKERS)
    tally["refused"] += 1


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_database_fault_answers_internal_error_then_recovers(tally, server, fault):
    base, database, _ = server
    visitor = HttpVisitor(base)
    token = visitor.prepare_registration(EVENT, "Ann Lee", f"ann.{len(fault)}@example.com")
    before = stored_rows(database)
    inject, cause = FAULTS[fault]
    log = database.with_suffix(".log")
    logged = log.stat().st_size
    with inject(database):
        tally["faults"] += 1
        writes = [
            visitor.confirm_registration(token),
            visitor.post(f"/events/{EVENT}/save", headers=JSON),
            visitor.post(f"/events/{EVENT}/save", headers=HTMX),
            visitor.post(f"/events/{EVENT}/register",
                         {"attendee_name": "Bo", "email": "bo@example.com"}),
        ]
        reads = [visitor.request("GET", "/events?query=agent", headers=JSON),
                 visitor.request("GET", f"/events/{EVENT}", headers=HTMX),
                 visitor.request("GET", "/events")]
        for answer, html in zip(writes, (False, False, True, True), strict=True):
            assert_internal_error(tally, answer, html)
        if fault == "locked by another writer":
            # WAL: readers never wait for the writer, so reading goes on during the lock.
            assert [answer.status for answer in reads] == [200, 200, 200]
        else:
            for answer, html in zip(reads, (False, True, True), strict=True):
                assert_internal_error(tally, answer, html)
    with log.open("rb") as server_log:
        server_log.seek(logged)
        assert cause.encode() in server_log.read(), "the cause is missing from the log"
    after = stored_rows(database)
    assert after == before, "a write refused during the fault left something behind"
    tally["rows"] += sum(len(rows) for rows in after.values())

    recovered = visitor.request("GET", "/events?query=agent", headers=JSON)
    assert recovered.status == 200 and recovered.json()["status"] == "success"
    confirmed = visitor.confirm_registration(token)
    assert confirmed.status == 201, confirmed.text[:200]
    registration = confirmed.json()["data"]["registration"]["id"]
    with sqlite3.connect(database) as conn:
        rows = conn.execute("SELECT id FROM registrations WHERE visitor_id = (SELECT visitor_id "
                            "FROM registrations WHERE id = ?)", [registration]).fetchall()
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert rows == [(registration,)]
    assert visitor.confirm_registration(token).status == 409  # spent now, once
    tally["recovered"] += 1



def test_a_worker_started_while_the_file_is_missing_creates_no_second_database(server):
    """Only the master creates the database: a worker replaced while the file is gone answers
    503 instead of starting an empty database beside the real one (where nobody exists)."""
    base, database, process = server
    visitor = HttpVisitor(base)
    assert visitor.request("GET", "/events", headers=JSON).status == 200
    log = database.with_suffix(".log")
    with removed(database):
        booted = ready_workers(log)
        worker = int(re.findall(r"Worker ready \(pid: (\d+)\)", log.read_text())[-1])
        os.kill(worker, signal.SIGKILL)
        wait_until_ready(log, booted + 1, process)  # the arbiter has booted its replacement
        answers = [visitor.request("GET", "/events", headers=JSON) for _ in range(6)]
        assert [answer.status for answer in answers] == [503] * 6
        assert not database.exists()
    assert visitor.request("GET", "/events", headers=JSON).status == 200
