"""The SQLite search index against a plain reading of every event: for words of every
frequency, with every set of filters, dates and pages, a search finds exactly the events that
hold all its terms, soonest first, counted up to the cap; and the index stays exact through
updates and rebuilds, and in a file adopted from the releases before `storage.schema`.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections import Counter
from contextlib import closing
from dataclasses import replace
from datetime import timedelta
from itertools import combinations
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from suite_clock import suite_start

from webapp.datasets.synthetic import generate_events
from webapp.storage import Event
from webapp.storage import EventQuery
from webapp.storage import StorageError
from webapp.storage import records
from webapp.storage import search
from webapp.storage.schema import MIGRATIONS
from webapp.storage.shared import terms_of
from webapp.storage.sqlite import ADOPTED
from webapp.storage.sqlite import SQLITE_UTILS_HISTORY
from webapp.storage.sqlite import SQLiteStorage

NOW = suite_start()
TAIPEI = ZoneInfo("Asia/Taipei")
EVENTS = 3000
CAP = 100
FILTERS: list[dict[str, Any]] = [
    {}, {"location": "kaohsiung"}, {"price": "paid"}, {"level": "advanced"},
    {"location": "taipei", "price": "free"}, {"location": "online", "level": "beginner"},
    {"price": "paid", "level": "intermediate"},
    {"location": "taichung", "price": "free", "level": "advanced"}]
# Words of every kind and frequency the generator writes, and searches people type: those
# that must find something among the generated events, then the rare ones (an event in two
# thousand: maybe none here) and those that find nothing.
FOUND = ["community", "社群", "台北", "臺北", "線上", "python", "Python 工作坊", "資安", "提示注入",
         "night", "黑客松 資料科學", "社群 分享", "communi", "c", "台", "WebMCP 工作坊",
         "AI 代理人", "ＡＩ", "kubernetes community ", "community for"]
TEXTS = [None, *FOUND, "haskell", "量子計算", "taipei 線上", "zzz", "!!!"]


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A database of synthetic events (Chinese, English and mixed), and the events."""
    path = tmp_path_factory.mktemp("search") / "events.sqlite"
    events = list(generate_events(EVENTS, seed=11, now=NOW, timezone=TAIPEI))
    SQLiteStorage.prepare(path)
    storage = SQLiteStorage.open(path)
    with storage.bulk_load():
        storage.add_events(events)
    yield storage, events
    storage.close()


def keys_of(storage: SQLiteStorage) -> dict[str, int]:
    return dict(storage.db.execute("SELECT id, search_key FROM events").fetchall())


@functools.cache
def held(event: Event) -> frozenset[str]:
    return frozenset(terms_of(event))


def expected(storage, events, query: EventQuery) -> list[str]:
    """The ids a search must find, read from every event's terms, in key order."""
    keys = keys_of(storage)
    words = search.query_terms(query.text) if query.text is not None else []
    if query.text is not None and not words:
        return []
    found = []
    for event in events:
        if not (query.starts_after <= event.starts_at
                and (query.starts_from is None or query.starts_from <= event.starts_at)
                and (query.starts_before is None or event.starts_at < query.starts_before)
                and all(getattr(query, name) in (None, getattr(event, name))
                        for name in ("location", "price", "level"))):
            continue
        if all(search.located(word, event.location) in held(event) for word in words):
            found.append(event.id)
    return sorted(found, key=keys.__getitem__)


def check(storage, events, query: EventQuery, offsets=(0, 10, 90)) -> int:
    wanted = expected(storage, events, query)
    for offset in offsets:
        page = storage.search_events(query, limit=10, offset=offset, count_cap=CAP)
        assert [e.id for e in page.events] == wanted[offset:offset + 10], (query, offset)
        assert (page.count, page.count_capped) == (min(len(wanted), CAP), len(wanted) > CAP)
        assert page.has_more == (len(wanted) > offset + 10)
    return len(wanted)


