"""How many times a request waits for the PostgreSQL server, counted from libpq's own trace of
the protocol: each exchange ends with the server's ReadyForQuery, so a confirmation's round
trips are the ReadyForQuery messages its connection received.

On SQLite the same calls are function calls in the process; on PostgreSQL each is a trip over
the socket, which is what a confirmation's latency there is made of (bench table 10). The
budgets below are what the code makes today: a change that adds a trip fails here and has to
say why, here and in bench/README.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers import JSON
from helpers import Visitor

from webapp.storage.connection import backend
from webapp.storage.postgres import REMEMBERED
from webapp.storage.postgres import PostgresIndex
from webapp.storage.postgres import PostgresStorage
from webapp.storage.postings import SlotPostings

pytestmark = pytest.mark.parametrize("backend_name", ["postgresql"], indirect=True)

# A confirmation, one transaction with its line in the activity log (`web.calls.unit_of_work`):
# BEGIN; the visitor's session checked (extended at most every five minutes); the token's row,
# locked; the event's row, locked; its seats counted after the lock; the visitor's
# registration, the address's and the visitor's waitlist place, in one statement; the insert;
# the token spent; the mail queued; the activity line; COMMIT. The same number of trips made
# two commits when the activity line was one of its own (three when every write extended the
# session), and each commit that changes something waits for the disk.
CONFIRMATION_BUDGET = 11
# Preparing one, one transaction too: BEGIN; the new visitor; the event, its seats and the
# registration check; the held confirmation and the activity line; COMMIT; then the review in
# place reads the event once more for its start–end and price (it read the whole registration
# page again, 4 trips more). Without the transaction it was two trips fewer and three commits.
PREPARATION_BUDGET = 9
# A search that reads the slot postings: the counts of its terms, with the postings' layout
# beside them; the first batch of postings; the page's summaries with their seats (the seats
# were a trip of their own).
SEARCH_BUDGET = 3
# The same once the process remembers its terms' counts: the batch, then the page, which
# also says the counts are still the index's (`PostgresIndex.confirm_counts`).
REMEMBERED_SEARCH_BUDGET = 2
# A search that finds nothing, and the two searches it tries to offer instead, each counted
# without reading an event: the search's term counts (which already say nothing matches, and
# hold the offers' counts too: every location of each term is read), then the keys of the
# same place on any words (the same words online: none there either, by those counts). Each
# offer used to read its own counts and the one event it never shows: 5 trips. Once the
# process remembers those counts, a statement confirming them takes the place of reading them.
EMPTY_SEARCH_BUDGET = 2

EXCHANGE_END = re.compile(r"^B\t\d+\tReadyForQuery", re.MULTILINE)
# What each exchange sent: a statement's text (Parse, Query) or a prepared one's name (Bind).
SENT = re.compile(r'^F\t\d+\t(?:Parse\t "[^"]*" "|Query\t "|Bind\t "[^"]*" ")([^"]*)"',
                  re.MULTILINE)
# A statement told by its verb and its first table.
GIST = re.compile(r"^\s*(?:(SELECT|DELETE)\b.*?\bFROM\s+(\w+)|(INSERT) INTO\s+(\w+)"
                  r"|(UPDATE)\s+(\w+)|(\w+))", re.DOTALL)


class Trips:
    """What one request's connections sent and how often they waited for an answer."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.files: list[Path] = []

    def text(self) -> str:
        return "".join(path.read_text() for path in self.files)

    @property
    def count(self) -> int:
        return len(EXCHANGE_END.findall(self.text()))

    @property
    def statements(self) -> list[str]:
        """Each statement sent, as its verb and first table."""
        gists = []
        for sql in filter(None, SENT.findall(self.text())):  # a Bind of "" follows its Parse
            found = GIST.match(sql)
            gists.append(" ".join(part for part in found.groups() if part) if found else sql)
        return gists


@contextmanager
def round_trips(monkeypatch, folder: Path) -> Iterator[Trips]:
    """Trace every storage's connection made inside the block (libpq's PQtrace)."""
    trips = Trips(folder)
    traced = []
    made = PostgresStorage.__init__

    def tracing(self, conn):
        made(self, conn)
        path = folder / f"trace-{len(trips.files)}.txt"
        trips.files.append(path)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        conn.pgconn.trace(descriptor)  # libpq owns the descriptor now (it closes it)
        conn.pgconn.set_trace_flags(0b11)  # no timestamps; the regression format
        traced.append(conn)

    monkeypatch.setattr(PostgresStorage, "__init__", tracing)
    try:
        yield trips
    finally:
        monkeypatch.setattr(PostgresStorage, "__init__", made)
        for conn in traced:
            conn.pgconn.untrace()


