"""Many people confirm at once across gunicorn workers: never more seats than there are."""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from helpers import JSON
from servers import HttpVisitor
from servers import gunicorn

pytestmark = pytest.mark.slow

VISITORS = 40
EVENT = "evt-webmcp-intro"  # 8 seats


def test_forty_visitors_confirm_eight_seats_at_once(tmp_path):
    database = tmp_path / "events.sqlite"
    with gunicorn(database, workers=4) as (base, _):
        visitors = [HttpVisitor(base) for _ in range(VISITORS)]
        tokens = [v.prepare_registration(EVENT, f"Person {i}", f"p{i}@example.com")
                  for i, v in enumerate(visitors)]
        start = threading.Barrier(VISITORS)

        def confirm(pair):
            visitor, token = pair
            start.wait()
            return visitor.confirm_registration(token)

        with ThreadPoolExecutor(max_workers=VISITORS) as pool:
            answers = list(pool.map(confirm, zip(visitors, tokens, strict=True)))

        statuses = sorted(a.status for a in answers)
        bodies = [a.json() for a in answers]
        seats = HttpVisitor(base).request("GET", f"/events/{EVENT}", headers=JSON).json()
    print(f"\n{VISITORS} confirmations: {statuses.count(201)} created, "
          f"{statuses.count(409)} conflict")
    assert statuses == [201] * 8 + [409] * 32
    assert {b["status"] for b in bodies} == {"success", "conflict"}
    assert all("full" in b["message"] for b in bodies if b["status"] == "conflict")
    assert seats["data"]["event"]["remainingSeats"] == 0
    with sqlite3.connect(database) as conn:
        active = conn.execute("SELECT count(*) FROM registrations WHERE event_id = ? "
                              "AND state = 'active'", [EVENT]).fetchone()[0]
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert active == 8
