"""Storage set-up and the database commands: init-db and import-events."""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager

import pytest
from helpers import JSON
from helpers import query_database
from marshmallow import Schema
from marshmallow import ValidationError
from marshmallow import validate

from webapp.datasets.importer import EventImportSchema
from webapp.domain import schemas
from webapp.storage.schema import MIGRATIONS
from webapp.storage.sqlite import SQLiteStorage


def test_init_db_is_idempotent_and_seeds_once(runner, app):
    first = runner.invoke(args=["init-db"])
    assert first.exit_code == 0
    assert "Database ready" in first.output and "seeded" not in first.output
    with sqlite3.connect(app.config["DATABASE"]) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        count = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        names = [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
    assert count >= 24
    assert names == list(MIGRATIONS)


def test_init_db_creates_and_seeds_a_new_file(tmp_path):
    from webapp import create_app
    path = tmp_path / "sub" / "fresh.sqlite"
    app = create_app({"SECRET_KEY": "x", "DATABASE": str(path)})
    result = app.test_cli_runner().invoke(args=["init-db"])
    assert result.exit_code == 0, result.output
    assert "seeded with the sample events" in result.output
    assert path.exists()


def write(tmp_path, name, document):
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


GOOD_EVENT = {
    "id": "evt-imported-meetup", "title": "Imported Meetup", "summary": "A test import.",
    "location": "taichung", "venue": "Test Hall", "price": "paid", "level": "intermediate",
    "capacity": 30, "startsAt": "2030-05-01T19:00:00+08:00",
    "endsAt": "2030-05-01T21:00:00+08:00", "registrationDeadline": "2030-04-30T23:59:59+08:00",
}


@pytest.mark.both_backends
def test_import_events_upserts_a_file(runner, client, tmp_path):
    path = write(tmp_path, "good.json", {"events": [GOOD_EVENT]})
    result = runner.invoke(args=["import-events", str(path)])
    assert result.exit_code == 0, result.output
    assert "Imported 1 event" in result.output
    found = client.get("/en/events?query=Imported+Meetup", headers=JSON).get_json()
    assert [e["id"] for e in found["data"]["events"]] == ["evt-imported-meetup"]
    assert found["data"]["events"][0]["startsAt"] == "2030-05-01T19:00:00+08:00"

    renamed = {**GOOD_EVENT, "title": "Renamed Meetup"}
    runner.invoke(args=["import-events", str(write(tmp_path, "again.json", [renamed]))])
    found = client.get("/en/events?query=Renamed", headers=JSON).get_json()
    assert [e["id"] for e in found["data"]["events"]] == ["evt-imported-meetup"]


@pytest.mark.both_backends
def test_one_bad_row_imports_nothing_and_says_why(runner, client, tmp_path):
    bad_rows = [
        {**GOOD_EVENT, "id": "evt-fine-one"},
        {**GOOD_EVENT, "id": "Not An Id", "location": "tokyo"},
        {**GOOD_EVENT, "id": "evt-naive-time", "startsAt": "2030-05-01T19:00:00"},
        {**GOOD_EVENT, "id": "evt-too-many-held", "heldSeats": 31},
    ]
    path = write(tmp_path, "bad.json", {"events": bad_rows})
    result = runner.invoke(args=["import-events", str(path)])
    assert result.exit_code != 0
    assert "nothing imported: 4 problem(s)" in result.output
    assert "event 2 (Not An Id): id: Not a valid event id." in result.output
    assert "event 2 (Not An Id): location: Must be one of" in result.output
    assert "event 3 (evt-naive-time): startsAt: Not a valid aware datetime." in result.output
    assert "event 4 (evt-too-many-held): heldSeats: Cannot be more than capacity." in result.output
    found = client.get("/en/events?query=Imported+Meetup", headers=JSON).get_json()
    assert found["status"] == "no_results", "the good row must not have been imported alone"


def test_an_id_or_currency_with_a_final_newline_is_not_imported(runner, client, tmp_path):
    """Python's `$` matches before a final newline: an id "evt-x\\n" once imported made its
    calendar file answer 503. Every pattern must match the whole value."""
    rows = [{**GOOD_EVENT, "id": "evt-newline\n"},
            {**GOOD_EVENT, "id": "evt-currency", "priceCurrency": "TWD\n"}]
    result = runner.invoke(args=["import-events", str(write(tmp_path, "nl.json", rows))])
    assert result.exit_code != 0
    assert "nothing imported: 2 problem(s)" in result.output
    assert "id: Not a valid event id." in result.output
    assert "priceCurrency:" in result.output


def test_import_rejects_files_that_are_not_event_lists(runner, tmp_path):
    not_json = tmp_path / "broken.json"
    not_json.write_text("{oops")
    assert "not valid JSON" in runner.invoke(args=["import-events", str(not_json)]).output
    wrong_shape = write(tmp_path, "shape.json", {"items": []})
    assert "expected" in runner.invoke(args=["import-events", str(wrong_shape)]).output


def test_preparing_needs_no_lock_after_its_transaction(tmp_path, monkeypatch):
    """Another worker may take the write lock the moment preparation commits (gunicorn starts
    several at once): nothing after the commit may wait for it, or a worker fails to boot.
    """
    path = tmp_path / "events.sqlite"
    transaction = SQLiteStorage.transaction
    others = []

    @contextmanager
    def then_another_writer(self):
        with transaction(self) as db:
            yield db
        if not self.db.in_transaction:  # the outermost one committed
            other = sqlite3.connect(path, isolation_level=None)
            other.execute("BEGIN IMMEDIATE")
            others.append(other)

    monkeypatch.setattr(SQLiteStorage, "transaction", then_another_writer)
    seeded = SQLiteStorage.prepare(path, seed=lambda storage: None, busy_timeout_ms=50)
    assert seeded and others
    for other in others:
        other.close()


@pytest.mark.both_backends
def test_prune_removes_old_confirmations_and_activity_only(app, runner, visitor, clock):
    visitor.save()
    _, token = visitor.prepare_registration()
    assert token
    # Without JavaScript: its result waits for a page the browser never asks for.
    assert visitor.post("/events/evt-webmcp-intro/save").status_code == 303
    clock.advance(days=2)
    visitor.save("evt-agent-testing")  # a recent line of activity and a fresh confirmation
    visitor.prepare_registration("evt-agent-testing")
    result = runner.invoke(args=["prune", "--activity-days", "1"])
    assert result.exit_code == 0, result.output
    assert ("Removed 1 expired confirmation(s), 3 activity line(s), 0 ended visitor "
            "session(s), 0 expired agent connection(s) and 1 result(s) no page took."
            ) in result.output
    assert query_database(app.config["DATABASE"], "SELECT count(*) FROM carried_results"
                          ) == [(0,)]
    assert query_database(app.config["DATABASE"], "SELECT count(*) FROM confirmations") == [(1,)]
    assert query_database(app.config["DATABASE"], "SELECT action FROM activity ORDER BY id") == [
        ("save_event",), ("prepare_event_registration",)]


def table_counts(app) -> dict[str, int]:
    return {table: query_database(app.config["DATABASE"], f"SELECT count(*) FROM {table}")[0][0]
            for table in ("visitors", "saved_events", "registrations", "confirmations",
                              "activity")}


@pytest.mark.both_backends
def test_prune_removes_ended_visitors_with_nothing_active(app, runner, clock):
    """Every first write makes a visitor; those whose session ended with no active
    registration go, with everything that was theirs. Seats on an event's list stay."""
    from helpers import Visitor
    saver, canceller, attendee, active = (Visitor(app) for _ in range(4))
    saver.save()
    registration = canceller.register()
    _, token = canceller.prepare_cancellation(registration["id"])
    assert canceller.confirm_cancellation(registration["id"], token).status_code == 200
    attendee.register("evt-agent-testing")
    clock.advance(seconds=app.config["VISITOR_TTL"] + 1)  # all three sessions have ended
    active.save()  # a visitor whose session goes on
    before = table_counts(app)
    result = runner.invoke(args=["prune"])
    assert result.exit_code == 0, result.output
    assert "2 ended visitor session(s)" in result.output
    after = table_counts(app)
    assert after["visitors"] == before["visitors"] - 2 == 2  # the attendee, the active one
    assert after["saved_events"] == 1  # the active visitor's
    assert after["registrations"] == 1  # the attendee's seat; the cancelled one went
    assert after["confirmations"] == 0 and after["activity"] == 3
    assert active.save("evt-agent-testing")["status"] == "success"
    again = runner.invoke(args=["prune"])
    assert "0 ended visitor session(s)" in again.output


def every_pattern_validator() -> list[tuple[str, validate.Regexp]]:
    """Each pattern of every input schema the site loads (its tools' and the import file's)."""
    found = []
    for name, schema in [*vars(schemas).items(), ("EventImportSchema", EventImportSchema)]:
        if isinstance(schema, type) and issubclass(schema, Schema):
            for field_name, field in schema._declared_fields.items():
                for validator in field.validators:
                    if isinstance(validator, validate.Regexp):
                        found.append((f"{name}.{field_name}", validator))
    return found


@pytest.mark.parametrize(("field", "validator"), every_pattern_validator())
def test_every_pattern_matches_the_whole_value(field, validator):
    """A valid value with a final newline is refused by each pattern the site checks."""
    examples = {"evt-": "evt-x", "reg-": "reg-aaaaaaaaaaaa", "agt-": "agt-aaaaaaaaaaaa",
                "wait-": "wait-aaaaaaaa",
                "[A-Z]{3}": "TWD", "{43}": "x" * 43}
    valid = next(value for shape, value in examples.items() if shape in validator.regex.pattern)
    assert validator(valid) == valid
    with pytest.raises(ValidationError):
        validator(valid + "\n")
