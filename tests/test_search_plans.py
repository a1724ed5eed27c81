"""Search picks its plan by how many events the words match, and every plan finds the same
events, with a count that is exact up to the cap.
"""

from __future__ import annotations

import re
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from suite_clock import suite_start

from webapp.datasets.synthetic import COMMON_WORD
from webapp.datasets.synthetic import generate_events
from webapp.domain.schemas import PAGE_SIZE
from webapp.domain.schemas import SEARCH_COUNT_CAP
from webapp.storage import EventQuery
from webapp.storage.sqlite import COMMON_TERM_THRESHOLD
from webapp.storage.sqlite import SQLiteStorage

NOW = suite_start()
EVENTS = 3000  # enough for COMMON_WORD to pass COMMON_TERM_THRESHOLD among upcoming events


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A database of synthetic events, and the events themselves to check results against."""
    path = tmp_path_factory.mktemp("plans") / "events.sqlite"
    events = list(generate_events(EVENTS, seed=11, now=NOW, timezone=ZoneInfo("Asia/Taipei")))
    SQLiteStorage.prepare(path)
    storage = SQLiteStorage.open(path)
    with storage.bulk_load():
        storage.add_events(events)
    yield storage, events
    storage.close()


def expected(events, pattern: str, **filters):
    """Upcoming events whose title or summary has a word matching `pattern`, soonest first."""
    word = re.compile(rf"\b{pattern}", re.IGNORECASE)
    found = [e for e in events if e.starts_at >= NOW
             and word.search(f"{e.title} {e.summary}")
             and all(getattr(e, name) == value for name, value in filters.items())]
    return sorted(found, key=lambda e: (e.starts_at, e.id))


def explain(storage, **query):
    """SQLite's plan for the first page and the count of a search, as the app asks it."""
    return storage.explain_search(EventQuery(starts_after=NOW, **query), PAGE_SIZE,
                                  SEARCH_COUNT_CAP)


@pytest.mark.parametrize(("text", "filters", "plan", "match"), [
    (None, {"location": "taipei"}, "filters", None),
    ("Haskell", {}, "rare words", '"Haskell"'),
    ("webm", {}, "rare words", '"webm"*'),
    (COMMON_WORD, {}, "common words", f'"{COMMON_WORD}"'),
    (COMMON_WORD, {"location": "online", "level": "advanced"}, "common words",
     f'"{COMMON_WORD}"'),
    ("comm", {}, "common prefix", '"comm"*'),
])


def test_the_plan_follows_how_many_events_the_words_match(generated, text, filters, plan,
                                                          match):
    storage, _ = generated
    chosen = storage.plan_search(EventQuery(starts_after=NOW, text=text, **filters))
    assert chosen.name == plan
    assert chosen.params.get("match") == match


def test_common_words_are_read_in_start_order_without_sorting_every_match(generated):
    storage, _ = generated
    common = explain(storage, text=COMMON_WORD)
    assert not any("TEMP B-TREE" in step for step in common["page"])
    assert any("events_by_start" in step for step in common["page"])
    # Counting without filters starts from the full-text side and stops at the cap.
    assert common["count"][1].startswith("SCAN events_fts VIRTUAL TABLE")

    within = explain(storage, text=COMMON_WORD, location="taipei", price="free")
    assert any("events_by_all_filters" in step for step in within["count"])
    assert not any("TEMP B-TREE" in step for step in within["page"])


def test_rare_words_are_read_from_the_full_text_index(generated):
    storage, _ = generated
    rare = explain(storage, text="Haskell")
    assert rare["page"][0].startswith("SCAN events_fts VIRTUAL TABLE")


@pytest.mark.parametrize(("text", "pattern", "filters"), [
    ("Haskell", "haskell", {}),
    ("webm", "webm", {"price": "free"}),
    (COMMON_WORD, COMMON_WORD, {}),
    (COMMON_WORD, COMMON_WORD, {"location": "kaohsiung", "price": "paid"}),
    ("comm", "comm", {}),
    ("comm", "comm", {"level": "beginner"}),
    ("python workshop", r"python\b.*\bworkshop|\bworkshop\b.*\bpython", {}),
])
def test_every_plan_finds_the_same_events_as_reading_them_all(generated, text, pattern,
                                                              filters):
    storage, events = generated
    wanted = expected(events, pattern, **filters)
    query = EventQuery(starts_after=NOW, text=text, **filters)
    first = storage.search_events(query, limit=10, offset=0, count_cap=len(events))
    assert [e.id for e in first.events] == [e.id for e in wanted[:10]]
    assert (first.count, first.count_capped) == (len(wanted), False)
    assert first.has_more == (len(wanted) > 10)
    later = storage.search_events(query, limit=10, offset=20, count_cap=len(events))
    assert [e.id for e in later.events] == [e.id for e in wanted[20:30]]


def test_the_count_is_exact_up_to_the_cap_for_every_plan(generated):
    storage, events = generated
    for text, pattern in (("Haskell", "haskell"), (COMMON_WORD, COMMON_WORD), ("comm", "comm")):
        total = len(expected(events, pattern))
        query = EventQuery(starts_after=NOW, text=text)
        exact = storage.search_events(query, limit=10, offset=0, count_cap=total)
        assert (exact.count, exact.count_capped) == (total, False)
        capped = storage.search_events(query, limit=10, offset=0, count_cap=total - 1)
        assert (capped.count, capped.count_capped) == (total - 1, True)
    assert len(expected(events, COMMON_WORD)) > COMMON_TERM_THRESHOLD


def test_a_date_window_bounds_a_common_word(generated):
    storage, events = generated
    week = EventQuery(starts_after=NOW, text=COMMON_WORD, starts_before=NOW + timedelta(days=7))
    found = storage.search_events(week, limit=100, offset=0, count_cap=1000)
    wanted = [e for e in expected(events, COMMON_WORD) if e.starts_at < NOW + timedelta(days=7)]
    assert [e.id for e in found.events] == [e.id for e in wanted]


@pytest.mark.parametrize("filters", [
    {"location": "taipei"}, {"price": "free"}, {"level": "beginner"},
    {"location": "taipei", "price": "free"}, {"location": "taipei", "level": "beginner"},
    {"price": "free", "level": "beginner"},
    {"location": "taipei", "price": "free", "level": "beginner"},
])
def test_every_filter_combination_is_read_in_start_order_and_counted_from_an_index(
        generated, filters):
    storage, _ = generated
    plan = explain(storage, **filters)
    assert not any("TEMP B-TREE" in step for step in plan["page"])
    assert any("COVERING INDEX" in step for step in plan["count"])
