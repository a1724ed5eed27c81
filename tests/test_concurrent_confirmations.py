"""Many people confirm at once across gunicorn workers: never more seats than there are."""

from __future__ import annotations

import pytest
from helpers import JSON
from helpers import query_database
from servers import HttpVisitor
from servers import confirm_at_once
from servers import gunicorn

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]

VISITORS = 40
EVENT = "evt-webmcp-intro"  # 8 seats


def test_forty_visitors_confirm_eight_seats_at_once(database_setting, backend_name, tmp_path):
    database = database_setting
    with gunicorn(database, workers=4, log=tmp_path / "gunicorn.log") as (base, _):
        visitors = [HttpVisitor(base) for _ in range(VISITORS)]
        tokens = [v.prepare_registration(EVENT, f"Person {i}", f"p{i}@example.com")
                  for i, v in enumerate(visitors)]
        answers = confirm_at_once(visitors, tokens)

        statuses = sorted(a.status for a in answers)
        bodies = [a.json() for a in answers]
        seats = HttpVisitor(base).request("GET", f"/events/{EVENT}", headers=JSON).json()
    print(f"\n{VISITORS} confirmations: {statuses.count(201)} created, "
          f"{statuses.count(409)} conflict")
    assert statuses == [201] * 8 + [409] * 32
    assert {b["status"] for b in bodies} == {"success", "conflict"}
    assert all("full" in b["message"] for b in bodies if b["status"] == "conflict")
    assert seats["data"]["event"]["remainingSeats"] == 0
    active = query_database(database, "SELECT count(*) FROM registrations WHERE event_id = ? "
                            "AND state = 'active'", [EVENT])
    assert active == [(8,)]
    if backend_name == "sqlite":
        assert query_database(database, "PRAGMA integrity_check") == [("ok",)]
