"""Sharing an event: its card (the picture a link preview shows), the page's Open Graph tags
that point to it, the LINE and copy-link actions, and a search page titled by its words
(webapp/web/cards.py, templates/events/_share.html)."""

from __future__ import annotations

import io
from urllib.parse import parse_qs
from urllib.parse import urlsplit

import pytest
from bs4 import BeautifulSoup
from PIL import Image
from PIL import ImageFont

from webapp.web.cards import HEIGHT
from webapp.web.cards import WIDTH

EVENT = "evt-webmcp-intro"
CHINESE_EVENT = "evt-threat-modeling-kaohsiung"  # 網頁團隊的威脅建模工作坊


def head(client, url: str) -> BeautifulSoup:
    answer = client.get(url)
    assert answer.status_code == 200, url
    return BeautifulSoup(answer.data, "html.parser")


def meta(soup: BeautifulSoup, key: str) -> str | None:
    tag = soup.find("meta", attrs={"property": key}) or soup.find("meta", attrs={"name": key})
    return None if tag is None else str(tag["content"])


def card_of(client, url: str) -> Image.Image:
    answer = client.get(urlsplit(url).path)
    assert answer.status_code == 200 and answer.mimetype == "image/png", url
    return Image.open(io.BytesIO(answer.data))


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_an_event_page_is_an_article_with_its_card(client, language):
    soup = head(client, f"/{language}/events/{EVENT}")
    assert meta(soup, "og:type") == "article"
    image = meta(soup, "og:image")
    assert image is not None and image.startswith("http://localhost/")
    assert meta(soup, "og:image:width") == str(WIDTH)
    assert meta(soup, "og:image:height") == str(HEIGHT)
    assert meta(soup, "twitter:card") == "summary_large_image"
    card = card_of(client, image)
    assert card.size == (WIDTH, HEIGHT)


def test_the_card_speaks_the_pages_language(client):
    cards = [card_of(client, str(meta(head(client, f"/{language}/events/{EVENT}"), "og:image")))
             for language in ("zh-TW", "en")]
    assert cards[0].tobytes() != cards[1].tobytes()


def test_the_cards_font_draws_chinese_not_boxes(app):
    """Each Chinese character of a title gets its own glyph (a font without them draws the
    same empty box for every one)."""
    from webapp.web.cards import card_font
    with app.app_context():
        font = card_font()
    assert font is not None, "the suite installs fonts-noto-cjk (make browser)"
    face = ImageFont.truetype(str(font), 64, index=0)
    glyphs = {bytes(face.getmask(character)) for character in "網頁團隊的威脅建模工作坊"}
    assert len(glyphs) == len(set("網頁團隊的威脅建模工作坊"))


def test_a_chinese_events_card_differs_from_an_english_ones(client):
    english, chinese = (card_of(client, f"/zh-TW/events/{event}/card.png")
                        for event in (EVENT, CHINESE_EVENT))
    assert english.tobytes() != chinese.tobytes()


def test_a_card_is_public_cached_and_revalidated(client):
    """A previewer's first fetch gets a card it and every cache may keep: no cookie."""
    first = client.get(f"/en/events/{EVENT}/card.png")
    assert "Set-Cookie" not in first.headers
    assert first.headers["Cache-Control"] == "public, max-age=3600" and first.headers["ETag"]
    again = client.get(f"/en/events/{EVENT}/card.png",
                       headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.data == b""


def test_an_unknown_event_has_no_card(client):
    assert client.get("/en/events/evt-nothing-here/card.png").status_code == 404


@pytest.mark.parametrize("app_config", [{"CARD_FONT": "/nonexistent/font.ttc"}])
def test_without_a_cjk_font_there_is_no_card_rather_than_boxes(client):
    soup = head(client, f"/zh-TW/events/{EVENT}")
    assert meta(soup, "og:image") is None and meta(soup, "twitter:card") is None
    assert meta(soup, "og:type") == "article"
    assert client.get(f"/zh-TW/events/{EVENT}/card.png").status_code == 404


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_the_event_page_offers_line_and_its_link(client, language):
    soup = head(client, f"/{language}/events/{EVENT}")
    share = soup.select_one("section.share")
    assert share is not None
    address = str(share.select_one("input#share-address")["value"])  # type: ignore[index]
    assert urlsplit(address).path == f"/{language}/events/{EVENT}"
    line = share.select_one('a[href^="https://social-plugins.line.me/lineit/share"]')
    assert line is not None
    assert parse_qs(urlsplit(str(line["href"])).query)["url"] == [address]
    # The copy / share-sheet button needs JavaScript, so it starts hidden (people.js shows it).
    button = share.select_one("button[data-copy]")
    assert button is not None and button.has_attr("hidden")
    copied = share.select_one(f"#{button['data-copy']}")
    assert copied is not None and copied["value"] == address


@pytest.mark.parametrize(("url", "title"), [
    ("/en/events?query=workshop", "“workshop”: upcoming events"),
    ("/zh-TW/events?query=工作坊", "「工作坊」：即將舉辦的活動"),
    ("/en/events?location=taipei", "Upcoming events in Taipei"),
    ("/zh-TW/events?location=taipei", "台北即將舉辦的活動"),
    ("/en/events", "Upcoming events"),
])
def test_a_search_page_is_titled_by_what_it_searched(client, url, title):
    soup = head(client, url)
    assert soup.title is not None and soup.title.get_text().startswith(title)
