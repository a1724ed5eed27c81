"""The waitlist of a full event: people waiting for a seat, in the order they joined.

An entry's life:

    waiting --a seat frees--> offered --accepted--> accepted (a registration now)
       |                         \\--declined, or its hold ran out--> declined, expired
       +--left

A seat is taken by a held seat, an active registration or an offer; one that frees while
anyone waits is theirs, so the count of seats (`records.CLAIMS`) counts the waiting too, and
nobody else sees it free. `pass_on_seats` expires the offers whose hold ran out and offers each
free seat to the first one waiting, inside the transaction that locked the event (every write
that changes an event's seats locks its row first), so that held seats, active registrations
and offers never outnumber the capacity, whatever runs at once. The domain decides how long an
offer holds (`domain.waitlist`) and calls it wherever seats change, and a periodic job calls it
too, so nothing depends on the job having run.

Written once for both backends on the primitives `records.Records` names; `Records` inherits
this class.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING
from typing import Any

from . import WaitlistEntry
from .dialect import Dialect
from .dialect import guarded

Row = Mapping[str, Any]

LIVE = "('waiting', 'offered')"
# An entry with its event's title and start, and its position among those still waiting.
ENTRY_SELECT = (
    "SELECT w.*, e.title AS event_title, e.starts_at AS event_starts_at, "
    "(SELECT count(*) FROM waitlist ahead WHERE ahead.event_id = w.event_id "
    "AND ahead.state = 'waiting' AND ahead.place <= w.place) AS position "
    "FROM waitlist w JOIN events e ON e.id = w.event_id")
JOIN_WAITLIST = (
    "INSERT INTO waitlist (id, event_id, visitor_id, attendee_name, email, language, state, "
    "joined_at) VALUES (:id, :event_id, :visitor_id, :attendee_name, :email, :language, "
    "'waiting', :joined_at)")
LIVE_ENTRY = (f"{ENTRY_SELECT} WHERE w.visitor_id = :visitor_id AND w.event_id = :event_id "
              f"AND w.state IN {LIVE}")
VISITOR_WAITLIST = (f"{ENTRY_SELECT} WHERE w.visitor_id = :visitor_id AND w.state IN {LIVE} "
                    "ORDER BY e.starts_at, w.place")
END_ENTRY = (f"UPDATE waitlist SET state = :state, ended_at = :now WHERE id = :id "
             f"AND state IN {LIVE}")
EXPIRE_OFFERS = ("UPDATE waitlist SET state = 'expired', ended_at = :now "
                 "WHERE event_id = :event_id AND state = 'offered' AND offer_ends_at <= :now")
# What is left of the capacity once held seats, registrations and offers took theirs.
SEATS_TO_OFFER = (
    "SELECT e.capacity - e.held_seats - (SELECT count(*) FROM registrations r "
    "WHERE r.event_id = e.id AND r.state = 'active') - (SELECT count(*) FROM waitlist w "
    "WHERE w.event_id = e.id AND w.state = 'offered') AS free FROM events e WHERE e.id = :id")
NEXT_WAITING = ("SELECT id FROM waitlist WHERE event_id = :event_id AND state = 'waiting' "
                "ORDER BY place LIMIT :limit")
OFFER_SEAT = ("UPDATE waitlist SET state = 'offered', offer_ends_at = :until "
              "WHERE id = :id AND state = 'waiting'")
EVENT_WAITLIST = (f"{ENTRY_SELECT} WHERE w.event_id = :event_id AND w.state IN {LIVE} "
                  "ORDER BY w.place")
EVENTS_WAITED_FOR = (f"SELECT DISTINCT w.event_id FROM waitlist w JOIN events e "
                     f"ON e.id = w.event_id WHERE w.state IN {LIVE} AND e.starts_at > :now "
                     "ORDER BY w.event_id")


def entry_of(row: Row, dialect: Dialect) -> WaitlistEntry:
    """An entry from a row of `ENTRY_SELECT`."""
    moment = dialect.moment_out
    return WaitlistEntry(
        id=row["id"], event_id=row["event_id"], visitor_id=row["visitor_id"],
        attendee_name=row["attendee_name"], email=row["email"], state=row["state"],
        joined_at=moment(row["joined_at"]), event_title=row["event_title"],
        event_starts_at=moment(row["event_starts_at"]), language=row["language"],
        offer_ends_at=moment(row["offer_ends_at"]) if row["offer_ends_at"] else None,
        ended_at=moment(row["ended_at"]) if row["ended_at"] else None,
        position=int(row["position"]) if row["state"] == "waiting" else None)


class WaitlistRecords:
    """The waitlist's storage methods, on the primitives a backend gives `records.Records`."""

    dialect: Dialect

    if TYPE_CHECKING:  # what the backend provides (`records.Records` says what each does)
        def transaction(self) -> AbstractContextManager[Any]: ...

        def _rows(self, sql: str, params: dict[str, Any]) -> Sequence[Row]: ...

        def _one(self, sql: str, params: dict[str, Any]) -> Row | None: ...

        def _run(self, sql: str, params: dict[str, Any]) -> int: ...

        def _in_transaction(self) -> bool: ...

    @guarded
    def join_waitlist(self, entry: WaitlistEntry) -> None:
        """Put a person at the end of an event's line."""
        self._run(JOIN_WAITLIST, {
            "id": entry.id, "event_id": entry.event_id, "visitor_id": entry.visitor_id,
            "attendee_name": entry.attendee_name, "email": entry.email,
            "language": entry.language, "joined_at": self.dialect.moment_in(entry.joined_at)})

    @guarded
    def waitlist_entry(self, entry_id: str, for_update: bool = False) -> WaitlistEntry | None:
        """One entry, or None (with `for_update`, locked until the end of the transaction
        reading it)."""
        lock = self.dialect.locked(self._in_transaction(), " OF w") if for_update else ""
        row = self._one(f"{ENTRY_SELECT} WHERE w.id = :id{lock}", {"id": entry_id})
        return entry_of(row, self.dialect) if row else None

    @guarded
    def live_waitlist_entry(self, visitor_id: str, event_id: str) -> WaitlistEntry | None:
        """The visitor's entry waiting or offered for the event, if any."""
        row = self._one(LIVE_ENTRY, {"visitor_id": visitor_id, "event_id": event_id})
        return entry_of(row, self.dialect) if row else None

    @guarded
    def visitor_waitlist(self, visitor_id: str) -> list[WaitlistEntry]:
        """The visitor's entries waiting or offered, soonest event first."""
        return [entry_of(row, self.dialect)
                for row in self._rows(VISITOR_WAITLIST, {"visitor_id": visitor_id})]

    @guarded
    def event_waitlist(self, event_id: str) -> list[WaitlistEntry]:
        """The event's entries waiting or offered, in the order they joined."""
        return [entry_of(row, self.dialect)
                for row in self._rows(EVENT_WAITLIST, {"event_id": event_id})]

    @guarded
    def end_waitlist_entry(self, entry_id: str, state: str, now: datetime) -> bool:
        """End a live entry as accepted, declined or left; False when it had ended."""
        return self._run(END_ENTRY, {"state": state, "now": self.dialect.moment_in(now),
                                     "id": entry_id}) == 1

    @guarded
    def pass_on_seats(self, event_id: str, now: datetime, offer_ends_at: datetime | None
                      ) -> list[WaitlistEntry]:
        """Expire the event's offers that ended by `now`, then offer each free seat to the
        first one waiting, held until `offer_ends_at` (None: offer nothing); the new offers.
        Call inside the transaction that locked the event."""
        moment_in = self.dialect.moment_in
        with self.transaction():
            self._run(EXPIRE_OFFERS, {"event_id": event_id, "now": moment_in(now)})
            if offer_ends_at is None:
                return []
            row = self._one(SEATS_TO_OFFER, {"id": event_id})
            free = int(row["free"]) if row else 0
            if free <= 0:
                return []
            chosen = [found["id"] for found in self._rows(
                NEXT_WAITING, {"event_id": event_id, "limit": free})]
            for entry_id in chosen:
                self._run(OFFER_SEAT, {"until": moment_in(offer_ends_at), "id": entry_id})
            offered = [self._one(f"{ENTRY_SELECT} WHERE w.id = :id", {"id": entry_id})
                       for entry_id in chosen]
        return [entry_of(row, self.dialect) for row in offered if row is not None]

    @guarded
    def events_waited_for(self, now: datetime) -> list[str]:
        """The events still to start after `now` where someone waits or holds an offer."""
        return [row["event_id"] for row in self._rows(
            EVENTS_WAITED_FOR, {"now": self.dialect.moment_in(now)})]
