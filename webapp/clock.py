"""The site's time: the app's (replaceable) clock and the time zone events are shown in.

Every part of the site that reasons about time reads it here, so tests can set the time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import date
from datetime import datetime
from datetime import timedelta
from zoneinfo import ZoneInfo

from flask import current_app


def site_timezone() -> ZoneInfo:
    """The time zone events are scheduled and shown in."""
    return ZoneInfo(current_app.config["SITE_TIMEZONE"])


def site_now() -> datetime:
    """The current time, from the app's clock."""
    clock: Callable[[], datetime] = current_app.config["CLOCK"]
    return clock()


def site_today() -> date:
    """Today's date in the site's time zone (what relative schedules count from)."""
    return site_now().astimezone(site_timezone()).date()


def clock_starting_at(start: datetime) -> Callable[[], datetime]:
    """A clock that reads `start` now and runs on at the pace of real time (a server started
    at a chosen moment: the edges of days and years, in tests)."""
    began = time.monotonic()
    return lambda: start + timedelta(seconds=time.monotonic() - began)
