"""One setting chooses the store: a file path (SQLite) or a postgresql:// URL; anything else
fails when the app is made, saying what would work. The data commands work on both."""

from __future__ import annotations

import os
import sys

import pytest
from helpers import query_database

from webapp import create_app
from webapp.storage.backends import UnservableDatabase
from webapp.storage.connection import backend
from webapp.storage.postgres import PostgresStorage
from webapp.storage.schema import MIGRATIONS


def make_app(database: str):
    return create_app({"SECRET_KEY": "x", "DATABASE": database})


@pytest.mark.parametrize("setting", ["mysql://user@db/events", "sqlite:///events.sqlite",
                                     "redis://127.0.0.1:6379/0"])
def test_a_database_no_backend_serves_fails_clearly_and_creates_nothing(
        setting, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnservableDatabase) as refused:
        make_app(setting)
    scheme = setting.split("://")[0]
    assert f"names a {scheme}:// database" in str(refused.value)
    assert "file path for SQLite, or a postgresql:// URL" in str(refused.value)
    assert list(tmp_path.iterdir()) == [], "nothing may be created for a setting refused"


def test_postgresql_without_psycopg_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "psycopg", None)  # what an install without it does
    with pytest.raises(UnservableDatabase, match=r"pip install 'webmcp-events\[postgres\]'"):
        make_app("postgresql:///events")
    assert list(tmp_path.iterdir()) == []


def test_an_unreachable_postgresql_fails_the_command_not_silently(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = make_app("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2")
    result = app.test_cli_runner().invoke(args=["init-db"])
    assert result.exit_code != 0
    assert "PostgreSQL (host=127.0.0.1 port=1 dbname=none user=nobody) could not be " \
           "prepared" in result.output
    assert list(tmp_path.iterdir()) == [], "no directory named postgresql: (issue 15)"
    generated = app.test_cli_runner().invoke(args=["generate-events", "--count", "5"])
    assert generated.exit_code != 0 and "could not be prepared" in generated.output


@pytest.mark.both_backends
def test_init_db_prepares_either_backend_once(database_setting, backend_name):
    app = make_app(database_setting)
    runner = app.test_cli_runner()
    first = runner.invoke(args=["init-db"])
    assert first.exit_code == 0, first.output
    assert "seeded with the sample events" in first.output
    again = runner.invoke(args=["init-db"])
    assert again.exit_code == 0 and "seeded" not in again.output
    if backend_name == "postgresql":
        assert "Database ready at PostgreSQL (dbname=" in first.output
        applied = "SELECT name FROM schema_migrations ORDER BY name"
        assert query_database(database_setting, applied) == [(name,) for name in MIGRATIONS]
    assert query_database(database_setting, "SELECT count(*) FROM events")[0][0] >= 24


@pytest.mark.both_backends
def test_generate_events_fills_a_new_database_of_either_backend(app, runner, backend_name,
                                                                request, tmp_path):
    from services import fresh_schema

    target = (fresh_schema(request.getfixturevalue("postgres_database"))
              if backend_name == "postgresql" else str(tmp_path / "generated.sqlite"))
    result = runner.invoke(args=["generate-events", "--count", "300", "--database", target])
    assert result.exit_code == 0, result.output
    assert "Generated 300 event(s)" in result.output
    assert query_database(target, "SELECT count(*) FROM events") == [(300,)]
    again = runner.invoke(args=["generate-events", "--count", "1", "--database", target])
    assert again.exit_code != 0 and "already holds events" in again.output


def test_generate_events_refuses_a_database_it_cannot_serve(runner):
    result = runner.invoke(args=["generate-events", "--database", "mysql://db/events"])
    assert result.exit_code != 0
    assert "names a mysql:// database" in result.output


def server_process(storage) -> int:
    """The PostgreSQL server process serving a storage's connection."""
    assert isinstance(storage, PostgresStorage)
    return storage.conn.info.backend_pid


@pytest.mark.parametrize("backend_name", ["postgresql"], indirect=True)
def test_a_forked_process_never_uses_its_parents_connections(app):
    """gunicorn forks its workers: a pool inherited across fork() would hand the child the
    parent's sockets. Each process makes its own pool on first use."""
    with app.app_context():
        lease = backend().lease()
        parent = server_process(lease.storage)
        lease.release()
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # the child: one request's storage, then out without any cleanup
        try:
            with app.app_context():
                lease = backend().lease()
                os.write(writer, str(server_process(lease.storage)).encode())
                lease.release()
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as answer:
        seen_by_child = int(answer.read() or 0)
    os.waitpid(child, 0)
    assert seen_by_child and seen_by_child != parent
    with app.app_context():  # and the parent's pool still serves the parent
        lease = backend().lease()
        assert server_process(lease.storage) == parent
        lease.release()
