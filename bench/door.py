"""13: the door's check-in round trip, as a ratio to `/health` measured in the same round.

On a copy of the 1 000 events dataset served by gunicorn (2 workers), an organization runs one
event with room for every attendee; attendees register as people do (prepare, confirm), and a
signed-in owner checks them in at the door as htmx posts the code (`HX-Request`, the panel
answered): each round, `CHECK_INS` new codes, each check-in timed from the POST to the whole
answer, and as many `GET /health` in turns with them (check-in, health; health, check-in; …).
Round 0 warms up and is not kept. The second post of a code ("already checked in") is timed
the same way, since a door in a hurry sends it too.

`python -m bench --only door` measures and prints it (about half a minute on 2 cores).
"""

from __future__ import annotations

import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from helpers import HTMX
from helpers import JSON
from helpers import query_database
from servers import HttpVisitor
from servers import gunicorn
from suite_clock import suite_start

from webapp import create_app
from webapp.domain.tokens import CheckInCodes
from webapp.domain.tokens import hash_token
from webapp.storage.connection import close_backend
from webapp.storage.connection import get_db

from .datasets import working_copy
from .mail import roomy_events
from .report import spread_text
from .report import table
from .stats import percentile
from .stats import ratios
from .stats import spread

SIZE = 1_000
CHECK_INS = 15  # per round and kind (first check-in, and the same code again)
SERVER_KEY = "server test secret"  # the secret key `servers.gunicorn` gives the server


def measure(rounds: int) -> dict[str, Any]:
    """The round trip of a check-in and of a refused second one, against `/health`."""
    with tempfile.TemporaryDirectory(prefix="webmcp-bench-door-") as scratch:
        copy = working_copy(SIZE, Path(scratch))
        (event_id,) = roomy_events(copy, 1)
        sign_in = prepare(copy)
        with gunicorn(copy, workers=2) as (base, _):
            owner, door = open_the_door(base, copy, event_id, sign_in)
            codes = register(base, event_id, CHECK_INS * (rounds + 1))
            return interleaved(owner, door, codes, rounds)


def prepare(copy: Path) -> str:
    """A sign-in link for the owner, kept in the copy before it is served; its path."""
    app = create_app({"DATABASE": str(copy), "SECRET_KEY": SERVER_KEY, "TESTING": True})
    with app.app_context():
        get_db().create_sign_in_link(hash_token("bench-door"), "door-owner@example.com",
                                     suite_start(), suite_start() + timedelta(days=1))
    close_backend(app)
    return "/sign-in/bench-door"


def open_the_door(base: str, copy: Path, event_id: str, sign_in: str
                  ) -> tuple[HttpVisitor, str]:
    """The owner signs in, starts an organization that runs the event: their browser and the
    door's address."""
    owner = HttpVisitor(base)
    owner.open_page(sign_in)
    owner.post(sign_in)
    owner.open_page("/en/organizer/organizations/new")
    owner.post("/en/organizer/organizations", {"name": "Bench meetup"})
    ((organization_id,),) = query_database(copy, "SELECT id FROM organizations")
    query_database(copy, "UPDATE events SET organization_id = ? WHERE id = ?",
                   (organization_id, event_id))
    door = f"/en/organizer/organizations/{organization_id}/events/{event_id}/door"
    if owner.open_page(door).status != 200:
        raise RuntimeError("the owner cannot open the door page")
    return owner, door


def register(base: str, event_id: str, count: int) -> list[str]:
    """`count` people register for the event; their check-in codes."""
    codes = CheckInCodes(SERVER_KEY.encode())
    found = []
    for number in range(count):
        visitor = HttpVisitor(base)
        token = visitor.prepare_registration(event_id, f"Person {number}",
                                             f"door-{number}@example.com")
        confirmed = visitor.confirm_registration(token)
        found.append(codes.code_for(confirmed.json()["data"]["registration"]["id"]))
    return found


def interleaved(owner: HttpVisitor, door: str, codes: list[str], rounds: int
                ) -> dict[str, Any]:
    """Each round: every code checked in, then posted again, each in turns with `/health`."""
    kinds = ("checkIn", "again", "health")
    kept: dict[str, list[list[float]]] = {kind: [] for kind in kinds}

    def timed(method: str, path: str, data: dict[str, str] | None, status: int) -> float:
        started = time.perf_counter()
        answer = (owner.post(path, data, {**HTMX}) if method == "POST"
                  else owner.request("GET", path, headers=JSON))
        elapsed = (time.perf_counter() - started) * 1000
        if answer.status != status:
            raise RuntimeError(f"{method} {path} answered {answer.status}, not {status}")
        return elapsed

    for number in range(rounds + 1):
        batch = codes[number * CHECK_INS:(number + 1) * CHECK_INS]
        times: dict[str, list[float]] = {kind: [] for kind in kinds}
        for kind, status in (("checkIn", 200), ("again", 409)):
            for i, code in enumerate(batch):
                steps = [("door", code), ("health", "")]
                for step, value in (steps if i % 2 == 0 else steps[::-1]):
                    if step == "door":
                        times[kind].append(timed("POST", door, {"code": value}, status))
                    else:
                        times["health"].append(timed("GET", "/health", None, 200))
        if number:
            for kind in kinds:
                kept[kind].append(times[kind])
    p50 = {kind: [percentile(ms, 0.50) for ms in kept[kind]] for kind in kinds}
    pooled = {kind: [ms for batch in kept[kind] for ms in batch] for kind in kinds}
    return {
        "checkIns": CHECK_INS * rounds,
        **{kind: {"p50Ms": spread(p50[kind]), "p95Ms": percentile(pooled[kind], 0.95)}
           for kind in kinds},
        # /health is timed twice as often as either kind; its median per round serves both.
        "checkInRatio": ratios(p50["checkIn"], p50["health"]),
        "againRatio": ratios(p50["again"], p50["health"]),
    }


def tables(found: dict[str, Any]) -> str:
    """Table 13 as text."""
    rows = [[label, spread_text(found[kind]["p50Ms"]), f"{found[kind]['p95Ms']:.2f}",
             spread_text(found[ratio]) if ratio else "1"]
            for label, kind, ratio in (("check-in (POST code → panel)", "checkIn", "checkInRatio"),
                                       ("same code again (refused)", "again", "againRatio"),
                                       ("GET /health", "health", ""))]
    return table(f"13. The door's check-in round trip ({found['checkIns']} check-ins, "
                 f"{SIZE:,} events, SQLite, gunicorn 2 workers)",
                 ["request", "p50 ms (min–max of rounds)", "p95 ms", "p50 ÷ /health"], rows)
