"""SQLite's search index (`index.SearchIndex`): an FTS5 table holding each event's terms (its
filters' values too) under its search key, its rowid, and how many events hold each term
(`search_terms`), so that one walk of it in key order finds a search's matches soonest first,
whatever its words and filters (`SQLiteIndex.statement`).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import AbstractContextManager
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from . import EventPage
from . import search
from .dialect import from_text
from .index import Indexed
from .records import SEAT_COLUMNS
from .records import SEAT_FIELDS
from .records import availability_of
from .records import summary_of
from .shared import SUMMARY_COLUMNS
from .shared import SUMMARY_FIELDS
from .shared import Listing
from .shared import TermsPlan
from .shared import guard
from .shared import holding_ranges
from .shared import needed
from .shared import page_of

BULK_LOAD_CACHE_KIB = 256 * 1024
# In an FTS5 query: a term no event holds (every indexed term has a location after the mark).
NO_EVENT = f'"{search.LOCATION_MARK}"'
# How many of a conjunction's rarest terms are intersected one by one (`fts_conjunction`).
NESTED_TERMS = 12


@dataclass(frozen=True)
class SearchPlan:
    """How a search reads its matches: `sql` yields the keys of up to `:needed` matching
    events in start order, one walk of an index that stops there."""

    sql: str
    params: dict[str, Any]


def quoted(term: str) -> str:
    """A term as an FTS5 string: quoted, so that no term is ever read as an operator."""
    return '"' + term.replace('"', '""') + '"'


def fts_conjunction(terms: list[str]) -> str:
    """An FTS5 query for the events holding every one of `terms`, read rarest first.

    FTS5 merges nested ANDs into one and moves every list forward at each step, so a long
    list would be read through wherever two rarer ones are still looking for each other. A
    NOT of a term no event holds keeps what is already intersected a node of its own: each
    further (longer) list is only read where the rarer ones agree.
    """
    expression = " ".join(quoted(term) for term in terms[:2])
    for term in terms[2:NESTED_TERMS]:
        expression = f"(({expression}) NOT {NO_EVENT}) AND {quoted(term)}"
    if rest := terms[NESTED_TERMS:]:
        # Each nested term deepens FTS5's parser stack, which overflows near 30 of them (a
        # long Chinese phrase is as many pieces as characters); by then the rarest lists have
        # narrowed the matches, so the others are one flat AND.
        expression = f"(({expression}) NOT {NO_EVENT}) AND ({' '.join(map(quoted, rest))})"
    return expression


guarded = guard(sqlite3.Error)


class SQLiteIndex:
    """The search index in an SQLite file, on the storage's connection and transactions."""

    # Its part of the migrations (see `schema`).
    schema = {"001_schema": (
        # Start in whole seconds, then a tie number (`storage.search`): start order. Every
        # write gives one (a column added to a table cannot be NOT NULL without a default).
        "ALTER TABLE events ADD COLUMN search_key integer",
        "CREATE UNIQUE INDEX events_by_search_key ON events (search_key)",
        # The terms are made in Python (`storage.search`) and joined by spaces: the ascii
        # tokenizer splits on spaces and leaves every other character of a term as it is. No
        # content is stored and no positions (detail=none): a term's list of keys is all a
        # search reads.
        "CREATE VIRTUAL TABLE event_search USING fts5(terms, content='', columnsize=0, "
        "detail=none, tokenize=\"ascii tokenchars '_@'\")",
        # Leaf pages of 512 bytes let a walk skip the parts of a long list between two entries
        # of a rarer one, where 4 KB pages were read entry by entry (a rare word within a
        # filter: 0.15 -> 0.05 ms at 100 000 events; bench/README.md).
        "INSERT INTO event_search (event_search, rank) VALUES ('pgsz', 512)",
    )}

    def __init__(self, db: sqlite3.Connection,
                 transaction: Callable[[], AbstractContextManager[Any]]):
        self.db = db
        self.transaction = transaction

    # -- upkeep -------------------------------------------------------------------------

    def row_columns(self, terms: list[str]) -> dict[str, Any]:
        """Nothing: the terms are in the FTS5 table, under the row's key."""
        return {}

    def add(self, indexed: Sequence[Indexed]) -> None:
        """Put events' terms in the FTS5 table under their keys, and count them."""
        self.db.executemany("INSERT INTO event_search (rowid, terms) VALUES (?, ?)",
                            [(key, " ".join(terms)) for key, terms in indexed])
        self._count_terms(Counter(term for _, terms in indexed for term in terms))

    def remove(self, indexed: Sequence[Indexed]) -> None:
        """Take events' terms out of the FTS5 table, which needs them as they were indexed
        (it keeps no copy), and count them down."""
        self.db.executemany("INSERT INTO event_search (event_search, rowid, terms) "
                            "VALUES ('delete', ?, ?)",
                            [(key, " ".join(terms)) for key, terms in indexed])
        removed = Counter(term for _, terms in indexed for term in terms)
        self._count_terms({term: -events for term, events in removed.items()})

    def _count_terms(self, change: dict[str, int]) -> None:
        """Add `change` to how many events hold each term."""
        self.db.executemany(
            "INSERT INTO search_terms (term, events) VALUES (?, ?) "
            "ON CONFLICT (term) DO UPDATE SET events = events + excluded.events",
            change.items())

    def rebuild(self, batches: Iterable[Sequence[Indexed]]) -> None:
        """Empty the index, index every event batch by batch, and merge the segments."""
        self.db.execute("INSERT INTO event_search (event_search) VALUES ('delete-all')")
        self.db.execute("DELETE FROM search_terms")
        for batch in batches:
            self.add(batch)
        # Written batch by batch, the index is in as many segments, and a search reads each
        # of them until they are merged (100 000 events: searches 1.4-1.9 times slower, until
        # this merge of 4 s after the rebuild's 100 s).
        self.db.execute("INSERT INTO event_search (event_search) VALUES ('optimize')")

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """A large page cache while loading; after it, the index merged into one segment and
        the planner's statistics refreshed."""
        # A transaction bigger than the page cache spills pages to the WAL and reads them
        # back: a large cache while loading takes 100 000 events from 16 s to 10 s.
        default_cache = self.db.execute("PRAGMA cache_size").fetchone()[0]
        self.db.execute(f"PRAGMA cache_size = -{BULK_LOAD_CACHE_KIB}")
        try:
            yield
            self._optimize()
        finally:
            self.db.execute(f"PRAGMA cache_size = {default_cache}")

    @guarded
    def _optimize(self) -> None:
        """Merge the index's segments and refresh the planner's statistics."""
        with self.transaction():
            self.db.execute("INSERT INTO event_search (event_search) VALUES ('optimize')")
        self.db.execute("ANALYZE")

    # -- reading ------------------------------------------------------------------------
    # Rows are read as tuples: read as dicts (`Records._rows`), the counts and the page made
    # a search about a sixth slower (22 of 140 µs at 100 000 events).

    def counts(self, terms: list[str]) -> dict[str, int]:
        """How many events hold each of `terms` at each location and anywhere
        (term@location -> count), with the every-event term of each among them."""
        ranges = holding_ranges(terms)
        where = " OR ".join("(term >= ? AND term < ?)" for _ in ranges)
        bounds = [bound for low_high in ranges for bound in low_high]
        return dict(self.db.execute(
            f"SELECT term, events FROM search_terms WHERE {where}", bounds).fetchall())

    def confirm_counts(self) -> None:
        """Nothing to confirm: SQLite's counts are read in the process for every search."""

    def forget_counts(self) -> None:
        """Nothing remembered (see `confirm_counts`)."""

    def statement(self, plan: TermsPlan) -> SearchPlan:
        """The one walk of the index in key order that reads `plan` (`search.Search`): for
        each place the search reads (its location, anywhere, or the locations that hold every
        term), the events holding all its terms, rarest list first; the places' matches
        merged as they come (an FTS5 OR). "Upcoming" and the date range bound the keys; FTS5
        skips each list to the first key of the range.
        """
        params: dict[str, Any] = {
            "match": " OR ".join(f"({fts_conjunction(terms)})" for terms in plan.conjunctions),
            "first": plan.first}
        bounds = "rowid >= :first"
        if plan.end is not None:
            params["end"] = plan.end
            bounds += " AND rowid < :end"
        return SearchPlan("SELECT rowid FROM event_search WHERE event_search MATCH :match "
                          f"AND {bounds} ORDER BY rowid LIMIT :needed", params)

    def page(self, plan: TermsPlan, limit: int, offset: int, count_cap: int,
             count_seats: bool) -> EventPage:
        """One walk of the index in start order yields the keys of the matches, stopping
        after the cap (or the end of the page, if later): they are the count and the page."""
        walk = self.statement(plan)
        keys = [row[0] for row in self.db.execute(
            walk.sql, {**walk.params, "needed": needed(limit, offset, count_cap)})]
        return page_of(keys, limit, offset, count_cap,
                       lambda shown: self._listed_at(shown, count_seats))

    def _listed_at(self, keys: list[int], count_seats: bool) -> Listing:
        """The summaries of the events with these search keys, in key order, and their
        seats if `count_seats`."""
        # Tuples zipped with the known fields: generic dict rows (as sqlite-utils made them)
        # cost a tenth of a search here.
        fields = (*SUMMARY_FIELDS, *SEAT_FIELDS) if count_seats else SUMMARY_FIELDS
        columns = f"{SUMMARY_COLUMNS}, {SEAT_COLUMNS}" if count_seats else SUMMARY_COLUMNS
        rows = [dict(zip(fields, row, strict=True)) for row in self.db.execute(
            f"SELECT {columns} FROM events e WHERE e.search_key IN "
            f"({', '.join('?' * len(keys))}) ORDER BY e.search_key", keys)]
        seats = ({row["id"]: availability_of(row, from_text) for row in rows}
                 if count_seats else {})
        return [summary_of(row, from_text) for row in rows], seats

    def explain(self, plan: TermsPlan, limit: int, count_cap: int) -> list[str]:
        """SQLite's plan (EXPLAIN QUERY PLAN) for reading a search's matches."""
        walk = self.statement(plan)
        params = {**walk.params, "needed": needed(limit, 0, count_cap)}
        return [row[3] for row in self.db.execute(f"EXPLAIN QUERY PLAN {walk.sql}", params)]
