"""The SQLite backend (sqlite-utils): all of the site's SQL lives in this module.

One `SQLiteStorage` per request (see `storage.connection`). The database runs in WAL mode so readers
never wait for the writer; writes that check and change inventory take the write lock up front
with `BEGIN IMMEDIATE`, and `busy_timeout` queues writers from other gunicorn workers.
"""

from __future__ import annotations

import functools
import json
import re
import sqlite3
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any
from typing import NamedTuple
from typing import ParamSpec
from typing import TypeVar

from sqlite_utils import Database

from ..config import DATABASE_BUSY_TIMEOUT_MS
from . import Activity
from . import AgentConnection
from . import Confirmation
from . import Event
from . import EventPage
from . import EventQuery
from . import Registration
from . import StorageError
from .migrations import migrations

P = ParamSpec("P")
R = TypeVar("R")

# A free-text expression found in more events than this is "common": a search for it stops
# reading every match and sorting them, and walks the start-time order instead (see
# `SQLiteStorage.plan_search`).
COMMON_TERM_THRESHOLD = 1000
BULK_LOAD_CACHE_KIB = 256 * 1024
_WORD = re.compile(r"\w+", re.UNICODE)
EVENT_COLUMNS = (
    "e.id, e.title, e.summary, e.description, e.starts_at, e.ends_at, e.location, e.venue, "
    "e.price, e.level, e.capacity, e.held_seats, e.registration_deadline"
)


class ReadPath(NamedTuple):
    """Where a search reads events from, and what ties the full-text match to them."""

    source: str
    match: str | None = None


# The index of the filters, in start order (no text to match).
INDEX_WALK = ReadPath("events e")
# Every match read from the full-text index, then joined to its event: cheap for rare words,
# and for counting without filters, which stops at the cap after about twice as many matches.
FTS_FIRST = ReadPath("events_fts JOIN events e ON e.rowid = events_fts.rowid",
                     "events_fts MATCH :match")
# The filters' index walked in start order, each event checked in the full-text index (about
# 8 µs a check): a page of a word most events hold takes a few checks, and a count bounded by
# the cap about cap ÷ density. Whole words only (see `_fts_expression`).
CHECK_EACH = ReadPath("events e", "EXISTS (SELECT 1 FROM events_fts WHERE events_fts MATCH "
                                  ":match AND events_fts.rowid = e.rowid)")
# The matches read once into a set and the filters' index walked against it ("+" keeps SQLite
# on the index rather than looking up each match): bounded work for common prefixes.
MATCH_SET = ReadPath("events e", "+e.rowid IN (SELECT rowid FROM events_fts "
                                 "WHERE events_fts MATCH :match)")


@dataclass(frozen=True)
class SearchPlan:
    """The SQL of one search: a page (`:limit`, `:offset`) and a count bounded by `:cap`."""

    name: str
    params: dict[str, Any]
    page_sql: str
    count_sql: str

    @classmethod
    def of(cls, name: str, params: dict[str, Any], filters: list[str], page: ReadPath,
           count: ReadPath) -> SearchPlan:
        """The plan reading its page and its count each its own way, with the same filters."""

        def where(path: ReadPath) -> str:
            conditions = filters + ([path.match] if path.match else [])
            return f"FROM {path.source} WHERE {' AND '.join(conditions)}"

        return cls(
            name=name,
            params=params,
            page_sql=(f"SELECT {EVENT_COLUMNS} {where(page)} "
                      "ORDER BY e.starts_at, e.id LIMIT :limit OFFSET :offset"),
            count_sql=f"SELECT count(*) FROM (SELECT 1 {where(count)} LIMIT :cap)",
        )


def to_text(moment: datetime) -> str:
    """A datetime as stored: UTC, second precision, `Z` suffix (so text order is time order)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def from_text(text: str) -> datetime:
    """The datetime stored as `text`."""
    return datetime.fromisoformat(text).astimezone(UTC)


def fts_phrases(text: str) -> list[str]:
    """The words of user text as FTS5 strings, quoted so that no word is an operator."""
    return ['"' + word.replace('"', '""') + '"' for word in _WORD.findall(text)]


def guarded(method: Callable[P, R]) -> Callable[P, R]:
    """Turn any SQLite failure into StorageError; the cause stays in the server log only."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except sqlite3.Error as error:
            raise StorageError(f"{method.__name__} failed") from error

    return wrapper


def _event(row: dict[str, Any], seats_taken: int | None = None) -> Event:
    return Event(
        id=row["id"],
        title=row["title"],
        summary=row["summary"],
        description=row["description"],
        starts_at=from_text(row["starts_at"]),
        ends_at=from_text(row["ends_at"]),
        location=row["location"],
        venue=row["venue"],
        price=row["price"],
        level=row["level"],
        capacity=row["capacity"],
        held_seats=row["held_seats"],
        registration_deadline=from_text(row["registration_deadline"]),
        seats_taken=seats_taken,
    )


