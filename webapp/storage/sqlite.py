"""The SQLite backend (sqlite-utils): all of the site's SQL lives in this module.

One `SQLiteStorage` per request (see `storage.connection`). The database runs in WAL mode so readers
never wait for the writer; writes that check and change inventory take the write lock up front
with `BEGIN IMMEDIATE`, and `busy_timeout` queues writers from other gunicorn workers.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from ..config import DATABASE_BUSY_TIMEOUT_MS
from . import Activity
from . import AgentConnection
from . import Confirmation
from . import Event
from . import EventPage
from . import EventQuery
from . import EventSummary
from . import Registration
from . import StorageError
from . import search
from .migrations import migrations
from .shared import NO_MATCHES
from .shared import SUMMARY_COLUMNS
from .shared import SUMMARY_FIELDS
from .shared import activity_of
from .shared import agent_connection_of
from .shared import allocate_keys
from .shared import confirmation_of
from .shared import event_of
from .shared import guard
from .shared import holding_ranges
from .shared import needed
from .shared import page_of
from .shared import plan_terms
from .shared import registration_of
from .shared import summary_of
from .shared import terms_of

BULK_LOAD_CACHE_KIB = 256 * 1024
INDEX_BATCH = 2000  # events whose terms are written to the search index at once
EVENT_COLUMNS = (
    "e.id, e.title, e.summary, e.description, e.starts_at, e.ends_at, e.location, e.venue, "
    "e.price, e.level, e.capacity, e.held_seats, e.registration_deadline, e.price_amount, "
    "e.price_currency"
)
EVENT_FIELDS = tuple(column.removeprefix("e.") for column in EVENT_COLUMNS.split(", "))
# In an FTS5 query: a term no event holds (every indexed term has a location after the mark).
NO_EVENT = f'"{search.LOCATION_MARK}"'


@dataclass(frozen=True)
class SearchPlan:
    """How a search reads its matches: `sql` yields the keys of up to `:needed` matching
    events in start order, one walk of an index that stops there."""

    sql: str
    params: dict[str, Any]


def to_text(moment: datetime) -> str:
    """A datetime as stored: UTC, second precision, `Z` suffix (so text order is time order)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def from_text(text: str) -> datetime:
    """The datetime stored as `text`."""
    return datetime.fromisoformat(text).astimezone(UTC)


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


def _event(row: Mapping[str, Any], seats_taken: int | None = None) -> Event:
    return event_of(row, from_text, seats_taken)


REGISTRATION_SELECT = (
    "SELECT r.*, e.title AS event_title, e.starts_at AS event_starts_at "
    "FROM registrations r JOIN events e ON e.id = r.event_id"
)


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
            busy_timeout_ms: int = DATABASE_BUSY_TIMEOUT_MS) -> Database:
    """Open the database file (never silently creating a missing one unless `create`)."""
    mode = "rwc" if create else "rw"
    uri = f"{Path(path).absolute().as_uri()}?mode={mode}"
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
    db = Database(conn)
    # A writer waits this long for another to finish before giving up (SQLITE_BUSY).
    db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    db.execute("PRAGMA foreign_keys = ON")
    # WAL with NORMAL sync is durable across application crashes (only a power loss may drop
    # the last commits), and avoids an fsync per transaction.
    db.execute("PRAGMA synchronous = NORMAL")
    return db


