"""The PostgreSQL backend (psycopg 3): the same promises as `sqlite.SQLiteStorage`, for several
app hosts sharing one database; its search index is `PostgresIndex`.

One `PostgresStorage` per request, on a connection of the process's pool (see `backends`).
Connections run in autocommit, so each method is atomic on its own; `transaction()` makes a
check-then-change sequence one transaction (a savepoint inside another one).

**Seats cannot be oversold across hosts: a row lock, not a conditional UPDATE.** Seats are
counted, never stored (capacity - held - active registrations), and confirming checks the
token, the deadline, the visitor's other registration and the count before it inserts: a
sequence over three tables, not one row's arithmetic. A single conditional UPDATE would
need a stored seat counter, a second truth to keep in step with the registrations. So
`get_event(..., for_update=True)` locks the event's row: every confirmer of that event, on
any host, waits there for the one before to commit, and only then counts, in a statement of
its own, so that it sees the registration the one before added (READ COMMITTED takes a new
snapshot per statement; counting in the locking statement would count from before the wait).
Other events are confirmed in parallel. Rows read inside `transaction()` by token or id
(`get_confirmation`, `get_registration`) are locked the same way, so a token is spent once
and a registration cancelled once when two requests race, as under SQLite's write lock.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import AbstractContextManager
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from typing import Any

import psycopg
from psycopg import Connection
from psycopg.pq import TransactionStatus
from psycopg.rows import DictRow
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from . import EventPage
from . import EventSummary
from . import StorageError
from . import search
from .dialect import Dialect
from .index import Indexed
from .records import Records
from .records import Row
from .records import summary_of
from .shared import SUMMARY_COLUMNS
from .shared import TermsPlan
from .shared import guard
from .shared import holding_ranges
from .shared import needed
from .shared import page_of

# A string literal or quoted name (kept as it is), or a `:name` parameter. The look-behind
# leaves PostgreSQL's `::type` casts alone: neither of their colons starts a parameter.
PARAMETER = re.compile(r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|(?<!:):([A-Za-z_]\w*)""")


def stored(moment: datetime) -> datetime:
    """A datetime as PostgreSQL stores it: UTC, to the second (as SQLite keeps it, so both
    order alike)."""
    return moment.astimezone(UTC).replace(microsecond=0)


def moment(value: datetime) -> datetime:
    """A stored timestamptz as the storage layer hands it out: in UTC."""
    return value.astimezone(UTC)


def as_read(value: dict[str, Any]) -> dict[str, Any]:
    """A jsonb value as psycopg reads it: already a dict."""
    return value


def pyformat(sql: str) -> str:
    """`sql` with each `:name` parameter written `%(name)s` and each literal `%` doubled (psycopg's
    form); string literals and quoted names are left as they are."""

    def rewrite(match: re.Match[str]) -> str:
        name = match.group(1)
        return match.group(0) if name is None else f"%({name})s"

    return PARAMETER.sub(rewrite, sql.replace("%", "%%"))


class PostgresDialect(Dialect):
    """PostgreSQL: `%(name)s`, times as timestamptz cut to the second, JSON as jsonb."""

    errors = (psycopg.Error,)
    slots = {"key": 'text COLLATE "C"', "moment": "timestamptz", "json": "jsonb",
             "serial": "bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY", "without_rowid": ""}
    moment_in = staticmethod(stored)
    moment_out = staticmethod(moment)
    json_in = staticmethod(Jsonb)
    json_out = staticmethod(as_read)

    def __init__(self) -> None:
        # Each statement is rewritten once per process: the records pass the same few
        # module-level strings again and again, so a lookup is all a call costs.
        self._converted: dict[str, str] = {}

    def locked(self, in_transaction: bool, of: str = "") -> str:
        """` FOR UPDATE` inside a transaction (a row lock; outside one it would end at once)."""
        return f" FOR UPDATE{of}" if in_transaction else ""

    def sql(self, text: str) -> str:
        """`text` with psycopg's `%(name)s` parameters (`pyformat`), rewritten once."""
        try:
            return self._converted[text]
        except KeyError:
            converted = self._converted[text] = pyformat(text)
            return converted


guarded = guard(psycopg.Error)