REGISTRATION_SELECT = (
    "SELECT r.*, e.title AS event_title, e.starts_at AS event_starts_at "
    "FROM registrations r JOIN events e ON e.id = r.event_id"
)


def _registration(row: dict[str, Any]) -> Registration:
    return Registration(
        id=row["id"],
        event_id=row["event_id"],
        visitor_id=row["visitor_id"],
        attendee_name=row["attendee_name"],
        email=row["email"],
        state=row["state"],
        created_at=from_text(row["created_at"]),
        cancelled_at=from_text(row["cancelled_at"]) if row["cancelled_at"] else None,
        event_title=row["event_title"],
        event_starts_at=from_text(row["event_starts_at"]),
    )


def _confirmation(row: dict[str, Any]) -> Confirmation:
    return Confirmation(
        token_hash=row["token_hash"],
        visitor_id=row["visitor_id"],
        action=row["action"],
        target_id=row["target_id"],
        payload=json.loads(row["payload"]),
        created_at=from_text(row["created_at"]),
        expires_at=from_text(row["expires_at"]),
        used_at=from_text(row["used_at"]) if row["used_at"] else None,
        source=row["source"],
    )


def _agent_connection(row: dict[str, Any]) -> AgentConnection:
    return AgentConnection(
        id=row["id"],
        visitor_id=row["visitor_id"],
        label=row["label"],
        created_at=from_text(row["created_at"]),
        expires_at=from_text(row["expires_at"]),
        last_used_at=from_text(row["last_used_at"]) if row["last_used_at"] else None,
    )