class SQLiteStorage:
    """The site's data in one SQLite file."""

    def __init__(self, db: Database):
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
    def transaction(self) -> Iterator[Database]:
        """A transaction holding the write lock from its start (BEGIN IMMEDIATE).

        Other writers wait (busy_timeout) instead of failing half-way; inside another
        transaction it becomes a savepoint of that one.
        """
        if self.db.conn.in_transaction:
            with self.db.atomic():
                yield self.db
            return
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            raise StorageError("could not take the write lock") from error
        try:
            yield self.db
        except BaseException:
            self.db.rollback()
            raise
        try:
            self.db.commit()
        except sqlite3.Error as error:
            self.db.rollback()
            raise StorageError("commit failed") from error

    def _insert(self, table: str, row: dict[str, Any]) -> None:
        """Add one row to a table the migrations made.

        Not sqlite-utils' `insert`: it creates a missing table from the row, so a database
        that is not this site's (an empty file, say) would grow tables of its own instead
        of failing the request.
        """
        columns = ", ".join(row)
        values = ", ".join(f":{column}" for column in row)
        self.db.execute(f"INSERT INTO {table} ({columns}) VALUES ({values})", row)

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
            db.enable_wal()
            with storage.transaction():
                migrations.apply(db)
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

    # -- events -------------------------------------------------------------------------

    @guarded
    def count_events(self) -> int:
        """How many events are stored (past ones included)."""
        count: int = self.db.execute("SELECT count(*) FROM events").fetchone()[0]
        return count

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
            self.db.conn.executemany(_insert(rows[0]), rows)
            self._index(keyed)
        return len(rows)

    def _stored(self, event_id: str) -> tuple[Event, int] | None:
        """An event as stored, with its search key."""
        row = self.db.execute(f"SELECT {EVENT_COLUMNS}, e.search_key FROM events e "
                              "WHERE e.id = ?", [event_id]).fetchone()
        if row is None:
            return None
        return _event(dict(zip(EVENT_FIELDS, row[:-1], strict=True))), row[-1]

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
        self.db.conn.executemany("INSERT INTO event_search (rowid, terms) VALUES (?, ?)", rows)
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
        self.db.conn.executemany(
            "INSERT INTO search_terms (term, events) VALUES (?, ?) "
            "ON CONFLICT (term) DO UPDATE SET events = events + excluded.events",
            change.items())

    def refresh_search_index(self) -> bool:
        """Rebuild the search index when another version of `search` made its terms (or
        none did yet), giving a key to any event without one; True when it rebuilt.

        Call inside a transaction (`prepare` does, after the migrations).
        """
        built = self.db.execute("SELECT terms_version FROM search_index").fetchone()[0]
        if built == search.VERSION:
            return False
        self.db.execute("INSERT INTO event_search (event_search) VALUES ('delete-all')")
        self.db.execute("DELETE FROM search_terms")
        unkeyed = [_event(row) for row in self.db.query(
            f"SELECT {EVENT_COLUMNS} FROM events e WHERE e.search_key IS NULL "
            "ORDER BY e.starts_at, e.id")]
        for key, event in zip(self._allocate_keys(unkeyed), unkeyed, strict=True):
            self.db.execute("UPDATE events SET search_key = ? WHERE id = ?", [key, event.id])
        batch: list[tuple[int, Event]] = []
        for row in self.db.query(f"SELECT {EVENT_COLUMNS}, e.search_key FROM events e"):
            batch.append((row.pop("search_key"), _event(row)))
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
    def get_event(self, event_id: str, count_seats: bool = False,
                  for_update: bool = False) -> Event | None:
        """One event, or None; with `count_seats`, its taken seats counted now.

        (`for_update` matters to backends with row locks; SQLite's transaction already holds
        the whole database.)
        """
        rows = list(self.db.query(
            f"SELECT {EVENT_COLUMNS} FROM events e WHERE e.id = ?", [event_id]))
        if not rows:
            return None
        taken = None
        if count_seats:
            active = self.db.execute(
                "SELECT count(*) FROM registrations WHERE event_id = ? AND state = 'active'",
                [event_id]).fetchone()[0]
            taken = rows[0]["held_seats"] + active
        return _event(rows[0], seats_taken=taken)

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
        keys = [row[0] for row in self.db.conn.execute(
            plan.sql, {**plan.params, "needed": needed(limit, offset, count_cap)})]
        return page_of(keys, limit, offset, count_cap, self._summaries_at)

    def _summaries_at(self, keys: list[int]) -> list[EventSummary]:
        """The summaries of the events with these search keys, in key order."""
        # The connection's own cursor: sqlite-utils' dict rows cost a tenth of a search here.
        rows = self.db.conn.execute(
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

    # -- visitors -----------------------------------------------------------------------

    @guarded
    def create_visitor(self, visitor_id: str, now: datetime, expires_at: datetime) -> None:
        """Start a visitor session."""
        self._insert("visitors", {"id": visitor_id, "created_at": to_text(now),
                                  "expires_at": to_text(expires_at)})

    @guarded
    def visitor_expires_at(self, visitor_id: str) -> datetime | None:
        """When the visitor's session ends, or None if there is no such visitor."""
        row = self.db.execute("SELECT expires_at FROM visitors WHERE id = ?",
                              [visitor_id]).fetchone()
        return from_text(row[0]) if row else None

    @guarded
    def extend_visitor(self, visitor_id: str, expires_at: datetime) -> None:
        """Keep an active visitor's session alive until `expires_at`."""
        self.db.execute("UPDATE visitors SET expires_at = ? WHERE id = ?",
                        [to_text(expires_at), visitor_id])

    # -- saved events -------------------------------------------------------------------

    @guarded
    def save_event(self, visitor_id: str, event_id: str, now: datetime) -> bool:
        """Mark an event saved; False when it already was (nothing is written then)."""
        cursor = self.db.execute(
            "INSERT INTO saved_events (visitor_id, event_id, saved_at) VALUES (?, ?, ?) "
            "ON CONFLICT (visitor_id, event_id) DO NOTHING",
            [visitor_id, event_id, to_text(now)])
        return cursor.rowcount == 1

    @guarded
    def remove_saved_event(self, visitor_id: str, event_id: str) -> bool:
        """Forget a saved event; False when it was not saved."""
        cursor = self.db.execute(
            "DELETE FROM saved_events WHERE visitor_id = ? AND event_id = ?",
            [visitor_id, event_id])
        return cursor.rowcount == 1

    @guarded
    def saved_events(self, visitor_id: str) -> list[Event]:
        """The visitor's saved events, soonest first."""
        rows = self.db.query(
            f"SELECT {EVENT_COLUMNS} FROM saved_events s JOIN events e ON e.id = s.event_id "
            "WHERE s.visitor_id = ? ORDER BY e.starts_at, e.id", [visitor_id])
        return [_event(row) for row in rows]

    @guarded
    def is_saved(self, visitor_id: str, event_id: str) -> bool:
        """Whether the visitor saved the event."""
        return self.db.execute(
            "SELECT 1 FROM saved_events WHERE visitor_id = ? AND event_id = ?",
            [visitor_id, event_id]).fetchone() is not None

    # -- registrations ------------------------------------------------------------------

    @guarded
    def create_registration(self, registration: Registration) -> None:
        """Store a new registration (call inside `transaction()` after checking seats)."""
        self._insert("registrations", {
            "id": registration.id,
            "event_id": registration.event_id,
            "visitor_id": registration.visitor_id,
            "attendee_name": registration.attendee_name,
            "email": registration.email,
            "state": registration.state,
            "created_at": to_text(registration.created_at),
            "cancelled_at": None,
        })

    @guarded
    def get_registration(self, registration_id: str) -> Registration | None:
        """One registration, or None."""
        rows = list(self.db.query(f"{REGISTRATION_SELECT} WHERE r.id = ?", [registration_id]))
        return registration_of(rows[0], from_text) if rows else None

    @guarded
    def active_registration(self, visitor_id: str, event_id: str) -> Registration | None:
        """The visitor's active registration for the event, if any."""
        rows = list(self.db.query(
            f"{REGISTRATION_SELECT} WHERE r.visitor_id = ? AND r.event_id = ? "
            "AND r.state = 'active'", [visitor_id, event_id]))
        return registration_of(rows[0], from_text) if rows else None

    @guarded
    def email_registered(self, event_id: str, email: str) -> bool:
        """Whether an active registration for the event was made with this e-mail address
        (in any case: addresses kept before they were kept in lower case)."""
        rows = list(self.db.query(
            "SELECT 1 FROM registrations WHERE event_id = ? AND state = 'active' "
            "AND lower(email) = lower(?) LIMIT 1", [event_id, email]))
        return bool(rows)

    @guarded
    def visitor_registrations(self, visitor_id: str) -> list[Registration]:
        """All of the visitor's registrations, active first, then by event start."""
        rows = self.db.query(
            f"{REGISTRATION_SELECT} WHERE r.visitor_id = ? "
            "ORDER BY r.state = 'cancelled', e.starts_at, r.created_at", [visitor_id])
        return [registration_of(row, from_text) for row in rows]

    @guarded
    def cancel_registration(self, registration_id: str, now: datetime) -> None:
        """Mark a registration cancelled (its seat is free from then on)."""
        self.db.execute(
            "UPDATE registrations SET state = 'cancelled', cancelled_at = ? "
            "WHERE id = ? AND state = 'active'", [to_text(now), registration_id])

    # -- confirmations ------------------------------------------------------------------

    @guarded
    def create_confirmation(self, confirmation: Confirmation) -> None:
        """Store a pending confirmation."""
        self._insert("confirmations", {
            "token_hash": confirmation.token_hash,
            "visitor_id": confirmation.visitor_id,
            "action": confirmation.action,
            "target_id": confirmation.target_id,
            "payload": json.dumps(confirmation.payload),
            "created_at": to_text(confirmation.created_at),
            "expires_at": to_text(confirmation.expires_at),
            "used_at": None,
            "source": confirmation.source,
        })

    @guarded
    def get_confirmation(self, token_hash: str) -> Confirmation | None:
        """The confirmation with this token hash, or None."""
        rows = list(self.db.query("SELECT * FROM confirmations WHERE token_hash = ?",
                                  [token_hash]))
        return confirmation_of(rows[0], from_text, json.loads) if rows else None

    @guarded
    def pending_confirmations(self, visitor_id: str, now: datetime) -> list[Confirmation]:
        """The visitor's confirmations neither used nor expired, oldest first."""
        rows = self.db.query(
            "SELECT * FROM confirmations WHERE visitor_id = ? AND used_at IS NULL "
            "AND expires_at > ? ORDER BY created_at, token_hash", [visitor_id, to_text(now)])
        return [confirmation_of(row, from_text, json.loads) for row in rows]

    @guarded
    def use_confirmation(self, token_hash: str, now: datetime) -> None:
        """Spend a confirmation (call inside the transaction that acts on it)."""
        self.db.execute("UPDATE confirmations SET used_at = ? WHERE token_hash = ?",
                        [to_text(now), token_hash])

    # -- calendar feeds -----------------------------------------------------------------

    @guarded
    def set_calendar_feed(self, visitor_id: str, token_hash: str, now: datetime) -> None:
        """Give the visitor a feed known by this token hash; an earlier one stops working."""
        self.db.execute("INSERT OR REPLACE INTO calendar_feeds (visitor_id, token_hash, "
                        "created_at) VALUES (?, ?, ?)", [visitor_id, token_hash, to_text(now)])

    @guarded
    def stop_calendar_feed(self, visitor_id: str) -> bool:
        """Forget the visitor's feed (its address stops working); False when there was none."""
        return self.db.execute("DELETE FROM calendar_feeds WHERE visitor_id = ?",
                               [visitor_id]).rowcount == 1

    @guarded
    def calendar_feed_owner(self, token_hash: str) -> str | None:
        """The visitor whose feed has this token hash, or None."""
        rows = list(self.db.query("SELECT visitor_id FROM calendar_feeds WHERE token_hash = ?",
                                  [token_hash]))
        return str(rows[0]["visitor_id"]) if rows else None

    @guarded
    def calendar_feed_since(self, visitor_id: str) -> datetime | None:
        """When the visitor's current feed was made, or None when they have none."""
        rows = list(self.db.query("SELECT created_at FROM calendar_feeds WHERE visitor_id = ?",
                                  [visitor_id]))
        return from_text(rows[0]["created_at"]) if rows else None

    # -- agent connections --------------------------------------------------------------

    @guarded
    def create_agent_connection(self, connection: AgentConnection, token_hash: str) -> None:
        """Store a new connection, known by the hash of its access token."""
        self._insert("agent_connections", {
            "id": connection.id,
            "token_hash": token_hash,
            "visitor_id": connection.visitor_id,
            "label": connection.label,
            "created_at": to_text(connection.created_at),
            "expires_at": to_text(connection.expires_at),
            "last_used_at": None,
        })

    @guarded
    def agent_connection(self, token_hash: str) -> AgentConnection | None:
        """The connection whose access token has this hash, or None."""
        rows = list(self.db.query("SELECT * FROM agent_connections WHERE token_hash = ?",
                                  [token_hash]))
        return agent_connection_of(rows[0], from_text) if rows else None

    @guarded
    def visitor_agent_connections(self, visitor_id: str) -> list[AgentConnection]:
        """The visitor's connections, newest first."""
        rows = self.db.query("SELECT * FROM agent_connections WHERE visitor_id = ? "
                             "ORDER BY created_at DESC, id", [visitor_id])
        return [agent_connection_of(row, from_text) for row in rows]

    @guarded
    def agent_connection_used(self, connection_id: str, now: datetime) -> None:
        """Note when a connection was last used."""
        self.db.execute("UPDATE agent_connections SET last_used_at = ? WHERE id = ?",
                        [to_text(now), connection_id])

    @guarded
    def revoke_agent_connection(self, visitor_id: str, connection_id: str) -> bool:
        """Forget one of the visitor's connections (its token stops working); False when the
        visitor has no such connection."""
        cursor = self.db.execute(
            "DELETE FROM agent_connections WHERE id = ? AND visitor_id = ?",
            [connection_id, visitor_id])
        return cursor.rowcount == 1

    # -- carried results ----------------------------------------------------------------

    @guarded
    def keep_carried_result(self, key_hash: str, body: str, expires_at: datetime,
                            now: datetime) -> None:
        """Keep a result under the hash of its key; the expired ones go (few: each lives
        minutes, and most are taken at once)."""
        with self.transaction():
            self.db.execute("DELETE FROM carried_results WHERE expires_at <= ?", [to_text(now)])
            self._insert("carried_results", {"key_hash": key_hash, "body": body,
                                             "expires_at": to_text(expires_at)})

    @guarded
    def take_carried_result(self, key_hash: str, now: datetime) -> str | None:
        """The result kept under this key hash, deleted in the same statement that reads it,
        so two requests with the same key never both get it; None when absent or expired."""
        # A statement that returns rows is not committed by sqlite-utils: the transaction
        # commits it (and every row is read before the commit).
        with self.transaction():
            rows = self.db.execute("DELETE FROM carried_results WHERE key_hash = ? "
                                   "RETURNING body, expires_at", [key_hash]).fetchall()
        if not rows or from_text(rows[0][1]) <= now:
            return None
        return str(rows[0][0])

    # -- activity -----------------------------------------------------------------------

    @guarded
    def record_activity(self, entry: Activity) -> None:
        """Append one line to the activity log."""
        self._insert("activity", {
            "at": to_text(entry.at),
            "visitor_id": entry.visitor_id,
            "source": entry.source,
            "action": entry.action,
            "status": entry.status,
            "target_id": entry.target_id,
        })

    @guarded
    def recent_activity(self, visitor_id: str, limit: int) -> list[Activity]:
        """The visitor's latest activity, newest first."""
        rows = self.db.query(
            "SELECT * FROM activity WHERE visitor_id = ? ORDER BY at DESC, id DESC LIMIT ?",
            [visitor_id, limit])
        return [activity_of(row, from_text) for row in rows]

    # -- housekeeping -------------------------------------------------------------------

    @guarded
    def prune(self, confirmations_before: datetime, activity_before: datetime,
              visitors_before: datetime) -> dict[str, int]:
        """Delete confirmations that expired before one moment, activity older than another,
        and visitors whose session ended before a third with no active registration (with
        everything that was theirs: nobody can reach it again), and agent connections that
        expired before that third moment. Returns how many rows of each went.

        A visitor with an active registration stays: it is a seat on the organizer's list.
        """
        idle = ("SELECT v.id FROM visitors v WHERE v.expires_at < :before AND NOT EXISTS ("
                "SELECT 1 FROM registrations r WHERE r.visitor_id = v.id "
                "AND r.state = 'active')")
        gone = {"before": to_text(visitors_before)}
        with self.transaction():
            confirmations = self.db.execute(
                "DELETE FROM confirmations WHERE expires_at < ?",
                [to_text(confirmations_before)]).rowcount
            activity = self.db.execute("DELETE FROM activity WHERE at < ?",
                                       [to_text(activity_before)]).rowcount
            connections = self.db.execute("DELETE FROM agent_connections WHERE expires_at < ?",
                                          [to_text(visitors_before)]).rowcount
            carried = self.db.execute("DELETE FROM carried_results WHERE expires_at < ?",
                                     [to_text(visitors_before)]).rowcount
            for table in ("saved_events", "confirmations", "registrations", "activity",
                          "agent_connections", "calendar_feeds"):
                self.db.execute(f"DELETE FROM {table} WHERE visitor_id IN ({idle})", gone)
            visitors = self.db.execute(f"DELETE FROM visitors WHERE id IN ({idle})",
                                       gone).rowcount
        return {"confirmations": confirmations, "activity": activity, "visitors": visitors,
                "connections": connections, "carried": carried}
