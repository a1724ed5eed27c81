"""The storage layer: every read and write of the site's data goes through here.

Actions call a storage object's methods and get plain dataclasses back; they never see SQL,
sqlite-utils or a connection. `sqlite.SQLiteStorage` is the embedded backend; a PostgreSQL
backend for several app hosts replaces it by implementing the same methods (see `Storage`).
Times cross this boundary as timezone-aware UTC datetimes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


class StorageError(Exception):
    """The backend failed (unavailable, locked past its timeout, corrupt): nothing was changed."""


@dataclass(frozen=True)
class Event:
    """An event as stored; `seats_taken` is filled only where seats were counted."""

    id: str
    title: str
    summary: str
    description: str
    starts_at: datetime
    ends_at: datetime
    location: str
    venue: str
    price: str
    level: str
    capacity: int
    held_seats: int
    registration_deadline: datetime
    seats_taken: int | None = None

    @property
    def remaining_seats(self) -> int | None:
        """Seats still free, when they were counted."""
        if self.seats_taken is None:
            return None
        return max(self.capacity - self.seats_taken, 0)


@dataclass(frozen=True)
class EventQuery:
    """What a search asks for; None means "any"."""

    starts_after: datetime
    text: str | None = None
    location: str | None = None
    price: str | None = None
    level: str | None = None
    starts_from: datetime | None = None
    starts_before: datetime | None = None


@dataclass(frozen=True)
class EventPage:
    """One page of search results and the (bounded) number of matches."""

    events: list[Event]
    count: int
    count_capped: bool
    has_more: bool


class Storage(Protocol):
    """What a storage backend provides (the SQLite backend is the reference)."""

    def search_events(self, query: EventQuery, limit: int, offset: int,
                      count_cap: int) -> EventPage: ...

    def get_event(self, event_id: str) -> Event | None: ...

    def import_events(self, events: list[Event]) -> int: ...

    def count_events(self) -> int: ...

    def close(self) -> None: ...
