"""The run pipeline: every call validated, acted for someone, run, recorded, the same way from
a route or from anywhere else (MCP), with the app's hooks."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from contextlib import AbstractContextManager
from contextlib import contextmanager
from typing import Any

import pytest
from flask import Flask
from marshmallow import Schema
from marshmallow import fields
from marshmallow import validate

from flask_webmcp import Catalog
from flask_webmcp import Tool
from flask_webmcp.actions import Action
from flask_webmcp.actions import human_action
from flask_webmcp.calls import AGENT_HEADER
from flask_webmcp.calls import CallRecord
from flask_webmcp.calls import Calls
from flask_webmcp.calls import PrincipalGone
from flask_webmcp.catalog import Hints
from flask_webmcp.negotiation import render_result
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.routes import human_route
from flask_webmcp.routes import tool_actions
from flask_webmcp.routes import tool_route

JSON = {"Accept": "application/json"}


class NoteInput(Schema):
    note_id = fields.String(required=True, validate=validate.Regexp(r"n-\d+"))
    text = fields.String(required=True, validate=validate.Length(max=20))


class ForgetInput(Schema):
    note_id = fields.String(required=True)


CATALOG = Catalog([Tool(name="write_note", title="Write a note", schema=NoteInput,
                        autosubmit=False, description="Write a note.")])


class DatabaseDown(Exception):
    """The app's own failure: its storage is gone."""


@CATALOG.action("write_note", answers=(Status.SUCCESS,), creates=True)
def write_note(notes: dict[str, str], params: dict[str, Any]) -> ToolResult:
    if params["text"] == "fail":
        raise DatabaseDown("/var/lib/notes.db is gone")
    notes[params["note_id"]] = params["text"]
    return ToolResult("write_note", Status.SUCCESS, "Written.", target=params["note_id"])


@human_action("forget_note", schema=ForgetInput, answers=(Status.SUCCESS,))
def forget_note(notes: dict[str, str], params: dict[str, Any]) -> ToolResult:
    notes.pop(params["note_id"], None)
    return ToolResult("forget_note", Status.SUCCESS, "Forgotten.")


