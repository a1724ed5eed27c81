"""The waitlist under races, on both backends: people cancel, accept offers, decline them, join
the line and confirm registrations prepared while seats were left, all at once (a barrier
starts them, each a browser of its own), while a sampler reads the seats again and again.
Every sample, and the end, keeps held seats + active registrations + offers within the
capacity; no seat idles while someone waits; every accepted offer is one registration."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from helpers import Visitor
from helpers import query_database
from test_waitlist import SMALL
from test_waitlist import add
from test_waitlist import join
from test_waitlist import places
from test_waitlist import prepare_joining
from test_waitlist import small_event

pytestmark = pytest.mark.both_backends

CAPACITY = 4
# The seats and the line, in one statement: one snapshot on either backend.
SEATS = ("SELECT e.capacity, e.held_seats, "
         "(SELECT count(*) FROM registrations r WHERE r.event_id = e.id "
         "AND r.state = 'active'), "
         "(SELECT count(*) FROM waitlist w WHERE w.event_id = e.id AND w.state = 'offered'), "
         "(SELECT count(*) FROM waitlist w WHERE w.event_id = e.id AND w.state = 'waiting') "
         "FROM events e WHERE e.id = ?")


Seats = tuple[int, int, int, int, int]


def posting(person: Visitor, url: str, data: dict[str, Any] | None = None
            ) -> Callable[[], int]:
    """A step of the race: `person` posts `data` to `url`; its HTTP status."""
    return lambda: int(person.post_json(url, data).status_code)


def seats(app) -> Seats:
    """capacity, held, active, offered, waiting."""
    ((capacity, held, active, offered, waiting),) = query_database(
        app.config["DATABASE"], SEATS, [SMALL])
    return capacity, held, active, offered, waiting


def within_capacity(sample: Seats) -> bool:
    capacity, held, active, offered, _ = sample
    return held + active + offered <= capacity


def race(steps: list[Callable[[], int]], sample: Callable[[], Seats]
         ) -> tuple[list[int], list[Seats]]:
    """Run `steps` at once (a barrier), sampling the seats until they all ended."""
    start = threading.Barrier(len(steps))
    done = threading.Event()
    samples: list[Seats] = []

    def sampler() -> None:
        while not done.is_set():
            samples.append(sample())

    def contender(step: Callable[[], int]) -> int:
        start.wait()
        return step()

    watching = threading.Thread(target=sampler)
    watching.start()
    try:
        with ThreadPoolExecutor(max_workers=len(steps)) as pool:
            results = list(pool.map(contender, steps))
    finally:
        done.set()
        watching.join()
    samples.append(sample())
    return results, samples


def test_cancellations_acceptances_and_joins_at_once_never_oversell(app, clock):
    add(app, small_event(clock(), capacity=CAPACITY))
    # Two people prepare while seats are left, to confirm later, in the race.
    latecomers = [Visitor(app) for _ in range(2)]
    late_tokens = [person.prepare_registration(SMALL)[1] for person in latecomers]
    holders = [Visitor(app) for _ in range(CAPACITY)]
    registered = [person.register(SMALL)["id"] for person in holders]
    waiting = [Visitor(app) for _ in range(6)]
    for person in waiting:
        assert join(person)["status"] == "success"
    # Two seats free before the race: offered to the first two waiting.
    for person, registration_id in list(zip(holders, registered, strict=True))[:2]:
        _, token = person.prepare_cancellation(registration_id)
        assert person.confirm_cancellation(registration_id, token).status_code == 200
    offers = [places(person)[0][0] for person in waiting[:2]]
    assert seats(app)[3] == 2
    # The rest prepare now: the cancellations of the two other holders, newcomers joining.
    cancellations = [(person, registration_id, person.prepare_cancellation(registration_id)[1])
                     for person, registration_id in list(zip(holders, registered,
                                                             strict=True))[2:]]
    newcomers = [Visitor(app) for _ in range(3)]
    join_tokens = [prepare_joining(person)[1] for person in newcomers]

    # The third one waiting leaves the line as seats are offered to them.
    third = places(waiting[2])[0][0]
    steps = [*(posting(person, f"/registrations/waitlist/{entry}/accept")
               for person, entry in zip(waiting[:2], offers, strict=True)),
             *(posting(person, f"/registrations/{registration_id}/cancel",
                       {"confirmation_token": token})
               for person, registration_id, token in cancellations),
             *(posting(person, "/registrations/waitlist", {"confirmation_token": token})
               for person, token in zip(newcomers, join_tokens, strict=True)),
             *(posting(person, "/registrations/confirm", {"confirmation_token": token})
               for person, token in zip(latecomers, late_tokens, strict=True)),
             posting(waiting[2], f"/registrations/waitlist/{third}/leave")]

    codes, samples = race(steps, lambda: seats(app))

    assert all(within_capacity(sample) for sample in samples), [
        sample for sample in samples if not within_capacity(sample)]
    assert codes[:2] == [201, 201]  # both offers were accepted in time
    assert codes[2:4] == [200, 200]
    assert codes[4:7] == [201] * 3  # everyone who confirmed joining stands in line
    assert codes[7:9] == [409, 409]  # a seat freed while people wait is theirs, not a latecomer's
    capacity, held, active, offered, still_waiting = samples[-1]
    # Nothing idles: every seat is registered or offered while anyone waits.
    assert held + active + offered == capacity and still_waiting > 0
    accepted = query_database(app.config["DATABASE"],
                              "SELECT count(*) FROM waitlist WHERE event_id = ? "
                              "AND state = 'accepted'", [SMALL])
    assert accepted == [(2,)]
    print(f"\n{len(samples)} samples, every one within {CAPACITY} seats")
