"""Finding this weekend's event in two taps: the search page's quick picks (today, tomorrow,
this weekend, next week; each city) and its conditions, each a plain link that adds, swaps
or removes one condition and keeps the others (webapp/domain/shortcuts.py,
templates/events/_results.html)."""

from __future__ import annotations

from datetime import date
from datetime import timedelta
from urllib.parse import parse_qs
from urllib.parse import urlsplit

import pytest
from bs4 import BeautifulSoup
from helpers import JSON
from hypothesis import given
from hypothesis import strategies as st

from webapp.clock import site_today
from webapp.domain.schemas import LOCATIONS
from webapp.domain.shortcuts import SATURDAY
from webapp.domain.shortcuts import SUNDAY
from webapp.domain.shortcuts import date_ranges

DAYS = st.dates(min_value=date(2020, 1, 1), max_value=date(2040, 12, 31))


@given(DAYS)
def test_the_ranges_are_today_tomorrow_the_nearest_weekend_and_next_week(today):
    today_only, tomorrow, weekend, next_week = date_ranges(today)
    assert (today_only.first, today_only.last) == (today, today)
    assert (tomorrow.first, tomorrow.last) == (today + timedelta(days=1),) * 2
    # The weekend: Saturday and Sunday, not yet over, the nearest one (today if it is one).
    weekend_days = [weekend.first + timedelta(days=n)
                    for n in range((weekend.last - weekend.first).days + 1)]
    assert {day.weekday() for day in weekend_days} <= {SATURDAY, SUNDAY}
    assert weekend.last.weekday() == SUNDAY and today <= weekend.first
    assert weekend.first - today < timedelta(days=6)
    assert (today in weekend_days) == (today.weekday() in (SATURDAY, SUNDAY))
    # Next week: the Monday to Sunday after this one.
    assert next_week.first.weekday() == 0 and next_week.last - next_week.first == timedelta(6)
    assert timedelta(days=1) <= next_week.first - today <= timedelta(days=7)


def page(client, url: str) -> BeautifulSoup:
    answer = client.get(url)
    assert answer.status_code == 200, url
    return BeautifulSoup(answer.data, "html.parser")


def picks(soup: BeautifulSoup) -> dict[str, str]:
    """The quick picks on a results page: label -> address."""
    return {link.get_text(strip=True): str(link["href"])
            for link in soup.select("nav.quick-picks a.chip")}


def applied(client, url: str) -> dict[str, str]:
    """The conditions an agent is told were searched, for the search at `url`."""
    answer = client.get(url, headers=JSON)
    assert answer.status_code == 200, url
    filters: dict[str, str] = answer.get_json()["appliedFilters"]
    return filters


def test_this_weekend_in_taipei_is_two_taps(app, client):
    with app.app_context():
        weekend = date_ranges(site_today())[2]
    first = picks(page(client, "/en/events"))["This weekend"]
    second = picks(page(client, first))["Taipei"]
    assert applied(client, second) == {"location": "taipei",
                                       "date_from": weekend.first.isoformat(),
                                       "date_to": weekend.last.isoformat()}
    chosen = page(client, second).select("nav.quick-picks a[aria-current=true]")
    assert [link.get_text(strip=True) for link in chosen] == ["This weekend", "Taipei"]


@pytest.mark.parametrize("language", ["en", "zh-TW"])
def test_every_pick_sets_its_condition_keeps_the_others_and_a_second_tap_removes_it(
        app, client, language):
    start = f"/{language}/events?query=ai&price=free"
    with app.app_context():
        ranges = date_ranges(site_today())
    links = picks(page(client, start))
    assert len(links) == len(ranges) + len(LOCATIONS)
    for label, address in links.items():
        chosen = applied(client, address)
        assert {"query": "ai", "price": "free"}.items() <= chosen.items(), label
        added = {name: value for name, value in chosen.items() if name not in ("query", "price")}
        assert added in [{"date_from": r.first.isoformat(), "date_to": r.last.isoformat()}
                         for r in ranges] + [{"location": value} for value in LOCATIONS]
        again = dict(picks(page(client, address)))[label]
        assert applied(client, again) == {"query": "ai", "price": "free"}, label


def test_each_condition_is_a_link_to_the_same_search_without_it(app, client):
    with app.app_context():
        week = date_ranges(site_today())[3]
    conditions = {"query": "workshop", "location": "taipei", "price": "free",
                  "level": "beginner", "date_from": week.first.isoformat(),
                  "date_to": (week.last + timedelta(days=60)).isoformat()}
    url = "/zh-TW/events?" + "&".join(f"{name}={value}" for name, value in conditions.items())
    chips = page(client, url).select(".results-head ul.chips a, .empty-state ul.chips a")
    assert len(chips) == len(conditions)
    removed = []
    for chip in chips:
        href = str(chip["href"])
        left = applied(client, href)
        (gone,) = set(conditions) - set(left)
        assert left == {name: conditions[name] for name in left}
        removed.append(gone)
        assert "page" not in parse_qs(urlsplit(href).query)
        # Dates are written as people read them, not as ISO dates.
        assert conditions["date_to"] not in chip.get_text()
    assert sorted(removed) == sorted(conditions)
