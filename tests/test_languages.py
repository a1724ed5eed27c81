"""Two languages, named in the URL: how a visitor gets theirs, keeps it and switches it, and
what each page says about its language (webapp/web/languages.py)."""

from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup
from helpers import CSRF_FIELD
from helpers import HTMX
from helpers import JSON
from helpers import PROJECT_ROOT
from helpers import attribute
from helpers import hidden_value
from helpers import one
from helpers import the_jsonld

from webapp.web.templating import span
from webapp.web.templating import when

EVENT = "evt-webmcp-intro"
PAGES = ["/events", "/events?query=webmcp&location=taipei", f"/events/{EVENT}",
         f"/events/{EVENT}/register", "/saved", "/registrations"]


@pytest.fixture
def browser(app):
    """A browser that says nothing of its languages (the client fixture reads English)."""
    return app.test_client()


@pytest.mark.parametrize(("accept", "language"), [
    (None, "zh-TW"),  # no preference: the site's default, for Taiwan
    ("zh-TW,zh;q=0.9,en;q=0.8", "zh-TW"),
    ("zh-Hant", "zh-TW"),
    ("zh-CN,zh;q=0.9", "zh-TW"),  # the only Chinese the site has
    ("en-US,en;q=0.9", "en"),
    ("fr-FR, en;q=0.5, zh;q=0.4", "en"),  # the best one the site speaks
    ("ja, ko", "zh-TW"),
    ("zh-CN", "zh-TW"),
    ("zh-HK", "zh-TW"),
    ("zh", "zh-TW"),
    ("en-GB", "en"),
    ("fr, en;q=0.5", "en"),
    # By rank, whether the site has the very tag or only its language: "en" is not preferred
    # for being exact, nor is the first tag written.
    ("zh-CN, en;q=0.5", "zh-TW"),
    ("zh-HK, en-US;q=0.9, en;q=0.8", "zh-TW"),
    ("en-GB;q=0.8, zh-TW;q=0.5", "en"),
    ("en;q=0.5, zh-CN;q=0.8", "zh-TW"),
    ("fr, en;q=0", "zh-TW"),  # q=0: not English
    ("en, zh", "zh-TW"),  # a tie: the site's own language
    ("*", "zh-TW"),
])
def test_a_first_visit_follows_accept_language(browser, accept, language):
    headers = {"Accept-Language": accept} if accept else {}
    answer = browser.get("/events?query=web&page=2", headers=headers)
    assert answer.status_code == 302
    assert answer.headers["Location"] == f"/{language}/events?query=web&page=2"
    assert {"Accept-Language", "Cookie"} <= set(answer.vary)


def test_the_home_page_goes_to_the_events_in_one_step(browser):
    answer = browser.get("/", headers={"Accept-Language": "en"})
    assert (answer.status_code, answer.headers["Location"]) == (302, "/en/events")
    assert "Accept-Language" in answer.vary
    assert browser.get("/zh-TW/").headers["Location"] == "/zh-TW/events"


def test_a_page_read_in_a_language_makes_it_the_visitors_choice(browser):
    page = browser.get("/en/events", headers={"Accept-Language": "zh-TW"})
    assert page.status_code == 200
    # The language switch is a link: following it is the choice, kept in a cookie.
    assert "language=en" in page.headers["Set-Cookie"]
    later = browser.get(f"/events/{EVENT}", headers={"Accept-Language": "zh-TW"})
    assert later.headers["Location"] == f"/en/events/{EVENT}"
    browser.get("/zh-TW/events")
    assert browser.get("/saved").headers["Location"] == "/zh-TW/saved"


def test_a_link_keeps_its_language_whatever_the_visitor_prefers(browser):
    for path in PAGES:
        for language, tag in (("zh-TW", "zh-Hant-TW"), ("en", "en")):
            other = "en" if language == "zh-TW" else "zh-TW"
            page = browser.get(f"/{language}{path}", headers={"Accept-Language": other})
            assert page.status_code == 200, path
            assert one(BeautifulSoup(page.data, "html.parser"), "html")["lang"] == tag
            assert page.headers["Content-Language"] == tag
            # The address names the language, so the answer does not vary by preference.
            assert "Accept-Language" not in page.vary