def test_a_confirmation_makes_a_known_number_of_round_trips(app, tmp_path, monkeypatch):
    visitor = Visitor(app)
    assert visitor.csrf  # the page that gives the form's token, read before counting
    with round_trips(monkeypatch, tmp_path / "prepare") as preparing:
        (tmp_path / "prepare").mkdir()
        _, token = visitor.prepare_registration()
    with round_trips(monkeypatch, tmp_path / "confirm") as confirming:
        (tmp_path / "confirm").mkdir()
        answer = visitor.confirm_registration(token)
    assert answer.status_code == 201
    print(f"\npreparing a registration: {preparing.count} round trips: "
          f"{', '.join(preparing.statements)}")
    print(f"confirming it: {confirming.count} round trips: {', '.join(confirming.statements)}")
    assert 0 < confirming.count <= CONFIRMATION_BUDGET
    assert 0 < preparing.count <= PREPARATION_BUDGET


def test_a_search_through_the_postings_makes_a_known_number_of_round_trips(
        app, tmp_path, monkeypatch):
    # The sample's few events would be read through the GIN index: every search is made to
    # take the postings, the way a common word's does among 100 000 events.
    monkeypatch.setattr(PostgresIndex, "few_holders", -1)
    monkeypatch.setattr(PostgresIndex, "most_spans", 10**9)
    visitor = Visitor(app)
    search = "/events?query=webmcp"
    # Once before counting: a kept connection has its statements prepared (a first use is
    # one more trip each, once per connection).
    assert visitor.get(search, headers=JSON).status_code == 200
    batches = []
    read = SlotPostings.read

    def counted(*args):
        batches.append(1)
        return read(*args)

    monkeypatch.setattr(SlotPostings, "read", counted)
    REMEMBERED.forget()  # as in a process that has not counted these terms yet
    with round_trips(monkeypatch, tmp_path / "first") as searching:
        (tmp_path / "first").mkdir()
        found = visitor.get(search, headers=JSON)
    with round_trips(monkeypatch, tmp_path / "again") as searching_again:
        (tmp_path / "again").mkdir()
        found_again = visitor.get(search, headers=JSON)
    assert found.status_code == 200 and found.get_json()["data"]["count"] > 0
    assert found_again.get_json()["data"] == found.get_json()["data"]
    print(f"\na search: {searching.count} round trips (prepared statements named): "
          f"{', '.join(searching.statements)}")
    print(f"the same search, its terms' counts remembered: {searching_again.count} round trips: "
          f"{', '.join(searching_again.statements)}")
    assert batches == [1, 1]  # each did take the postings, in one batch
    assert 0 < searching.count <= SEARCH_BUDGET
    assert 0 < searching_again.count <= REMEMBERED_SEARCH_BUDGET


def test_a_search_that_finds_nothing_makes_a_known_number_of_round_trips(
        app, tmp_path, monkeypatch):
    visitor = Visitor(app)
    # Words some events hold, never in Kaohsiung: nothing found, and two offers tried.
    search = "/events?query=webmcp+spec&location=kaohsiung"
    assert visitor.get(search, headers=JSON).status_code == 200  # statements prepared
    with round_trips(monkeypatch, tmp_path) as searching:
        found = visitor.get(search, headers=JSON).get_json()
    assert found["status"] == "no_results"
    assert "same_place" in {offer["kind"] for offer in found["data"]["nearest"]}
    print(f"\nan empty search and its offers: {searching.count} round trips: "
          f"{', '.join(searching.statements)}")
    assert 0 < searching.count <= EMPTY_SEARCH_BUDGET


def test_the_count_sees_every_statement(app, tmp_path, monkeypatch):
    """The counter itself: three statements on one storage are three round trips."""
    with app.app_context(), round_trips(monkeypatch, tmp_path) as trips:
        lease = backend().lease()
        try:
            storage = lease.storage
            assert isinstance(storage, PostgresStorage)
            for _ in range(3):
                storage.conn.execute("SELECT 1")
        finally:
            lease.release()
    assert trips.count == 3