# Transaction-level advisory locks (any two distinct numbers): one process migrates at a
# time, and one writer changes the catalog (search keys and term counts) at a time.
SCHEMA_LOCK = 0x77656D6370_01
CATALOG_LOCK = 0x77656D6370_02
# How a search reads its matches (`PostgresIndex._window`, `_matches`): every holder at
# once, or window by window, each window's keys intersected with the holders or walked.
WHOLE, INTERSECT, WALK = "whole", "intersect", "walk"
# A window spans this many times the events expected to hold a page and a capped count; the
# next one, if needed, is this many times wider.
WINDOW_MARGIN = 3
WINDOW_GROWTH = 4
# What walking one event costs, in entries of GIN lists read: its terms come from TOAST
# (about 8 pages, 35-40 µs on the loaded bench machine), an entry about 0.16 µs.
WALKED_EVENT_IN_POSTINGS = 250
# The planner's settings for each way of reading (`set_config(..., true)`: this transaction).
# INTERSECT: the planner estimates a conjunction of located terms as if its terms were
# independent across locations too (community_@kaohsiung and _price_paid@kaohsiung: 41
# events, where 3 641 hold both), so within a window it may read every holder through the
# GIN index and filter their keys (14.9 ms at 100 000 events) rather than intersect them
# with the window's keys first (a BitmapAnd, 2.1 ms). Our counts say the holders are many
# (that is why there is a window): a random page ten times dearer and an index entry free
# make the BitmapAnd the plan of every window of the bench's matrix (with the default costs
# 23 of its 25 windows had it, with the page cost alone 24). Reading the lists of every event
# (a search without a location: each list as long as four of a location's), the planner then
# took a scan of every row for cheaper (community ai, advanced: 450 ms, 8 ms as a BitmapAnd),
# so sequential scans are off too. WALK: the key index in order.
PLANNER_SETTINGS = {
    INTERSECT: {"random_page_cost": "40", "cpu_index_tuple_cost": "0", "enable_seqscan": "off"},
    WALK: {"enable_bitmapscan": "off", "enable_seqscan": "off"},
}


@dataclass(frozen=True)
class Window:
    """How a search reads many holders: `size` events at a time in key order, each window
    read as `reading` says (INTERSECT or WALK)."""

    size: int
    reading: str


# Every connection, the pool's too: autocommit (a method is atomic on its own), dict rows.
CONNECTION_OPTIONS: dict[str, Any] = {"autocommit": True, "row_factory": dict_row}


def connect(url: str) -> Connection[DictRow]:
    """A connection of its own, as the pool makes them."""
    return psycopg.connect(url, **CONNECTION_OPTIONS)


