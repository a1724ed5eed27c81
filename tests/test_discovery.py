"""What search engines and link previews read: each page's own description, canonical
address and Open Graph tags; /robots.txt; /sitemap.xml with every upcoming event."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from bs4 import BeautifulSoup
from helpers import attribute
from helpers import one

SITEMAP = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9", "x": "http://www.w3.org/1999/xhtml"}


def head_of(client, path):
    return one(BeautifulSoup(client.get(path).data, "html.parser"), "head")


def test_an_event_page_describes_itself(client):
    head = head_of(client, "/en/events/evt-webmcp-intro")
    description = attribute(one(head, 'meta[name="description"]'), "content")
    assert description.startswith("A small-group, hands-on introduction to WebMCP")
    assert attribute(one(head, 'link[rel="canonical"]'), "href") == (
        "http://localhost/en/events/evt-webmcp-intro")
    og = {attribute(tag, "property"): attribute(tag, "content")
          for tag in head.select('meta[property^="og:"]')}
    assert og["og:title"] == "WebMCP Intro Workshop" and og["og:description"] == description
    assert og["og:url"] == "http://localhost/en/events/evt-webmcp-intro"
    assert og["og:locale"] == "en" and og["og:site_name"] == "WebMCP Events"
    assert head.select('meta[name="robots"]') == []


def test_pages_of_ones_own_are_not_indexed(client):
    for path in ("/zh-TW/registrations", "/zh-TW/saved", "/zh-TW/agents",
                 "/zh-TW/events/evt-webmcp-intro/register"):
        assert attribute(one(head_of(client, path), 'meta[name="robots"]'), "content") == "noindex"
    chinese = head_of(client, "/zh-TW/events?query=webmcp")
    assert attribute(one(chinese, 'meta[property="og:locale"]'), "content") == "zh_TW"
    # A search's address is not a page of its own: its canonical is the list's.
    assert attribute(one(chinese, 'link[rel="canonical"]'), "href") == (
        "http://localhost/zh-TW/events")


def test_robots_txt_keeps_crawlers_off_private_pages_and_names_the_sitemap(client):
    answer = client.get("/robots.txt")
    assert answer.status_code == 200 and answer.mimetype == "text/plain"
    lines = answer.get_data(as_text=True).splitlines()
    assert "Disallow: /zh-TW/registrations" in lines and "Disallow: /en/saved" in lines
    assert "Sitemap: http://localhost/sitemap.xml" in lines
    assert not any(line == "Disallow: /" or "events/evt" in line for line in lines)


def test_the_sitemap_lists_every_upcoming_event_in_each_language(client):
    answer = client.get("/sitemap.xml")
    assert answer.status_code == 200 and answer.mimetype == "application/xml"
    urls = ET.fromstring(answer.data).findall("s:url", SITEMAP)  # noqa: S314 - our own answer
    listed = [url.findtext("s:loc", default="", namespaces=SITEMAP) for url in urls]
    upcoming = set()
    page = 1
    while True:
        found = client.get(f"/events?page={page}", headers={"Accept": "application/json"})
        data = found.get_json()["data"]
        upcoming |= {event["id"] for event in data["events"]}
        if not data["hasMore"]:
            break
        page += 1
    for language in ("zh-TW", "en"):
        assert f"http://localhost/{language}/events" in listed
        assert f"http://localhost/{language}/about" in listed
        assert {loc.rsplit("/", 1)[1] for loc in listed
                if loc.startswith(f"http://localhost/{language}/events/")} == upcoming
    alternates = urls[0].findall("x:link", SITEMAP)
    assert {link.get("hreflang") for link in alternates} == {"zh-Hant-TW", "en"}
