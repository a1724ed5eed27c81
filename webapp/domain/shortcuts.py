"""The date ranges people pick with one tap on the search page — today, tomorrow, this
weekend, next week — written as the search's own date filters, so a pick is a plain link that
works without JavaScript and an agent reads the same `appliedFilters` as for dates typed."""

from __future__ import annotations

from datetime import date
from datetime import timedelta
from typing import NamedTuple

from flask_babel import lazy_gettext as _l
from flask_babel.speaklater import LazyString

SATURDAY, SUNDAY = 5, 6  # date.weekday()
DAY = timedelta(days=1)


class DateRange(NamedTuple):
    """A named range of days, both ends included."""

    label: LazyString
    first: date
    last: date


def date_ranges(today: date) -> list[DateRange]:
    """Today, tomorrow, this weekend (the coming Saturday and Sunday, or what is left of the
    weekend once it has begun) and next week (its Monday to its Sunday), seen from `today`."""
    weekday = today.weekday()
    saturday = today + timedelta(days=SATURDAY - weekday) if weekday < SATURDAY else today
    sunday = saturday + timedelta(days=SUNDAY - saturday.weekday())
    monday = today + timedelta(days=7 - weekday)
    return [
        DateRange(_l("Today"), today, today),
        DateRange(_l("Tomorrow"), today + DAY, today + DAY),
        DateRange(_l("This weekend"), saturday, sunday),
        DateRange(_l("Next week"), monday, monday + timedelta(days=6)),
    ]
