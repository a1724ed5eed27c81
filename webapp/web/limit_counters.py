"""Rate-limit counters on this host: `host://` (the default `RATELIMIT_STORAGE_URI`), one
budget for every worker, in a SQLite file; and `local://`, in the process, one per worker.

gunicorn runs several workers, and counters each worker keeps alone let W workers spend W
times every budget: one address took 10 seats of an event through 2 workers against a budget
of 5. `HostCounters` keep them in a file every worker opens, for about 45 µs a hit on a
2-core test machine (`LocalCounters`: 3 µs); Redis shares them between hosts.

`LocalCounters`:

limits' own `memory://` drops expired counters from a `threading.Timer` it starts again 10 ms
after each burst of hits: at one request at a time through gunicorn's threads, that is a new
thread every few requests, started on a request's path, and a thread taking the GIL in the
middle of another request when it fires. A search through gunicorn cost 0.1× `/health` more
with it (bench/README.md), and `/health`, exempt from the limits, never paid it.

These counters need no thread: a counter read after its window is over counts from zero, and
the request that finds the sweep due (at most once a second) drops every expired counter, so
the addresses and visitors that never come back do not pile up. Fixed windows only (the
strategy the site uses). As with `memory://`, each gunicorn worker counts alone: several
workers or hosts share `redis://` (README: Running on several machines).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
import urllib.parse

from limits.storage import Storage

SWEEP_EVERY_SECONDS = 1.0


def now() -> float:
    """The counters' clock (seconds since the epoch): when a window ends is told by it."""
    return time.time()


class LocalCounters(Storage):
    """Fixed-window counters in this process, swept on use instead of by a timer thread."""

    STORAGE_SCHEME = ["local"]

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False,
                 **options: float | str | bool):
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._expiries: dict[str, float] = {}
        self._next_sweep = time.time() + SWEEP_EVERY_SECONDS

    @property
    def base_exceptions(self) -> type[Exception]:
        """What a failing call of this storage raises (nothing here reaches a network)."""
        return ValueError

    def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        """Count `amount` more hits of `key`; a new window of `expiry` seconds starts when the
        last one is over. Returns the count in the window."""
        now = time.time()
        with self._lock:
            if now >= self._next_sweep:
                self._sweep(now)
            if self._expiries.get(key, now) <= now:
                self._counts[key] = 0
                self._expiries[key] = now + expiry
            self._counts[key] += amount
            return self._counts[key]

    def get(self, key: str) -> int:
        """The hits of `key` in its current window (0 once it is over)."""
        with self._lock:
            if self._expiries.get(key, 0) <= time.time():
                return 0
            return self._counts[key]

    def get_expiry(self, key: str) -> float:
        """When the window of `key` ends (now, when it has none)."""
        now = time.time()
        with self._lock:
            return max(self._expiries.get(key, now), now)

    def check(self) -> bool:
        """Always healthy: the counters are in this process."""
        return True

    def reset(self) -> int:
        """Forget every counter; returns how many there were."""
        with self._lock:
            held = len(self._counts)
            self._counts.clear()
            self._expiries.clear()
            return held

    def clear(self, key: str) -> None:
        """Forget the counter of `key`."""
        with self._lock:
            self._counts.pop(key, None)
            self._expiries.pop(key, None)

    def __len__(self) -> int:
        """How many counters are held, expired ones not yet swept included."""
        return len(self._counts)

    def _sweep(self, now: float) -> None:
        """Drop every counter whose window is over (call with the lock held)."""
        for key in [key for key, ends in self._expiries.items() if ends <= now]:
            del self._counts[key], self._expiries[key]
        self._next_sweep = now + SWEEP_EVERY_SECONDS


