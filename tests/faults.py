"""Faults a test injects into the database of a running server, each held while a `with`
block runs and undone after it: the file removed, replaced (by a directory or by something
that is not a database), made unreadable; and rows taken away while a page still shows them.

`tests/test_database_faults.py` attacks a server with every one of them; the browser tests use
them to make real tools answer `internal_error` and `not_found`.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from helpers import database_files


@contextmanager
def removed(database: Path) -> Iterator[None]:
    """The database and its WAL files are gone; then a copy taken before comes back."""
    backup = database.with_suffix(".backup")
    with sqlite3.connect(database) as source, sqlite3.connect(backup) as copy:
        source.backup(copy)
    for path in database_files(database):
        path.unlink(missing_ok=True)
    try:
        yield
    finally:
        shutil.copy(backup, database)
        backup.unlink()


@contextmanager
def replaced_by(database: Path, impostor: bytes | None) -> Iterator[None]:
    """The files moved aside; in their place a directory (None) or a file of `impostor`."""
    aside = [path.with_suffix(path.suffix + ".aside") for path in database_files(database)]
    for path, parked in zip(database_files(database), aside, strict=True):
        if path.exists():
            path.rename(parked)
    if impostor is None:
        database.mkdir()
    else:
        database.write_bytes(impostor)
    try:
        yield
        if impostor is not None:
            assert database.read_bytes() == impostor, "the server wrote into a foreign file"
    finally:
        if impostor is None:
            database.rmdir()
        else:
            database.unlink()
        for path, parked in zip(database_files(database), aside, strict=True):
            if parked.exists():
                parked.rename(path)


@contextmanager
def unreadable(database: Path) -> Iterator[None]:
    """Every database file of mode 000 (a server without CAP_DAC_OVERRIDE cannot open it)."""
    present = [path for path in database_files(database) if path.exists()]
    for path in present:
        path.chmod(0)
    try:
        yield
    finally:
        for path in present:
            if path.exists():  # the last connection to close may have removed the -wal and -shm
                path.chmod(0o644)


@contextmanager
def row_taken_away(database: Path, table: str, row_id: str) -> Iterator[None]:
    """The row of `table` with this id is deleted (rows that refer to it are left as they
    are), as if an organizer or a clean-up removed it; afterwards it comes back unchanged."""
    with sqlite3.connect(database) as conn:
        conn.row_factory = sqlite3.Row
        row: dict[str, Any] = dict(conn.execute(f"SELECT * FROM {table} WHERE id = ?",
                                                [row_id]).fetchone())
        conn.execute(f"DELETE FROM {table} WHERE id = ?", [row_id])
    try:
        yield
    finally:
        with sqlite3.connect(database) as conn:
            conn.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES "
                         f"({', '.join('?' * len(row))})", list(row.values()))
