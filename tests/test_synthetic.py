"""Synthetic events for benchmarks: deterministic, valid, and covering every vocabulary."""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from suite_clock import suite_start

from webapp.datasets.synthetic import COMMON_WORD
from webapp.datasets.synthetic import RARE_TOPICS
from webapp.datasets.synthetic import SPREAD_DAYS
from webapp.datasets.synthetic import TOPICS
from webapp.datasets.synthetic import generate_events
from webapp.domain.schemas import LEVELS
from webapp.domain.schemas import LOCATIONS
from webapp.domain.schemas import PRICES

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
    assert all(topic in titles for topic in TOPICS + RARE_TOPICS)


def test_dates_spread_over_the_year_before_and_after(events):
    upcoming = sum(e.starts_at > NOW for e in events) / len(events)
    assert 0.4 < upcoming < 0.6
    months = {(e.starts_at.year, e.starts_at.month) for e in events}
    assert len(months) >= 24


def test_one_word_is_in_most_events_and_rare_topics_in_few(events):
    with_common = sum(COMMON_WORD in e.summary for e in events) / len(events)
    assert 0.7 < with_common < 0.9
    rare = Counter(topic for e in events for topic in RARE_TOPICS if topic in e.title)
    assert set(rare) == set(RARE_TOPICS)
    assert all(count < len(events) / 200 for count in rare.values())


def test_the_command_fills_a_new_database_and_refuses_a_full_one(runner, tmp_path):
    database = tmp_path / "bench.sqlite"
    args = ["generate-events", "--count", "300", "--seed", "5", "--database", str(database)]
    result = runner.invoke(args=args)
    assert result.exit_code == 0, result.output
    assert "Generated 300 event(s)" in result.output
    with sqlite3.connect(database) as conn:
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 300
        assert conn.execute("SELECT count(*) FROM events_fts WHERE events_fts MATCH ?",
                            [COMMON_WORD]).fetchone()[0] > 150
        assert conn.execute("SELECT count(*) FROM sqlite_stat1").fetchone()[0] > 0

    again = runner.invoke(args=args)
    assert again.exit_code != 0
    assert "already holds events" in again.output