# Text as people and agents type it: words of the events, pieces of them, operators, marks.
TYPED = st.lists(st.one_of(
    st.sampled_from(["社群", "台北", "臺北", "資安", "工作坊", "community", "python", "c", "台",
                     "ＡＩ", "night", "_price_paid", "@taipei", '"', "*", "NOT", "OR", "NEAR(",
                     "title:", "^", "-", "研討會議", "haskell"]),
    st.text(max_size=6)), max_size=4).map(" ".join)


@pytest.mark.slow  # 150 searches, each checked against every event: about 20 s
@given(text=TYPED, filters=st.sampled_from(FILTERS))
@settings(max_examples=150, deadline=None)
def test_whatever_is_typed_finds_exactly_the_events_holding_its_terms(generated, text,
                                                                     filters):
    storage, events = generated
    check(storage, events, EventQuery(starts_after=NOW, text=text, **filters), offsets=(0,))


def test_keys_are_unique_and_in_start_order(generated):
    storage, events = generated
    starts = {event.id: event.starts_at for event in events}
    ordered = sorted(keys_of(storage).items(), key=lambda item: item[1])
    assert len({key for _, key in ordered}) == len(events)
    assert [starts[i] for i, _ in ordered] == sorted(starts.values())


@pytest.mark.parametrize("text", TEXTS)
def test_every_word_with_every_filter_finds_what_reading_every_event_finds(generated, text):
    storage, events = generated
    sizes = [check(storage, events, EventQuery(starts_after=NOW, text=text, **filters))
             for filters in FILTERS]
    if text in FOUND:
        assert any(sizes), f"{text!r} should find something in the generated events"


@pytest.mark.parametrize("text", [None, "community", "社群 分享", "haskell", "python"])
def test_date_ranges_bound_the_keys(generated, text):
    storage, events = generated
    for days, length in ((0, 1), (3, 7), (30, 30), (200, 400)):
        query = EventQuery(starts_after=NOW, text=text, starts_from=NOW + timedelta(days=days),
                           starts_before=NOW + timedelta(days=days + length), price="free")
        check(storage, events, query, offsets=(0, 10))


def test_a_common_word_is_counted_up_to_the_cap_and_a_less_common_one_exactly(generated):
    storage, _ = generated
    common = storage.search_events(EventQuery(starts_after=NOW, text="社群"), 10, 0, CAP)
    assert (common.count, common.count_capped, common.has_more) == (CAP, True, True)
    rare = storage.search_events(EventQuery(starts_after=NOW, text="提示注入"), 10, 0, CAP)
    assert not rare.count_capped and 0 < rare.count < CAP


def test_the_plan_walks_the_index_in_key_order_rarest_list_first(generated):
    storage, _ = generated
    query = EventQuery(starts_after=NOW, text="社群 haskell", price="paid")
    plan = storage.plan_search(query)
    assert plan is not None
    steps = storage.explain_search(query, 10, CAP)
    assert len(steps) == 1 and steps[0].startswith("SCAN event_search VIRTUAL TABLE")
    assert not any("TEMP B-TREE" in step for step in steps)  # no sort: read in key order
    first = plan.params["match"].split(" OR ")[0]
    assert first.index("haskell_@") < first.index("_price_paid@") < first.index("社群@")


def test_a_location_reads_only_its_own_lists(generated):
    storage, _ = generated
    within = storage.plan_search(EventQuery(starts_after=NOW, text="社群", location="online"))
    assert within is not None and "@online" in within.params["match"]
    assert "@taipei" not in within.params["match"]
    # 台北 is only written in Taipei's events here, 線上 in online ones: nothing is read.
    for query in (EventQuery(starts_after=NOW, text="台北", location="online"),
                  EventQuery(starts_after=NOW, text="台北 線上")):
        assert storage.plan_search(query) is None


def test_anywhere_reads_the_lists_of_every_event_when_each_location_holds_every_term(generated):
    storage, _ = generated
    everywhere = storage.plan_search(EventQuery(starts_after=NOW, text="社群", price="paid"))
    assert everywhere is not None
    assert everywhere.params["match"] == '("_price_paid@" "社群@")'
    # No event in Kaohsiung writes 台北: only the locations that hold it are read.
    located = storage.plan_search(EventQuery(starts_after=NOW, text="台北"))
    assert located is not None and '"台北@"' not in located.params["match"]
    assert '"台北@taipei"' in located.params["match"]
    assert "@kaohsiung" not in located.params["match"]