class Notes:
    """An app with one tool and one step for people, and what its hooks saw."""

    def __init__(self, transactional: bool = False) -> None:
        self.notes: dict[str, str] = {}
        self.records: list[CallRecord] = []
        self.principal: str | None = "ann"
        self.recording_fails = False
        self.commits = 0
        self.without_unit: set[str] = set()
        self.calls = Calls(execute=self.execute, record=self.record, failures=(DatabaseDown,),
                           unit=self.unit if transactional else None)
        self.app = Flask(__name__)
        self.app.config["TESTING"] = True

        @tool_route(self.app, "/notes/<note_id>", write_note, methods=("POST",))
        def write(note_id: str) -> Any:
            ran = self.calls.route_call(acting_for=self.acting_for, asker="cookie",
                                        bound={"note_id": note_id})
            return render_result(ran.result, "none.html", "none.html")

        @human_route(self.app, "/notes/<note_id>/forget", forget_note)
        def forget(note_id: str) -> Any:
            ran = self.calls.route_call(acting_for=self.acting_for,
                                        bound={"note_id": note_id})
            return render_result(ran.result, "none.html", "none.html")

    def execute(self, action: Action[Callable[[dict[str, str], dict[str, Any]], ToolResult]],
                params: dict[str, Any], principal: str | None,
                source: str) -> ToolResult:
        return action.run(self.notes, params)

    def acting_for(self) -> str | None:
        if self.principal is None:
            raise PrincipalGone
        return self.principal

    def record(self, call: CallRecord) -> None:
        if self.recording_fails:
            raise DatabaseDown("the audit table is locked")
        self.records.append(call)

    def unit(self, action: Action[Any]) -> AbstractContextManager[None] | None:
        """A transaction for each call, but none for the actions named in `without_unit`."""
        return None if action.name in self.without_unit else self.transaction()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The notes and the records as they were, back when anything in the block fails."""
        notes, records = dict(self.notes), list(self.records)
        try:
            yield
        except BaseException:
            self.notes, self.records = notes, records
            raise
        self.commits += 1

    def seen(self) -> list[tuple[str, str, str | None, str]]:
        return [(call.action, call.source, call.principal, call.result.status.word)
                for call in self.records]


@pytest.fixture
def notes() -> Notes:
    return Notes()


@pytest.fixture
def notes_in_a_unit() -> Notes:
    return Notes(transactional=True)


def test_a_call_runs_its_action_for_its_principal_and_is_recorded(notes):
    answer = notes.app.test_client().post("/notes/n-1", json={"text": "hello"}, headers=JSON)
    assert answer.status_code == 201  # the action declares it creates something
    assert answer.json["status"] == "success"
    assert notes.notes == {"n-1": "hello"}
    assert notes.seen() == [("write_note", "human", "ann", "success")]
    assert notes.records[0].result.target == "n-1"


def test_bad_input_is_answered_with_field_errors_and_runs_nothing(notes):
    answer = notes.app.test_client().post("/notes/n-1", json={"text": "x" * 21}, headers=JSON)
    assert answer.status_code == 422 and list(answer.json["errors"]) == ["text"]
    assert notes.notes == {}
    # Nothing was run for anyone: the call is recorded as the asker's.
    assert notes.seen() == [("write_note", "human", "cookie", "invalid_input")]


def test_a_value_the_address_binds_that_cannot_be_is_nothing_at_that_address(notes):
    answer = notes.app.test_client().post("/notes/zzz", json={"text": "hi"}, headers=JSON)
    assert answer.status_code == 404 and answer.json["status"] == "not_found"
    # The same value sent as a field is the sender's mistake: it is named.
    called = notes.calls.call(write_note, {"note_id": "zzz", "text": "hi"}, source="mcp")
    assert called.result.status is Status.INVALID_INPUT
    assert list(called.result.errors or {}) == ["note_id"]


def test_a_principal_gone_is_answered_by_the_callers_answer_for_it(notes):
    notes.principal = None
    answer = notes.app.test_client().post("/notes/n-1", json={"text": "hi"}, headers=JSON)
    assert answer.status_code == 401 and answer.json["status"] == "session_expired"
    with notes.app.test_request_context():
        called = notes.calls.call(
            write_note, {"note_id": "n-2", "text": "hi"}, source="mcp",
            acting_for=notes.acting_for,
            gone=lambda name: ToolResult(name, Status.SESSION_EXPIRED, "Connect me first."))
    assert called.result.message == "Connect me first."
    assert notes.notes == {}


def test_a_failure_of_the_app_is_a_safe_internal_error_and_is_logged(notes, caplog):
    answer = notes.app.test_client().post("/notes/n-1", json={"text": "fail"}, headers=JSON)
    assert answer.status_code == 503 and answer.json["status"] == "internal_error"
    assert answer.json["retryable"] is True
    assert "notes.db" not in answer.text and "Traceback" not in answer.text
    assert "write_note failed" in caplog.text and "notes.db" in caplog.text


def test_a_record_that_fails_never_fails_the_call(notes, caplog):
    notes.recording_fails = True
    answer = notes.app.test_client().post("/notes/n-1", json={"text": "hi"}, headers=JSON)
    assert answer.status_code == 201 and notes.notes == {"n-1": "hi"}
    assert "could not record a call of write_note" in caplog.text


def test_in_a_unit_a_call_and_its_record_commit_once_together(notes_in_a_unit):
    notes = notes_in_a_unit
    answer = notes.app.test_client().post("/notes/n-1", json={"text": "hi"}, headers=JSON)
    assert answer.status_code == 201 and notes.notes == {"n-1": "hi"}
    assert notes.seen() == [("write_note", "human", "ann", "success")]
    assert notes.commits == 1


def test_in_a_unit_a_record_that_fails_undoes_the_call_and_fails_it(notes_in_a_unit, caplog):
    notes = notes_in_a_unit
    notes.recording_fails = True
    answer = notes.app.test_client().post("/notes/n-1", json={"text": "hi"}, headers=JSON)
    assert answer.status_code == 503 and answer.json["status"] == "internal_error"
    assert notes.notes == {} and notes.commits == 0
    assert "write_note failed" in caplog.text and "the audit table is locked" in caplog.text


def test_in_a_unit_a_failed_call_is_undone_and_recorded_on_its_own(notes_in_a_unit):
    notes = notes_in_a_unit
    answer = notes.app.test_client().post("/notes/n-1", json={"text": "fail"}, headers=JSON)
    assert answer.status_code == 503 and notes.notes == {} and notes.commits == 0
    assert notes.seen() == [("write_note", "human", "ann", "internal_error")]


def test_in_a_unit_an_action_given_none_runs_as_without_one(notes_in_a_unit, caplog):
    notes = notes_in_a_unit
    notes.without_unit = {"write_note"}
    notes.recording_fails = True
    answer = notes.app.test_client().post("/notes/n-1", json={"text": "hi"}, headers=JSON)
    assert answer.status_code == 201 and notes.notes == {"n-1": "hi"} and notes.commits == 0
    assert "could not record a call of write_note" in caplog.text


def test_a_step_for_people_refuses_an_agents_call_whoever_sends_it(notes):
    notes.notes["n-1"] = "keep"
    client = notes.app.test_client()
    refused = client.post("/notes/n-1/forget", headers={**JSON, AGENT_HEADER: "true"})
    assert refused.status_code == 403 and refused.json["status"] == "invalid_input"
    assert notes.notes == {"n-1": "keep"}
    done = client.post("/notes/n-1/forget", headers=JSON)
    assert done.status_code == 200 and notes.notes == {}
    assert notes.seen() == [("forget_note", "agent", None, "invalid_input"),
                            ("forget_note", "human", "ann", "success")]


def test_a_route_declares_what_its_action_is():
    app = Flask(__name__)
    with pytest.raises(TypeError, match="human_route"):
        tool_route(app, "/forget", forget_note)
    with pytest.raises(TypeError, match="tool_route"):
        human_route(app, "/write", write_note)


def test_each_tool_runs_the_action_its_routes_declare(notes):
    assert tool_actions(notes.app) == {"write_note": write_note}


def test_a_route_without_an_action_cannot_run_one():
    app = Flask(__name__)
    calls = Calls(execute=lambda action, params, principal, source: action.run(params))

    @app.get("/plain")
    def plain() -> str:
        calls.route_call()
        return "never"

    app.config["PROPAGATE_EXCEPTIONS"] = True
    with pytest.raises(LookupError, match="tool_route"):
        app.test_client().get("/plain")


def test_a_tool_needs_a_principal_when_it_writes_or_reads_what_is_theirs():
    reads = Hints(read_only=True, destructive=False, idempotent=True, open_world=False)

    def tool(**declared: Any) -> Tool:
        return Tool(name="t", title="T", description="Does t.", schema=NoteInput,
                    autosubmit=True, **declared)

    assert tool().needs_principal  # MCP's default hints: it may change anything
    assert not tool(hints=reads).needs_principal
    assert tool(hints=reads, personal=True).needs_principal
