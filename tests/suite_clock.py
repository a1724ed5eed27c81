"""The tests' time: the instant their clock starts at, and the clock they move by hand.

The app reads the time only through `app.config["CLOCK"]`, so in-process tests decide every
outcome on this clock, never on the real time. It starts at SUITE_START, or, in a run whose
clock is shifted (`tests/shifted_clock`), at the instant that run moved every process to.
"""

from __future__ import annotations

import os
from datetime import UTC
from datetime import datetime
from datetime import timedelta

from shifted_clock.sitecustomize import DESTINATION
from shifted_clock.sitecustomize import START

# Noon in Taipei on an ordinary Monday, far from midnight there and in UTC: the ordinary run
# tests the ordinary case. The shifted runs start the clock at the edges of days and years.
SUITE_START = datetime(2026, 6, 15, 4, 0, tzinfo=UTC)


def suite_start() -> datetime:
    """Where the tests' clock starts: the shifted run's instant, else SUITE_START."""
    if not os.environ.get(DESTINATION):
        return SUITE_START
    if START not in os.environ:
        raise RuntimeError(f"{DESTINATION} is set but no clock was moved: put "
                           "tests/shifted_clock on PYTHONPATH (see the README)")
    return datetime.fromisoformat(os.environ[START])


class Clock:
    """A clock tests move by hand (the app reads the time only through it)."""

    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)
