"""SQLite connections kept open between requests, each used by one request at a time.

Opening a connection reads the schema and starts with an empty page cache: at 100 000 events
that costs a search 1 to 3 ms, several times the query itself. A kept connection is reused
only while its path still names the file it opened and the process may still use it, so a
database that is removed, replaced or made unreadable under a running app is noticed on the
next request, as with a fresh connection.
"""

from __future__ import annotations

import os
import queue
from pathlib import Path

from .sqlite import SQLiteStorage

FileIdentity = tuple[str, int, int]


def file_identity(path: str | Path) -> FileIdentity | None:
    """The path with the device and inode it names now; None when there is no such file, or
    when this process may no longer read and write it (an open connection would still work,
    hiding the fault until the process restarts)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    if not os.access(path, os.R_OK | os.W_OK):
        return None
    return str(path), found.st_dev, found.st_ino


class ConnectionPool:
    """Up to `size` idle connections, the most recently used handed out first."""

    def __init__(self, size: int):
        self._idle: queue.LifoQueue[tuple[SQLiteStorage, FileIdentity | None]] = (
            queue.LifoQueue(maxsize=size))

    def acquire(self, path: str | Path, busy_timeout_ms: int
                ) -> tuple[SQLiteStorage, FileIdentity | None]:
        """A connection to `path` (kept or new), and the identity of the file it reads."""
        identity = file_identity(path)
        while True:
            try:
                storage, opened = self._idle.get_nowait()
            except queue.Empty:
                break
            if identity is not None and opened == identity:
                return storage, identity
            storage.close()
        return SQLiteStorage.open(path, busy_timeout_ms=busy_timeout_ms), identity

    def release(self, storage: SQLiteStorage, identity: FileIdentity | None) -> None:
        """Keep a connection for the next request, unless it is mid-transaction or not needed."""
        if identity is None or storage.db.in_transaction:
            storage.close()
            return
        try:
            self._idle.put_nowait((storage, identity))
        except queue.Full:
            storage.close()

    def close(self) -> None:
        """Close every idle connection."""
        while True:
            try:
                storage, _ = self._idle.get_nowait()
            except queue.Empty:
                return
            storage.close()