class PostgresStorage(Records):
    """The site's data in one PostgreSQL database."""

    dialect = PostgresDialect()
    index: PostgresIndex

    def __init__(self, conn: Connection[DictRow]):
        self.conn = conn
        self.index = PostgresIndex(conn, self.transaction)

    @classmethod
    @guarded
    def open(cls, url: str) -> PostgresStorage:
        """Storage on a connection of its own (for commands; requests use the pool)."""
        return cls(connect(url))

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[Connection[DictRow]]:
        """One transaction (a savepoint inside another): all of it commits, or none."""
        try:
            with self.conn.transaction():
                yield self.conn
        except psycopg.Error as error:
            raise StorageError("transaction failed") from error

    # -- what `Records` runs on ---------------------------------------------------------
    # Its statements as psycopg takes them (`PostgresDialect.sql`), read as dict rows.

    def _rows(self, sql: str, params: dict[str, Any]) -> Sequence[Row]:
        """Every row `sql` reads."""
        return self.conn.execute(self.dialect.sql(sql), params).fetchall()

    def _one(self, sql: str, params: dict[str, Any]) -> Row | None:
        """The first row `sql` reads, or None."""
        return self.conn.execute(self.dialect.sql(sql), params).fetchone()

    def _run(self, sql: str, params: dict[str, Any]) -> int:
        """Run a statement that returns no rows; how many rows it changed."""
        return self.conn.execute(self.dialect.sql(sql), params).rowcount

    # In autocommit a statement returning rows commits like any other.
    _returning = _one

    def _in_transaction(self) -> bool:
        return in_transaction(self.conn)

    def _insert_many(self, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert `rows` into `table` with one COPY."""
        columns = list(rows[0])
        with self.conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row([row[name] for name in columns])

    def _lock_catalog(self) -> None:
        """Make this transaction the only one giving keys and counting terms until it ends."""
        self.conn.execute("SELECT pg_advisory_xact_lock(%s)", [CATALOG_LOCK])

    # -- schema -------------------------------------------------------------------------

    @classmethod
    @guarded
    def prepare(cls, url: str, seed: Callable[[PostgresStorage], None] | None = None) -> bool:
        """Create or migrate the database, seeding it if it holds no events.

        Safe to run from several processes (and hosts) at once: the work happens under an
        advisory lock. Returns True when the database was seeded.
        """
        storage = cls.open(url)
        try:
            with storage.transaction():
                storage.conn.execute("SELECT pg_advisory_xact_lock(%s)", [SCHEMA_LOCK])
                storage.migrate()
                storage.refresh_search_index()
                seeded = False
                if seed is not None and storage.count_events() == 0:
                    seed(storage)
                    seeded = True
            if seeded:
                storage.index.analyze("ANALYZE")
            return seeded
        finally:
            storage.close()


def in_transaction(conn: Connection[DictRow]) -> bool:
    """Whether a transaction is open on `conn`."""
    return conn.info.transaction_status == TransactionStatus.INTRANS


class PostgresIndex:
    """The search index in PostgreSQL: each event's terms on its row, under a GIN index, and
    how many events hold each term (`search_terms`); a search reads every holder at once, or
    window by window of the key index (`_window`)."""

    # Its part of the migrations (see `schema`).
    schema = {"001_schema": (
        # Start in whole seconds, then a tie number (`storage.search`): start order.
        "ALTER TABLE events ADD COLUMN search_key bigint NOT NULL UNIQUE",
        # Made in Python by `storage.search`, as SQLite's index holds them: the same terms
        # give both backends the same matches.
        'ALTER TABLE events ADD COLUMN terms text[] COLLATE "C" NOT NULL',
        # Which events hold all of a conjunction's terms (terms @> ARRAY[...]).
        "CREATE INDEX events_by_terms ON events USING gin (terms)",
    )}

    # Searches whose conjunctions are expected to be held by at most this many events read
    # them all at once; no window spans fewer events (see `_window`). Tests lower both, to
    # read small datasets window by window too.
    read_whole_up_to = 2_000
    window_floor = 500
    # A window this wide (a share of all events, past ones too) reads them all at once.
    widest_window = 0.4

    def __init__(self, conn: Connection[DictRow],
                 transaction: Callable[[], AbstractContextManager[Any]]):
        self.conn = conn
        self.transaction = transaction

    # -- upkeep -------------------------------------------------------------------------

    def row_columns(self, terms: list[str]) -> dict[str, Any]:
        """The terms, on the event's row."""
        return {"terms": terms}

    def add(self, indexed: Sequence[Indexed]) -> None:
        """Count the terms of events whose rows hold them."""
        self._count_terms(Counter(term for _, terms in indexed for term in terms))

    def remove(self, indexed: Sequence[Indexed]) -> None:
        """Count down the terms of events whose rows held them."""
        removed = Counter(term for _, terms in indexed for term in terms)
        self._count_terms({term: -events for term, events in removed.items()})

    def _count_terms(self, change: Mapping[str, int]) -> None:
        """Add `change` to how many events hold each term (one statement, however many)."""
        changed = [(term, events) for term, events in change.items() if events]
        if not changed:
            return
        self.conn.execute("CREATE TEMPORARY TABLE counted (term text COLLATE \"C\", "
                          "events integer) ON COMMIT DROP")
        with self.conn.cursor().copy("COPY counted (term, events) FROM STDIN") as copy:
            for row in changed:
                copy.write_row(row)
        self.conn.execute("INSERT INTO search_terms (term, events) "
                          "SELECT term, events FROM counted ORDER BY term "
                          "ON CONFLICT (term) DO UPDATE "
                          "SET events = search_terms.events + excluded.events")
        self.conn.execute("DROP TABLE counted")

    def rebuild(self, batches: Iterable[Sequence[Indexed]]) -> None:
        """Write every event's terms on its row again, batch by batch, and count them again."""
        with self.conn.cursor() as cursor:
            for batch in batches:
                cursor.executemany("UPDATE events SET terms = %s WHERE search_key = %s",
                                   [(terms, key) for key, terms in batch])
        self.conn.execute("DELETE FROM search_terms")
        self.conn.execute("INSERT INTO search_terms (term, events) SELECT term, count(*) "
                          "FROM events, unnest(terms) AS term GROUP BY term")

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """After many writes, the planner's statistics refreshed."""
        yield
        # VACUUM too: the visibility map lets the planner read keys from the index alone.
        self.analyze("VACUUM ANALYZE")

    @guarded
    def analyze(self, command: str) -> None:
        """Refresh the planner's statistics of the search's tables."""
        for table in ("events", "search_terms"):
            self.conn.execute(f"{command} {table}")

    # -- reading ------------------------------------------------------------------------

    def counts(self, terms: list[str]) -> dict[str, int]:
        """How many events hold each of `terms` at each location and anywhere
        (term@location -> count), with the every-event term of each among them."""
        ranges = holding_ranges(terms)
        where = " OR ".join("(term >= %s AND term < %s)" for _ in ranges)
        return {row["term"]: row["events"] for row in self.conn.execute(
            f"SELECT term, events FROM search_terms WHERE {where}",
            [bound for low_high in ranges for bound in low_high])}

    def page(self, plan: TermsPlan, limit: int, offset: int, count_cap: int) -> EventPage:
        """The page and capped count of `plan`'s matches (read as `_read_matches` says)."""
        keys = self._read_matches(plan, needed(limit, offset, count_cap))
        return page_of(keys, limit, offset, count_cap, self._summaries_at)

    def _read_matches(self, plan: TermsPlan, wanted: int) -> list[int]:
        """The keys of the first `wanted` events holding one of the plan's conjunctions, in
        key order: all at once when few events hold them, else window by window."""
        window = self._window(plan, wanted)
        if window is None:
            return self._keys_within(plan, plan.first, plan.end, wanted, WHOLE)
        keys: list[int] = []
        start, size = plan.first, window.size
        while True:
            stop = self._window_end(start, size, plan.end)
            keys += self._keys_within(plan, start, stop, wanted - len(keys),
                                      window.reading if stop is not None else WHOLE)
            if len(keys) >= wanted or stop is None or stop == plan.end:
                return keys
            start, size = stop, size * WINDOW_GROWTH

    def _window(self, plan: TermsPlan, wanted: int) -> Window | None:
        """How to read the matches window by window; None: read every holder of the
        conjunctions at once, through the GIN index, and sort them.

        Reading every holder costs a heap visit each (about 4 µs). A window costs a walk of
        the key index over its events to find where it ends (well under 1 µs each), then
        either the GIN lists of the conjunctions' terms (about 0.15 µs an entry) intersected
        with the window's keys and a heap visit per match, or a walk of the window in key
        order that reads each event's terms from TOAST (35–40 µs an event) and stops at the
        last match wanted. So the expected holders decide: how many events hold each
        conjunction, its terms taken as independent within its location (our exact counts
        of each term; the planner, which takes the located terms as independent across
        locations too, guesses far fewer). Up to `read_whole_up_to` holders, or when a
        window would span most events anyway, all at once; else windows of `WINDOW_MARGIN`
        times the events expected to hold the wanted matches, walked when walking them costs
        less than reading the GIN lists (a very common word, alone or with a common filter).
        bench/README.md ("Reading by our counts") has the figures. The
        estimate only sizes the window: a wrong one costs another window, never an answer.
        """
        counts = plan.counts
        every = {term.split(search.LOCATION_MARK)[1]: events for term, events in counts.items()
                 if term.startswith(search.every_event(search.ANYWHERE))}
        expected = 0.0
        for conjunction in plan.conjunctions:
            located = every.get(conjunction[0].split(search.LOCATION_MARK)[1], 0)
            if located:
                expected += located * math.prod(counts.get(term, 0) / located
                                                for term in conjunction)
        if expected <= self.read_whole_up_to:
            return None
        # A window counts every event in key order, whatever its location.
        events = every.get(search.ANYWHERE, 0)
        walked = wanted * events / expected
        size = max(self.window_floor, math.ceil(walked * WINDOW_MARGIN))
        if size >= events * self.widest_window:
            return None
        postings = sum(counts.get(term, 0) for conjunction in plan.conjunctions
                       for term in conjunction)
        return Window(size, WALK if walked * WALKED_EVENT_IN_POSTINGS < postings else INTERSECT)

    def _window_end(self, start: int, size: int, end: int | None) -> int | None:
        """The key `size` events after `start` (an index-only walk of the key index), or
        `end` when the window would reach it."""
        row = self.conn.execute(
            "SELECT search_key FROM events WHERE search_key >= %s "
            "ORDER BY search_key OFFSET %s LIMIT 1", [start, size], prepare=False).fetchone()
        if row is None or (end is not None and row["search_key"] >= end):
            return end
        return int(row["search_key"])

    def _keys_within(self, plan: TermsPlan, first: int, end: int | None, wanted: int,
                     reading: str) -> list[int]:
        """The keys of the first `wanted` events from `first` and before `end` that hold one
        of the plan's conjunctions, read as `reading` says (`_matches`)."""
        sql, params = self._matches(plan.conjunctions, first, end, reading)
        with self._planned_for(reading):
            return [row["search_key"] for row in self.conn.execute(
                sql, [*params, wanted], prepare=False)]

    @contextmanager
    def _planned_for(self, reading: str) -> Iterator[None]:
        """Statements planned for the way they read (`PLANNER_SETTINGS`), in a transaction
        of their own when they change the planner's settings. Inside another transaction
        the settings are put back after: they would outlive the savepoint."""
        settings = PLANNER_SETTINGS.get(reading)
        if not settings:
            yield
            return
        previous = ({row["name"]: row["setting"] for row in self.conn.execute(
            "SELECT name, setting FROM pg_settings WHERE name = ANY(%s)", [list(settings)])}
            if in_transaction(self.conn) else {})
        with self.transaction():
            self._set_planner(settings)
            yield
            self._set_planner(previous)

    def _set_planner(self, settings: Mapping[str, str]) -> None:
        """Change planner settings until the transaction ends."""
        if settings:
            self.conn.execute("SELECT " + ", ".join(["set_config(%s, %s, true)"] * len(
                settings)), [part for item in settings.items() for part in item])

    def _summaries_at(self, keys: list[int]) -> list[EventSummary]:
        """The summaries of the events with these search keys, in key order."""
        return [summary_of(row, moment) for row in self.conn.execute(
            f"SELECT {SUMMARY_COLUMNS} FROM events e WHERE e.search_key = ANY(%s) "
            "ORDER BY e.search_key", [keys])]

    @staticmethod
    def _matches(conjunctions: list[list[str]], first: int, end: int | None, reading: str
                 ) -> tuple[str, list[Any]]:
        """The keys of the events holding every term of one of `conjunctions`, from `first`
        and before `end`, in key order, up to a last parameter.

        WHOLE and INTERSECT read through the GIN index, then sort: `ORDER BY search_key + 0`
        keeps the planner from walking the key index in order and decompressing every
        row's terms, which it may do for a rare conjunction it takes for a common one (a
        rare word: 1.3 s, bench/README.md). WHOLE's lower bound alone is a filter only
        (`+ 0` again): its holders are few, and a bitmap of the key index over every
        upcoming event (50 000 entries, 7 ms) costs far more than the few past holders it
        would rule out; the planner, which guesses 500 holders for a term outside its most
        common elements, ANDed that bitmap in. A date range's keys are fewer, and ANDing
        them in saves the heap visits of the holders outside it (night and community in the
        next 30 days: 1.9 ms, 4.9 ms as filters). INTERSECT's bounds are a window's: its
        keys ANDed with the holders. WALK walks the window's keys in order and stops at the
        last one wanted.

        Run with `prepare=False`: psycopg prepares a statement run five times, and a
        prepared one may be given a generic plan, blind to the window and the terms."""
        key = "search_key + 0" if reading == WHOLE and end is None else "search_key"
        order = "search_key" if reading == WALK else "search_key + 0"
        bounds = f"{key} >= %s" + (f" AND {key} < %s" if end is not None else "")
        holding = " OR ".join("terms @> %s::text[]" for _ in conjunctions)
        params = [first, *([end] if end is not None else []), *conjunctions]
        return (f"SELECT search_key FROM events WHERE {bounds} AND ({holding}) "
                f"ORDER BY {order} LIMIT %s", params)

    def explain(self, plan: TermsPlan, limit: int, count_cap: int) -> list[str]:
        """PostgreSQL's plan (EXPLAIN) for reading a search's matches, of its first window
        when it reads window by window; a line above the plan says how it reads."""
        wanted = needed(limit, 0, count_cap)
        window = self._window(plan, wanted)
        end = plan.end if window is None else self._window_end(plan.first, window.size, plan.end)
        reading = WHOLE if window is None or end is None else window.reading
        said = ("every holder at once" if window is None else
                f"window by window, the first {window.size:,} events in key order, "
                f"{'walked' if window.reading == WALK else 'intersected with the holders'}")
        sql, params = self._matches(plan.conjunctions, plan.first, end, reading)
        with self._planned_for(reading):
            return [f"-- {said}", *(row["QUERY PLAN"] for row in self.conn.execute(
                f"EXPLAIN {sql}", [*params, wanted], prepare=False))]
