"""Which store serves the site: the one setting `DATABASE` chooses it, and nothing outside
`webapp.storage` knows which one runs.

`DATABASE` is a file path (SQLite, the embedded default) or a `postgresql://` URL
(PostgreSQL, for several app hosts). Anything else fails when the app is created, with a
message that says what would work, rather than on the first request (or, as once happened,
by creating a directory named `postgresql:`).

A backend hands out a `Lease` per request: a storage and the way to give it back. Neither
backend connects when it is made: connections are opened in the process that uses them,
after gunicorn has forked.
"""

from __future__ import annotations

import os
import re
import select
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import Protocol

from . import Storage
from . import StorageError
from .pool import ConnectionPool as SQLitePool
from .sqlite import SQLiteStorage

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool as PostgresPool

Seed = Callable[[Any], None]  # fills a new, empty database through a storage's methods
URL_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://")
POSTGRES_SCHEMES = ("postgresql", "postgres")


class UnservableDatabase(ValueError):
    """The DATABASE setting names a store this site cannot use (said in the message)."""


@dataclass(frozen=True)
class Lease:
    """A request's storage and the way to give it back."""

    storage: Storage
    release: Callable[[], None]


class Backend(Protocol):
    """Where the site's data lives, and how a process reaches it."""

    @property
    def location(self) -> str:
        """Where the data is, for messages (a URL without its password)."""
        ...

    def prepare(self, seed: Seed | None, create: bool = True) -> bool:
        """Migrate the data (creating it first if `create` allows and it is missing), seeding
        it with `seed` if it holds no events; True when it seeded."""
        ...

    def lease(self) -> Lease: ...

    def open(self) -> Storage:
        """A storage of its own, outside requests (commands); the caller closes it."""
        ...

    def close(self) -> None: ...


class SQLiteBackend:
    """A SQLite file; connections kept open between requests (`pool`)."""

    def __init__(self, path: str | Path, busy_timeout_ms: int, idle_connections: int):
        self.path = Path(path)
        self.busy_timeout_ms = busy_timeout_ms
        self._pool = SQLitePool(idle_connections)

    @property
    def location(self) -> str:
        return str(self.path)

    def prepare(self, seed: Seed | None, create: bool = True) -> bool:
        return SQLiteStorage.prepare(self.path, seed=seed, busy_timeout_ms=self.busy_timeout_ms,
                                     create=create)

    def lease(self) -> Lease:
        storage, identity = self._pool.acquire(self.path, busy_timeout_ms=self.busy_timeout_ms)
        return Lease(storage, lambda: self._pool.release(storage, identity))

    def open(self) -> Storage:
        return SQLiteStorage.open(self.path, busy_timeout_ms=self.busy_timeout_ms)

    def close(self) -> None:
        self._pool.close()


class PostgresBackend:
    """A PostgreSQL database, through a psycopg_pool pool of this process.

    The pool is made on first use in each process: a pool (and its threads and sockets)
    inherited across fork() would be shared with the parent, so a process whose id changed
    makes its own and leaves the inherited one alone.
    """

    def __init__(self, url: str, max_connections: int):
        self.url = url
        self.max_connections = max_connections
        self._pool: PostgresPool[Any] | None = None
        self._pid = 0
        self._lock = threading.Lock()

    @property
    def location(self) -> str:
        from psycopg.conninfo import conninfo_to_dict
        from psycopg.conninfo import make_conninfo

        try:
            parts = conninfo_to_dict(self.url)
        except Exception:  # noqa: BLE001 - a malformed URL fails when used; this is a label
            return "PostgreSQL"
        parts.pop("password", None)
        shown = {name: parts[name] for name in ("host", "port", "dbname", "user")
                 if parts.get(name)}
        return f"PostgreSQL ({make_conninfo('', **shown)})"

    def prepare(self, seed: Seed | None, create: bool = True) -> bool:
        # A PostgreSQL database is never created here (its server does that): `create`
        # concerns files.
        from .postgres import PostgresStorage

        return PostgresStorage.prepare(self.url, seed=seed)

    def _connections(self) -> PostgresPool[Any]:
        from psycopg_pool import ConnectionPool

        from .postgres import CONNECTION_OPTIONS

        with self._lock:
            if self._pool is None or self._pid != os.getpid():
                # min_size 0: an idle worker holds no connection; check: a connection the
                # server dropped (a restart, a failover) is replaced, not handed out.
                self._pool = ConnectionPool(
                    self.url, min_size=0, max_size=self.max_connections, open=False,
                    kwargs=CONNECTION_OPTIONS, check=check_when_spoken_to,
                    name=f"webmcp-events-{os.getpid()}", timeout=10)
                self._pool.open()
                self._pid = os.getpid()
            return self._pool

    def lease(self) -> Lease:
        import psycopg
        from psycopg_pool import PoolTimeout

        from .postgres import PostgresStorage

        pool = self._connections()
        try:
            conn = pool.getconn()
        except (PoolTimeout, psycopg.Error) as error:
            raise StorageError("no database connection") from error
        # The pool rolls back whatever a failed request left open when it takes it back.
        return Lease(PostgresStorage(conn), lambda: pool.putconn(conn))

    def open(self) -> Storage:
        from .postgres import PostgresStorage

        return PostgresStorage.open(self.url)

    def close(self) -> None:
        with self._lock:
            if self._pool is not None and self._pid == os.getpid():
                self._pool.close()
            self._pool = None


def check_when_spoken_to(conn: Any) -> None:
    """The pool's check of a connection before lending it, without a round trip when it can
    be spared: a server that ends a connection (a restart, pg_terminate_backend, a failover)
    first sends why and closes the socket, so a kept connection with nothing to read is
    lent as it is; one with something unasked for is asked at once (psycopg_pool's own
    check, an empty query: an exchange, which asked every time would cost every request),
    and replaced if that fails.
    """
    from psycopg_pool import ConnectionPool

    if conn.closed or spoken_to(conn.fileno()):
        ConnectionPool.check_connection(conn)


def spoken_to(socket: int) -> bool:
    """Whether the server sent something on an idle connection's socket (or closed it)."""
    waiting = select.poll()  # poll, not select: any descriptor number
    waiting.register(socket, select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(waiting.poll(0))


def backend_for(database: str | os.PathLike[str], busy_timeout_ms: int,
                connections: int) -> Backend:
    """The backend the DATABASE setting names; UnservableDatabase when none can serve it.

    `connections` is how many connections a process keeps (SQLite: idle ones; PostgreSQL:
    at most, the pool's size).
    """
    setting = os.fspath(database)
    scheme = URL_SCHEME.match(setting)
    if scheme is None:
        return SQLiteBackend(setting, busy_timeout_ms, connections)
    if scheme["scheme"].lower() not in POSTGRES_SCHEMES:
        raise UnservableDatabase(
            f"DATABASE (FLASK_DATABASE) names a {scheme['scheme']}:// database, which this "
            "site cannot use: give a file path for SQLite, or a postgresql:// URL.")
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        raise UnservableDatabase(
            "DATABASE (FLASK_DATABASE) is a PostgreSQL URL, but psycopg and psycopg_pool are "
            "not installed: pip install 'webmcp-events[postgres]'.") from None
    return PostgresBackend(setting, connections)