def test_words_nobody_wrote_read_nothing(generated):
    storage, _ = generated
    assert storage.plan_search(EventQuery(starts_after=NOW, text="zzzqqq")) is None
    assert storage.plan_search(EventQuery(starts_after=NOW, text="!!!")) is None


def held_terms(storage) -> Counter[str]:
    return Counter({term: events for term, events in
                    storage.db.execute("SELECT term, events FROM search_terms WHERE events > 0")})


def recount(events) -> Counter[str]:
    return Counter(term for event in events for term in terms_of(event))


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "events.sqlite"
    SQLiteStorage.prepare(path)
    storage = SQLiteStorage.open(path)
    yield storage, path
    storage.close()


def test_an_update_replaces_the_terms_and_keeps_the_key_unless_the_start_moved(small):
    storage, _ = small
    events = list(generate_events(40, seed=5, now=NOW, timezone=TAIPEI))
    storage.add_events(events)
    before = keys_of(storage)
    first = events[0]
    renamed = replace(first, title="臺北 Zig 讀書會", summary="Brand new words.")
    moved = replace(events[1], starts_at=events[1].starts_at + timedelta(days=3),
                    ends_at=events[1].ends_at + timedelta(days=3))
    assert storage.import_events([renamed, moved]) == 2
    after = keys_of(storage)
    assert after[first.id] == before[first.id]
    assert after[moved.id] != before[moved.id]
    assert after[moved.id] == search.free_key(moved.starts_at, set(after.values()) -
                                              {after[moved.id]})
    current = [renamed, moved, *events[2:]]
    assert held_terms(storage) == recount(current)
    for text in ("台北 zig", "brand new", first.title, events[1].title):
        query = EventQuery(starts_after=NOW - timedelta(days=400), text=text)
        check(storage, current, query, offsets=(0,))


def test_events_starting_together_keep_the_order_they_were_added_in(small):
    storage, _ = small
    base = list(generate_events(3, seed=2, now=NOW, timezone=TAIPEI))
    same = [replace(event, starts_at=base[0].starts_at, ends_at=base[0].ends_at,
                    registration_deadline=base[0].starts_at) for event in base]
    storage.add_events(same[:2])
    storage.import_events([same[2]])
    keys = keys_of(storage)
    first = search.first_key(base[0].starts_at)
    assert [keys[event.id] for event in same] == [first, first + 1, first + 2]


def test_a_new_version_of_the_terms_rebuilds_the_index(small, monkeypatch):
    storage, path = small
    events = list(generate_events(60, seed=8, now=NOW, timezone=TAIPEI))
    storage.add_events(events)
    keys, counts = keys_of(storage), held_terms(storage)
    monkeypatch.setattr(search, "VERSION", search.VERSION + 1)
    storage.db.execute("INSERT INTO event_search (event_search) VALUES ('delete-all')")
    SQLiteStorage.prepare(path)
    assert keys_of(storage) == keys and held_terms(storage) == counts
    check(storage, events, EventQuery(starts_after=NOW - timedelta(days=400), text="社群"))


def record_old_history(path, steps) -> None:
    """Keep `steps` in the history table of the releases before `storage.schema`, as
    sqlite-utils made it, instead of this version's."""
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("DROP TABLE IF EXISTS schema_migrations")
        conn.execute('CREATE TABLE "_sqlite_migrations" ("id" INTEGER PRIMARY KEY, '
                     '"migration_set" TEXT, "name" TEXT, "applied_at" TEXT)')
        conn.execute('CREATE UNIQUE INDEX "idx__sqlite_migrations_migration_set_name" '
                     'ON "_sqlite_migrations" ("migration_set", "name")')
        conn.executemany("INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
                         "VALUES ('webmcp_events', ?, '2026-01-01 00:00:00+00:00')",
                         [(step,) for step in steps])


