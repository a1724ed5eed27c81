"""Organizer text is marked with its own language where it differs from the page's (WCAG
3.1.2): an English title on a Chinese page is read by a screen reader in an English voice, and
a Chinese one on an English page in a Chinese voice (`templating.lang_attribute`)."""

from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup
from bs4 import Tag
from helpers import JSON

# The script tells the language: the sample data has titles, summaries and venues written
# in Chinese (with Han characters) and in English (without).
HAN = re.compile(r"[\u3400-\u9fff]")


def spoken_in(element: Tag) -> str:
    """The language a screen reader reads `element` in: its own lang, or its nearest
    ancestor's (the page's, at the top)."""
    for node in [element, *element.parents]:
        if isinstance(node, Tag) and node.has_attr("lang"):
            return str(node["lang"])
    raise AssertionError("the page has no lang")


def expected(text: str) -> str:
    return "zh-Hant-TW" if HAN.search(text) else "en"


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_every_card_speaks_its_title_and_summary_in_their_language(client, language):
    languages_heard = set()
    page, more = 1, True
    while more:
        url = f"/{language}/events?page={page}"
        soup = BeautifulSoup(client.get(url).data, "html.parser")
        for card in soup.select(".event-card"):
            for part in card.select(".event-title a, .event-summary"):
                text = part.get_text(strip=True)
                assert spoken_in(part) == expected(text), (url, text)
                languages_heard.add(spoken_in(part))
        more = client.get(url, headers=JSON).get_json()["data"]["hasMore"]
        page += 1
    assert languages_heard == {"zh-Hant-TW", "en"}  # the sample data has both


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_an_event_page_speaks_the_organizers_words_in_their_language(client, language):
    events = client.get(f"/{language}/events", headers=JSON).get_json()["data"]["events"]
    for event in events:
        soup = BeautifulSoup(client.get(f"/{language}/events/{event['id']}").data,
                             "html.parser")
        parts = soup.select('#event-title, [itemprop="description"], .event-description p, '
                            '[itemprop="location"] [itemprop="name"]')
        assert len(parts) >= 4
        for part in parts:
            assert spoken_in(part) == expected(part.get_text(strip=True)), (event["id"], part)
        # The site's own words around them stay in the page's language.
        site_words = soup.select_one(".facts dt")
        assert site_words is not None
        assert spoken_in(site_words) == ("zh-Hant-TW" if language == "zh-TW" else "en")
