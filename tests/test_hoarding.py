"""Hoarding attacks against gunicorn, with the default limits (issue 11 §2).

Before the limits per address and per event, one short script from one address, with one
name and one e-mail and a fresh session per seat, took all 30 seats of an event in 0.3 s, and
8 sessions from one address got 248 writes accepted in about a second against a nominal 30 a
minute. Here the same scripts (`hoarding.py`) are stopped, while 40 people at 40 other
addresses register as usual.

The server runs two workers, as the attack found it: the budgets are the host's, counted in
one file by every worker, so they are exact however the requests are spread (with counters in
each worker, one e-mail took 10 seats through 2 workers against a budget of 5).
"""

from __future__ import annotations

import pytest
from helpers import JSON
from hoarding import Tally
from hoarding import burst
from hoarding import hoard
from hoarding import take_one_seat
from servers import HttpVisitor
from servers import gunicorn

from webapp.config import defaults
from webapp.web.limits import BUDGETS

pytestmark = pytest.mark.slow

EVENT = "evt-python-data-taipei"  # 30 seats left of 40
SEATS = 30
PEOPLE = 40
# The defaults of every limit (the test servers otherwise raise them for the crowds they play).
DEFAULT_LIMITS = {f"FLASK_{budget.setting}": None for budget in BUDGETS}
DEFAULTS = defaults("instance")


def summarize(counts) -> str:
    return (f"hoarding: the hoarder took {counts['hoarded']} of {SEATS} seats "
            f"({counts['accepted']} of {counts['writes']} writes accepted); a burst of "
            f"{counts['burst sent']} writes from 8 sessions had {counts['burst accepted']} "
            f"accepted; {counts['registered']} of {PEOPLE} people at their own addresses "
            f"registered, the others found the event full")


def seats_left(base: str) -> int:
    answer = HttpVisitor(base).request("GET", f"/events/{EVENT}", headers=JSON)
    left: int = answer.json()["data"]["event"]["remainingSeats"]
    return left


def budget(setting: str) -> int:
    """The smallest number of requests a default budget allows (its first window)."""
    return int(DEFAULTS[setting].split(" per ")[0])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    database = tmp_path_factory.mktemp("hoarding") / "events.sqlite"
    with gunicorn(database, workers=2, threads=8, env=DEFAULT_LIMITS) as (base, _):
        yield base


def test_one_address_cannot_take_every_seat(server, tally):
    assert seats_left(server) == SEATS
    taken = hoard(server, EVENT, SEATS)
    assert taken.seats == 1  # one e-mail address holds one seat of an event
    assert taken.statuses[409] > 0 and taken.statuses[429] > 0
    # From another address, a new e-mail address for every seat: the address's budget for the
    # event stops it (the first address spent that budget on refused tries).
    more = hoard(server, EVENT, SEATS, source="127.0.3.1", one_email=False)
    assert more.seats == budget("RATELIMIT_REGISTRATIONS_PER_EVENT_ADDRESS") == 10
    assert more.statuses[429] > 0
    tally.update(hoarded=taken.seats + more.seats, writes=taken.writes + more.writes,
                 accepted=taken.accepted + more.accepted)
    assert seats_left(server) == SEATS - taken.seats - more.seats

    # The people who come next, each from an address of their own, register as usual until
    # the event is full; none of them is refused for the hoarder's doing.
    people = Tally()
    answers = [take_one_seat(server, EVENT, people, source=f"127.0.1.{n}", name=f"Person {n}",
                             email=f"person{n}@example.com") for n in range(1, PEOPLE + 1)]
    tally["registered"] = answers.count(201)
    assert answers.count(201) == SEATS - taken.seats - more.seats
    assert set(answers) == {201, 409}  # confirmed, or the event was full
    assert seats_left(server) == 0


def test_sessions_from_one_address_share_its_ceiling(server, tally):
    """8 sessions of 31 writes each (each session alone is allowed 30 a minute)."""
    sent = burst(server, "evt-webmcp-intro", sessions=8, writes_each=31,
                 source="127.0.2.1")
    tally.update({"burst sent": sent.writes, "burst accepted": sent.accepted})
    assert sent.writes == 248
    assert sent.accepted == budget("RATELIMIT_WRITES_PER_ADDRESS") == 120
