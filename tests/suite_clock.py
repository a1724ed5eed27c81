"""The tests' time: the instant their clock starts at, and the clock they move by hand.

The app reads the time only through `app.config["CLOCK"]`, so in-process tests decide every
outcome on this clock, never on the real time. It starts at SUITE_START.
"""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from datetime import timedelta

# Noon in Taipei on an ordinary Monday, far from midnight there and in UTC.
SUITE_START = datetime(2026, 6, 15, 4, 0, tzinfo=UTC)


def suite_start() -> datetime:
    """Where the tests' clock starts."""
    return SUITE_START


class Clock:
    """A clock tests move by hand (the app reads the time only through it)."""

    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)
