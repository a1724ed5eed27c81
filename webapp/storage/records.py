"""The records both backends keep alike (visitors, saved events, registrations, confirmations,
calendar feeds, agent connections, carried results, activity), each method written once.

The SQL is the same on SQLite and PostgreSQL: `ON CONFLICT` and `RETURNING` mean the same on
both. Parameters are named (`:name`); times, JSON and row locks go through the backend's
`Dialect`; a backend provides the primitives below (`_rows`, `_one`, `_run`, `_returning`,
`_in_transaction`, `_insert_many`, `_lock_catalog`, `_transaction`). Rows become
dataclasses here (`event_of`, ...). The schema is applied here too (`migrate`, the migrations of
`schema`). Events are written here, their search keys given and their terms made
(`shared.terms_of`), and searches planned (`shared.plan_terms`); the backend's search index
(`index.SearchIndex`) keeps and reads the terms.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import AbstractContextManager
from contextlib import contextmanager
from datetime import UTC
from datetime import datetime
from typing import Any

from . import Activity
from . import AgentConnection
from . import Availability
from . import Confirmation
from . import Event
from . import EventPage
from . import EventQuery
from . import EventSummary
from . import Registration
from . import RegistrationCheck
from . import StorageError
from . import search
from .accounts import AccountRecords
from .attendees import AttendeeRecords
from .check_ins import CheckInRecords
from .covers import CoverRecords
from .dialect import Dialect
from .dialect import guarded
from .event_drafts import EventDraftRecords
from .index import Indexed
from .index import SearchIndex
from .index import StaleCounts
from .oauth import OAuthRecords
from .organizers import OrganizerRecords
from .outbox import OutboxRecords
from .schema import MIGRATIONS
from .shared import NO_MATCHES
from .shared import allocate_keys
from .shared import column_values
from .shared import plan_terms
from .shared import tags_of
from .shared import terms_of
from .waitlist import LIVE
from .waitlist import WaitlistRecords

Row = Mapping[str, Any]

EVENT_FIELDS = ("id", "title", "summary", "description", "starts_at", "ends_at", "location",
                "venue", "price", "level", "capacity", "held_seats", "registration_deadline",
                "price_amount", "price_currency", "waitlist", "language", "street_address",
                "online_platform", "link_sent", "topic_tags", "payment_note")
# What an event's row says beyond what an import writes (`EVENT_FIELDS`): who runs it and
# whether it was cancelled, which an import of the same event must never undo.
EVENT_COLUMNS = ", ".join(f"e.{name}" for name in (*EVENT_FIELDS, "organization_id",
                                                   "cancelled_at", "cancellation_reason"))
# Seats are taken by active registrations and by the waitlist's live entries: an offer holds
# its seat, and a seat that frees while anyone waits is theirs (`storage.waitlist`), so nobody
# else sees it free. (An offer whose time ran out counts until it is passed on: never a seat
# too many.)
CLAIMS = ("(SELECT count(*) FROM registrations r WHERE r.event_id = {event} "
          "AND r.state = 'active') + (SELECT count(*) FROM waitlist w "
          "WHERE w.event_id = {event} AND w.state IN ('waiting', 'offered'))")
# What a list of events reads of each one's seats and cost (`availability_of`): a search
# reads them with its page's summaries (`Storage.search_events`, `count_seats`), in the same
# statement, one trip fewer to a PostgreSQL server.
SEAT_FIELDS = ("capacity", "held_seats", "registration_deadline", "price_amount",
               "price_currency", "cancelled_at", "waitlist", "active")
SEAT_COLUMNS = (", ".join(f"e.{name}" for name in SEAT_FIELDS[:-1]) + ", "
                + CLAIMS.format(event="e.id") + " AS active")
AVAILABILITY = "SELECT e.id, " + SEAT_COLUMNS + " FROM events e WHERE e.id IN ({ids})"
SEATS_CLAIMED = "SELECT " + CLAIMS.format(event=":id") + " AS active"
REGISTRATION_SELECT = (
    "SELECT r.*, e.title AS event_title, e.starts_at AS event_starts_at "
    "FROM registrations r JOIN events e ON e.id = r.event_id"
)



# How a backend reads a stored time (`Dialect.moment_out`).
Moment = Callable[[Any], datetime]


def summary_of(row: Row, moment: Moment) -> EventSummary:
    """An event's summary from a row of its `SUMMARY_FIELDS`."""
    return EventSummary(id=row["id"], title=row["title"], summary=row["summary"],
                        starts_at=moment(row["starts_at"]), location=row["location"],
                        price=row["price"], level=row["level"], language=row["language"])


def availability_of(row: Row, moment: Moment) -> Availability:
    """An event's seats and cost from a row of its `SEAT_FIELDS`."""
    return Availability(
        capacity=row["capacity"], seats_taken=row["held_seats"] + row["active"],
        registration_deadline=moment(row["registration_deadline"]),
        price_amount=row["price_amount"], price_currency=row["price_currency"],
        cancelled=row["cancelled_at"] is not None,
        waitlist=bool(row["waitlist"]))  # SQLite keeps a boolean as 0 or 1


def event_of(row: Row, moment: Moment, seats_taken: int | None = None) -> Event:
    """An event from a row of its columns."""
    return Event(
        id=row["id"],
        title=row["title"],
        summary=row["summary"],
        description=row["description"],
        starts_at=moment(row["starts_at"]),
        ends_at=moment(row["ends_at"]),
        location=row["location"],
        venue=row["venue"],
        price=row["price"],
        level=row["level"],
        capacity=row["capacity"],
        held_seats=row["held_seats"],
        registration_deadline=moment(row["registration_deadline"]),
        seats_taken=seats_taken,
        price_amount=row["price_amount"],
        price_currency=row["price_currency"],
        waitlist=bool(row["waitlist"]),  # SQLite keeps a boolean as 0 or 1
        language=row["language"],
        street_address=row["street_address"],
        online_platform=row["online_platform"],
        link_sent=row["link_sent"],
        topic_tags=tags_of(row["topic_tags"]),
        payment_note=row["payment_note"],
        organization_id=row["organization_id"],
        cancelled_at=moment(row["cancelled_at"]) if row["cancelled_at"] else None,
        cancellation_reason=row["cancellation_reason"],
    )


