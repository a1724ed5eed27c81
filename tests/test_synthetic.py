"""Synthetic events for benchmarks: deterministic, valid, and covering every vocabulary."""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from suite_clock import suite_start

from webapp.datasets.synthetic import COMMON_WORDS
from webapp.datasets.synthetic import FORMATS
from webapp.datasets.synthetic import RARE_TOPICS
from webapp.datasets.synthetic import SPREAD_DAYS
from webapp.datasets.synthetic import TOPICS
from webapp.datasets.synthetic import VOICES
from webapp.datasets.synthetic import generate_events
from webapp.domain.schemas import LEVELS
from webapp.domain.schemas import LOCATIONS
from webapp.domain.schemas import PRICES
from webapp.storage import EventQuery
from webapp.storage.sqlite import SQLiteStorage

NOW = suite_start()
TAIPEI = ZoneInfo("Asia/Taipei")
EVENT_ID = re.compile(r"^evt-[a-z0-9][a-z0-9-]{0,63}$")


@pytest.fixture(scope="module")
def events():
    return list(generate_events(20_000, seed=3, now=NOW, timezone=TAIPEI))


def test_the_same_seed_gives_the_same_events():
    first = list(generate_events(500, seed=7, now=NOW, timezone=TAIPEI))
    again = list(generate_events(500, seed=7, now=NOW, timezone=TAIPEI))
    other = list(generate_events(500, seed=8, now=NOW, timezone=TAIPEI))
    assert first == again
    assert [e.title for e in first] != [e.title for e in other]
    assert len(first) == 500


def test_every_event_is_a_valid_row(events):
    assert len({e.id for e in events}) == len(events)
    for event in events:
        assert EVENT_ID.match(event.id), event.id
        assert 1 <= len(event.title) <= 120 and 1 <= len(event.summary) <= 300
        assert event.location in LOCATIONS and event.price in PRICES and event.level in LEVELS
        assert event.venue and event.description.startswith(event.summary)
        assert event.ends_at > event.starts_at >= event.registration_deadline
        assert 0 <= event.held_seats <= event.capacity
        assert abs(event.starts_at - NOW) <= timedelta(days=SPREAD_DAYS + 1)


def test_every_vocabulary_is_covered(events):
    assert {e.location for e in events} == set(LOCATIONS)
    assert {e.price for e in events} == set(PRICES)
    assert {e.level for e in events} == set(LEVELS)
    titles = " ".join(e.title for e in events)
    assert all(topic.en in titles and topic.zh in titles for topic in TOPICS)
    assert all(form.en in titles and form.zh in titles for form in FORMATS)


def test_events_are_written_in_chinese_english_and_both(events):
    def voice(event):
        text = event.title + event.summary
        has_cjk = bool(re.search("[\u4e00-\u9fff]", text))
        has_latin_sentence = bool(re.search("[a-z]{3,} [a-z]{3,}", text))
        return {(True, False): "zh", (False, True): "en", (True, True): "mixed"}.get(
            (has_cjk, has_latin_sentence), "other")

    shares = Counter(voice(event) for event in events)
    assert set(shares) == {"zh", "en", "mixed"}
    for name in shares:
        expected = next(v.share for v in VOICES if v.name == name)
        assert abs(shares[name] / len(events) - expected) < 0.1, (name, shares)


def test_places_are_written_with_tai_both_ways(events):
    text = " ".join(e.title + e.venue + e.description for e in events)
    assert text.count("臺北") > 100 and text.count("台北") > 2 * text.count("臺北") / 3


def test_words_have_the_frequencies_search_meets(events):
    """A few words in most events of their language, topics falling off like a Zipf law,
    rare topics in about one event in two thousand each."""
    def share(word):
        return sum(word in e.title + e.summary + e.description for e in events) / len(events)

    assert share(COMMON_WORDS.zh) > 0.5 and share(COMMON_WORDS.en) > 0.3
    popular, middling = share(TOPICS[0].en), share(TOPICS[10].en)
    assert 0.05 < popular and 0.005 < middling < popular / 5
    rare = Counter(topic.slug for e in events for topic in RARE_TOPICS if topic.slug in e.id)
    assert all(count < len(events) / 500 for count in rare.values())
    assert len(rare) >= len(RARE_TOPICS) - 2


def test_the_command_fills_a_new_database_and_refuses_a_full_one(runner, tmp_path):
    database = tmp_path / "bench.sqlite"
    args = ["generate-events", "--count", "300", "--seed", "5", "--database", str(database)]
    result = runner.invoke(args=args)
    assert result.exit_code == 0, result.output
    assert "Generated 300 event(s)" in result.output
    with sqlite3.connect(database) as conn:
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 300
        assert conn.execute("SELECT count(*) FROM sqlite_stat1").fetchone()[0] > 0
    storage = SQLiteStorage.open(database)
    try:
        found = storage.search_events(EventQuery(starts_after=NOW - timedelta(days=400),
                                                 text=COMMON_WORDS.zh), 10, 0, 1000)
        assert found.count > 100
    finally:
        storage.close()

    again = runner.invoke(args=args)
    assert again.exit_code != 0
    assert "already holds events" in again.output
