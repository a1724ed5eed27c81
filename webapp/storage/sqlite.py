"""The SQLite backend (plain `sqlite3`): its connections and transactions; the records, events
included, are written once in `records`, the schema in `schema`, and the FTS5 search index is
`fts.SQLiteIndex`.

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
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..config import DATABASE_BUSY_TIMEOUT_MS
from . import EventQuery
from . import StorageError
from .dialect import SQLiteDialect
from .dialect import to_text as to_text  # the bench writes times as this module stores them
from .fts import SearchPlan
from .fts import SQLiteIndex
from .records import Records
from .records import Row
from .shared import guard
from .shared import plan_terms

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

guarded = guard(sqlite3.Error)


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
    index: SQLiteIndex

    def __init__(self, db: sqlite3.Connection):
        self.db = db
        self.index = SQLiteIndex(db, self.transaction)

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
    def _transaction(self) -> Iterator[None]:
        """A transaction holding the write lock from its start (BEGIN IMMEDIATE): other
        writers wait (busy_timeout) instead of failing half-way."""
        db = self.db
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            raise StorageError("could not take the write lock") from error
        try:
            yield
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

    def _insert_many(self, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert `rows` into `table` with one prepared INSERT (`executemany`)."""
        self.db.executemany(f"INSERT INTO {table} ({', '.join(rows[0])}) "
                            f"VALUES ({', '.join(f':{name}' for name in rows[0])})", rows)

    # -- schema -------------------------------------------------------------------------

    @classmethod
    @guarded
    def prepare(cls, path: str | Path, seed: Callable[[SQLiteStorage], None] | None = None,
                busy_timeout_ms: int = DATABASE_BUSY_TIMEOUT_MS, create: bool = True) -> bool:
        """Create (unless not `create`) or migrate the database, seeding it if it holds no
        events.

        Safe to run from several processes at once: the work happens under the write lock.
        Returns True when the database was seeded.
        """
        if create:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        db = connect(path, create=create, busy_timeout_ms=busy_timeout_ms)
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

    # -- search -------------------------------------------------------------------------

    @guarded
    def plan_search(self, query: EventQuery) -> SearchPlan | None:
        """How `search_events` reads `query` (`SQLiteIndex.statement`): None when nothing
        can match it."""
        plan = plan_terms(query, self.index.counts)
        return None if plan is None else self.index.statement(plan)