def registration_of(row: Row, moment: Moment) -> Registration:
    """A registration from a row with its event's title and start."""
    return Registration(
        id=row["id"],
        event_id=row["event_id"],
        visitor_id=row["visitor_id"],
        attendee_name=row["attendee_name"],
        email=row["email"],
        state=row["state"],
        created_at=moment(row["created_at"]),
        cancelled_at=moment(row["cancelled_at"]) if row["cancelled_at"] else None,
        event_title=row["event_title"],
        event_starts_at=moment(row["event_starts_at"]),
        language=row["language"],
    )


def confirmation_of(row: Row, moment: Moment,
                    payload: Callable[[Any], dict[str, Any]]) -> Confirmation:
    """A confirmation from its row; `payload` reads the stored payload."""
    return Confirmation(
        token_hash=row["token_hash"],
        visitor_id=row["visitor_id"],
        action=row["action"],
        target_id=row["target_id"],
        payload=payload(row["payload"]),
        created_at=moment(row["created_at"]),
        expires_at=moment(row["expires_at"]),
        used_at=moment(row["used_at"]) if row["used_at"] else None,
        source=row["source"],
    )


def agent_connection_of(row: Row, moment: Moment) -> AgentConnection:
    """An agent connection from its row."""
    return AgentConnection(
        id=row["id"],
        visitor_id=row["visitor_id"],
        label=row["label"],
        created_at=moment(row["created_at"]),
        expires_at=moment(row["expires_at"]),
        last_used_at=moment(row["last_used_at"]) if row["last_used_at"] else None,
        client_id=row["client_id"],
        language=row["language"],
    )


def activity_of(row: Row, moment: Moment) -> Activity:
    """A line of the activity log from its row."""
    return Activity(at=moment(row["at"]), visitor_id=row["visitor_id"], source=row["source"],
                    action=row["action"], status=row["status"], target_id=row["target_id"])


def upsert(row: Mapping[str, Any]) -> str:
    """An INSERT of an event's `row` (named parameters) that updates the event of its id."""
    return (f"INSERT INTO events ({', '.join(row)}) "
            f"VALUES ({', '.join(f':{name}' for name in row)}) ON CONFLICT (id) DO UPDATE SET "
            + ", ".join(f"{name} = excluded.{name}" for name in row))


# The statements, made once: the PostgreSQL dialect rewrites each one once and finds it again
# by the same string (see `postgres.PostgresDialect.sql`).
COUNT_EVENTS = "SELECT count(*) AS events FROM events"
STORED_EVENT = f"SELECT {EVENT_COLUMNS}, e.search_key FROM events e WHERE e.id = :id"
TAKEN_KEYS = "SELECT search_key FROM events WHERE search_key >= :first AND search_key < :end"
# The stored events after a key, in key order: a rebuild of the index reads them batch by batch.
STORED_AFTER = (f"SELECT {EVENT_COLUMNS}, e.search_key FROM events e WHERE e.search_key > :after "
                "ORDER BY e.search_key LIMIT :batch")
BEFORE_EVERY_KEY = -(2**63)  # the least 64-bit integer
INDEX_BATCH = 2000  # events whose terms are written to the search index at once
INDEX_VERSION = "SELECT terms_version FROM search_index"
SET_INDEX_VERSION = "UPDATE search_index SET terms_version = :version"
CREATE_VISITOR = ("INSERT INTO visitors (id, created_at, expires_at) "
                  "VALUES (:id, :created_at, :expires_at)")
VISITOR_EXPIRES_AT = "SELECT expires_at FROM visitors WHERE id = :id"
# One statement checks the session is alive and extends it (never shortening it: an account's
# visitor is kept past its sessions): a write's first round trip, not two.
KEEP_VISITOR_ALIVE = ("UPDATE visitors SET expires_at = CASE WHEN expires_at > :until "
                      "THEN expires_at ELSE :until END "
                      "WHERE id = :id AND expires_at > :now RETURNING id")
SAVE_EVENT = ("INSERT INTO saved_events (visitor_id, event_id, saved_at) "
              "VALUES (:visitor_id, :event_id, :saved_at) "
              "ON CONFLICT (visitor_id, event_id) DO NOTHING")
REMOVE_SAVED_EVENT = ("DELETE FROM saved_events "
                      "WHERE visitor_id = :visitor_id AND event_id = :event_id")
SAVED_EVENTS = (f"SELECT {EVENT_COLUMNS} FROM saved_events s JOIN events e ON e.id = s.event_id "
                "WHERE s.visitor_id = :visitor_id ORDER BY e.starts_at, e.id")
IS_SAVED = "SELECT 1 FROM saved_events WHERE visitor_id = :visitor_id AND event_id = :event_id"
CREATE_REGISTRATION = (
    "INSERT INTO registrations (id, event_id, visitor_id, attendee_name, email, state, "
    "created_at, language) VALUES (:id, :event_id, :visitor_id, :attendee_name, :email, "
    ":state, :created_at, :language)")