def _event_row(event: Event) -> dict[str, Any]:
    return {
        "id": event.id,
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
    }


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
        """Insert or update events, all or nothing; returns how many were written."""
        rows = [_event_row(event) for event in events]
        with self.transaction():
            self.db.table("events").upsert_all(rows, pk="id")
        return len(rows)

    @guarded
    def add_events(self, events: Iterable[Event]) -> int:
        """Insert new events (an existing id is an error), all or nothing; returns how many.

        Faster than `import_events` for bulk loads: one plain INSERT per row.
        """
        rows = [_event_row(event) for event in events]
        if not rows:
            return 0
        columns = ", ".join(rows[0])
        values = ", ".join(f":{name}" for name in rows[0])
        with self.transaction():
            self.db.conn.executemany(f"INSERT INTO events ({columns}) VALUES ({values})", rows)
        return len(rows)

    @contextmanager
    def bulk_load(self) -> Iterator[None]:
        """One transaction for loading many events (`add_events` inside it), then the
        planner's statistics refreshed and the full-text index merged into one segment.
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
        """Merge the full-text index's segments and refresh the planner's statistics."""
        with self.transaction():
            self.db.execute("INSERT INTO events_fts (events_fts) VALUES ('optimize')")
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
        """Upcoming events matching `query`, soonest first, with a count bounded by `count_cap`."""
        plan = self.plan_search(query)
        if plan is None:
            return EventPage(events=[], count=0, count_capped=False, has_more=False)
        rows = list(self.db.query(plan.page_sql, {**plan.params, "limit": limit + 1,
                                                  "offset": offset}))
        counted = self.db.execute(plan.count_sql,
                                  {**plan.params, "cap": count_cap + 1}).fetchone()[0]
        return EventPage(
            events=[_event(row) for row in rows[:limit]],
            count=min(counted, count_cap),
            count_capped=counted > count_cap,
            has_more=len(rows) > limit,
        )

    @guarded
    def plan_search(self, query: EventQuery) -> SearchPlan | None:
        """How `search_events` reads `query`: chosen by how many events its words match.

        None when the query's text holds no word to look for.
        """
        filters = ["e.starts_at >= :starts_after"]
        params: dict[str, Any] = {"starts_after": to_text(query.starts_after)}
        for column in ("location", "price", "level"):
            value = getattr(query, column)
            if value is not None:
                filters.append(f"e.{column} = :{column}")
                params[column] = value
        if query.starts_from is not None:
            filters.append("e.starts_at >= :starts_from")
            params["starts_from"] = to_text(query.starts_from)
        if query.starts_before is not None:
            filters.append("e.starts_at < :starts_before")
            params["starts_before"] = to_text(query.starts_before)
        if query.text is None:
            return SearchPlan.of("filters", params, filters, INDEX_WALK, INDEX_WALK)

        match = self._fts_expression(query.text)
        if match is None:
            return None
        params["match"] = match
        if not self._is_common(match):
            return SearchPlan.of("rare words", params, filters, FTS_FIRST, FTS_FIRST)
        unfiltered = len(filters) == 1  # "upcoming" is the only condition
        if match.endswith("*"):
            return SearchPlan.of("common prefix", params, filters, MATCH_SET,
                                 FTS_FIRST if unfiltered else MATCH_SET)
        return SearchPlan.of("common words", params, filters, CHECK_EACH,
                             FTS_FIRST if unfiltered else CHECK_EACH)

    @guarded
    def explain_search(self, query: EventQuery, limit: int, count_cap: int
                       ) -> dict[str, list[str]]:
        """SQLite's plan (EXPLAIN QUERY PLAN) for the first page and the count of a search."""
        plan = self.plan_search(query)
        if plan is None:
            return {}
        params = {**plan.params, "limit": limit + 1, "offset": 0, "cap": count_cap + 1}
        return {part: [row[3] for row in self.db.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
                for part, sql in (("page", plan.page_sql), ("count", plan.count_sql))}

    def _fts_expression(self, text: str) -> str | None:
        """A safe FTS5 query for user text, or None when it holds no word to look for.

        Every word must be found. The last one is matched as the start of a word while it is
        not a word of the index, so active search finds "webmcp" while a person types "webm";
        a whole word is matched as itself: FTS5 reads every match of a prefix each time it
        evaluates it, which would make checking a common word event by event slow.
        """
        phrases = fts_phrases(text)
        if not phrases:
            return None
        indexed = self.db.execute("SELECT 1 FROM events_fts WHERE events_fts MATCH ? LIMIT 1",
                                  [phrases[-1]]).fetchone()
        if indexed is None:
            phrases[-1] += "*"
        return " ".join(phrases)

    def _is_common(self, match: str) -> bool:
        """Whether a full-text expression matches more events than COMMON_TERM_THRESHOLD."""
        probed: int = self.db.execute(
            "SELECT count(*) FROM (SELECT 1 FROM events_fts WHERE events_fts MATCH ? LIMIT ?)",
            [match, COMMON_TERM_THRESHOLD + 1]).fetchone()[0]
        return probed > COMMON_TERM_THRESHOLD

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
        return _registration(rows[0]) if rows else None

    @guarded
    def active_registration(self, visitor_id: str, event_id: str) -> Registration | None:
        """The visitor's active registration for the event, if any."""
        rows = list(self.db.query(
            f"{REGISTRATION_SELECT} WHERE r.visitor_id = ? AND r.event_id = ? "
            "AND r.state = 'active'", [visitor_id, event_id]))
        return _registration(rows[0]) if rows else None

    @guarded
    def visitor_registrations(self, visitor_id: str) -> list[Registration]:
        """All of the visitor's registrations, active first, then by event start."""
        rows = self.db.query(
            f"{REGISTRATION_SELECT} WHERE r.visitor_id = ? "
            "ORDER BY r.state = 'cancelled', e.starts_at, r.created_at", [visitor_id])
        return [_registration(row) for row in rows]

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
        return _confirmation(rows[0]) if rows else None

    @guarded
    def pending_confirmations(self, visitor_id: str, now: datetime) -> list[Confirmation]:
        """The visitor's confirmations neither used nor expired, oldest first."""
        rows = self.db.query(
            "SELECT * FROM confirmations WHERE visitor_id = ? AND used_at IS NULL "
            "AND expires_at > ? ORDER BY created_at, token_hash", [visitor_id, to_text(now)])
        return [_confirmation(row) for row in rows]

    @guarded
    def reissue_confirmation(self, token_hash: str, new_hash: str) -> bool:
        """Bind a pending confirmation to a new token (its old one stops working); False when
        it was used meanwhile, or is no longer there."""
        cursor = self.db.execute(
            "UPDATE confirmations SET token_hash = ? WHERE token_hash = ? AND used_at IS NULL",
            [new_hash, token_hash])
        return cursor.rowcount == 1

    @guarded
    def use_confirmation(self, token_hash: str, now: datetime) -> None:
        """Spend a confirmation (call inside the transaction that acts on it)."""
        self.db.execute("UPDATE confirmations SET used_at = ? WHERE token_hash = ?",
                        [to_text(now), token_hash])

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
        return _agent_connection(rows[0]) if rows else None

    @guarded
    def visitor_agent_connections(self, visitor_id: str) -> list[AgentConnection]:
        """The visitor's connections, newest first."""
        rows = self.db.query("SELECT * FROM agent_connections WHERE visitor_id = ? "
                             "ORDER BY created_at DESC, id", [visitor_id])
        return [_agent_connection(row) for row in rows]

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
        return [Activity(at=from_text(row["at"]), visitor_id=row["visitor_id"],
                         source=row["source"], action=row["action"], status=row["status"],
                         target_id=row["target_id"]) for row in rows]

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
            for table in ("saved_events", "confirmations", "registrations", "activity",
                          "agent_connections"):
                self.db.execute(f"DELETE FROM {table} WHERE visitor_id IN ({idle})", gone)
            visitors = self.db.execute(f"DELETE FROM visitors WHERE id IN ({idle})",
                                       gone).rowcount
        return {"confirmations": confirmations, "activity": activity, "visitors": visitors,
                "connections": connections}
