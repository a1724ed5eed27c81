"""The database fails under a running app: safe internal_error answers, then recovery."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from helpers import FAULT_MARKERS
from helpers import HTMX
from helpers import JSON
from helpers import Visitor
from helpers import assert_no_leak
from helpers import database_files
from helpers import the_jsonld


def assert_safe_internal_error(response, html=False):
    assert response.status_code == 503
    text = response.get_data(as_text=True)
    body = the_jsonld(text) if html else response.get_json()
    assert body["status"] == "internal_error"
    assert body["retryable"] is True
    assert body["action"] == "search_events"
    assert_no_leak(text, markers=FAULT_MARKERS)


def remove_database(app) -> None:
    for path in database_files(Path(app.config["DATABASE"])):
        path.unlink(missing_ok=True)


@pytest.fixture
def backup(app, tmp_path):
    """A consistent copy of the database, to restore after the fault."""
    copy = tmp_path / "backup.sqlite"
    with sqlite3.connect(app.config["DATABASE"]) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    return copy


def restore(app, backup):
    remove_database(app)
    shutil.copy(backup, app.config["DATABASE"])


def test_removed_database_answers_internal_error_then_recovers(app, client, backup):
    assert client.get("/en/events", headers=JSON).status_code == 200
    remove_database(app)
    assert_safe_internal_error(client.get("/en/events", headers=JSON))
    assert_safe_internal_error(client.get("/en/events", headers=HTMX), html=True)
    assert_safe_internal_error(client.get("/en/events"), html=True)
    assert not Path(app.config["DATABASE"]).exists(), "a missing database must not be recreated"

    restore(app, backup)
    recovered = client.get("/en/events", headers=JSON)
    assert recovered.status_code == 200
    assert recovered.get_json()["status"] == "success"


def test_corrupt_database_answers_internal_error_then_recovers(app, client, backup):
    remove_database(app)
    Path(app.config["DATABASE"]).write_bytes(b"this is not a database" * 512)
    assert_safe_internal_error(client.get("/en/events?query=WebMCP", headers=JSON))
    assert_safe_internal_error(client.get("/en/events?query=WebMCP"), html=True)

    restore(app, backup)
    assert client.get("/en/events?query=WebMCP", headers=JSON).get_json()["status"] == "success"


def test_unreadable_database_answers_internal_error(app, client, backup, monkeypatch):
    """A permission error looks like any other storage failure to the visitor."""
    def refuse(*args, **kwargs):
        raise sqlite3.OperationalError("unable to open database file /secret/path.sqlite")

    monkeypatch.setattr(sqlite3, "connect", refuse)  # the module the backend connects with
    assert_safe_internal_error(client.get("/en/events", headers=JSON))
    monkeypatch.undo()
    assert client.get("/en/events", headers=JSON).status_code == 200


def test_a_database_that_is_not_ours_is_never_written_into(app, visitor, backup):
    """An empty file is an empty SQLite database: writes must fail, not create tables in it."""
    visitor.save()
    remove_database(app)
    Path(app.config["DATABASE"]).write_bytes(b"")
    for url in ("/events/evt-agent-testing/save", "/events/evt-agent-testing/register"):
        response = visitor.post(url, {"attendee_name": "Ann", "email": "a@example.com"}
                                if url.endswith("register") else {}, headers=JSON)
        assert response.status_code == 503
        assert response.get_json()["status"] == "internal_error"
    with sqlite3.connect(app.config["DATABASE"]) as conn:
        assert conn.execute("SELECT name FROM sqlite_master").fetchall() == []

    restore(app, backup)  # (from before this visitor's first write)
    assert Visitor(app).save("evt-agent-testing")["status"] == "success"