# Active registrations whose event starts in [:after, :before) (and is not cancelled: nobody
# is reminded of what will not happen).
REGISTRATIONS_STARTING = (f"{REGISTRATION_SELECT} WHERE r.state = 'active' "
                          "AND e.cancelled_at IS NULL "
                          "AND e.starts_at >= :after AND e.starts_at < :before "
                          "ORDER BY e.starts_at, r.id")
ACTIVE_REGISTRATION = (f"{REGISTRATION_SELECT} WHERE r.visitor_id = :visitor_id "
                       "AND r.event_id = :event_id AND r.state = 'active'")
# Both of what stands in the way of a registration in one statement (one row, with or
# without the visitor's registration): a confirmation asks both under the event's lock, and
# on PostgreSQL each statement is a trip to the server. Addresses are compared in any case:
# some were kept before they were kept in lower case.
REGISTRATION_CHECK = (
    "SELECT r.*, e.title AS event_title, e.starts_at AS event_starts_at, EXISTS ("
    "SELECT 1 FROM registrations WHERE event_id = :event_id AND state = 'active' "
    "AND lower(email) = lower(:email)) AS email_taken, (SELECT w.id FROM waitlist w "
    f"WHERE w.visitor_id = :visitor_id AND w.event_id = :event_id AND w.state IN {LIVE}) "
    "AS waiting_entry "
    "FROM (SELECT 1 AS asked) AS asked "
    "LEFT JOIN registrations r ON r.visitor_id = :visitor_id AND r.event_id = :event_id "
    "AND r.state = 'active' LEFT JOIN events e ON e.id = r.event_id"
)
EVENT_ATTENDEES = (f"{REGISTRATION_SELECT} WHERE r.event_id = :event_id "
                   "AND r.state = 'active' ORDER BY r.created_at, r.id")
# Cancelling is one statement that also tells whether it was done now: a second cancel,
# or two at once, change nothing more.
CANCEL_EVENT = ("UPDATE events SET cancelled_at = :now, cancellation_reason = :reason "
                "WHERE id = :id AND cancelled_at IS NULL RETURNING id")
# A cancelled event's waitlist offers nothing more: every place in it ends.
END_WAITLIST = ("UPDATE waitlist SET state = 'expired', ended_at = :now "
                "WHERE event_id = :event_id AND state IN ('waiting', 'offered')")
# An organization's events, the latest start first (its public page splits them).
ORGANIZATION_EVENTS = (f"SELECT {EVENT_COLUMNS} FROM events e "
                       "WHERE e.organization_id = :organization_id "
                       "ORDER BY e.starts_at DESC, e.id LIMIT :limit")
VISITOR_REGISTRATIONS = (f"{REGISTRATION_SELECT} WHERE r.visitor_id = :visitor_id "
                         "ORDER BY r.state = 'cancelled', e.starts_at, r.created_at")
CANCEL_REGISTRATION = ("UPDATE registrations SET state = 'cancelled', cancelled_at = :now "
                       "WHERE id = :id AND state = 'active'")
CREATE_CONFIRMATION = (
    "INSERT INTO confirmations (token_hash, visitor_id, action, target_id, payload, "
    "created_at, expires_at, source) VALUES (:token_hash, :visitor_id, :action, :target_id, "
    ":payload, :created_at, :expires_at, :source)")
PENDING_CONFIRMATIONS = ("SELECT * FROM confirmations WHERE visitor_id = :visitor_id "
                         "AND used_at IS NULL AND expires_at > :now "
                         "ORDER BY created_at, token_hash")
USE_CONFIRMATION = "UPDATE confirmations SET used_at = :now WHERE token_hash = :token_hash"
STOP_CALENDAR_FEED = "DELETE FROM calendar_feeds WHERE visitor_id = :visitor_id"
CALENDAR_FEED_OWNER = "SELECT visitor_id FROM calendar_feeds WHERE token_hash = :token_hash"
CALENDAR_FEED_SINCE = "SELECT created_at FROM calendar_feeds WHERE visitor_id = :visitor_id"
CREATE_AGENT_CONNECTION = (
    "INSERT INTO agent_connections (id, token_hash, visitor_id, label, created_at, "
    "expires_at, language) VALUES (:id, :token_hash, :visitor_id, :label, :created_at, "
    ":expires_at, :language)")
AGENT_CONNECTION = "SELECT * FROM agent_connections WHERE token_hash = :token_hash"
VISITOR_AGENT_CONNECTIONS = ("SELECT * FROM agent_connections WHERE visitor_id = :visitor_id "
                             "ORDER BY created_at DESC, id")
AGENT_CONNECTION_USED = "UPDATE agent_connections SET last_used_at = :now WHERE id = :id"
REVOKE_AGENT_CONNECTION = ("DELETE FROM agent_connections "
                           "WHERE id = :id AND visitor_id = :visitor_id")
DROP_EXPIRED_RESULTS = "DELETE FROM carried_results WHERE expires_at <= :now"
KEEP_CARRIED_RESULT = ("INSERT INTO carried_results (key_hash, body, expires_at) "
                       "VALUES (:key_hash, :body, :expires_at)")
TAKE_CARRIED_RESULT = ("DELETE FROM carried_results WHERE key_hash = :key_hash "
                       "RETURNING body, expires_at")
RECORD_ACTIVITY = ("INSERT INTO activity (at, visitor_id, source, action, status, target_id) "
                   "VALUES (:at, :visitor_id, :source, :action, :status, :target_id)")
RECENT_ACTIVITY = ("SELECT * FROM activity WHERE visitor_id = :visitor_id "
                   "ORDER BY at DESC, id DESC LIMIT :limit")
