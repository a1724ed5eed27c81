"""The SQLite backend (plain `sqlite3`): its connections and transactions, the events and their
FTS5 search index; the records whose SQL PostgreSQL shares are written once in `records`, and
the schema in `schema`.

One `SQLiteStorage` per request (see `storage.connection`). The database runs in WAL mode so readers
never wait for the writer. The connection runs in autocommit mode, as on PostgreSQL: a statement
outside `transaction()` commits on its own, and `transaction()` takes the write lock up front with
`BEGIN IMMEDIATE`, so that `busy_timeout` queues writers from other gunicorn workers (a deferred
BEGIN that later writes would fail with SQLITE_BUSY at once in WAL mode, without waiting).

Files made before the schema was written once kept their history in sqlite-utils' table
`_sqlite_migrations`: `prepare` adopts those that had every step of it, and refuses older
ones, unchanged, saying what to do (`OLDER_FILE`).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import DATABASE_BUSY_TIMEOUT_MS
from . import Event
from . import EventPage
from . import EventQuery
from . import EventSummary
from . import StorageError
from . import search
from .dialect import SQLiteDialect
from .dialect import from_text
from .dialect import to_text as to_text  # the bench writes times as this module stores them
from .records import EVENT_COLUMNS
from .records import EVENT_FIELDS
from .records import Records
from .records import Row
from .records import event_of
from .records import summary_of
from .shared import NO_MATCHES
from .shared import SUMMARY_COLUMNS
from .shared import SUMMARY_FIELDS
from .shared import allocate_keys
from .shared import guard
from .shared import holding_ranges
from .shared import needed
from .shared import page_of
from .shared import plan_terms
from .shared import terms_of

BULK_LOAD_CACHE_KIB = 256 * 1024
INDEX_BATCH = 2000  # events whose terms are written to the search index at once
# In an FTS5 query: a term no event holds (every indexed term has a location after the mark).
NO_EVENT = f'"{search.LOCATION_MARK}"'
# The steps of sqlite-utils' history (our set of its table) in the releases before `schema`:
# a file that had all of them holds what the first four migrations of `schema` make.
SQLITE_UTILS_HISTORY = ("001_events", "002_visitors_registrations", "003_filter_pair_indexes",
                        "004_agent_connections", "005_search_terms", "006_event_prices",
                        "007_calendar_feeds", "008_carried_results")
ADOPTED = ("001_schema", "002_event_prices", "003_calendar_feeds", "004_carried_results")
OLDER_FILE = (
    "the file was made by an older version of webmcp-events, whose schema this version no "
    "longer upgrades (its history stops before {missing}). Upgrade it once with an earlier "
    "release: run `flask --app webapp init-db` on it with the code of the commit before the one "
    "that removed webapp/storage/migrations.py (`git log -1 -- webapp/storage/migrations.py` "
    "names that one), then come back to this version. Or start a new database: point "
    "FLASK_DATABASE at a new path, and `flask --app webapp init-db` creates and seeds it.")


@dataclass(frozen=True)
class SearchPlan:
    """How a search reads its matches: `sql` yields the keys of up to `:needed` matching
    events in start order, one walk of an index that stops there."""

    sql: str
    params: dict[str, Any]


def quoted(term: str) -> str:
    """A term as an FTS5 string: quoted, so that no term is ever read as an operator."""
    return '"' + term.replace('"', '""') + '"'


# How many of a conjunction's rarest terms are intersected one by one (`fts_conjunction`).
NESTED_TERMS = 12


def fts_conjunction(terms: list[str]) -> str:
    """An FTS5 query for the events holding every one of `terms`, read rarest first.

    FTS5 merges nested ANDs into one and moves every list forward at each step, so a long
    list would be read through wherever two rarer ones are still looking for each other. A
    NOT of a term no event holds keeps what is already intersected a node of its own: each
    further (longer) list is only read where the rarer ones agree.
    """
    expression = " ".join(quoted(term) for term in terms[:2])
    for term in terms[2:NESTED_TERMS]:
        expression = f"(({expression}) NOT {NO_EVENT}) AND {quoted(term)}"
    if rest := terms[NESTED_TERMS:]:
        # Each nested term deepens FTS5's parser stack, which overflows near 30 of them (a
        # long Chinese phrase is as many pieces as characters); by then the rarest lists have
        # narrowed the matches, so the others are one flat AND.
        expression = f"(({expression}) NOT {NO_EVENT}) AND ({' '.join(map(quoted, rest))})"
    return expression


guarded = guard(sqlite3.Error)


def _event_row(event: Event, search_key: int) -> dict[str, Any]:
    return {
        "id": event.id,
        "search_key": search_key,
        "title": event.title,
        "summary": event.summary,
        "description": event.description,
        "starts_at": to_text(event.starts_at),
        "ends_at": to_text(event.ends_at),
        "location": event.location,
        "venue": event.venue,
        "price": event.price,
        "level": event.level,
        "capacity": event.capacity,
        "held_seats": event.held_seats,
        "registration_deadline": to_text(event.registration_deadline),
        "price_amount": event.price_amount,
        "price_currency": event.price_currency,
    }


def _insert(row: dict[str, Any]) -> str:
    """An INSERT of a row of events with the columns of `row`, as named parameters."""
    return (f"INSERT INTO events ({', '.join(row)}) "
            f"VALUES ({', '.join(f':{name}' for name in row)})")


def connect(path: str | Path, *, create: bool = False,
            busy_timeout_ms: int = DATABASE_BUSY_TIMEOUT_MS) -> sqlite3.Connection:
    """Open the database file (never silently creating a missing one unless `create`), in
    autocommit mode: sqlite3 begins no transaction of its own (`isolation_level=None`)."""
    mode = "rwc" if create else "rw"
    uri = f"{Path(path).absolute().as_uri()}?mode={mode}"
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
    # A writer waits this long for another to finish before giving up (SQLITE_BUSY).
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    conn.execute("PRAGMA foreign_keys = ON")
    # WAL with NORMAL sync is durable across application crashes (only a power loss may drop
    # the last commits), and avoids an fsync per transaction.
    conn.execute("PRAGMA synchronous = NORMAL")
    # As sqlite-utils' `Database` set it on every connection it wrapped.
    conn.execute("PRAGMA recursive_triggers = ON")
    return conn


class SQLiteStorage(Records):
    """The site's data in one SQLite file."""

    dialect = SQLiteDialect()
    # The search index's part of the migrations (see `schema`): an FTS5 table holding each
    # event's terms (its filters' values too) under its key, so that one walk of it in key
    # order finds a search's matches soonest first, whatever its words and filters.
    search_index_schema = {"001_schema": (
        # Start in whole seconds, then a tie number (`storage.search`): start order. Every
        # write gives one (a column added to a table cannot be NOT NULL without a default).
        "ALTER TABLE events ADD COLUMN search_key integer",
        "CREATE UNIQUE INDEX events_by_search_key ON events (search_key)",
        # The terms are made in Python (`storage.search`) and joined by spaces: the ascii
        # tokenizer splits on spaces and leaves every other character of a term as it is. No
        # content is stored and no positions (detail=none): a term's list of keys is all a
        # search reads.
        "CREATE VIRTUAL TABLE event_search USING fts5(terms, content='', columnsize=0, "
        "detail=none, tokenize=\"ascii tokenchars '_@'\")",
        # Leaf pages of 512 bytes let a walk skip the parts of a long list between two entries
        # of a rarer one, where 4 KB pages were read entry by entry (a rare word within a
        # filter: 0.15 -> 0.05 ms at 100 000 events; bench/README.md).
        "INSERT INTO event_search (event_search, rank) VALUES ('pgsz', 512)",
    )}

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    @classmethod
    @guarded
    def open(cls, path: str | Path,
             busy_timeout_ms: int = DATABASE_BUSY_TIMEOUT_MS) -> SQLiteStorage:
        """Storage on an existing database file."""
        return cls(connect(path, busy_timeout_ms=busy_timeout_ms))

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A transaction holding the write lock from its start (BEGIN IMMEDIATE).

        Other writers wait (busy_timeout) instead of failing half-way; inside another
        transaction it becomes a savepoint of that one.
        """
        db = self.db
        if db.in_transaction:
            db.execute("SAVEPOINT nested")  # the innermost of a name is the one undone
            try:
                yield db
            except BaseException:
                if db.in_transaction:  # an error may have ended the whole transaction
                    db.execute("ROLLBACK TO nested")
                    db.execute("RELEASE nested")
                raise
            db.execute("RELEASE nested")
            return
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            raise StorageError("could not take the write lock") from error
        try:
            yield db
        except BaseException:
            db.rollback()
            raise
        try:
            db.execute("COMMIT")
        except sqlite3.Error as error:
            db.rollback()
            raise StorageError("commit failed") from error

    # -- what `Records` runs on ---------------------------------------------------------
    # The connection runs in autocommit mode: outside `transaction()` each statement,
    # a write returning rows included, commits on its own.

    def _rows(self, sql: str, params: dict[str, Any]) -> Sequence[Row]:
        """Every row `sql` reads, as dicts."""
        cursor = self.db.execute(sql, params)
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor]

    def _one(self, sql: str, params: dict[str, Any]) -> Row | None:
        """The first row `sql` reads as a dict, or None."""
        cursor = self.db.execute(sql, params)
        row = cursor.fetchone()
        if row is None:
            return None
        return dict(zip([column[0] for column in cursor.description], row, strict=True))

    def _run(self, sql: str, params: dict[str, Any]) -> int:
        """Run a statement that returns no rows; how many rows it changed."""
        return self.db.execute(sql, params).rowcount

    def _in_transaction(self) -> bool:
        return self.db.in_transaction

    def _returning(self, sql: str, params: dict[str, Any]) -> Row | None:
        """Run a write that returns rows; its first row, or None."""
        # Every row is read: the statement is done, and so committed outside a transaction.
        cursor = self.db.execute(sql, params)
        rows = cursor.fetchall()
        if not rows:
            return None
        return dict(zip([column[0] for column in cursor.description], rows[0], strict=True))

    # -- schema -------------------------------------------------------------------------

    @classmethod
    @guarded
    def prepare(cls, path: str | Path, seed: Callable[[SQLiteStorage], None] | None = None,
                busy_timeout_ms: int = DATABASE_BUSY_TIMEOUT_MS) -> bool:
        """Create or migrate the database, seeding it if it holds no events.

        Safe to run from several processes at once: the work happens under the write lock.
        Returns True when the database was seeded.
        """
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        db = connect(path, create=True, busy_timeout_ms=busy_timeout_ms)
        storage = cls(db)
        try:
            adopted = storage._adopted_history()  # first: a file refused is left as it was
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode = WAL")
            with storage.transaction():
                storage.migrate(adopted)
                storage.refresh_search_index()
                seeded = False
                if seed is not None and storage.count_events() == 0:
                    seed(storage)
                    # Still under the lock: the moment it commits another worker may take it,
                    # and a worker whose preparation failed stops the whole gunicorn server.
                    db.execute("PRAGMA optimize")
                    seeded = True
            return seeded
        finally:
            db.close()

    def _adopted_history(self) -> tuple[str, ...]:
        """The migrations of `schema` a file made by an earlier release already has: none
        for a file without sqlite-utils' history, `ADOPTED` for one that had all of it.

        A file whose history stops short is refused (StorageError, `OLDER_FILE`). Its old
        table is kept: the release before this one still finds every step of it there.
        """
        if self._one("SELECT 1 FROM sqlite_master WHERE name = '_sqlite_migrations'",
                     {}) is None:
            return ()
        had = {row["name"] for row in self._rows(
            "SELECT name FROM _sqlite_migrations WHERE migration_set = 'webmcp_events'", {})}
        missing = [name for name in SQLITE_UTILS_HISTORY if name not in had]
        if missing:
            raise StorageError(OLDER_FILE.format(missing=missing[0]))
        return ADOPTED

    # -- events -------------------------------------------------------------------------

    @guarded
    def import_events(self, events: list[Event]) -> int:
        """Insert or update events, all or nothing; returns how many were written.

        An updated event keeps its search key unless its start moved, and its old terms
        leave the index before the new ones enter it.
        """
        with self.transaction():
            for event in events:
                old = self._stored(event.id)
                if old is not None:
                    stored, key = old
                    self._unindex(key, stored)
                    if stored.starts_at != event.starts_at:
                        key = self._allocate_keys([event])[0]
                else:
                    key = self._allocate_keys([event])[0]
                row = _event_row(event, key)
                self.db.execute(f"{_insert(row)} ON CONFLICT (id) DO UPDATE SET "
                                + ", ".join(f"{name} = excluded.{name}" for name in row), row)
                self._index([(key, event)])
        return len(events)

    @guarded
    def add_events(self, events: Iterable[Event]) -> int:
        """Insert new events (an existing id is an error), all or nothing; returns how many.

        Faster than `import_events` for bulk loads: no event is looked up first.
        """
        events = list(events)
        if not events:
            return 0
        with self.transaction():  # keys are given under the write lock: no two alike
            keyed = list(zip(self._allocate_keys(events), events, strict=True))
            rows = [_event_row(event, key) for key, event in keyed]
            self.db.executemany(_insert(rows[0]), rows)
            self._index(keyed)
        return len(rows)

    def _stored(self, event_id: str) -> tuple[Event, int] | None:
        """An event as stored, with its search key."""
        row = self.db.execute(f"SELECT {EVENT_COLUMNS}, e.search_key FROM events e "
                              "WHERE e.id = ?", [event_id]).fetchone()
        if row is None:
            return None
        return event_of(dict(zip(EVENT_FIELDS, row[:-1], strict=True)), from_text), row[-1]

    def _allocate_keys(self, events: list[Event]) -> list[int]:
        """A free search key for each event (`shared.allocate_keys`), none given twice."""
        return allocate_keys(events, lambda first: {row[0] for row in self.db.execute(
            "SELECT search_key FROM events WHERE search_key >= ? AND search_key < ?",
            [first, first + search.TIES_PER_SECOND])})

    def _index(self, keyed: Iterable[tuple[int, Event]]) -> None:
        """Put events' terms in the search index under their keys, and count them."""
        counted: Counter[str] = Counter()
        rows = []
        for key, event in keyed:
            terms = terms_of(event)
            counted.update(terms)
            rows.append((key, " ".join(terms)))
        self.db.executemany("INSERT INTO event_search (rowid, terms) VALUES (?, ?)", rows)
        self._count_terms(counted)

    def _unindex(self, key: int, event: Event) -> None:
        """Take an event's terms out of the search index. The index keeps no copy of them,
        so they are made again from the stored event: the same terms, as long as the index
        was built by this version of `search` (see `refresh_search_index`)."""
        terms = terms_of(event)
        self.db.execute("INSERT INTO event_search (event_search, rowid, terms) "
                        "VALUES ('delete', ?, ?)", [key, " ".join(terms)])
        self._count_terms(Counter({term: -1 for term in terms}))

    def _count_terms(self, change: Counter[str]) -> None:
        """Add `change` to how many events hold each term."""
        self.db.executemany(
            "INSERT INTO search_terms (term, events) VALUES (?, ?) "
            "ON CONFLICT (term) DO UPDATE SET events = events + excluded.events",
            change.items())

    def refresh_search_index(self) -> bool:
        """Rebuild the search index when another version of `search` made its terms (or
        none did yet); True when it rebuilt.

        Call inside a transaction (`prepare` does, after the migrations).
        """
        built = self.db.execute("SELECT terms_version FROM search_index").fetchone()[0]
        if built == search.VERSION:
            return False
        self.db.execute("INSERT INTO event_search (event_search) VALUES ('delete-all')")
        self.db.execute("DELETE FROM search_terms")
        batch: list[tuple[int, Event]] = []
        for values in self.db.execute(f"SELECT {EVENT_COLUMNS}, e.search_key FROM events e"):
            row = dict(zip(EVENT_FIELDS, values[:-1], strict=True))
            batch.append((values[-1], event_of(row, from_text)))
            if len(batch) == INDEX_BATCH:
                self._index(batch)
                batch = []
        self._index(batch)
        # Written batch by batch, the index is in as many segments, and a search reads each
        # of them until they are merged (100 000 events: searches 1.4-1.9 times slower, until
        # this merge of 4 s after the rebuild's 100 s).
        self.db.execute("INSERT INTO event_search (event_search) VALUES ('optimize')")
        self.db.execute("UPDATE search_index SET terms_version = ?", [search.VERSION])
        return True

    @contextmanager
    def bulk_load(self) -> Iterator[None]:
        """One transaction for loading many events (`add_events` inside it), then the
        planner's statistics refreshed and the search index merged into one segment.
        """
        # A transaction bigger than the page cache spills pages to the WAL and reads them
        # back: a large cache while loading takes 100 000 events from 16 s to 10 s.
        default_cache = self.db.execute("PRAGMA cache_size").fetchone()[0]
        self.db.execute(f"PRAGMA cache_size = -{BULK_LOAD_CACHE_KIB}")
        try:
            with self.transaction():
                yield
            self._optimize()
        finally:
            self.db.execute(f"PRAGMA cache_size = {default_cache}")

    @guarded
    def _optimize(self) -> None:
        """Merge the search index's segments and refresh the planner's statistics."""
        with self.transaction():
            self.db.execute("INSERT INTO event_search (event_search) VALUES ('optimize')")
        self.db.execute("ANALYZE")

    @guarded
    def search_events(self, query: EventQuery, limit: int, offset: int,
                      count_cap: int) -> EventPage:
        """Upcoming events matching `query`, soonest first, with a count bounded by `count_cap`.

        One walk of an index in start order yields the keys of the matches, stopping after
        the cap (or the end of the page, if later): they are the count and the page.
        """
        plan = self.plan_search(query)
        if plan is None:
            return NO_MATCHES
        keys = [row[0] for row in self.db.execute(
            plan.sql, {**plan.params, "needed": needed(limit, offset, count_cap)})]
        return page_of(keys, limit, offset, count_cap, self._summaries_at)

    def _summaries_at(self, keys: list[int]) -> list[EventSummary]:
        """The summaries of the events with these search keys, in key order."""
        # Tuples zipped with the known fields: generic dict rows (as sqlite-utils made them)
        # cost a tenth of a search here.
        rows = self.db.execute(
            f"SELECT {SUMMARY_COLUMNS} FROM events e WHERE e.search_key IN "
            f"({', '.join('?' * len(keys))}) ORDER BY e.search_key", keys)
        return [summary_of(dict(zip(SUMMARY_FIELDS, row, strict=True)), from_text)
                for row in rows]

    @guarded
    def plan_search(self, query: EventQuery) -> SearchPlan | None:
        """How `search_events` reads `query`: None when nothing can match it.

        One walk of the search index in key order (`search.Search`): for each place the
        search reads (its location, anywhere, or the locations that hold every term), the
        events holding all its terms, rarest list first; the places' matches merged as they
        come (an FTS5 OR). "Upcoming" and the date range bound the keys; FTS5 skips each list
        to the first key of the range.
        """
        wanted = plan_terms(query, self._events_holding)
        if wanted is None:
            return None
        params: dict[str, Any] = {
            "match": " OR ".join(f"({fts_conjunction(terms)})" for terms in wanted.conjunctions),
            "first": wanted.first}
        bounds = "rowid >= :first"
        if wanted.end is not None:
            params["end"] = wanted.end
            bounds += " AND rowid < :end"
        return SearchPlan("SELECT rowid FROM event_search WHERE event_search MATCH :match "
                          f"AND {bounds} ORDER BY rowid LIMIT :needed", params)

    def _events_holding(self, terms: list[str]) -> dict[str, int]:
        """How many events hold each of `terms` at each location and anywhere
        (term@location -> count), with the every-event term of each among them."""
        ranges = holding_ranges(terms)
        where = " OR ".join("(term >= ? AND term < ?)" for _ in ranges)
        bounds = [bound for low_high in ranges for bound in low_high]
        return dict(self.db.execute(
            f"SELECT term, events FROM search_terms WHERE {where}", bounds).fetchall())

    @guarded
    def explain_search(self, query: EventQuery, limit: int, count_cap: int) -> list[str]:
        """SQLite's plan (EXPLAIN QUERY PLAN) for reading a search's matches."""
        plan = self.plan_search(query)
        if plan is None:
            return []
        params = {**plan.params, "needed": max(count_cap, limit) + 1}
        return [row[3] for row in self.db.execute(f"EXPLAIN QUERY PLAN {plan.sql}", params)]