def test_a_file_of_the_last_release_before_the_schema_module_is_adopted(tmp_path, monkeypatch):
    """Those releases ended with the tables the first migrations of `schema` make on SQLite
    (those it adopts): a file that had all their steps is recorded as having them, gets the
    later ones, and serves as it did."""
    path = tmp_path / "events.sqlite"
    # This version's code reads and writes the events' later columns (the waitlist switch,
    # who runs an event, its cancellation), which those releases had not: the file takes the
    # events with those columns (without their references, which SQLite could not drop), then
    # loses them again, and is left as those releases left it.
    later = [re.sub(r" REFERENCES .*$", "", statement)
             for name, statements in MIGRATIONS.items() if name not in ADOPTED
             for statement in statements if statement.startswith("ALTER TABLE events ADD")]
    dropped = [statement.split()[5] for statement in later]
    adopted = {name: MIGRATIONS[name] for name in ADOPTED}
    last = ADOPTED[-1]
    with monkeypatch.context() as released:  # the file as the last of those releases left it
        released.setattr(records, "MIGRATIONS", {**adopted, last: (*adopted[last], *later)})
        SQLiteStorage.prepare(path)
    with closing(SQLiteStorage.open(path)) as storage:
        events = list(generate_events(30, seed=9, now=NOW, timezone=TAIPEI))
        storage.add_events(events)
        record_old_history(path, SQLITE_UTILS_HISTORY)
        # The columns it had then: later migrations may add some (empty for these events).
        columns = ", ".join(column for (_, column, *_) in
                            storage.db.execute("PRAGMA table_info(events)").fetchall())
        rows = storage.db.execute(f"SELECT {columns} FROM events ORDER BY id").fetchall()
        keys, counts = keys_of(storage), held_terms(storage)
        for column in dropped:
            storage.db.execute(f"ALTER TABLE events DROP COLUMN {column}")
        SQLiteStorage.prepare(path)
        applied = storage.db.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()
        assert [name for (name,) in applied] == list(MIGRATIONS)
        kept = storage.db.execute("SELECT name FROM _sqlite_migrations ORDER BY id").fetchall()
        assert [name for (name,) in kept] == list(SQLITE_UTILS_HISTORY)
        assert storage.db.execute(f"SELECT {columns} FROM events ORDER BY id").fetchall() == rows
        assert keys_of(storage) == keys and held_terms(storage) == counts == recount(events)
        for text in ("community", "社群", None):
            check(storage, events, EventQuery(starts_after=NOW - timedelta(days=400), text=text),
                  offsets=(0, 10))


def test_a_file_older_than_the_search_terms_is_refused_and_left_as_it_was(tmp_path):
    """A file those releases made before their step 005_search_terms (an events table with
    a porter-stemmed full-text index): this version says what to do and changes nothing."""
    path = tmp_path / "old.sqlite"
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("CREATE TABLE events (id TEXT PRIMARY KEY, title TEXT NOT NULL, "
                     "summary TEXT NOT NULL, starts_at TEXT NOT NULL)")
        conn.execute("CREATE VIRTUAL TABLE events_fts USING fts5(title, summary, "
                     "content=[events], tokenize='porter')")
        conn.execute("INSERT INTO events VALUES ('evt-old', 'Old', 'From before.', "
                     "'2026-01-01T10:00:00Z')")
    record_old_history(path, SQLITE_UTILS_HISTORY[:4])
    before = path.read_bytes()
    with pytest.raises(StorageError) as refused:
        SQLiteStorage.prepare(path)
    said = str(refused.value)
    assert "made by an older version of webmcp-events" in said
    assert "stops before 005_search_terms" in said
    assert "git log -1 -- webapp/storage/migrations.py" in said
    assert "flask --app webapp init-db" in said
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.sqlite"]


def test_filter_combinations_are_all_covered():
    names = ("location", "price", "level")
    covered = {frozenset(filters) for filters in FILTERS}
    assert all(frozenset(chosen) in covered
               for size in range(len(names) + 1) for chosen in combinations(names, size))
