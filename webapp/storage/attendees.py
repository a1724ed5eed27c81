"""An event's attendees as its organizers read them: every registration with its state and,
from `check_ins`, when it was checked in at the door.

Two ways to read them: a page at a time for the attendee list (searched by name or address,
counted), and every one of them in batches for the export, each batch one read that starts
after the last attendee of the one before (keyset, by the order people registered in), so
that an export of any size holds one batch in memory and never skips nor repeats a row.

Written once for both backends on the primitives `records.Records` names; `Records` inherits
this class.
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any

from . import Attendee
from . import AttendeeCounts
from . import AttendeePage
from .dialect import Dialect
from .dialect import guarded

Row = Mapping[str, Any]

ATTENDEES = ("FROM registrations r LEFT JOIN check_ins c ON c.registration_id = r.id "
             "WHERE r.event_id = :event_id")
ATTENDEE_COLUMNS = ("SELECT r.id, r.attendee_name, r.email, r.state, r.created_at, "
                    "r.cancelled_at, c.checked_in_at")
# The order people registered in; the id settles a tie of two in one second.
IN_ORDER = " ORDER BY r.created_at, r.id"
# A name or an address holding the words typed, whatever their case (`lower` on both sides:
# SQLite's LIKE ignores the case of ASCII letters only, PostgreSQL's of none).
MATCHING = (" AND (lower(r.attendee_name) LIKE :pattern ESCAPE '\\' "
            "OR lower(r.email) LIKE :pattern ESCAPE '\\')")
PAGE = IN_ORDER + " LIMIT :limit OFFSET :offset"
AFTER = " AND (r.created_at, r.id) > (:after_at, :after_id)"
BATCH = IN_ORDER + " LIMIT :limit"
COUNTS = ("SELECT coalesce(sum(CASE WHEN r.state = 'active' THEN 1 ELSE 0 END), 0) "
          "AS registered, coalesce(sum(CASE WHEN r.state = 'cancelled' THEN 1 ELSE 0 END), 0) "
          f"AS cancelled, count(c.registration_id) AS checked_in {ATTENDEES}")


def like_pattern(text: str) -> str:
    """A LIKE pattern matching values that hold `text` (its own `%`, `_` and `\\` taken as
    they are typed), lower-cased like the values it is matched against."""
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def attendee_of(row: Row, dialect: Dialect) -> Attendee:
    """An attendee from a row of `ATTENDEE_COLUMNS`."""
    moment = dialect.moment_out
    return Attendee(
        registration_id=row["id"], name=row["attendee_name"], email=row["email"],
        state=row["state"], registered_at=moment(row["created_at"]),
        cancelled_at=moment(row["cancelled_at"]) if row["cancelled_at"] else None,
        checked_in_at=moment(row["checked_in_at"]) if row["checked_in_at"] else None)


class AttendeeRecords:
    """The attendee list's storage methods, on the primitives a backend gives
    `records.Records`."""

    dialect: Dialect

    if TYPE_CHECKING:  # what the backend provides (`records.Records` says what each does)
        def _rows(self, sql: str, params: dict[str, Any]) -> Sequence[Row]: ...

        def _one(self, sql: str, params: dict[str, Any]) -> Row | None: ...

    @guarded
    def attendee_page(self, event_id: str, text: str | None, limit: int,
                      offset: int) -> AttendeePage:
        """The event's attendees whose name or address holds `text` (None: all), in the order
        they registered, a page of them; and how many match in all."""
        where, params = ATTENDEES, {"event_id": event_id}
        if text:
            where, params = where + MATCHING, {**params, "pattern": like_pattern(text)}
        rows = self._rows(f"{ATTENDEE_COLUMNS} {where}{PAGE}",
                          {**params, "limit": limit, "offset": offset})
        counted = self._one(f"SELECT count(*) AS matches {where}", params)
        return AttendeePage(attendees=[attendee_of(row, self.dialect) for row in rows],
                            matches=int(counted["matches"]) if counted else 0)

    @guarded
    def attendee_counts(self, event_id: str) -> AttendeeCounts:
        """How many of the event's attendees are registered (active), cancelled, checked in."""
        row = self._one(COUNTS, {"event_id": event_id})
        if row is None:
            return AttendeeCounts(registered=0, cancelled=0, checked_in=0)
        return AttendeeCounts(registered=int(row["registered"]),
                              cancelled=int(row["cancelled"]),
                              checked_in=int(row["checked_in"]))

    @guarded
    def attendee_batch(self, event_id: str, after: Attendee | None,
                       limit: int) -> list[Attendee]:
        """Up to `limit` of the event's attendees registered after `after` (None: from the
        first), in the order they registered: one read."""
        params: dict[str, Any] = {"event_id": event_id, "limit": limit}
        where = ATTENDEES
        if after is not None:
            where += AFTER
            params.update(after_at=self.dialect.moment_in(after.registered_at),
                          after_id=after.registration_id)
        return [attendee_of(row, self.dialect)
                for row in self._rows(f"{ATTENDEE_COLUMNS} {where}{BATCH}", params)]

    def attendee_batches(self, event_id: str, size: int) -> Iterator[list[Attendee]]:
        """Every attendee of the event, in the order they registered, `size` at a time: one
        read per batch (`attendee_batch`), never the whole list at once."""
        after = None
        while batch := self.attendee_batch(event_id, after, size):
            yield batch
            if len(batch) < size:
                return
            after = batch[-1]
