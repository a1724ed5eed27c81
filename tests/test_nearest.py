"""An empty search offers the nearest searches that find something — the same conditions on
any date, everything in the same place, the same conditions online — each with its count and
a link, while its own answer still says exactly what was searched
(`actions.events.nearest_searches`, templates/events/_results.html)."""

from __future__ import annotations

from datetime import timedelta
from itertools import product
from typing import Any
from urllib.parse import parse_qsl
from urllib.parse import urlencode
from urllib.parse import urlsplit

from bs4 import BeautifulSoup
from helpers import JSON

from webapp.clock import site_today
from webapp.domain.schemas import LOCATIONS

KINDS = {"any_date", "same_place", "online"}


def answer(client, filters: dict[str, str], language: str = "en") -> dict[str, Any]:
    """The search's JSON answer."""
    body: dict[str, Any] = client.get(f"/{language}/events?{urlencode(filters)}",
                                      headers=JSON).get_json()
    return body


def empty_searches(app, client) -> list[dict[str, str]]:
    """Searches of each place on one day, and of words in each place, that find nothing."""
    with app.app_context():
        today = site_today()
    days = [(today + timedelta(days=n)).isoformat() for n in range(0, 60, 3)]
    tried = [{"location": place, "date_from": day, "date_to": day}
             for place, day in product(LOCATIONS, days)]
    tried += [{"query": word, "location": place}
              for word, place in product(("webmcp", "python", "工作坊"), LOCATIONS)]
    return [filters for filters in tried
            if answer(client, filters)["status"] == "no_results"]


def test_each_offer_finds_what_it_says_and_the_search_says_what_was_searched(app, client):
    searches = empty_searches(app, client)
    assert len(searches) >= 5
    kinds_seen = set()
    for filters in searches:
        empty = answer(client, filters)
        assert empty["appliedFilters"] == filters and empty["constraintsRelaxed"] is False
        assert empty["data"]["events"] == []
        for near in empty["data"]["nearest"]:
            kinds_seen.add(near["kind"])
            assert near["filters"] != filters
            if near["kind"] == "any_date":
                assert near["filters"] == {name: value for name, value in filters.items()
                                           if not name.startswith("date_")}
            elif near["kind"] == "same_place":
                assert near["filters"] == {"location": filters["location"]}
            else:
                assert near["filters"] == {**filters, "location": "online"}
            found = answer(client, near["filters"])
            assert found["status"] == "success" and found["data"]["count"] == near["count"]
        offered = [near["kind"] for near in empty["data"]["nearest"]]
        assert offered == sorted(offered, key=["any_date", "same_place", "online"].index)
    assert kinds_seen == KINDS


def test_the_page_links_each_offer_with_its_count(app, client):
    searches = [filters for filters in empty_searches(app, client)
                if answer(client, filters)["data"]["nearest"]]
    filters = searches[0]
    nearest = answer(client, filters, "zh-TW")["data"]["nearest"]
    page = client.get(f"/zh-TW/events?{urlencode(filters)}")
    soup = BeautifulSoup(page.data, "html.parser")
    links = soup.select(".empty-state ul.nearest a")
    assert len(links) == len(nearest)
    for link, near in zip(links, nearest, strict=True):
        linked = dict(parse_qsl(urlsplit(str(link["href"])).query))
        assert linked == near["filters"]
        assert answer(client, linked)["data"]["count"] == near["count"]
        assert f"{near['count']} 場" in link.get_text()


def test_nothing_is_offered_when_nothing_is_near(client):
    empty = answer(client, {"query": "no-event-has-this-word"})
    assert empty["status"] == "no_results" and empty["data"]["nearest"] == []
    page = client.get("/en/events?query=no-event-has-this-word")
    assert b"Nearest matches" not in page.data