PRUNE_CONFIRMATIONS = "DELETE FROM confirmations WHERE expires_at < :before"
PRUNE_ACTIVITY = "DELETE FROM activity WHERE at < :before"
PRUNE_CONNECTIONS = "DELETE FROM agent_connections WHERE expires_at < :before"
PRUNE_CARRIED = "DELETE FROM carried_results WHERE expires_at < :before"
# Signed-in sessions that ended (unused too long, or too old): their cookies sign nobody in.
PRUNE_ENDED_SESSIONS = ("DELETE FROM account_sessions "
                        "WHERE seen_at < :seen_before OR created_at < :started_before")
# Sent mail only: a failed one stays for `flask mail failed`, a waiting one is still to go.
PRUNE_SENT_MAIL = "DELETE FROM outbox WHERE state = 'sent' AND sent_at < :before"
# Attendees of events that ended before `:before` keep no name or address (the counts stay).
ANONYMIZE_ATTENDEES = ("UPDATE registrations SET attendee_name = '', email = '' "
                       "WHERE email <> '' AND event_id IN "
                       "(SELECT id FROM events WHERE ends_at < :before)")
# Visitors whose session ended before `:before` and who hold no seat nor a place in line.
# An account's visitor is never idle: it is the account's for as long as the account is.
IDLE_VISITORS = ("SELECT v.id FROM visitors v WHERE v.expires_at < :before AND NOT EXISTS ("
                 "SELECT 1 FROM registrations r WHERE r.visitor_id = v.id "
                 "AND r.state = 'active') AND NOT EXISTS ("
                 "SELECT 1 FROM waitlist w WHERE w.visitor_id = v.id "
                 "AND w.state IN ('waiting', 'offered')) AND NOT EXISTS ("
                 "SELECT 1 FROM accounts a WHERE a.visitor_id = v.id)")
PRUNE_IDLE_BELONGINGS = tuple(
    f"DELETE FROM {table} WHERE visitor_id IN ({IDLE_VISITORS})"
    for table in ("saved_events", "confirmations", "registrations", "waitlist", "activity",
                  "agent_connections", "calendar_feeds"))
PRUNE_IDLE_VISITORS = f"DELETE FROM visitors WHERE id IN ({IDLE_VISITORS})"
# Which migrations of `schema` a database has had (`Records.migrate`).
CREATE_MIGRATION_LOG = ("CREATE TABLE IF NOT EXISTS schema_migrations "
                        "(name text PRIMARY KEY, applied_at {moment} NOT NULL)")
APPLIED_MIGRATIONS = "SELECT name FROM schema_migrations"
RECORD_MIGRATION = "INSERT INTO schema_migrations (name, applied_at) VALUES (:name, :applied_at)"