@pytest.mark.parametrize("path", PAGES)
def test_pages_name_their_other_languages(browser, path):
    soup = BeautifulSoup(browser.get(f"/zh-TW{path}").data, "html.parser")
    alternates = {attribute(link, "hreflang"): attribute(link, "href")
                  for link in soup.select("link[rel=alternate][hreflang]")}
    assert alternates == {"zh-Hant-TW": f"http://localhost/zh-TW{path}",
                          "en": f"http://localhost/en{path}",
                          "x-default": f"http://localhost{path}"}
    switch = soup.select(".language-switch a")
    assert [(attribute(a, "href"), attribute(a, "hreflang"), a.get_text()) for a in switch] == [
        (f"/en{path}", "en", "English")]


def test_every_address_a_page_gives_keeps_its_language(visitor):
    """Links, form actions, htmx requests and redirects of a Chinese page stay Chinese."""
    registration = visitor.register("evt-webmcp-spec-reading")
    visitor.save()
    addresses = []
    for path in [*PAGES, f"/registrations/{registration['id']}"]:
        soup = BeautifulSoup(visitor.get(f"/zh-TW{path}").data, "html.parser")
        for element in soup.select("[href], [action], [hx-get], [hx-post]"):
            for name in ("href", "action", "hx-get", "hx-post"):
                if element.has_attr(name):
                    addresses.append((path, element.name, attribute(element, name)))
    own_site = [(path, tag, address) for path, tag, address in addresses
                if address.startswith("/") and not address.startswith("/static/")]
    assert len(own_site) > 50
    others = [item for item in own_site if not item[2].startswith("/zh-TW/")]
    # Only the switch to English (and its hreflang alternate) leave the language, and the
    # calendar files, which have none.
    assert {address.split("/")[1] for _, _, address in others} == {"en", "calendar"}
    saved = visitor.post(f"/zh-TW/events/{EVENT}/save")
    assert (saved.status_code, saved.headers["Location"]) == (303, f"/zh-TW/events/{EVENT}")


def test_a_neutral_address_answers_machines_in_place(browser):
    """JSON clients and htmx keep the addresses they know; the language follows the request."""
    for accept, word in (("en", "Found"), ("zh-TW", "共")):
        answer = browser.get("/events?query=webmcp", headers={**JSON, "Accept-Language": accept})
        assert answer.status_code == 200
        assert answer.get_json()["message"].startswith(word)
        assert {"Accept-Language", "Cookie"} <= set(answer.vary)
        partial = browser.get("/events?query=webmcp", headers={**HTMX, "Accept-Language": accept})
        assert partial.status_code == 200
        assert the_jsonld(partial.data)["message"].startswith(word)


def test_a_form_posted_to_a_neutral_address_lands_in_the_visitors_language(browser):
    page = browser.get(f"/zh-TW/events/{EVENT}").get_data(as_text=True)
    token = hidden_value(CSRF_FIELD, page)
    saved = browser.post(f"/events/{EVENT}/save", data={"csrf_token": token},
                         headers={"Accept-Language": "en"})  # the cookie says zh-TW
    assert (saved.status_code, saved.headers["Location"]) == (303, f"/zh-TW/events/{EVENT}")


def test_the_machine_contract_names_neutral_addresses(client):
    """An event's `url` is the same in both languages: it leads each visitor to their own."""
    for language in ("zh-TW", "en"):
        found = client.get(f"/{language}/events?query=webmcp", headers=JSON).get_json()
        assert {event["url"] for event in found["data"]["events"]} == {
            f"/events/{event['id']}" for event in found["data"]["events"]}


@pytest.mark.parametrize("path", ["/health", "/health/version", "/openapi.json"])
def test_what_speaks_to_no_person_has_no_language(browser, path):
    answer = browser.get(path, headers={"Accept-Language": "zh-TW"})
    assert answer.status_code == 200
    assert "Accept-Language" not in answer.vary and "Content-Language" not in answer.headers
    assert browser.get(f"/zh-TW{path}").status_code == 404


def test_openapi_is_written_in_english_whatever_the_visitor_reads(browser):
    document = browser.get("/openapi.json", headers={"Accept-Language": "zh-TW"}).get_json()
    assert document["paths"]["/events"]["get"]["summary"] == "Search events"


