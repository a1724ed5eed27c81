"""search_events over HTTP: every status, in all three renderings.

The tests run on SQLite; those marked `both_backends` run on PostgreSQL too. Each backend has
a search of its own (storage/), so PostgreSQL must find what SQLite finds for every text this
module types: `test_postgresql_finds_what_sqlite_finds_for_every_text_typed_here` compares
them, the texts taken from the cases below (a new case is compared the day it is added), and
tests/test_storage_contract.py compares them over a matrix of words, filters, dates and pages.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from datetime import timedelta
from urllib.parse import urlencode

import pytest
from bs4 import BeautifulSoup
from flask import Flask
from helpers import HTMX
from helpers import JSON
from helpers import jsonld_blocks
from helpers import one
from helpers import page_address
from helpers import the_jsonld
from helpers import three_answers
from servers import ONE_ADDRESS_CROWD
from services import fresh_schema
from suite_clock import Clock
from suite_clock import suite_start

from webapp import create_app
from webapp.clock import site_timezone
from webapp.config import SITE_ROOT
from webapp.datasets.synthetic import generate_events
from webapp.domain.outputs import EventListingOutput
from webapp.domain.schemas import LAST_PAGE
from webapp.domain.schemas import PAGE_SIZE
from webapp.domain.schemas import SEARCH_COUNT_CAP
from webapp.storage import Event
from webapp.storage.connection import close_backend
from webapp.storage.connection import get_db
from webapp.storage.search import normalize
from webapp.storage.search import query_terms
from webapp.web.templating import PAGER_JUMP_AFTER

TAIPEI_FREE_BEGINNER = "/events?location=taipei&price=free&level=beginner"
# What a search result carries: the fields its output schema declares.
# What every search item holds (the sample events declare no language, which is optional).
SUMMARY_KEYS = {field.data_key or name for name, field in EventListingOutput().fields.items()
                if field.required}


def search(client, **params):
    response = client.get("/en/events?" + urlencode(params), headers=JSON)
    return response.status_code, response.get_json()


@pytest.mark.both_backends
def test_filters_find_the_intro_workshop_first(client):
    code, body = search(client, location="taipei", price="free", level="beginner")
    assert code == 200
    assert body["status"] == "success"
    assert body["retryable"] is False
    events = body["data"]["events"]
    assert events[0]["id"] == "evt-webmcp-intro"
    assert all(set(event) == SUMMARY_KEYS for event in events)
    assert all((e["location"], e["price"], e["level"]) == ("taipei", "free", "beginner")
               for e in events)
    assert body["data"]["count"] == len(events)
    assert body["data"]["page"] == 1
    assert body["appliedFilters"] == {"location": "taipei", "price": "free", "level": "beginner"}
    assert body["constraintsRelaxed"] is False
    assert "get_event_details" in body["nextAction"]
    assert body["untrustedContent"]["fields"] == ["data.events[].title",
                                                  "data.events[].summary"]


def test_the_three_renderings_carry_the_same_result(client):
    as_json, partial, page = three_answers(client, TAIPEI_FREE_BEGINNER)
    assert as_json.status_code == partial.status_code == page.status_code == 200
    assert the_jsonld(partial.data) == as_json.get_json()
    assert the_jsonld(page.data) == as_json.get_json()
    assert b"<html" not in partial.data and b"<html" in page.data
    for response in (as_json, partial, page):
        assert {"Accept", "HX-Request", "HX-Request-Type"} <= set(response.vary)


def test_a_whole_form_and_a_json_client_get_the_same_object(client):
    """A browser submits every field (blank ones too); JSON clients send only what they mean."""
    whole_form = ("/events?query=&location=taipei&price=free&level=beginner"
                  "&date_from=&date_to=&page=1")
    from_form = client.get(whole_form, headers=JSON).get_json()
    from_json_body = client.get(TAIPEI_FREE_BEGINNER, headers=JSON).get_json()
    assert from_form == from_json_body
    assert "page" not in from_form["appliedFilters"]


def test_nothing_matching_is_no_results_not_an_error(client):
    code, body = search(client, location="kaohsiung", price="paid", level="advanced",
                        query="Agent")
    assert code == 200
    assert body["status"] == "no_results"
    assert body["requiresUserDecision"] is True
    assert body["constraintsRelaxed"] is False
    assert body["appliedFilters"] == {"location": "kaohsiung", "price": "paid",
                                      "level": "advanced", "query": "Agent"}
    assert "ask" in body["nextAction"].lower()
    assert body["data"]["events"] == []


def test_no_results_page_says_which_filters_were_applied(client):
    page = client.get("/en/events?location=kaohsiung&price=paid&level=advanced&query=Agent")
    soup = BeautifulSoup(page.data, "html.parser")
    # Each chip's own words (beside them, what a screen reader hears: "(remove)").
    chips = [str(link.contents[0]).strip()
             for link in soup.select("#results .empty-state .chips:not(.nearest) li > a")]
    assert chips == ["“Agent”", "Kaohsiung", "Paid", "Advanced"]


@pytest.mark.parametrize(("params", "field"), [
    ({"location": "tokyo"}, "location"),
    ({"price": "cheap"}, "price"),
    ({"level": "expert"}, "level"),
    ({"page": "0"}, "page"),
    ({"page": "two"}, "page"),
    ({"query": "x" * 101}, "query"),
    ({"date_from": "2026-13-01"}, "date_from"),
    ({"date_to": "yesterday"}, "date_to"),
    # The calendar's edges: the search's date arithmetic once overflowed into a 503 here.
    ({"date_from": "0001-01-01"}, "date_from"),
    ({"date_to": "9999-12-31"}, "date_to"),
    ({"date_from": "2027-02-01", "date_to": "2027-01-01"}, "date_from"),
    ({"colour": "blue"}, "colour"),
])
def test_bad_input_is_invalid_input_with_the_field_named(client, params, field):
    code, body = search(client, **params)
    assert code == 422
    assert body["status"] == "invalid_input"
    assert body["retryable"] is False
    assert list(body["errors"]) == [field]
    assert all(isinstance(text, str) and text for text in body["errors"][field])


def test_a_query_too_long_says_how_many_characters_it_may_hold(client):
    code, body = search(client, query="x" * 101)
    assert code == 422 and body["errors"] == {"query": ["Use at most 100 characters."]}
    chinese = client.get("/zh-TW/events?" + urlencode({"query": "x" * 101}), headers=JSON)
    assert chinese.get_json()["errors"] == {"query": ["最多 100 個字元。"]}


def test_field_errors_are_shown_next_to_the_fields(client):
    url = "/en/events?date_from=2027-02-01&date_to=2027-01-01"
    page = client.get(url)
    assert page.status_code == 422
    soup = BeautifulSoup(page.data, "html.parser")
    control = one(soup, "form#search_events [name=date_from]")
    assert control["aria-invalid"] == "true"
    error = soup.find(id=control["aria-describedby"])
    assert error is not None and "after the 'to' date" in error.get_text()

    # The htmx partial leaves the form in place and refreshes its error slots out of band.
    partial = BeautifulSoup(client.get(url, headers=HTMX).data, "html.parser")
    slot = one(partial, "#search_events-date_from-error")
    assert slot["hx-swap-oob"] == "innerMorph"
    assert "after the 'to' date" in slot.get_text()
    assert one(partial, "#search_events-query-error").get_text() == ""


FULL_TEXT_SYNTAX = [
    '"', 'webmcp"', "NOT", "a OR b", "title:WebMCP", "*", "(", "NEAR(a b)", "^WebMCP",
    "AND OR NOT", "'; DROP TABLE events; --", "-", "\u0000", "網頁",
]
AROUND_A_WORD = ['webmcp"', '"webmcp"', "^WebMCP", "(webmcp", "webmcp)", "-webmcp", "webmcp:"]


@pytest.mark.parametrize("text", FULL_TEXT_SYNTAX)
def test_full_text_syntax_in_the_query_is_just_text(client, text):
    code, body = search(client, query=text)
    assert code == 200
    assert body["status"] in ("success", "no_results")
    page = client.get("/zh-TW/events?" + urlencode({"query": text}))
    assert page.status_code == 200
    soup = BeautifulSoup(page.data, "html.parser")
    shown = [field["value"] for field in soup.select("#results input[name=event_id]")]
    assert shown == [event["id"] for event in body["data"]["events"]]


@pytest.mark.parametrize("text", AROUND_A_WORD)
def test_operator_characters_around_a_word_find_what_the_word_finds(client, text):
    _, plain = search(client, query="webmcp")
    _, decorated = search(client, query=text)
    assert plain["status"] == "success"
    assert ([e["id"] for e in decorated["data"]["events"]]
            == [e["id"] for e in plain["data"]["events"]])


def found_ids(client, text: str, **params) -> list[str]:
    _, body = search(client, query=text, **params)
    return [event["id"] for event in body["data"]["events"]]


IN_EACH_FIELD = [
    ("Untrusted Copy", "evt-malicious-copy"),  # title
    ("reveal every secret", "evt-malicious-copy"),  # summary
    ("onerror", "evt-malicious-copy"),  # description only
    ("Daan Co-working", "evt-webmcp-intro"),  # venue only
]


def test_query_matches_title_summary_venue_and_description(client):
    for typed, event_id in IN_EACH_FIELD:
        assert found_ids(client, typed) == [event_id], typed


# The matching rules of docs/design.md §8 as people meet them: (typed, an event it must find).
SECURITY = "evt-ai-security-taipei"  # 台北資安研討會：AI 代理人的安全設計
FINDS = [
    ("資安", SECURITY),  # a word inside a run of Chinese characters
    ("研討會", SECURITY),
    ("提示注入", SECURITY),  # four characters, from the summary
    ("台北國際會議", SECURITY),  # the venue
    ("臺北資安", SECURITY),  # 臺 is 台
    ("ＡＩ　代理人", SECURITY),  # full-width letters and space
    ("ai 代理人 安全設計", SECURITY),  # mixed: every part is needed
    ("台", SECURITY),  # one character is a search too
    ("JavaScript 月聚", "evt-js-meetup-taipei"),
    ("communi", "evt-webmcp-kaohsiung"),  # while typing "community"
    ("communit", "evt-webmcp-kaohsiung"),
    ("community", "evt-webmcp-kaohsiung"),
    ("WebMCP Kaohsiung", "evt-webmcp-kaohsiung"),
    ("ＷｅｂＭＣＰ", "evt-webmcp-kaohsiung"),
    ('"資安"', SECURITY),  # quotes and operators are only text
    ("(提示注入)*", SECURITY),
    ("-研討會^", SECURITY),
]
MISSES = [
    ("資安 JavaScript", SECURITY),  # mixed: one part missing
    ("研討會議", SECURITY),  # not in the text, though 研討會 and 會議 are
    ("communi Kaohsiung", "evt-webmcp-kaohsiung"),  # only the last word is a prefix
    ("ommunity", "evt-webmcp-kaohsiung"),  # the middle of a word is not its start
]


@pytest.mark.parametrize(("typed", "event_id"), FINDS)
def test_what_people_type_finds_the_event_in_json_and_on_the_page(client, typed, event_id):
    assert event_id in found_ids(client, typed)
    for language in ("zh-TW", "en"):
        page = client.get(f"/{language}/events?" + urlencode({"query": typed}))
        assert page.status_code == 200
        soup = BeautifulSoup(page.data, "html.parser")
        assert soup.select_one(f"#results input[name=event_id][value={event_id}]"), language
        assert one(soup, "form#search_events [name=query]")["value"] == typed


@pytest.mark.parametrize(("typed", "event_id"), MISSES)
def test_what_the_event_does_not_say_does_not_find_it(client, typed, event_id):
    assert event_id not in found_ids(client, typed)
    page = client.get("/zh-TW/events?" + urlencode({"query": typed}))
    soup = BeautifulSoup(page.data, "html.parser")
    assert not soup.select(f"#results input[name=event_id][value={event_id}]")


TAI_FORMS = ("臺中 rust", "台中 Rust", "台中市立", "臺")


def test_an_event_written_with_tai_is_found_by_either_form(app, client, clock):
    formal = Event(id="evt-formal-tai", title="臺中 Rust 讀書會", summary="每週一次。",
                   description="", starts_at=clock() + timedelta(days=3),
                   ends_at=clock() + timedelta(days=3, hours=2), location="taichung",
                   venue="臺中市立圖書館", price="free", level="beginner", capacity=20,
                   held_seats=0, registration_deadline=clock() + timedelta(days=2))
    with app.app_context():
        get_db().import_events([formal])
    for typed in TAI_FORMS:
        assert "evt-formal-tai" in found_ids(client, typed), typed


@pytest.mark.both_backends
@pytest.mark.parametrize("typed", ["台北", "臺北", "Taipei", "taipei"])
def test_the_keyword_finds_every_event_in_the_city_it_names(client, typed):
    in_taipei = found_ids(client, "", location="taipei")
    assert 0 < len(in_taipei) < PAGE_SIZE  # all of them on one page
    assert set(found_ids(client, typed)) >= set(in_taipei)
    assert set(found_ids(client, typed, location="taipei")) == set(in_taipei)


def test_one_chinese_character_finds_every_event_that_has_it(client):
    with_it = found_ids(client, "臺")  # folded to 台: 台北, 台中...
    assert {SECURITY, "evt-js-meetup-taipei", "evt-ai-agents-taichung"} <= set(with_it)
    # 台北 also finds the events that only say "Taipei" (the vocabulary): one character finds
    # the events whose own text holds it.
    written = {event["id"]: " ".join(str(value) for value in event.values())
               for event in json.loads((SITE_ROOT / "data" / "events.json").read_text("utf-8")
                                       )["events"]}
    with_taipei = [event_id for event_id in found_ids(client, "台北")
                   if "台" in normalize(written[event_id])]
    assert with_taipei and all(event_id in with_it for event_id in with_taipei)


def test_upcoming_events_only_soonest_first(client, clock):
    _, before = search(client, location="taipei", price="free", level="beginner")
    assert before["data"]["events"][0]["id"] == "evt-webmcp-intro"
    starts = [e["startsAt"] for e in before["data"]["events"]]
    assert starts == sorted(starts)

    clock.advance(days=20)  # the workshop (in 14 days) is now in the past
    _, after = search(client, location="taipei", price="free", level="beginner")
    assert "evt-webmcp-intro" not in [e["id"] for e in after["data"]["events"]]
    assert after["data"]["count"] == before["data"]["count"] - 1


def test_pages_of_ten(client):
    _, first = search(client)
    total = first["data"]["count"]
    assert total > 20
    assert len(first["data"]["events"]) == 10
    assert first["data"]["hasMore"] is True
    seen = []
    page = 1
    while True:
        _, body = search(client, page=page)
        seen += [e["id"] for e in body["data"]["events"]]
        if not body["data"]["hasMore"]:
            break
        page += 1
    assert len(seen) == len(set(seen)) == total

    _, past_the_end = search(client, page=page + 1)
    assert past_the_end["status"] == "success"
    assert past_the_end["data"]["events"] == []
    assert "past the last page" in past_the_end["message"]


# A word no sample event says: a search for it finds exactly the events a test adds with it.
COUNTED_WORD = "Quokka"


def add_events_saying(app, clock, word: str, how_many: int) -> None:
    """`how_many` upcoming events whose titles hold `word`, a day apart."""
    start = clock() + timedelta(days=3)
    with app.app_context():
        get_db().import_events([Event(
            id=f"evt-{word.lower()}-{number}", title=f"{word} 讀書會 {number}",
            summary="每週一次。", description="", starts_at=start + timedelta(days=number),
            ends_at=start + timedelta(days=number, hours=2), location="taichung",
            venue="臺中市立圖書館", price="free", level="beginner", capacity=20, held_seats=0,
            registration_deadline=start + timedelta(days=number - 1))
            for number in range(how_many)])


@pytest.mark.parametrize(("how_many", "page", "english", "chinese"), [
    (1, 1, "Found 1 upcoming event.", "共 1 場活動"),
    (1, 2, "Found 1 upcoming event, but page 2 is past the last page.",
     "共 1 場活動，但第 2 頁已超過最後一頁。"),
    (3, 1, "Found 3 upcoming events; showing 1 to 3.",
     "共 3 場活動，顯示第 1–3 場"),
    (3, 2, "Found 3 upcoming events, but page 2 is past the last page.",
     "共 3 場活動，但第 2 頁已超過最後一頁。"),
    (11, 2, "Found 11 upcoming events; showing 11 to 11.",  # one shown, 11 found
     "共 11 場活動，顯示第 11–11 場"),
])
def test_the_summary_says_the_count_in_its_plural_form(app, client, clock, how_many, page,
                                                      english, chinese):
    """One event, several events: the form the count takes in each language (Chinese has
    one), on the page and in the JSON answer alike."""
    add_events_saying(app, clock, COUNTED_WORD, how_many)
    code, body = search(client, query=COUNTED_WORD, page=page)
    assert code == 200 and body["data"]["count"] == how_many
    assert body["message"] == english
    for language, sentence in (("en", english), ("zh-TW", chinese)):
        answer = client.get(f"/{language}/events?" + urlencode({"query": COUNTED_WORD,
                                                                 "page": page}))
        summary = one(BeautifulSoup(answer.data, "html.parser"), ".results-summary")
        assert summary.get_text() == sentence, language


@pytest.mark.both_backends
def test_count_is_exact_up_to_the_cap_then_flagged(client, many_events):
    _, exact = search(client, location="online")
    assert exact["data"]["countCapped"] is False
    assert exact["data"]["count"] < SEARCH_COUNT_CAP
    _, capped = search(client)
    assert capped["data"]["count"] == SEARCH_COUNT_CAP
    assert capped["data"]["countCapped"] is True
    assert capped["data"]["hasMore"] is True
    assert capped["message"].startswith(f"Found more than {SEARCH_COUNT_CAP}")


@pytest.fixture
def many_events(app, clock):
    """More upcoming events than a search counts (synthetic ones beside the sample events)."""
    with app.app_context():
        get_db().add_events(event for event in generate_events(
            4 * SEARCH_COUNT_CAP, seed=5, now=clock(), timezone=site_timezone())
            if event.starts_at > clock())


def test_no_page_past_what_the_capped_count_can_show(client, many_events):
    """Every search reads at most SEARCH_COUNT_CAP events: the page after the last one the
    count can fill is refused, naming the last page, however many events match."""
    assert LAST_PAGE == 10  # 100 counted, 10 a page
    _, last = search(client, page=LAST_PAGE)
    assert last["status"] == "success" and len(last["data"]["events"]) == PAGE_SIZE
    assert last["data"]["countCapped"] is True
    assert last["data"]["hasMore"] is False  # more match, but no page shows them
    assert "last page" in last["message"] and "filters" in last["message"]
    for past in (LAST_PAGE + 1, 1000, 10**9):
        code, refused = search(client, page=past)
        assert code == 422 and refused["status"] == "invalid_input"
        assert refused["errors"] == {"page": [
            f"Give a page from 1 to {LAST_PAGE}: a search shows its first {SEARCH_COUNT_CAP} "
            "matches. Add words or filters to find others."]}


def test_the_last_page_offers_no_next_page(client, many_events):
    soup = BeautifulSoup(client.get(f"/en/events?page={LAST_PAGE}").data, "html.parser")
    assert soup.select_one(".pager a[rel=next]") is None
    assert one(soup, ".pager a[rel=prev]")["href"] == f"/en/events?page={LAST_PAGE - 1}"
    assert one(soup, ".pager input[name=page]")["max"] == str(LAST_PAGE)


def test_a_page_past_the_last_is_refused_in_every_rendering(client):
    """The same answer whatever the rendering, and the page control shows why."""
    url = f"/events?page={LAST_PAGE + 1}"
    as_json, partial, page = three_answers(client, url)
    assert as_json.status_code == partial.status_code == page.status_code == 422
    assert the_jsonld(partial.data) == the_jsonld(page.data) == as_json.get_json()
    error = one(BeautifulSoup(page.data, "html.parser"), "#search_events-page-error")
    assert f"from 1 to {LAST_PAGE}" in error.get_text()


def test_date_range_is_inclusive_in_the_site_time_zone(client):
    _, everything = search(client)
    first = everything["data"]["events"][0]
    day = first["startsAt"][:10]
    _, same_day = search(client, date_from=day, date_to=day)
    assert first["id"] in [e["id"] for e in same_day["data"]["events"]]
    assert all(e["startsAt"].startswith(day) for e in same_day["data"]["events"])
    assert same_day["appliedFilters"] == {"date_from": day, "date_to": day}


def test_the_page_has_exactly_one_json_ld_block(client):
    for url in ("/events", TAIPEI_FREE_BEGINNER, "/events?query=Agent&location=kaohsiung"
                "&price=paid&level=advanced", "/events?page=0"):
        assert len(jsonld_blocks(client.get(page_address(url)).data)) == 1


def test_pager_links_keep_the_filters(client):
    soup = BeautifulSoup(client.get("/en/events?price=free").data, "html.parser")
    next_link = one(soup, ".pager a[rel=next]")
    assert next_link["href"] == "/en/events?page=2&price=free"
    assert next_link["hx-get"] == next_link["href"]
    page_control = one(soup, ".pager input[name=page]")
    assert page_control["form"] == "search_events"
    assert page_control["value"] == ""


@pytest.mark.parametrize(("url", "value"), [
    ("/events?page=2", ""),  # empty: a search with other filters starts at its first page
    ("/events?page=0", "0"),  # a rejected page stays as typed, next to its error
])
def test_the_page_control_asks_for_the_first_page_unless_told(client, url, value):
    soup = BeautifulSoup(client.get(page_address(url)).data, "html.parser")
    assert one(soup, ".pager input[name=page]")["value"] == value


def the_wordiest_chinese_text() -> tuple[str, str]:
    """The sample event whose Chinese text makes the most query terms, and that text (its
    Chinese runs, as far as the 100 characters a query may hold)."""
    events = json.loads((SITE_ROOT / "data" / "events.json").read_text("utf-8"))["events"]
    texts = [(" ".join(re.findall(r"[\u4e00-\u9fff]+", event.get(field, "")))[:100], event["id"])
             for event in events for field in ("title", "summary", "description")]
    return max(texts, key=lambda found: len(query_terms(found[0])))


def test_the_wordiest_query_finds_its_event(client):
    """Every piece of every Chinese phrase is one term the event must hold: FTS5's parser once
    overflowed past about 30 of them (503 with a traceback for a valid query)."""
    text, event_id = the_wordiest_chinese_text()
    assert len(query_terms(text)) > 40, "the sample events should hold a long Chinese text"
    code, body = search(client, query=text)
    assert code == 200 and event_id in [event["id"] for event in body["data"]["events"]]
    code, body = search(client, query=text[:-1] + "鯨")
    assert code == 200 and body["status"] == "no_results"


# -- PostgreSQL finds what SQLite finds ------------------------------------------------------

TYPED = sorted({*FULL_TEXT_SYNTAX, *AROUND_A_WORD, "webmcp", "Agent", *TAI_FORMS, COUNTED_WORD,
                *(typed for typed, _ in FINDS + MISSES + IN_EACH_FIELD),
                the_wordiest_chinese_text()[0]})
WITH_FILTERS = [{}, {"location": "taipei", "price": "free"}, {"level": "beginner"}]


@pytest.fixture(scope="module")
def on_both_backends(tmp_path_factory, postgres_database) -> Iterator[dict[str, Flask]]:
    """The site with the sample events on SQLite and on PostgreSQL, seeded once for the
    module (the comparison only reads)."""
    folder = tmp_path_factory.mktemp("both-backends")
    apps = {name: create_app({
        "TESTING": True, "SECRET_KEY": "test secret", "DATABASE": database,
        "RATELIMIT_STORAGE_URI": f"host://{folder / name}-rate-limits.sqlite",
        "CLOCK": Clock(suite_start()), **ONE_ADDRESS_CROWD})
        for name, database in (("sqlite", str(folder / "events.sqlite")),
                               ("postgresql", fresh_schema(postgres_database)))}
    yield apps
    for app in apps.values():
        close_backend(app)


def test_postgresql_finds_what_sqlite_finds_for_every_text_typed_here(on_both_backends):
    """The same answer (events, order, count, status) from both backends, for every text the
    cases above type, alone and with filters."""
    clients = {name: app.test_client() for name, app in on_both_backends.items()}
    differences, found_some = [], 0
    for typed, filters in itertools.product(TYPED, WITH_FILTERS):
        address = "/en/events?" + urlencode({"query": typed, **filters})
        answers = {name: client.get(address, headers=JSON).get_json()
                   for name, client in clients.items()}
        sqlite, postgresql = ({key: answer[key] for key in ("status", "data", "message")}
                              for answer in answers.values())
        found_some += bool(sqlite["data"]["events"])
        if sqlite != postgresql:
            differences.append((typed, filters, sqlite, postgresql))
    assert differences == []
    assert found_some > len(TYPED), "the comparison must find events, not nothing"


def test_a_long_list_offers_its_jump_box(client, many_events):
    """Past a few pages, "Go to page [ ] Go": the box and its button belong to the search form."""
    jump = one(BeautifulSoup(client.get("/en/events").data, "html.parser"), ".pager-jump")
    assert not jump.has_attr("hidden")
    assert one(jump, "button[type=submit]")["form"] == "search_events"
    assert one(jump, "input[name=page]")["form"] == "search_events"


def test_a_short_list_keeps_its_page_control_hidden_unless_it_has_an_error(client):
    """Previous and Next are enough for a few pages; the page control stays in the search form
    (it is a tool parameter), hidden, and shows itself when it holds an error."""
    _, everything = search(client)
    assert 1 < everything["data"]["count"] <= PAGER_JUMP_AFTER * PAGE_SIZE
    short_list = BeautifulSoup(client.get("/en/events").data, "html.parser")
    assert one(short_list, ".pager-jump").has_attr("hidden")
    assert one(short_list, ".pager input[name=page]")["form"] == "search_events"
    refused = BeautifulSoup(client.get("/en/events?page=0").data, "html.parser")
    assert not one(refused, ".pager-jump").has_attr("hidden")
