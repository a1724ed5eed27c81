"""The attacks of issue 11 §2, as scripts against a real server: one client taking every seat
of an event, and one client bursting writes through many sessions.

A new session costs one GET, and a visitor holds one seat of an event, so the hoarder opens a
fresh session for every seat it takes, from one address, with one name and one e-mail. The
test (`test_hoarding.py`) and the closing figures of the issue run the same functions.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from dataclasses import field

from helpers import HTMX
from helpers import JSON
from helpers import TOKEN_FIELD
from servers import HttpVisitor

NAME = "Hoarder"
EMAIL = "hoarder@example.com"
RATE_LIMITED = 429
FULL = 409


@dataclass
class Tally:
    """What an attack sent and what the server let through."""

    writes: int = 0
    accepted: int = 0  # writes not refused with 429
    seats: int = 0  # registrations confirmed (201)
    seconds: float = 0.0
    statuses: Counter[int] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count(self, status: int) -> None:
        with self.lock:
            self.writes += 1
            self.accepted += status != RATE_LIMITED
            self.seats += status == 201
            self.statuses[status] += 1

    def __str__(self) -> str:
        return (f"{self.accepted} of {self.writes} writes accepted, {self.seats} seats taken, "
                f"in {self.seconds:.2f} s (answers: {dict(sorted(self.statuses.items()))})")


def take_one_seat(base: str, event_id: str, tally: Tally, source: str | None = None,
                  name: str = NAME, email: str = EMAIL) -> int:
    """A fresh session prepares and confirms one registration; the confirm's status (or the
    prepare's, when it was refused; 409 when the page offered no form: the event is full)."""
    visitor = HttpVisitor(base, source)
    page = visitor.open_page(f"/events/{event_id}/register")
    if visitor.csrf is None:
        return page.status if page.status != 200 else FULL
    prepared = visitor.post(f"/events/{event_id}/register",
                            {"attendee_name": name, "email": email}, HTMX)
    tally.count(prepared.status)
    token = TOKEN_FIELD.search(prepared.text)
    if token is None:
        return prepared.status
    confirmed = visitor.post("/registrations/confirm",
                             {"confirmation_token": token.group(1)}, JSON)
    tally.count(confirmed.status)
    return confirmed.status


def hoard(base: str, event_id: str, seats: int, threads: int = 8, source: str | None = None,
          one_email: bool = True) -> Tally:
    """One address, `threads` sessions at a time, one name and e-mail (or a new e-mail address
    for every attempt): try for every seat.

    Stops when the event is full (409) or the server refused as many attempts in a row as
    there are seats (it has stopped the hoarder).
    """
    tally = Tally()
    refusals = Counter[str]()
    full = threading.Event()
    attempts = itertools.count(1)

    def attempt() -> None:
        if full.is_set() or refusals["in a row"] >= seats:
            return
        email = EMAIL if one_email else f"hoarder+{next(attempts)}@example.com"
        status = take_one_seat(base, event_id, tally, source, email=email)
        if status == FULL:
            full.set()
        refusals["in a row"] = 0 if status == 201 else refusals["in a row"] + 1

    started = time.monotonic()
    with ThreadPoolExecutor(threads) as pool:
        # Twice as many attempts as seats: enough to take them all when nothing stops it.
        list(pool.map(lambda _: attempt(), range(2 * seats)))
    tally.seconds = time.monotonic() - started
    return tally


def burst(base: str, event_id: str, sessions: int = 8, writes_each: int = 31,
          source: str | None = None) -> Tally:
    """`sessions` browser sessions from one address, each saving an event `writes_each` times
    as fast as it can (a session alone is allowed 30 writes a minute by default)."""
    tally = Tally()
    visitors = [HttpVisitor(base, source) for _ in range(sessions)]
    for visitor in visitors:
        visitor.open_page(f"/events/{event_id}")

    def spend(visitor: HttpVisitor) -> None:
        for _ in range(writes_each):
            tally.count(visitor.post(f"/events/{event_id}/save", headers=JSON).status)

    started = time.monotonic()
    run_together(spend, visitors)
    tally.seconds = time.monotonic() - started
    return tally


def run_together(work: Callable[[HttpVisitor], None], visitors: list[HttpVisitor]) -> None:
    """`work` for every visitor at once, one thread each."""
    with ThreadPoolExecutor(len(visitors)) as pool:
        list(pool.map(work, visitors))