class Records(OutboxRecords, AccountRecords, OAuthRecords, WaitlistRecords,
              OrganizerRecords, CheckInRecords, AttendeeRecords,
              EventDraftRecords, CoverRecords):
    """The storage methods whose SQL both backends share, on the primitives a backend gives."""

    dialect: Dialect
    index: SearchIndex

    # Whether a part of the open transaction failed (`transaction`): then it never commits.
    _part_failed = False

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction: all of it commits, or none.

        Inside another it is part of that one, not a savepoint of its own (on PostgreSQL a
        savepoint is two more round trips, and nothing here goes on after a failure it
        caught): when it fails, the one around it fails too, even if its caller goes on.
        """
        if self._in_transaction():
            try:
                yield
            except BaseException:
                self._part_failed = True
                raise
            return
        self._part_failed = False
        with self._transaction():
            yield
            if self._part_failed:
                raise StorageError("a part of the transaction failed")

    # -- what a backend provides --------------------------------------------------------

    def _transaction(self) -> AbstractContextManager[Any]:
        """Begin a transaction; commit it when the block ends, or roll it back when it raises
        (the database's failures raised as `StorageError`)."""
        raise NotImplementedError

    def _rows(self, sql: str, params: dict[str, Any]) -> Sequence[Row]:
        """Every row `sql` reads, each a mapping of column names to values."""
        raise NotImplementedError

    def _one(self, sql: str, params: dict[str, Any]) -> Row | None:
        """The first row `sql` reads, or None."""
        raise NotImplementedError

    def _run(self, sql: str, params: dict[str, Any]) -> int:
        """Run a statement that returns no rows (committed unless in a transaction); how many
        rows it changed."""
        raise NotImplementedError

    def _returning(self, sql: str, params: dict[str, Any]) -> Row | None:
        """Run a write that returns rows (`RETURNING`), committed unless in a transaction;
        its first row, or None."""
        raise NotImplementedError

    def _in_transaction(self) -> bool:
        """Whether a transaction is open (where a row read may be locked, `Dialect.locked`)."""
        raise NotImplementedError

    def _insert_many(self, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert `rows` (mappings of the same columns) into `table`, the fastest way the
        driver writes many rows."""
        raise NotImplementedError

    def _lock_catalog(self) -> None:
        """Make this transaction the only one giving search keys and counting terms until it
        ends: nothing to do where a transaction holds the whole database."""

    # -- the schema ---------------------------------------------------------------------

    @guarded
    def migrate(self, adopted: Collection[str] = ()) -> None:
        """Apply in order each migration of `schema` this database has not had, and record it;
        those `adopted` (made by an earlier release under other names) are only recorded.

        Call inside the transaction that `prepare` holds: all of it commits, or none.
        """
        slots = self.dialect.slots
        self._run(CREATE_MIGRATION_LOG.format_map(slots), {})
        applied = {row["name"] for row in self._rows(APPLIED_MIGRATIONS, {})}
        for name, statements in MIGRATIONS.items():
            if name in applied:
                continue
            if name not in adopted:
                for statement in statements:
                    self._run(statement.format_map(slots), {})
                for statement in self.index.schema.get(name, ()):
                    self._run(statement, {})
            self._run(RECORD_MIGRATION, {"name": name,
                                         "applied_at": self.dialect.moment_in(datetime.now(UTC))})

    # -- events -------------------------------------------------------------------------

    @guarded
    def count_events(self) -> int:
        """How many events are stored (past ones included)."""
        row = self._one(COUNT_EVENTS, {})
        return int(row["events"]) if row else 0

    @guarded
    def get_event(self, event_id: str, count_seats: bool = False,
                  for_update: bool = False) -> Event | None:
        """One event, or None; with `count_seats`, its taken seats counted now; with
        `for_update` (inside a transaction), its row locked until the transaction ends where
        rows are locked (SQLite's transaction already holds the whole database)."""
        lock = self.dialect.locked(self._in_transaction()) if for_update else ""
        row = self._one(f"SELECT {EVENT_COLUMNS} FROM events e WHERE e.id = :id{lock}",
                        {"id": event_id})
        if row is None:
            return None
        taken = None
        if count_seats:
            # A statement of its own, after the lock: it sees every registration committed
            # by whoever held the lock before (see `postgres`' docstring).
            active = self._one(SEATS_CLAIMED, {"id": event_id})
            taken = row["held_seats"] + (active["active"] if active else 0)
        return event_of(row, self.dialect.moment_out, taken)

    @guarded
    def public_organization_events(self, organization_id: str, limit: int) -> list[Event]:
        """The latest `limit` events the organization runs, the latest start first."""
        moment_out = self.dialect.moment_out
        return [event_of(row, moment_out) for row in self._rows(
            ORGANIZATION_EVENTS, {"organization_id": organization_id, "limit": limit})]

    @guarded
    def import_events(self, events: list[Event]) -> int:
        """Insert or update events, all or nothing; returns how many were written.

        An updated event keeps its search key unless its start moved; its old terms leave
        the index and the new ones enter it.
        """
        moment_in, moment_out = self.dialect.moment_in, self.dialect.moment_out
        replaced: list[Indexed] = []
        written: dict[str, Indexed] = {}  # by id: an event given twice is indexed as last given
        with self.transaction():
            self._lock_catalog()
            for event in events:
                old = self._one(STORED_EVENT, {"id": event.id})
                if old is not None and old["starts_at"] == moment_in(event.starts_at):
                    key = old["search_key"]
                else:
                    key = self._allocate_keys([event])[0]
                if old is not None and event.id not in written:
                    # The index may keep no copy of the terms (FTS5 does not), so they are made
                    # again from the stored event: the same terms, as long as this version of
                    # `search` built the index (see `refresh_search_index`).
                    replaced.append((old["search_key"], terms_of(event_of(old, moment_out))))
                terms = terms_of(event)
                row = self._event_row(event, key, terms)
                self._run(upsert(row), row)
                written[event.id] = (key, terms)
            self.index.remove(replaced)
            self.index.add(list(written.values()))
        return len(events)

    @guarded
    def add_events(self, events: Iterable[Event]) -> int:
        """Insert new events (an existing id is an error), all or nothing; returns how many.

        Faster than `import_events` for bulk loads: no event is looked up first, and the rows
        are written at once (`_insert_many`).
        """
        events = list(events)
        if not events:
            return 0
        with self.transaction():
            self._lock_catalog()  # keys are given under the write lock: no two alike
            indexed = [(key, terms_of(event))
                       for key, event in zip(self._allocate_keys(events), events, strict=True)]
            self._insert_many("events", [self._event_row(event, key, terms) for event, (key, terms)
                                         in zip(events, indexed, strict=True)])
            self.index.add(indexed)
        return len(events)

    def _event_row(self, event: Event, key: int, terms: list[str]) -> dict[str, Any]:
        """An event's row: its fields, its search key and what the index keeps on it."""
        return {**column_values(event, EVENT_FIELDS, self.dialect.moment_in),
                "search_key": key, **self.index.row_columns(terms)}

    def _allocate_keys(self, events: list[Event]) -> list[int]:
        """A free search key for each event (`shared.allocate_keys`), none given twice: the
        keys already taken in the events' seconds are read in one query."""
        firsts = [search.first_key(event.starts_at) for event in events]
        taken = self._rows(TAKEN_KEYS, {"first": min(firsts),
                                        "end": max(firsts) + search.TIES_PER_SECOND})
        return allocate_keys(events, (row["search_key"] for row in taken))

    @contextmanager
    def bulk_load(self) -> Iterator[None]:
        """One transaction for loading many events (`add_events` inside it), with what the
        search index does around many writes (`SearchIndex.bulk`)."""
        with self.index.bulk(), self.transaction():
            yield

    def refresh_search_index(self) -> bool:
        """Index every event again when another version of `search` made the index's terms
        (or none did yet); True when it did.

        Call inside a transaction (`prepare` does, after the migrations).
        """
        built = self._one(INDEX_VERSION, {})
        if built is not None and built["terms_version"] == search.terms_version():
            return False
        self.index.rebuild(self._stored_batches())
        self._run(SET_INDEX_VERSION, {"version": search.terms_version()})
        return True

    def _stored_batches(self) -> Iterator[list[Indexed]]:
        """Every stored event's key and terms, `INDEX_BATCH` events at a time in key order."""
        moment_out, after = self.dialect.moment_out, BEFORE_EVERY_KEY
        while rows := self._rows(STORED_AFTER, {"after": after, "batch": INDEX_BATCH}):
            yield [(row["search_key"], terms_of(event_of(row, moment_out))) for row in rows]
            after = rows[-1]["search_key"]

    @guarded
    def search_events(self, query: EventQuery, limit: int, offset: int,
                      count_cap: int, count_seats: bool = False) -> EventPage:
        """Upcoming events matching `query`, soonest first, with a count bounded by `count_cap`:
        the terms it reads (`shared.plan_terms`), read by the search index."""
        try:
            return self._search(query, limit, offset, count_cap, count_seats)
        except StaleCounts:
            # The index was written since the counts the search was planned with were read:
            # plan it again on counts read now (which `confirm_counts` then takes as they are).
            self.index.forget_counts()
            return self._search(query, limit, offset, count_cap, count_seats)

    def _search(self, query: EventQuery, limit: int, offset: int, count_cap: int,
                count_seats: bool) -> EventPage:
        """One try of `search_events`: planned on the index's counts, read, and confirmed."""
        plan = plan_terms(query, self.index.counts)
        found = (NO_MATCHES if plan is None
                 else self.index.page(plan, limit, offset, count_cap, count_seats))
        self.index.confirm_counts()
        return found

    @guarded
    def availability(self, event_ids: list[str]) -> dict[str, Availability]:
        """The seats and cost of each of these events (a list that is not a search's page:
        that one counts them as it reads, `search_events`), counted now, and whether each
        takes a waitlist, in one query (`registrations_by_event` counts each event's active
        registrations)."""
        if not event_ids:
            return {}
        names = {f"id{number}": event_id for number, event_id in enumerate(event_ids)}
        rows = self._rows(AVAILABILITY.format(ids=", ".join(f":{name}" for name in names)),
                          names)
        return {row["id"]: availability_of(row, self.dialect.moment_out) for row in rows}

    @guarded
    def explain_search(self, query: EventQuery, limit: int, count_cap: int) -> list[str]:
        """The database's plan for reading a search's matches (none when nothing can match)."""
        plan = plan_terms(query, self.index.counts)
        return [] if plan is None else self.index.explain(plan, limit, count_cap)

    # -- visitors -----------------------------------------------------------------------

    @guarded
    def create_visitor(self, visitor_id: str, now: datetime, expires_at: datetime) -> None:
        """Start a visitor session."""
        moment_in = self.dialect.moment_in
        self._run(CREATE_VISITOR, {"id": visitor_id, "created_at": moment_in(now),
                                   "expires_at": moment_in(expires_at)})

    @guarded
    def visitor_expires_at(self, visitor_id: str) -> datetime | None:
        """When the visitor's session ends, or None if there is no such visitor."""
        row = self._one(VISITOR_EXPIRES_AT, {"id": visitor_id})
        return self.dialect.moment_out(row["expires_at"]) if row else None

    @guarded
    def keep_visitor_alive(self, visitor_id: str, now: datetime, until: datetime) -> bool:
        """Extend a visitor's session to at least `until` if it is alive at `now`; False when
        it is over or unknown (nothing is written then)."""
        moment_in = self.dialect.moment_in
        return self._returning(KEEP_VISITOR_ALIVE, {
            "id": visitor_id, "now": moment_in(now), "until": moment_in(until)}) is not None

    # -- saved events -------------------------------------------------------------------

    @guarded
    def save_event(self, visitor_id: str, event_id: str, now: datetime) -> bool:
        """Mark an event saved; False when it already was (nothing is written then)."""
        return self._run(SAVE_EVENT, {"visitor_id": visitor_id, "event_id": event_id,
                                      "saved_at": self.dialect.moment_in(now)}) == 1

    @guarded
    def remove_saved_event(self, visitor_id: str, event_id: str) -> bool:
        """Forget a saved event; False when it was not saved."""
        return self._run(REMOVE_SAVED_EVENT,
                         {"visitor_id": visitor_id, "event_id": event_id}) == 1

    @guarded
    def saved_events(self, visitor_id: str) -> list[Event]:
        """The visitor's saved events, soonest first."""
        moment_out = self.dialect.moment_out
        return [event_of(row, moment_out)
                for row in self._rows(SAVED_EVENTS, {"visitor_id": visitor_id})]

    @guarded
    def is_saved(self, visitor_id: str, event_id: str) -> bool:
        """Whether the visitor saved the event."""
        return self._one(IS_SAVED, {"visitor_id": visitor_id, "event_id": event_id}) is not None

    # -- registrations ------------------------------------------------------------------

    @guarded
    def get_registration(self, registration_id: str, for_update: bool = False
                         ) -> Registration | None:
        """One registration, or None (with `for_update`, locked until the end of the
        transaction reading it)."""
        lock = self.dialect.locked(self._in_transaction(), " OF r") if for_update else ""
        row = self._one(f"{REGISTRATION_SELECT} WHERE r.id = :id{lock}", {"id": registration_id})
        return registration_of(row, self.dialect.moment_out) if row else None

    @guarded
    def create_registration(self, registration: Registration) -> None:
        """Store a new registration (call inside `transaction()` after checking seats)."""
        self._run(CREATE_REGISTRATION, {
            "id": registration.id,
            "event_id": registration.event_id,
            "visitor_id": registration.visitor_id,
            "attendee_name": registration.attendee_name,
            "email": registration.email,
            "state": registration.state,
            "created_at": self.dialect.moment_in(registration.created_at),
            "language": registration.language,
        })

    @guarded
    def registrations_starting(self, after: datetime, before: datetime
                               ) -> list[Registration]:
        """Active registrations for events starting from `after` until `before`, soonest
        first."""
        moment_in = self.dialect.moment_in
        return [registration_of(row, self.dialect.moment_out) for row in self._rows(
            REGISTRATIONS_STARTING, {"after": moment_in(after), "before": moment_in(before)})]

    @guarded
    def active_registration(self, visitor_id: str, event_id: str) -> Registration | None:
        """The visitor's active registration for the event, if any."""
        row = self._one(ACTIVE_REGISTRATION, {"visitor_id": visitor_id, "event_id": event_id})
        return registration_of(row, self.dialect.moment_out) if row else None

    @guarded
    def registration_check(self, visitor_id: str, event_id: str, email: str
                           ) -> RegistrationCheck:
        """The visitor's active registration for the event, if any, whether an active
        registration for it was made with this e-mail address (in any case), and the
        visitor's live waitlist entry for it, if any."""
        row = self._one(REGISTRATION_CHECK,
                        {"visitor_id": visitor_id, "event_id": event_id, "email": email})
        assert row is not None  # the statement reads one row, whatever it finds
        return RegistrationCheck(
            visitor_registration=(registration_of(row, self.dialect.moment_out)
                                  if row["id"] is not None else None),
            email_taken=bool(row["email_taken"]),  # SQLite answers 0 or 1
            waiting_entry=row["waiting_entry"])

    @guarded
    def visitor_registrations(self, visitor_id: str) -> list[Registration]:
        """All of the visitor's registrations, active first, then by event start."""
        moment_out = self.dialect.moment_out
        return [registration_of(row, moment_out)
                for row in self._rows(VISITOR_REGISTRATIONS, {"visitor_id": visitor_id})]

    @guarded
    def event_attendees(self, event_id: str) -> list[Registration]:
        """The event's active registrations, the earliest first."""
        moment_out = self.dialect.moment_out
        return [registration_of(row, moment_out)
                for row in self._rows(EVENT_ATTENDEES, {"event_id": event_id})]

    @guarded
    def cancel_event(self, event_id: str, reason: str, now: datetime) -> bool:
        """Cancel an event not cancelled yet, giving `reason`, and end its waitlist; False
        (and nothing changed) when there is no such event or it was cancelled already. Call
        inside the transaction that tells its attendees."""
        with self.transaction():
            moment = self.dialect.moment_in(now)
            if self._returning(CANCEL_EVENT, {"id": event_id, "reason": reason,
                                              "now": moment}) is None:
                return False
            self._run(END_WAITLIST, {"event_id": event_id, "now": moment})
            return True

    @guarded
    def cancel_registration(self, registration_id: str, now: datetime) -> None:
        """Mark a registration cancelled (its seat is free from then on)."""
        self._run(CANCEL_REGISTRATION, {"now": self.dialect.moment_in(now),
                                        "id": registration_id})

    # -- confirmations ------------------------------------------------------------------

    @guarded
    def get_confirmation(self, token_hash: str, for_update: bool = False
                         ) -> Confirmation | None:
        """The confirmation with this token hash, or None (with `for_update`, locked until the
        end of the transaction reading it: a racing request waits, then finds it spent)."""
        lock = self.dialect.locked(self._in_transaction()) if for_update else ""
        row = self._one(f"SELECT * FROM confirmations WHERE token_hash = :token_hash{lock}",
                        {"token_hash": token_hash})
        return confirmation_of(row, self.dialect.moment_out, self.dialect.json_out) if row else None

    @guarded
    def create_confirmation(self, confirmation: Confirmation) -> None:
        """Store a pending confirmation."""
        moment_in = self.dialect.moment_in
        self._run(CREATE_CONFIRMATION, {
            "token_hash": confirmation.token_hash,
            "visitor_id": confirmation.visitor_id,
            "action": confirmation.action,
            "target_id": confirmation.target_id,
            "payload": self.dialect.json_in(confirmation.payload),
            "created_at": moment_in(confirmation.created_at),
            "expires_at": moment_in(confirmation.expires_at),
            "source": confirmation.source,
        })

    @guarded
    def pending_confirmations(self, visitor_id: str, now: datetime) -> list[Confirmation]:
        """The visitor's confirmations neither used nor expired, oldest first."""
        dialect = self.dialect
        rows = self._rows(PENDING_CONFIRMATIONS, {"visitor_id": visitor_id,
                                                  "now": dialect.moment_in(now)})
        return [confirmation_of(row, dialect.moment_out, dialect.json_out) for row in rows]

    @guarded
    def use_confirmation(self, token_hash: str, now: datetime) -> None:
        """Spend a confirmation (call inside the transaction that acts on it)."""
        self._run(USE_CONFIRMATION, {"now": self.dialect.moment_in(now),
                                     "token_hash": token_hash})

    # -- calendar feeds -----------------------------------------------------------------

    @guarded
    def set_calendar_feed(self, visitor_id: str, token_hash: str, now: datetime) -> None:
        """Give the visitor a feed known by this token hash; an earlier one stops working."""
        self._run("INSERT INTO calendar_feeds (visitor_id, token_hash, created_at) "
                  "VALUES (:visitor_id, :token_hash, :now) ON CONFLICT (visitor_id) DO UPDATE "
                  "SET token_hash = excluded.token_hash, created_at = excluded.created_at",
                  {"visitor_id": visitor_id, "token_hash": token_hash,
                   "now": self.dialect.moment_in(now)})

    @guarded
    def stop_calendar_feed(self, visitor_id: str) -> bool:
        """Forget the visitor's feed (its address stops working); False when there was none."""
        return self._run(STOP_CALENDAR_FEED, {"visitor_id": visitor_id}) == 1

    @guarded
    def calendar_feed_owner(self, token_hash: str) -> str | None:
        """The visitor whose feed has this token hash, or None."""
        row = self._one(CALENDAR_FEED_OWNER, {"token_hash": token_hash})
        return str(row["visitor_id"]) if row else None

    @guarded
    def calendar_feed_since(self, visitor_id: str) -> datetime | None:
        """When the visitor's current feed was made, or None when they have none."""
        row = self._one(CALENDAR_FEED_SINCE, {"visitor_id": visitor_id})
        return self.dialect.moment_out(row["created_at"]) if row else None

    # -- agent connections --------------------------------------------------------------

    @guarded
    def create_agent_connection(self, connection: AgentConnection, token_hash: str) -> None:
        """Store a new connection, known by the hash of its access token."""
        moment_in = self.dialect.moment_in
        self._run(CREATE_AGENT_CONNECTION, {
            "id": connection.id,
            "token_hash": token_hash,
            "visitor_id": connection.visitor_id,
            "label": connection.label,
            "created_at": moment_in(connection.created_at),
            "expires_at": moment_in(connection.expires_at),
            "language": connection.language,
        })

    @guarded
    def agent_connection(self, token_hash: str) -> AgentConnection | None:
        """The connection whose access token has this hash, or None."""
        row = self._one(AGENT_CONNECTION, {"token_hash": token_hash})
        return agent_connection_of(row, self.dialect.moment_out) if row else None

    @guarded
    def visitor_agent_connections(self, visitor_id: str) -> list[AgentConnection]:
        """The visitor's connections, newest first."""
        moment_out = self.dialect.moment_out
        return [agent_connection_of(row, moment_out)
                for row in self._rows(VISITOR_AGENT_CONNECTIONS, {"visitor_id": visitor_id})]

    @guarded
    def agent_connection_used(self, connection_id: str, now: datetime) -> None:
        """Note when a connection was last used."""
        self._run(AGENT_CONNECTION_USED, {"now": self.dialect.moment_in(now),
                                          "id": connection_id})

    @guarded
    def revoke_agent_connection(self, visitor_id: str, connection_id: str) -> bool:
        """Forget one of the visitor's connections (its token stops working); False when the
        visitor has no such connection."""
        return self._run(REVOKE_AGENT_CONNECTION,
                         {"id": connection_id, "visitor_id": visitor_id}) == 1

    # -- carried results ----------------------------------------------------------------

    @guarded
    def keep_carried_result(self, key_hash: str, body: str, expires_at: datetime,
                            now: datetime) -> None:
        """Keep a result under the hash of its key; the expired ones go (few: each lives
        minutes, and most are taken at once)."""
        moment_in = self.dialect.moment_in
        with self.transaction():
            self._run(DROP_EXPIRED_RESULTS, {"now": moment_in(now)})
            self._run(KEEP_CARRIED_RESULT, {"key_hash": key_hash, "body": body,
                                            "expires_at": moment_in(expires_at)})

    @guarded
    def take_carried_result(self, key_hash: str, now: datetime) -> str | None:
        """The result kept under this key hash, deleted in the same statement that reads it,
        so two requests with the same key never both get it; None when absent or expired."""
        row = self._returning(TAKE_CARRIED_RESULT, {"key_hash": key_hash})
        if row is None or self.dialect.moment_out(row["expires_at"]) <= now:
            return None
        return str(row["body"])

    # -- activity -----------------------------------------------------------------------

    @guarded
    def record_activity(self, entry: Activity) -> None:
        """Append one line to the activity log."""
        self._run(RECORD_ACTIVITY, {
            "at": self.dialect.moment_in(entry.at),
            "visitor_id": entry.visitor_id,
            "source": entry.source,
            "action": entry.action,
            "status": entry.status,
            "target_id": entry.target_id,
        })

    @guarded
    def recent_activity(self, visitor_id: str, limit: int) -> list[Activity]:
        """The visitor's latest activity, newest first."""
        moment_out = self.dialect.moment_out
        return [activity_of(row, moment_out) for row in self._rows(
            RECENT_ACTIVITY, {"visitor_id": visitor_id, "limit": limit})]

    # -- housekeeping -------------------------------------------------------------------

    @guarded
    def anonymize_attendees(self, ended_before: datetime) -> int:
        """Erase the name and address of every attendee of an event that ended before
        `ended_before`; how many were erased."""
        return self._run(ANONYMIZE_ATTENDEES, {"before": self.dialect.moment_in(ended_before)})

    @guarded
    def prune(self, confirmations_before: datetime, activity_before: datetime,
              visitors_before: datetime, sent_mail_before: datetime,
              sessions_seen_before: datetime, sessions_started_before: datetime
              ) -> dict[str, int]:
        """Delete confirmations that expired before one moment, activity older than another,
        and visitors whose session ended before a third with no active registration (with
        everything that was theirs: nobody can reach it again), and agent connections that
        expired before that third moment, and mail sent before a fourth (failed mail stays),
        and signed-in sessions last seen before a fifth or started before a sixth.
        Returns how many rows of each went. One transaction.

        A visitor with an active registration stays: it is a seat on the organizer's list.
        """
        moment_in = self.dialect.moment_in
        gone = {"before": moment_in(visitors_before)}
        with self.transaction():
            confirmations = self._run(PRUNE_CONFIRMATIONS,
                                      {"before": moment_in(confirmations_before)})
            activity = self._run(PRUNE_ACTIVITY, {"before": moment_in(activity_before)})
            connections = self._run(PRUNE_CONNECTIONS, gone)
            carried = self._run(PRUNE_CARRIED, gone)
            for belongings in PRUNE_IDLE_BELONGINGS:
                self._run(belongings, gone)
            visitors = self._run(PRUNE_IDLE_VISITORS, gone)
            sent_mail = self._run(PRUNE_SENT_MAIL, {"before": moment_in(sent_mail_before)})
            sessions = self._run(PRUNE_ENDED_SESSIONS, {
                "seen_before": moment_in(sessions_seen_before),
                "started_before": moment_in(sessions_started_before)})
        return {"confirmations": confirmations, "activity": activity, "visitors": visitors,
                "connections": connections, "carried": carried, "sent_mail": sent_mail,
                "sessions": sessions}
