"""Moves the wall clock of every Python process of a test run, so a run can show that the
suite's verdict holds at any hour and on any date.

Python imports `sitecustomize` as it starts. With this folder on PYTHONPATH and SHIFT_CLOCK_TO
set, each process (pytest, the gunicorn master it starts, the workers forked from that) runs
its whole life with the clock moved by time-machine. SHIFT_CLOCK_TO is one of

- `early-morning`: the next 05:30 in the site's time zone (Asia/Taipei), when the day there
  has begun but the day in UTC is still the day before;
- `new-years-eve`: the next 31 December, 23:59 there: the date, the month and the year change
  a minute into the run;
- `leap-day`: noon there on the next 29 February;
- or an ISO 8601 instant with its UTC offset, such as `2028-02-29T23:59:00+08:00`.

A name stands for the next such moment after the real time, so a run gives the same verdict
on whatever date it is made, and always moves the clock forward: the browsers of the browser
tests keep the real time and so still accept the cookies a shifted server sets.

The first process resolves the destination once and leaves in the environment the instant it
chose (SHIFTED_CLOCK_START, where the tests' own clock starts) and how far it moved the clock
(SHIFTED_CLOCK_OFFSET). The processes it starts inherit both and move their clocks by the same
offset, so every process agrees on the time, and the time goes on passing. Only the wall
clock moves (time.time, datetime.now and their kin): monotonic clocks, hence sleeps and
timeouts, keep real time, unlike under libfaketime, which breaks time.sleep.

While this folder is on PYTHONPATH, this file hides any other sitecustomize module.
"""

from __future__ import annotations

import calendar
import itertools
import os
import time
from collections.abc import Callable
from collections.abc import Iterator
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta
from zoneinfo import ZoneInfo

DESTINATION = "SHIFT_CLOCK_TO"
START = "SHIFTED_CLOCK_START"
OFFSET = "SHIFTED_CLOCK_OFFSET"
# The site's default time zone (FLASK_SITE_TIMEZONE): the moments are moments of its days.
SITE_ZONE = ZoneInfo("Asia/Taipei")

# For each name, the moments it may stand for, from a day on (one a day or one a year).
MOMENTS: dict[str, Callable[[date], Iterator[datetime]]] = {
    "early-morning": lambda day: (
        datetime(day.year, day.month, day.day, 5, 30, tzinfo=SITE_ZONE) + timedelta(days=n)
        for n in itertools.count()),
    "new-years-eve": lambda day: (
        datetime(year, 12, 31, 23, 59, tzinfo=SITE_ZONE) for year in itertools.count(day.year)),
    "leap-day": lambda day: (
        datetime(year, 2, 29, 12, 0, tzinfo=SITE_ZONE)
        for year in itertools.count(day.year) if calendar.isleap(year)),
}


def destination(name: str, now: datetime) -> datetime:
    """The first moment after `now` that `name` stands for, or the instant it spells."""
    if name in MOMENTS:
        return next(moment for moment in MOMENTS[name](now.astimezone(SITE_ZONE).date())
                    if moment > now)
    try:
        instant = datetime.fromisoformat(name)
    except ValueError:
        instant = None
    if instant is None or instant.tzinfo is None:
        raise ValueError(f"{DESTINATION}={name!r}: give one of {', '.join(MOMENTS)} or an "
                         "ISO 8601 instant with its UTC offset")
    return instant


def shift_this_process() -> None:
    """Move this process's wall clock where the environment says, for the rest of its life."""
    import time_machine

    real_now = datetime.now(UTC)
    if OFFSET not in os.environ:  # the first process of the run chooses for all the others
        start = destination(os.environ[DESTINATION], real_now)
        os.environ[START] = start.isoformat()
        os.environ[OFFSET] = repr((start - real_now).total_seconds())
    shifted_now = real_now + timedelta(seconds=float(os.environ[OFFSET]))
    # A timestamp, not an aware datetime: given a zone, time-machine would also set TZ.
    time_machine.travel(shifted_now.timestamp(), tick=True).start()
    # time-machine starts the clock ticking at its first reading: read it now, so the time
    # passes from here (and forked workers inherit this start, not one of their own).
    time.time()


if __name__ == "sitecustomize" and os.environ.get(DESTINATION):
    shift_this_process()