def test_an_unknown_address_answers_in_the_visitors_language(browser):
    for path, accept, heading in (("/zh-TW/nope", "en", "找不到"),
                                  ("/en/nope", "zh-TW", "Not found"),
                                  ("/nope", "zh-TW", "找不到"), ("/nope", "en", "Not found")):
        answer = browser.get(path, headers={"Accept-Language": accept})
        assert answer.status_code == 404
        assert one(BeautifulSoup(answer.data, "html.parser"), "h1").get_text() == heading


@pytest.mark.parametrize(("language", "expected", "zone"), [
    ("zh-TW", "2026年12月15日（二）10:00", " 台灣時間（UTC+8）"),
    ("en", "Tue, 15 Dec 2026, 10:00", " Taiwan Time (UTC+8)"),
])
def test_times_are_written_for_the_language_and_name_their_zone_when_asked(
        app, language, expected, zone):
    with app.test_request_context(f"/{language}/events"):
        # Given in UTC, shown in the site's zone.
        assert when("2026-12-15T02:00:00+00:00") == expected
        assert when("2026-12-15T10:00:00+08:00") == expected
        assert when("2026-12-15T10:00:00+08:00", with_zone=True) == expected + zone
        assert when("2026-12-15T10:00:00+08:00", with_time=False) == expected.split(
            "10:00")[0].rstrip(", ")


ZONE_NOTE = {"zh-TW": "本頁時間皆為台灣時間（UTC+8）。", "en": "Times are Taiwan Time (UTC+8)."}
ZONE = {"zh-TW": "台灣時間", "en": "Taiwan Time"}


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_a_page_names_the_zone_of_its_times_once(client, language):
    soup = BeautifulSoup(client.get(f"/{language}/events/{EVENT}").data, "html.parser")
    times = [element.get_text() for element in soup.select("time")]
    # The start and end (one day: the date said once), the deadline: no zone at each.
    assert len(times) == 2 and "–" in times[0]
    assert not any(ZONE[language] in text for text in times)
    assert soup.get_text().count(ZONE[language]) == 1
    assert one(soup, ".zone-note").get_text() == ZONE_NOTE[language]


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_an_online_event_names_its_zone_where_it_says_when(client, language):
    """People join an online event from elsewhere: its time says which zone it is in."""
    online = client.get(f"/{language}/events?location=online", headers=JSON).get_json()
    event_id = online["data"]["events"][0]["id"]
    soup = BeautifulSoup(client.get(f"/{language}/events/{event_id}").data, "html.parser")
    assert ZONE[language] in one(soup, '[itemprop="startDate"]').get_text()
    results = BeautifulSoup(client.get(f"/{language}/events?location=online").data,
                            "html.parser")
    assert all(ZONE[language] in time.get_text() for time in results.select(".event-card time"))


def test_a_page_without_a_time_names_no_zone(client):
    soup = BeautifulSoup(client.get("/en/about").data, "html.parser")
    assert soup.select("time") == [] and soup.select(".zone-note") == []


def test_the_bridge_reads_its_fallback_sentences_from_the_page(client):
    """What the JS bridge answers when the site is unreachable is in the page's language."""
    for language, sentence in (("zh-TW", "目前無法連上網站"), ("en", "could not be reached")):
        body = one(BeautifulSoup(client.get(f"/{language}/events").data, "html.parser"), "body")
        assert sentence in attribute(body, "data-unreachable-message")
        assert attribute(body, "data-unreachable-next-action")
    script = (PROJECT_ROOT / "flask-webmcp" / "src" / "flask_webmcp" / "static"
              / "webmcp-bridge.js").read_text()
    assert re.search(r"dataset\b", script) and "unreachableMessage" in script



def test_a_span_of_one_day_says_the_date_and_zone_once(app):
    with app.test_request_context("/en/events"):
        assert span("2026-12-15T10:00:00+08:00", "2026-12-15T12:30:00+08:00") == (
            "Tue, 15 Dec 2026, 10:00–12:30")
        assert span("2026-12-15T10:00:00+08:00", "2026-12-15T12:30:00+08:00",
                    with_zone=True) == "Tue, 15 Dec 2026, 10:00–12:30 Taiwan Time (UTC+8)"
        assert span("2026-12-15T10:00:00+08:00", "2026-12-16T12:30:00+08:00") == (
            "Tue, 15 Dec 2026, 10:00 to Wed, 16 Dec 2026, 12:30")
