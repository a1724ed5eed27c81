"""The site's time: the app's (replaceable) clock and the time zone events are shown in.

Every part of the site that reasons about time reads it here, so tests can set the time.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from datetime import datetime
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
