"""Connections kept between requests: reused while the file is the same, never otherwise."""

from __future__ import annotations

import shutil

import pytest
from helpers import JSON

from webapp.storage import StorageError
from webapp.storage.connection import backend
from webapp.storage.pool import ConnectionPool
from webapp.storage.sqlite import SQLiteStorage


@pytest.fixture
def database(tmp_path):
    path = tmp_path / "pool.sqlite"
    SQLiteStorage.prepare(path)
    return path


def test_a_released_connection_serves_the_next_request(database):
    pool = ConnectionPool(size=2)
    first, identity = pool.acquire(database, busy_timeout_ms=100)
    pool.release(first, identity)
    again, _ = pool.acquire(database, busy_timeout_ms=100)
    other, _ = pool.acquire(database, busy_timeout_ms=100)
    assert again is first
    assert other is not first
    assert other.count_events() == again.count_events() == 0


def test_a_replaced_file_is_never_read_through_a_kept_connection(database, tmp_path):
    pool = ConnectionPool(size=2)
    kept, identity = pool.acquire(database, busy_timeout_ms=100)
    pool.release(kept, identity)
    shutil.copyfile(database, tmp_path / "copy.sqlite")
    database.unlink()
    (tmp_path / "copy.sqlite").rename(database)
    fresh, _ = pool.acquire(database, busy_timeout_ms=100)
    assert fresh is not kept


def test_a_removed_file_fails_instead_of_reusing_a_connection(database):
    pool = ConnectionPool(size=2)
    kept, identity = pool.acquire(database, busy_timeout_ms=100)
    pool.release(kept, identity)
    database.unlink()
    with pytest.raises(StorageError):
        pool.acquire(database, busy_timeout_ms=100)


def test_a_connection_left_in_a_transaction_is_closed_not_kept(database):
    pool = ConnectionPool(size=2)
    storage, identity = pool.acquire(database, busy_timeout_ms=100)
    storage.db.execute("BEGIN")
    pool.release(storage, identity)
    again, _ = pool.acquire(database, busy_timeout_ms=100)
    assert again is not storage


def test_requests_share_one_kept_connection(app, client):
    assert client.get("/en/events", headers=JSON).status_code == 200
    with app.app_context():
        lease = backend().lease()
        kept = lease.storage
        lease.release()
    assert client.get("/en/events?query=WebMCP", headers=JSON).status_code == 200
    with app.app_context():
        assert backend().lease().storage is kept


def test_a_file_the_process_may_no_longer_use_is_never_read_through_a_kept_one(
        database, monkeypatch):
    """(Root may open any file, so the denial is simulated; the server-level fault test runs
    gunicorn without that privilege.)"""
    pool = ConnectionPool(size=2)
    kept, identity = pool.acquire(database, busy_timeout_ms=100)
    pool.release(kept, identity)
    monkeypatch.setattr("webapp.storage.pool.os.access", lambda path, mode: False)
    fresh, fresh_identity = pool.acquire(database, busy_timeout_ms=100)
    assert fresh is not kept
    assert fresh_identity is None
