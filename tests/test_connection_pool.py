"""Connections kept between requests: reused while the file is the same, never otherwise."""

from __future__ import annotations

import os
import select
import shutil

import psycopg
import pytest
from helpers import JSON

from webapp.storage import StorageError
from webapp.storage.connection import backend
from webapp.storage.pool import ConnectionPool
from webapp.storage.postgres import PostgresStorage
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


# PostgreSQL: psycopg_pool's pool, with a check that asks the server only when it has spoken.

def lent(app):
    """A lease of the app's PostgreSQL pool and its connection."""
    with app.app_context():
        lease = backend().lease()
    storage = lease.storage
    assert isinstance(storage, PostgresStorage)
    return lease, storage.conn


@pytest.mark.parametrize("backend_name", ["postgresql"], indirect=True)
def test_a_kept_postgresql_connection_is_lent_without_a_round_trip(app, tmp_path):
    lease, conn = lent(app)
    trace = tmp_path / "trace.txt"
    conn.pgconn.trace(os.open(trace, os.O_WRONLY | os.O_CREAT))
    lease.release()
    again, same = lent(app)
    again.release()
    conn.pgconn.untrace()
    assert same is conn
    assert trace.read_text() == ""  # not even psycopg_pool's empty query


@pytest.mark.parametrize("backend_name", ["postgresql"], indirect=True)
def test_a_connection_the_server_ended_is_replaced_not_lent(app, database_setting):
    lease, conn = lent(app)
    ended = conn.info.backend_pid
    lease.release()
    with psycopg.connect(database_setting, autocommit=True) as other:
        assert other.execute("SELECT pg_terminate_backend(%s)", [ended]).fetchone() == (True,)
    # The server says why and closes the socket: wait for that, not for a while.
    assert select.select([conn.fileno()], [], [], 30)[0]
    fresh, replacement = lent(app)
    try:
        assert replacement.info.backend_pid != ended
        assert replacement.execute("SELECT 1").fetchone() is not None
    finally:
        fresh.release()
    assert app.test_client().get("/events", headers=JSON).status_code == 200
