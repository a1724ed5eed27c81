"""The tests' time: their clock never follows the wall clock, and a shifted run really moves
the clock of the servers it starts (see `suite_clock` and `shifted_clock/sitecustomize.py`).
"""

from __future__ import annotations

from datetime import date
from datetime import datetime
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest
from helpers import JSON
from servers import HttpVisitor
from servers import gunicorn
from shifted_clock import sitecustomize as shifted_clock
from suite_clock import SUITE_START
from suite_clock import suite_start

pytestmark = pytest.mark.shifted

# Wall clocks far from the suite's start and from each other: early morning in Taipei (still
# the day before in UTC) and a late evening in another year.
WALL_CLOCKS = [datetime.fromisoformat("2030-03-10T05:10:00+08:00"),
               datetime.fromisoformat("2031-10-20T23:50:00+08:00")]


@pytest.mark.parametrize("wall_clock", WALL_CLOCKS)
def test_the_tests_clock_does_not_follow_the_wall_clock(request, time_machine, wall_clock):
    time_machine.move_to(wall_clock.timestamp(), tick=False)
    clock = request.getfixturevalue("clock")  # made only now, under the moved wall clock
    assert clock() == suite_start()
    assert clock() != wall_clock


def test_the_sample_events_are_seeded_from_the_tests_clock(request, time_machine):
    time_machine.move_to(WALL_CLOCKS[0].timestamp(), tick=False)
    client = request.getfixturevalue("client")  # the app and its seed made under that clock
    event = client.get("/en/events/evt-webmcp-intro", headers=JSON).get_json()["data"]["event"]
    seed_day = suite_start().astimezone(shifted_clock.SITE_ZONE).date()
    # data/events.json: the workshop starts 14 days after the day it is seeded, at 10:00.
    starts = datetime.fromisoformat(event["startsAt"])
    assert (starts.date() - seed_day).days == 14
    assert starts.time().isoformat() == "10:00:00"


@pytest.mark.parametrize(("name", "now", "moment"), [
    ("early-morning", "2026-12-01T05:29:59+08:00", "2026-12-01T05:30:00+08:00"),
    ("early-morning", "2026-12-01T05:30:00+08:00", "2026-12-02T05:30:00+08:00"),
    ("early-morning", "2026-11-30T22:00:00+00:00", "2026-12-02T05:30:00+08:00"),
    ("new-years-eve", "2026-06-15T12:00:00+08:00", "2026-12-31T23:59:00+08:00"),
    ("new-years-eve", "2026-12-31T23:59:30+08:00", "2027-12-31T23:59:00+08:00"),
    ("new-years-eve", "2026-12-31T20:00:00+00:00", "2027-12-31T23:59:00+08:00"),
    ("leap-day", "2026-12-01T07:42:00+08:00", "2028-02-29T12:00:00+08:00"),
    ("leap-day", "2028-02-29T12:00:01+08:00", "2032-02-29T12:00:00+08:00"),
    ("2025-01-02T03:04:05+00:00", "2026-12-01T07:42:00+08:00", "2025-01-02T03:04:05+00:00"),
])
def test_a_shift_goes_to_the_next_such_moment_in_the_sites_zone(name, now, moment):
    assert shifted_clock.destination(name, datetime.fromisoformat(now)) == (
        datetime.fromisoformat(moment))


@pytest.mark.parametrize("name", ["tomorrow", "2028-02-29T12:00:00", ""])
def test_a_shift_to_nowhere_in_particular_is_refused(name):
    with pytest.raises(ValueError, match="SHIFT_CLOCK_TO"):
        shifted_clock.destination(name, SUITE_START)


def test_the_shift_uses_the_sites_time_zone(app):
    assert shifted_clock.SITE_ZONE.key == app.config["SITE_TIMEZONE"]


def test_a_shifted_clock_moves_the_servers_clock(tmp_path):
    folder = str(Path(shifted_clock.__file__).parent)
    # This server resolves its own destination, even inside a shifted run.
    # Its app keeps the (moved) real time, not the tests' start.
    env = {"PYTHONPATH": folder, shifted_clock.DESTINATION: "2032-02-29T12:00:00+08:00",
           shifted_clock.START: None, shifted_clock.OFFSET: None, "FLASK_CLOCK_START": None}
    with gunicorn(tmp_path / "events.sqlite", workers=1, env=env) as (base, _):
        answer = HttpVisitor(base).request("GET", "/events/evt-webmcp-intro", headers=JSON)
    assert answer.status == 200
    # The worker's wall clock (gunicorn's Date header) ...
    assert parsedate_to_datetime(answer.headers["Date"]).date() == date(2032, 2, 29)
    # ... and the app's clock, which seeded the workshop 14 days after that leap day.
    assert answer.json()["data"]["event"]["startsAt"] == "2032-03-14T10:00:00+08:00"


@pytest.mark.parametrize("start", ["2026-12-31T23:59:00+08:00", "2028-02-29T05:30:00+08:00"])
def test_a_server_started_at_a_moment_keeps_its_time_from_there(tmp_path, start):
    """FLASK_CLOCK_START: the servers the tests start live at a chosen moment, whatever the
    day it is (the app seeded the workshop 14 days after that moment's day, at 10:00)."""
    env = {"FLASK_CLOCK_START": start}
    with gunicorn(tmp_path / "events.sqlite", workers=1, env=env) as (base, _):
        answer = HttpVisitor(base).request("GET", "/events/evt-webmcp-intro", headers=JSON)
    starts = datetime.fromisoformat(answer.json()["data"]["event"]["startsAt"])
    day = datetime.fromisoformat(start).date()
    assert (starts.date() - day).days == 14 and starts.time().isoformat() == "10:00:00"