class HostCounters(Storage):
    """Fixed-window counters in a SQLite file that every worker of this host opens: one budget
    for the host, however many gunicorn workers serve it.

    `host:///path/to/rate-limits.sqlite`. Each thread opens its own connection on first use
    (never before gunicorn forks); the file is in WAL mode without syncs (counters need not
    survive a power cut), so a hit is one upsert of one row. The rows whose window is over are
    deleted at most once a second per process, so keys that never come back do not pile up:
    the file holds the keys of the windows still running, and the memory of a worker is that
    of its connections' page caches (`CACHE_KIB` each, one per thread), whatever is counted.
    """

    STORAGE_SCHEME = ["host"]
    CACHE_KIB = 1024
    BUSY_TIMEOUT_SECONDS = 5.0

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False,
                 **options: float | str | bool):
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        path = urllib.parse.urlsplit(uri or "").path
        if not path:
            raise ValueError("host:// counters need a file: host:///path/to/rate-limits.sqlite")
        self.path = path
        self._threads = threading.local()
        self._next_sweep = 0.0

    @property
    def base_exceptions(self) -> type[Exception]:
        """What a failing call of this storage raises."""
        return sqlite3.Error

    def _db(self) -> sqlite3.Connection:
        """This thread's connection, opened (and the table made) on its first use in this
        process: a connection must never cross a fork."""
        held: tuple[int, sqlite3.Connection] | None = getattr(self._threads, "held", None)
        if held is not None and held[0] == os.getpid():
            return held[1]
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        db = sqlite3.connect(self.path, timeout=self.BUSY_TIMEOUT_SECONDS,
                             isolation_level=None)
        self._prepare_file(db)
        db.execute("PRAGMA synchronous = OFF")
        db.execute(f"PRAGMA cache_size = -{self.CACHE_KIB}")
        self._threads.held = (os.getpid(), db)
        return db

    def _prepare_file(self, db: sqlite3.Connection) -> None:
        """Put the file in WAL mode and make its table, one process at a time.

        Workers starting together race to switch a new file to WAL, and SQLite answers the
        loser "database is locked" at once, without waiting out the busy timeout: the switch
        needs the file alone. An exclusive lock on a file beside it queues them instead.
        """
        with open(f"{self.path}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY, "
                       "hits INTEGER NOT NULL, ends REAL NOT NULL) WITHOUT ROWID")
            db.execute("CREATE INDEX IF NOT EXISTS counters_by_end ON counters (ends)")

    def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        """Count `amount` more hits of `key`; a new window of `expiry` seconds starts when the
        last one is over. Returns the count in the window."""
        now = time.time()
        db = self._db()
        if now >= self._next_sweep:
            self._next_sweep = now + SWEEP_EVERY_SECONDS
            db.execute("DELETE FROM counters WHERE ends <= ?", (now,))
        # Every right-hand side reads the row as it was: a window that is over starts again.
        (hits,) = db.execute(
            "INSERT INTO counters (key, hits, ends) VALUES (:key, :amount, :now + :expiry) "
            "ON CONFLICT (key) DO UPDATE SET "
            "hits = CASE WHEN ends <= :now THEN :amount ELSE hits + :amount END, "
            "ends = CASE WHEN ends <= :now THEN :now + :expiry ELSE ends END "
            "RETURNING hits",
            {"key": key, "amount": amount, "now": now, "expiry": expiry}).fetchone()
        return int(hits)

    def get(self, key: str) -> int:
        """The hits of `key` in its current window (0 once it is over)."""
        row = self._db().execute("SELECT hits FROM counters WHERE key = ? AND ends > ?",
                                 (key, time.time())).fetchone()
        return int(row[0]) if row else 0

    def get_expiry(self, key: str) -> float:
        """When the window of `key` ends (now, when it has none)."""
        now = time.time()
        row = self._db().execute("SELECT ends FROM counters WHERE key = ?", (key,)).fetchone()
        return max(float(row[0]), now) if row else now

    def check(self) -> bool:
        """Healthy when the file answers."""
        try:
            self._db().execute("SELECT 1").fetchone()
        except sqlite3.Error:
            return False
        return True

    def reset(self) -> int:
        """Forget every counter; returns how many there were."""
        return self._db().execute("DELETE FROM counters").rowcount

    def clear(self, key: str) -> None:
        """Forget the counter of `key`."""
        self._db().execute("DELETE FROM counters WHERE key = ?", (key,))

    def __len__(self) -> int:
        """How many counters are held, expired ones not yet swept included."""
        (held,) = self._db().execute("SELECT count(*) FROM counters").fetchone()
        return int(held)
