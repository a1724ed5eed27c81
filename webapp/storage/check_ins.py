"""Who came: the check-ins at an event's door.

A registration is checked in at most once, whatever the door does: the check-in is one
statement whose primary key is the registration, so two door phones sending the same code at
the same moment check it in once, and the other learns who did it and when. Written once for
both backends on the primitives `records.Records` names; `Records` inherits this class.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING
from typing import Any

from . import DoorAttendee
from .dialect import Dialect
from .dialect import guarded

Row = Mapping[str, Any]

EVENT_REGISTRATIONS = "SELECT id FROM registrations WHERE event_id = :event_id"
ORGANIZATION_REGISTRATIONS = (
    "SELECT r.id, r.event_id FROM registrations r JOIN events e ON e.id = r.event_id "
    "WHERE e.organization_id = :organization_id AND r.event_id <> :event_id")
# Who checked in is named by the member's address while they have an account.
DOOR_ATTENDEE = (
    "SELECT r.id, r.event_id, r.attendee_name, r.email, r.state, c.checked_in_at, "
    "a.email AS checked_in_by FROM registrations r "
    "LEFT JOIN check_ins c ON c.registration_id = r.id "
    "LEFT JOIN accounts a ON a.id = c.checked_in_by WHERE r.id = :id")
# Only an active registration of the event, and only once: the primary key refuses the second.
CHECK_IN = (
    "INSERT INTO check_ins (registration_id, event_id, checked_in_at, checked_in_by) "
    "SELECT id, event_id, :at, :by FROM registrations "
    "WHERE id = :id AND event_id = :event_id AND state = 'active' "
    "ON CONFLICT (registration_id) DO NOTHING RETURNING registration_id")
DOOR_COUNTS = (
    "SELECT count(*) AS registered, count(c.registration_id) AS checked_in "
    "FROM registrations r LEFT JOIN check_ins c ON c.registration_id = r.id "
    "WHERE r.event_id = :event_id AND r.state = 'active'")


class CheckInRecords:
    """The door's storage methods, on the primitives a backend gives `records.Records`."""

    dialect: Dialect

    if TYPE_CHECKING:  # what the backend provides (`records.Records` says what each does)
        def _rows(self, sql: str, params: dict[str, Any]) -> Sequence[Row]: ...

        def _one(self, sql: str, params: dict[str, Any]) -> Row | None: ...

        def _returning(self, sql: str, params: dict[str, Any]) -> Row | None: ...

    @guarded
    def event_registration_ids(self, event_id: str) -> list[str]:
        """The id of every registration for the event, active or cancelled."""
        return [row["id"] for row in self._rows(EVENT_REGISTRATIONS, {"event_id": event_id})]

    @guarded
    def other_registration_ids(self, organization_id: str, event_id: str) -> dict[str, str]:
        """The registrations for the organization's other events: each id, with its event's."""
        return {row["id"]: row["event_id"] for row in self._rows(
            ORGANIZATION_REGISTRATIONS, {"organization_id": organization_id,
                                         "event_id": event_id})}

    @guarded
    def door_attendee(self, registration_id: str) -> DoorAttendee | None:
        """A registration as the door sees it: who, in which state, and their check-in."""
        row = self._one(DOOR_ATTENDEE, {"id": registration_id})
        if row is None:
            return None
        return DoorAttendee(
            registration_id=row["id"], event_id=row["event_id"],
            attendee_name=row["attendee_name"], email=row["email"], state=row["state"],
            checked_in_at=(self.dialect.moment_out(row["checked_in_at"])
                           if row["checked_in_at"] is not None else None),
            checked_in_by=row["checked_in_by"])

    @guarded
    def check_in(self, registration_id: str, event_id: str, account_id: str,
                 at: datetime) -> bool:
        """Check an active registration of the event in, by a member; False when it was
        already (or is not an active registration of that event)."""
        return self._returning(CHECK_IN, {"id": registration_id, "event_id": event_id,
                                          "by": account_id,
                                          "at": self.dialect.moment_in(at)}) is not None

    @guarded
    def door_counts(self, event_id: str) -> tuple[int, int]:
        """How many of the event's active registrations are checked in, and how many there
        are."""
        row = self._one(DOOR_COUNTS, {"event_id": event_id})
        return (int(row["checked_in"]), int(row["registered"])) if row else (0, 0)
