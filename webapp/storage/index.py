"""The search index as `records.Records` drives it. Each backend keeps one: `fts.SQLiteIndex`
(FTS5) and `postgres.PostgresIndex` (a GIN index and the slot postings of `postings`). It
holds every event's terms (`shared.terms_of`) under the event's search key, keeps how many
events hold each term (`search_terms`), and reads a search's matches in key order.

The records decide everything else, written once for both: the keys, what an event's row
holds, the transactions and locks, and which terms a search reads (`shared.plan_terms`).
Reading the counts and a page stays the index's: read as the records' dict rows
(`Records._rows`), they made a search on SQLite about a sixth slower (fts.py says more).
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any
from typing import Protocol

from . import EventPage
from .shared import TermsPlan

# An event as the index holds it: its search key and its terms.
Indexed = tuple[int, list[str]]


class StaleCounts(Exception):
    """The term counts a search was planned with were remembered from before a write to the
    index: the search is to be planned again on counts read now (`Records.search_events`)."""


class SearchIndex(Protocol):
    """A backend's search index (see the module's docstring)."""

    @property
    def schema(self) -> Mapping[str, Sequence[str]]:
        """Its statements for a migration of `schema`, run after the shared ones."""

    def counts(self, terms: list[str]) -> dict[str, int]:
        """How many events hold each of `terms` at each location and anywhere
        (term@location -> events), with the every-event term of each (`shared.holding_ranges`)."""

    def page(self, plan: TermsPlan, limit: int, offset: int, count_cap: int,
             count_seats: bool) -> EventPage:
        """The page and capped count of the events holding one of the plan's conjunctions,
        soonest first (`shared.page_of`), the page's seats counted if asked."""

    def confirm_counts(self) -> None:
        """Raise `StaleCounts` if the counts this search was planned with may be from before
        a write to the index, which its reads have not yet ruled out."""

    def forget_counts(self) -> None:
        """Drop every count remembered, so that the next ones are read from the database."""

    def explain(self, plan: TermsPlan, limit: int, count_cap: int) -> list[str]:
        """The database's plan for reading the plan's matches."""

    def row_columns(self, terms: list[str]) -> dict[str, Any]:
        """What an event's row holds for the index besides its key, written with the row."""

    def add(self, indexed: Sequence[Indexed]) -> None:
        """Index events' terms under their keys, and count them."""

    def remove(self, indexed: Sequence[Indexed]) -> None:
        """Take events' terms out of the index, as they were indexed, and count them down."""

    def rebuild(self, batches: Iterable[Sequence[Indexed]]) -> None:
        """Index every stored event again, given batch by batch (another version of `search`
        made the terms indexed so far)."""

    def bulk(self) -> AbstractContextManager[None]:
        """Around a transaction writing many events: what makes it faster, and after it
        what makes searches fast again (statistics, merged segments)."""
