"""The PostgreSQL backend (psycopg 3): the same promises as `sqlite.SQLiteStorage`, for several
app hosts sharing one database; its search index is `PostgresIndex`.

One `PostgresStorage` per request, on a connection of the process's pool (see `backends`).
Connections run in autocommit, so each method is atomic on its own; `transaction()` makes a
check-then-change sequence one transaction (part of another one when it runs inside it).

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
from psycopg import Cursor
from psycopg.pq import TransactionStatus
from psycopg.rows import DictRow
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from . import EventPage
from . import StorageError
from . import postings
from . import search
from .dialect import Dialect
from .index import Indexed
from .index import StaleCounts
from .postings import SlotPostings
from .postings import span_keys_for
from .records import SEAT_COLUMNS
from .records import Records
from .records import Row
from .records import availability_of
from .records import summary_of
from .shared import SUMMARY_COLUMNS
from .shared import Listing
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
             "serial": "bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY", "without_rowid": "",
             "bytes": "bytea"}
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
# A search expected to match at most this many events (about a page and a capped count,
# `needed`) reads them all at once through the GIN index (`PostgresIndex._read_matches`).
FEW_HOLDERS = 100
# A search reads the slot postings only if the counts say its matches lie within this many
# spans, else every holder through the GIN index: at 100 000 events a batch of 25 spans (of
# ~950 events) took 0.2 ms in the server, and the holders of a conjunction just too sparse
# for that (a few hundred upcoming) cost the GIN index about as much. The slowest of the
# bench's 216 cells took 3.18 ms with 6, 3.12 with 12 and 2.75 with 24 at 100 000 events;
# at 1 000 000 (1-day spans), 4.3 ms with 24 and 5.4 with 48.
MOST_SPANS = 24
# The first batch reads this many times the spans the counts say a page needs (the first
# span is partly before the search's first key); later ones, as many as the matches seen
# so far say are still needed.
SPANS_MARGIN = 1.5

# Events whose stored terms are read at once when a bulk load posts them (`PostgresIndex.bulk`).
POSTING_BATCH = 2_000
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
    def _transaction(self) -> Iterator[None]:
        """BEGIN; COMMIT at the end, or ROLLBACK when the block raises."""
        try:
            with self.conn.transaction():
                yield
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
        """Insert `rows` into `table` with one binary COPY, the columns' types asked first."""
        listed = ", ".join(columns := list(rows[0]))
        with self.conn.cursor() as cursor:
            # Binary: psycopg writes an event's ~600 terms as text 1.6 times slower.
            cursor.execute(f"SELECT {listed} FROM {table} LIMIT 0")
            types = [column.type_code for column in cursor.description or ()]
            with cursor.copy(f"COPY {table} ({listed}) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(types)
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


def expected_holders(plan: TermsPlan) -> float:
    """How many events the counts say hold one of the plan's conjunctions, each one's terms
    taken as independent within its location. (The planner takes them as independent across
    locations too, and guesses far fewer: 41 events for community_@kaohsiung and
    _price_paid@kaohsiung, which 3 641 hold.) A wrong guess costs another batch, never an
    answer."""
    counts = plan.counts
    every = {term.split(search.LOCATION_MARK)[1]: events for term, events in counts.items()
             if term.startswith(search.every_event(search.ANYWHERE))}
    expected = 0.0
    for conjunction in plan.conjunctions:
        located = every.get(conjunction[0].split(search.LOCATION_MARK)[1], 0)
        if located:
            expected += located * math.prod(counts.get(term, 0) / located
                                            for term in conjunction)
    return expected


def every_holder(conjunctions: list[list[str]], first: int, end: int | None, wanted: int
                 ) -> tuple[str, list[Any]]:
    """The keys of the first `wanted` events from `first` and before `end` holding every term
    of one of `conjunctions`: every holder read through the GIN index, then sorted.

    The bounds and the order are on `search_key + 0`, which the key index cannot answer: the
    planner would otherwise walk that index in order, reading each row's terms from TOAST,
    for a rare conjunction it takes for a common one (1.3 s for a rare word), or AND a bitmap
    of every upcoming key (50 000 entries, 7 ms) with a few holders.
    """
    bounds = "search_key + 0 >= %s" + ("" if end is None else " AND search_key + 0 < %s")
    holding = " OR ".join("terms @> %s::text[]" for _ in conjunctions)
    return (f"SELECT search_key FROM events WHERE {bounds} AND ({holding}) "
            "ORDER BY search_key + 0 LIMIT %s",
            [first, *([] if end is None else [end]), *conjunctions, wanted])


def padded(conjunctions: list[list[str]]) -> list[list[str]]:
    """The conjunctions all as long as the longest (they are, in practice), for one shape of
    batch: a term repeated reads the same row again."""
    width = max(map(len, conjunctions))
    return [terms + terms[-1:] * (width - len(terms)) for terms in conjunctions]


def first_batch(spans_needed: float) -> int:
    """How many spans the first batch reads, for a page the counts put in `spans_needed`."""
    return max(2, math.ceil(spans_needed * SPANS_MARGIN))


# Which state of the index a process's remembered counts are of (`RememberedCounts`): every
# transaction writing the index sets it to its own id (`pg_current_xact_id`, unique in the
# server), so equal generations mean the same index, whatever database or schema it is in.
GENERATION = "(SELECT generation FROM search_index) AS generation"
NEW_GENERATION = ("WITH new_generation AS (UPDATE search_index "
                  "SET generation = pg_current_xact_id()::text::bigint) ")
# A process remembers the counts of at most this many terms (each with its count at every
# location: a few hundred bytes) before it starts over.
REMEMBERED_RANGES = 4_096


@dataclass(frozen=True)
class Remembered:
    """The term counts (by range, as `PostgresIndex.counts` reads them) and the postings'
    layout as one generation of the index had them."""

    generation: int
    counted: Mapping[tuple[str, str], dict[str, int]]
    layout: dict[str, Any] | None


class RememberedCounts:
    """The term counts a process has read, shared by its connections: a search whose terms
    were counted before reads none, and the statement that reads its page confirms the counts
    are still the index's (`PostgresIndex.confirm_counts`). Each worker process has its own;
    none is ever taken on trust, so several workers, or hosts, writing the same database
    change nothing but how often counts are read again."""

    def __init__(self) -> None:
        # Replaced whole, never changed in place: a thread reads one generation's counts.
        self.latest: Remembered | None = None

    def keep(self, generation: int, counted: Mapping[tuple[str, str], dict[str, int]],
             layout: dict[str, Any] | None) -> None:
        """Remember counts read at `generation`, with those of the same generation."""
        latest = self.latest
        if latest is not None and latest.generation == generation \
                and len(latest.counted) + len(counted) <= REMEMBERED_RANGES:
            counted = {**latest.counted, **counted}
            layout = layout or latest.layout
        self.latest = Remembered(generation, counted, layout)

    def forget(self) -> None:
        """Remember nothing (the index is being written, or was)."""
        self.latest = None


# The counts remembered by this process (see `RememberedCounts`).
REMEMBERED = RememberedCounts()


class PostgresIndex:
    """The search index in PostgreSQL: each event's terms on its row, under a GIN index; the
    same terms as slot postings, span by span of keys (`postings`); and how many events hold
    each term (`search_terms`). A search reads every holder through the GIN index when they
    are few or spread thin, else the postings in key order (`_read_matches`)."""

    # Its part of the migrations (see `schema`).
    schema = {
        "001_schema": (
            # Start in whole seconds, then a tie number (`storage.search`): start order.
            "ALTER TABLE events ADD COLUMN search_key bigint NOT NULL UNIQUE",
            # Made in Python by `storage.search`, as SQLite's index holds them: the same
            # terms give both backends the same matches.
            'ALTER TABLE events ADD COLUMN terms text[] COLLATE "C" NOT NULL',
            # Which events hold all of a conjunction's terms (terms @> ARRAY[...]).
            "CREATE INDEX events_by_terms ON events USING gin (terms)",
        ),
        "007_search_postings": (
            *postings.SCHEMA,
            # The events already stored get their postings from the rebuild this asks
            # `prepare` for (`Records.refresh_search_index`), in the migration's transaction.
            "UPDATE search_index SET terms_version = 0",
        ),
        "019_search_spans_uncompressed": (
            # A batch of postings ships its spans' keys whole (8 KB a span): kept compressed,
            # the server inflated each one first, 0.34 of a common search's 0.76 ms fetch
            # (bench/README.md). Keys barely compress (2:1), and 100 000 events' spans are
            # 0.8 MB uncompressed.
            "ALTER TABLE search_spans ALTER COLUMN packed SET STORAGE EXTERNAL",
            # The spans stored before are written again, as the setting keeps them.
            "UPDATE search_spans SET packed = packed || ''::bytea",
        ),
        "020_search_generation": (
            # Which state of the index this is (`GENERATION`), for the counts a process
            # remembers (`RememberedCounts`).
            "ALTER TABLE search_index ADD COLUMN generation bigint NOT NULL DEFAULT 0",
            "UPDATE search_index SET generation = pg_current_xact_id()::text::bigint",
        ),
        "021_search_span_offsets": (
            # Each span's 8-byte keys become 4-byte offsets from its first key (`postings`),
            # a free slot (key 0) the free offset: read slot by slot, in SQL, in place.
            "UPDATE search_spans SET packed = (SELECT coalesce(string_agg(CASE WHEN key = 0 "
            "THEN decode('ffffffff', 'hex') ELSE int4send((key - search_spans.span * "
            "(SELECT span_keys FROM search_index))::integer) END, ''::bytea ORDER BY slot), "
            "''::bytea) FROM (SELECT slot, ('x' || encode(substring(packed FROM 8 * slot + 1 "
            "FOR 8), 'hex'))::bit(64)::bigint AS key "
            "FROM generate_series(0, length(packed) / 8 - 1) AS slot) AS slots)",
        ),
    }

    # Tests lower these to read a few hundred events every way (see the constants).
    few_holders = FEW_HOLDERS
    most_spans = MOST_SPANS

    def __init__(self, conn: Connection[DictRow],
                 transaction: Callable[[], AbstractContextManager[Any]]):
        self.conn = conn
        self.transaction = transaction
        self.postings = SlotPostings(conn)
        # The term counts read so far (by range), kept until this storage's next write: a
        # search that finds nothing asks again for what its own counts read (its words
        # online, everything in its place) to offer those searches instead.
        self._counted: dict[tuple[str, str], dict[str, int]] = {}
        # The generation those counts are of (None: none read), and that of remembered counts
        # this storage took, until a statement reads the index at it (None: none to confirm).
        self._counted_at: int | None = None
        self._assumed: int | None = None
        # Inside `bulk`: events are counted as they come, posted once at its end.
        self._posting_later = False

    # -- upkeep (in the transaction writing the events, under the catalog lock) -------------

    def row_columns(self, terms: list[str]) -> dict[str, Any]:
        """The terms, on the event's row."""
        return {"terms": terms}

    def add(self, indexed: Sequence[Indexed]) -> None:
        """Put events whose rows hold their terms in the postings, and count the terms."""
        self.forget_counts()
        if not self._posting_later:
            self.postings.add(indexed)
        self._count_terms(Counter(term for _, terms in indexed for term in terms))

    def remove(self, indexed: Sequence[Indexed]) -> None:
        """Take events out of the postings, and count down the terms their rows held."""
        self.forget_counts()
        self.postings.remove(indexed)
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
        self.conn.execute(f"{NEW_GENERATION}INSERT INTO search_terms (term, events) "
                          "SELECT term, events FROM counted ORDER BY term "
                          "ON CONFLICT (term) DO UPDATE "
                          "SET events = search_terms.events + excluded.events")
        self.conn.execute("DROP TABLE counted")

    def rebuild(self, batches: Iterable[Sequence[Indexed]]) -> None:
        """Write every event's terms on its row again and in new postings, batch by batch (in
        key order, so each batch fills a few spans), and count them again."""
        # `prepare` runs this under its schema lock; writers on other hosts take this one.
        self.conn.execute("SELECT pg_advisory_xact_lock(%s)", [CATALOG_LOCK])
        self.forget_counts()

        def written(cursor: Cursor[DictRow]) -> Iterator[Sequence[Indexed]]:
            for batch in batches:
                cursor.executemany("UPDATE events SET terms = %s WHERE search_key = %s",
                                   [(terms, key) for key, terms in batch])
                yield batch

        with self.conn.cursor() as cursor:
            self._post_anew(written(cursor))
        self.conn.execute("DELETE FROM search_terms")
        self.conn.execute(f"{NEW_GENERATION}INSERT INTO search_terms (term, events) "
                          "SELECT term, count(*) FROM events, unnest(terms) AS term GROUP BY term")

    def _post_anew(self, batches: Iterable[Sequence[Indexed]]) -> None:
        """New postings, with spans sized for the events stored, of every event: given batch
        by batch in key order, each batch fills a few spans no other batch writes."""
        stored = self.conn.execute("SELECT count(*) AS events, min(search_key) AS first, "
                                   "max(search_key) AS last FROM events").fetchone()
        assert stored is not None  # an aggregate's one row
        self.postings.start_over(span_keys_for(stored["events"], stored["first"],
                                               stored["last"]))
        for batch in batches:
            self.postings.add(batch)

    def _stored_terms(self) -> Iterator[list[Indexed]]:
        """Every event's key and the terms its row holds, `POSTING_BATCH` at a time in key
        order."""
        after = -(2**63)  # below every key
        while rows := self.conn.execute(
                "SELECT search_key, terms FROM events WHERE search_key > %s "
                "ORDER BY search_key LIMIT %s", [after, POSTING_BATCH]).fetchall():
            yield [(row["search_key"], row["terms"]) for row in rows]
            after = rows[-1]["search_key"]

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """Many events written in one transaction, posted once at its end; after it, the
        planner's statistics refreshed."""
        # Events come in any order of time, so each batch posted as it came would read and
        # rewrite most spans' rows again: 100 000 events took 34 minutes to load.
        with self.transaction():
            self._posting_later = True
            try:
                yield
            finally:
                self._posting_later = False
            self._post_anew(self._stored_terms())
        # VACUUM too: the visibility map lets the planner read keys from the index alone.
        self.analyze("VACUUM ANALYZE")

    @guarded
    def analyze(self, command: str) -> None:
        """Refresh the planner's statistics of the search's tables."""
        for table in ("events", "search_terms", "search_spans", "search_postings"):
            self.conn.execute(f"{command} {table}")

    # -- reading ------------------------------------------------------------------------
    # Every statement is prepared: their shapes are few (by the number of terms and
    # conjunctions), and unprepared the median search took 1.16 times as long.

    def counts(self, terms: list[str]) -> dict[str, int]:
        """How many events hold each of `terms` at each location and anywhere
        (term@location -> count), with the every-event term of each among them: as the
        process remembers them if it does (to be confirmed, `confirm_counts`), else read."""
        ranges = list(dict.fromkeys(holding_ranges(terms)))
        unread = [low_high for low_high in ranges if low_high not in self._counted]
        remembered = REMEMBERED.latest
        if unread and remembered is not None \
                and self._counted_at in (None, remembered.generation) \
                and all(low_high in remembered.counted for low_high in unread):
            self._counted_at = self._assumed = remembered.generation
            self.postings.learn_layout(remembered.layout)
            self._counted.update((low_high, remembered.counted[low_high]) for low_high in unread)
        elif unread:
            self._read_counts(unread)
        return {term: events for low_high in ranges
                for term, events in self._counted[low_high].items()}

    def _read_counts(self, ranges: list[tuple[str, str]]) -> None:
        """Read the counts of `ranges` (with the generation they are of) and remember them."""
        where = " OR ".join("(term >= %s AND term < %s)" for _ in ranges)
        # The postings' layout rides along (computed once, not per row): the page read next
        # needs it, and a search then waits for the server one time fewer.
        bounds = [bound for low_high in ranges for bound in low_high]
        rows = self.conn.execute(
            f"SELECT term, events, {postings.LAYOUT_COLUMNS}, {GENERATION} "
            f"FROM search_terms WHERE {where}", bounds, prepare=True).fetchall()
        if rows:
            self._confirm(rows[0]["generation"])
            self._counted_at = rows[0]["generation"]
        self.postings.learn_layout(rows[0] if rows else None)
        # Each range's terms told bytewise, as the "C" collation orders them.
        counted = {(low, high): {row["term"]: row["events"] for row in rows
                                 if low <= row["term"] < high} for low, high in ranges}
        self._counted.update(counted)
        if rows:
            layout = {name: rows[0][name] for name in ("span_keys", "spans")}
            REMEMBERED.keep(rows[0]["generation"], counted, layout)

    def _confirm(self, generation: int) -> None:
        """The index was read at `generation`: raise `StaleCounts` if the counts assumed are
        not of it, else they are confirmed."""
        if self._assumed is not None and generation != self._assumed:
            raise StaleCounts
        self._assumed = None

    def confirm_counts(self) -> None:
        """Raise `StaleCounts` unless the remembered counts this search took (if any) are the
        index's now: a statement of its own, only when no read of the search said so (one
        that found nothing to show)."""
        if self._assumed is not None:
            # Not prepared: preparing takes a trip of its own, and this statement is rare.
            row = self.conn.execute(f"SELECT {GENERATION}", prepare=False).fetchone()
            assert row is not None  # a select of one value has one row
            self._confirm(row["generation"])

    def forget_counts(self) -> None:
        """Drop the counts this storage read and those the process remembers."""
        self._counted.clear()
        self._counted_at = self._assumed = None
        REMEMBERED.forget()

    def page(self, plan: TermsPlan, limit: int, offset: int, count_cap: int,
             count_seats: bool) -> EventPage:
        """The page and capped count of `plan`'s matches (read as `_read_matches` says)."""
        keys = self._read_matches(plan, needed(limit, offset, count_cap))
        return page_of(keys, limit, offset, count_cap,
                       lambda shown: self._listed_at(shown, count_seats))

    def _read_matches(self, plan: TermsPlan, wanted: int) -> list[int]:
        """The keys of the first `wanted` events holding one of the plan's conjunctions, in
        key order: from the postings when the counts put them within `most_spans` spans,
        else every holder at once through the GIN index."""
        spans = self._spans_needed(plan, wanted)
        if spans is None:
            return self._keys(*every_holder(plan.conjunctions, plan.first, plan.end, wanted))
        return self._through_postings(plan, wanted, spans)

    def _spans_needed(self, plan: TermsPlan, wanted: int) -> float | None:
        """How many spans the counts say hold the `wanted` matches, or None: read every
        holder (few expected, or more spans than `most_spans`, or no postings)."""
        expected = expected_holders(plan)
        if expected <= self.few_holders:
            return None
        layout = self.postings.layout()
        if layout is None:
            return None
        # Matches per span: the expected ones spread over every span (past ones too, as the
        # counts count past events).
        spans = wanted * layout.spans / expected
        return spans if spans <= self.most_spans else None

    def _through_postings(self, plan: TermsPlan, wanted: int, spans_needed: float
                          ) -> list[int]:
        """The first `wanted` matches from the postings, batch after batch, each sized by the
        matches per span seen so far; when those say the rest would take more than
        `most_spans` further spans (the counts' guess can be far off: community and 台北 are
        rarely in one voice), the rest is every holder after the spans read."""
        layout = self.postings.layout()
        assert layout is not None  # `_spans_needed` found it
        span_keys = layout.span_keys
        conjunctions = padded(plan.conjunctions)
        # Each conjunction's next span to read; None once its rarest term has no more.
        starts: list[int | None] = [plan.first // span_keys] * len(conjunctions)
        end_span = None if plan.end is None else (plan.end - 1) // span_keys
        limit = first_batch(spans_needed)
        found: set[int] = set()
        read = 0
        while True:
            live = [(number, start) for number, start in enumerate(starts) if start is not None]
            batch = self.postings.read([conjunctions[number] for number, _ in live],
                                       [start for _, start in live], end_span, limit)
            found.update(batch.keys)
            for (number, _), reached in zip(live, batch.reached, strict=True):
                starts[number] = None if reached is None else reached + 1
            read += limit
            # Every match before `bound` is known: each conjunction read up to there.
            bound = min((start * span_keys for start in starts if start is not None),
                        default=None)
            keys = sorted(key for key in found if plan.first <= key
                          and (plan.end is None or key < plan.end)
                          and (bound is None or key < bound))
            if len(keys) >= wanted or bound is None:
                return keys[:wanted]
            # The spans the rest would take at the density seen; the GIN index reads it once
            # enough spans were seen to trust that density.
            rest = (wanted - len(keys)) * read / max(len(keys), 0.5)
            if rest > self.most_spans and read >= self.most_spans // 2:
                return keys + self._keys(*every_holder(plan.conjunctions, bound, plan.end,
                                                       wanted - len(keys)))
            limit = min(max(2 * limit, math.ceil(rest * SPANS_MARGIN)), self.most_spans)

    def _keys(self, sql: str, params: list[Any]) -> list[int]:
        """The keys a statement reads."""
        return [row["search_key"] for row in self.conn.execute(sql, params, prepare=True)]

    def _listed_at(self, keys: list[int], count_seats: bool) -> Listing:
        """The summaries of the events with these search keys, in key order, and their
        seats if `count_seats`."""
        columns = f"{SUMMARY_COLUMNS}, {SEAT_COLUMNS}" if count_seats else SUMMARY_COLUMNS
        rows = self.conn.execute(f"SELECT {columns}, {GENERATION} FROM events e "
                                 "WHERE e.search_key = ANY(%s) ORDER BY e.search_key", [keys],
                                 prepare=True).fetchall()
        # Read after the matches: the same generation means no write came before either.
        if rows:
            self._confirm(rows[0]["generation"])
        seats = {row["id"]: availability_of(row, moment) for row in rows} if count_seats else {}
        return [summary_of(row, moment) for row in rows], seats

    def explain(self, plan: TermsPlan, limit: int, count_cap: int) -> list[str]:
        """PostgreSQL's plan (EXPLAIN) for reading a search's matches: of every holder, or of
        the first batch of postings; a line above the plan says which."""
        wanted = needed(limit, 0, count_cap)
        spans = self._spans_needed(plan, wanted)
        layout = self.postings.layout()
        if spans is None or layout is None:
            said = "every holder at once, through the GIN index"
            sql, params = every_holder(plan.conjunctions, plan.first, plan.end, wanted)
        else:
            batch = first_batch(spans)
            said = f"slot postings, {batch} spans of each conjunction's rarest term at first"
            conjunctions = padded(plan.conjunctions)
            span_keys = layout.span_keys
            sql, params = postings.statement(
                conjunctions, [plan.first // span_keys] * len(conjunctions),
                None if plan.end is None else (plan.end - 1) // span_keys, batch)
        return [f"-- {said}", *(row["QUERY PLAN"] for row in self.conn.execute(
            f"EXPLAIN {sql}", params, prepare=False))]
