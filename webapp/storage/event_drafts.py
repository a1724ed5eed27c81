"""An organization's own events, from draft to published: what the organizer area reads and
writes of them.

A draft lives in `event_drafts` only, so nothing public can read it. Publishing writes it
into `events` with `import_events` (the search index changes in the same transaction) and
names its organization there, then deletes the draft: a published event is kept in one place,
the one every page and tool reads. Each save counts the event's version up (the draft's, then
the published event's) and notes in `event_edits` which fields it changed, so that a save made
from an older version can be told what changed in between instead of overwriting it.

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

from . import Event
from . import OrganizerEvent
from . import Registration
from .dialect import Dialect
from .dialect import guarded
from .shared import column_values

Row = Mapping[str, Any]

# The event's own columns, in `event_drafts` as in `events` (`records.EVENT_FIELDS`).
DRAFT_FIELDS = ("id", "title", "summary", "description", "starts_at", "ends_at", "location",
                "venue", "price", "level", "capacity", "held_seats", "registration_deadline",
                "price_amount", "price_currency", "waitlist", "language", "street_address",
                "online_platform", "link_sent", "topic_tags", "payment_note")
CREATE_DRAFT = (
    f"INSERT INTO event_drafts ({', '.join(DRAFT_FIELDS)}, organization_id, version, "
    "created_by, created_at, updated_by, updated_at) VALUES ("
    f"{', '.join(':' + name for name in DRAFT_FIELDS)}, :organization_id, 1, :account_id, "
    ":now, :account_id, :now)")
# A save goes through only from the version it was made from: the check and the write are
# one statement, so of two saves from one version exactly one is kept.
SAVE_DRAFT = (
    "UPDATE event_drafts SET "
    + ", ".join(f"{name} = :{name}" for name in DRAFT_FIELDS if name != "id")
    + ", version = version + 1, updated_by = :account_id, updated_at = :now "
    "WHERE id = :id AND version = :version")
DRAFT = "SELECT * FROM event_drafts WHERE id = :id"
# A published event of the organizer area: its columns, its organization and version.
PUBLISHED = ("SELECT e.*, {claims} AS claimed FROM events e "
             "WHERE e.id = :id AND e.organization_id IS NOT NULL")
NEXT_PUBLISHED_VERSION = ("UPDATE events SET version = version + 1 "
                          "WHERE id = :id AND version = :version")
PUBLISH = ("UPDATE events SET organization_id = :organization_id, version = :version "
           "WHERE id = :id")
DELETE_DRAFT = "DELETE FROM event_drafts WHERE id = :id"
RECORD_EDIT = ("INSERT INTO event_edits (event_id, version, changed, edited_by, edited_at) "
               "VALUES (:event_id, :version, :changed, :account_id, :now)")
EDITS_SINCE = ("SELECT changed FROM event_edits WHERE event_id = :event_id "
               "AND version > :version ORDER BY version")
# Drafts first (the newest start first), then published events (likewise): the page splits
# them into drafts, upcoming and past.
ORGANIZATION_DRAFTS = ("SELECT * FROM event_drafts WHERE organization_id = :organization_id "
                       "ORDER BY starts_at DESC, id")
# Every event of every organization an account is in, drafts and published alike, in one
# read whatever the number of organizations (the organizer dashboard): a draft's row has the
# published event's columns too, empty, and says which it is in `published`. Of the events
# that have ended, only each organization's latest `:past_shown` (`past_place`, from 1, the
# latest first), with how many there are in all (`past_events`); seats are counted for the
# rows kept alone.
_EVENT_COLUMNS = ", ".join(f"{{table}}.{name}" for name in DRAFT_FIELDS)
_ENDED = "e.ends_at <= :now"
ACCOUNT_EVENTS = (
    "SELECT listed.*, CASE WHEN listed.published = 1 THEN {claims} ELSE 0 END AS claimed "
    "FROM (SELECT " + _EVENT_COLUMNS.format(table="d") + ", d.organization_id, d.version, "
    "NULL AS cancelled_at, '' AS cancellation_reason, 0 AS published, 0 AS past_place, "
    "0 AS past_events "
    "FROM event_drafts d JOIN memberships m ON m.organization_id = d.organization_id "
    "WHERE m.account_id = :account_id "
    "UNION ALL SELECT " + _EVENT_COLUMNS.format(table="e") + ", e.organization_id, e.version, "
    "e.cancelled_at, e.cancellation_reason, 1 AS published, "
    f"CASE WHEN {_ENDED} THEN row_number() OVER (PARTITION BY e.organization_id, {_ENDED} "
    "ORDER BY e.starts_at DESC, e.id) ELSE 0 END AS past_place, "
    f"CASE WHEN {_ENDED} THEN count(*) OVER (PARTITION BY e.organization_id, {_ENDED}) "
    "ELSE 0 END AS past_events "
    "FROM events e JOIN memberships m ON m.organization_id = e.organization_id "
    "WHERE m.account_id = :account_id) listed "
    "WHERE listed.past_place <= :past_shown "
    "ORDER BY listed.starts_at DESC, listed.id")
# An organization's published events for its organizer page: those not ended by `:now`, and
# of the ended ones only the latest `:past_shown` (the rest are a link away, a page at a time).
ORGANIZATION_EVENTS = (
    "SELECT * FROM (SELECT e.*, {claims} AS claimed FROM events e "
    "WHERE e.organization_id = :organization_id AND e.ends_at > :now "
    "UNION ALL SELECT * FROM (SELECT e.*, {claims} AS claimed FROM events e "
    f"WHERE e.organization_id = :organization_id AND {_ENDED} "
    "ORDER BY e.starts_at DESC, e.id LIMIT :past_shown) ended) listed "
    "ORDER BY listed.starts_at DESC, listed.id")
# An organization's published events that have ended, the latest first: a page of them, and
# how many there are.
PAST_EVENTS = (f"SELECT e.*, {{claims}} AS claimed FROM events e "
               f"WHERE e.organization_id = :organization_id AND {_ENDED} "
               "ORDER BY e.starts_at DESC, e.id LIMIT :limit OFFSET :offset")
COUNT_PAST_EVENTS = ("SELECT count(*) AS past FROM events e "
                     f"WHERE e.organization_id = :organization_id AND {_ENDED}")
ACTIVE_ATTENDEES = ("SELECT r.*, e.title AS event_title, e.starts_at AS event_starts_at "
                    "FROM registrations r JOIN events e ON e.id = r.event_id "
                    "WHERE r.event_id = :id AND r.state = 'active' ORDER BY r.created_at, r.id")


class EventDraftRecords:
    """The storage methods of an organization's own events, on the primitives a backend
    gives `records.Records` (and its `get_event` and `import_events`)."""

    dialect: Dialect

    if TYPE_CHECKING:  # what the backend provides (`records.Records` says what each does)
        def transaction(self) -> AbstractContextManager[Any]: ...

        def _rows(self, sql: str, params: dict[str, Any]) -> Sequence[Row]: ...

        def _one(self, sql: str, params: dict[str, Any]) -> Row | None: ...

        def _run(self, sql: str, params: dict[str, Any]) -> int: ...

        def _in_transaction(self) -> bool: ...

        def get_event(self, event_id: str, count_seats: bool = False,
                      for_update: bool = False) -> Event | None: ...

        def import_events(self, events: list[Event]) -> int: ...

    def _draft_of(self, row: Row) -> OrganizerEvent:
        from .records import event_of  # records imports this module: read when first used

        # A draft has no cancellation: only a published event can be cancelled.
        never_cancelled = {**dict(row), "cancelled_at": None, "cancellation_reason": ""}
        return OrganizerEvent(event=event_of(never_cancelled, self.dialect.moment_out),
                              organization_id=row["organization_id"], version=row["version"],
                              published=False)

    def _published_of(self, row: Row) -> OrganizerEvent:
        from .records import event_of  # records imports this module: read when first used

        return OrganizerEvent(
            event=event_of(row, self.dialect.moment_out, row["held_seats"] + row["claimed"]),
            organization_id=row["organization_id"], version=row["version"], published=True)

    def _claims(self, event: str = "e.id") -> str:
        from .records import CLAIMS  # records imports this module: read when first used

        return CLAIMS.format(event=event)

    def _values(self, event: Event) -> dict[str, Any]:
        return column_values(event, DRAFT_FIELDS, self.dialect.moment_in)

    @guarded
    def create_event_draft(self, event: Event, organization_id: str, account_id: str,
                           now: datetime) -> None:
        """Keep a new draft of the organization's (version 1)."""
        self._run(CREATE_DRAFT, {**self._values(event), "organization_id": organization_id,
                                 "account_id": account_id,
                                 "now": self.dialect.moment_in(now)})

    @guarded
    def organizer_event(self, event_id: str, for_update: bool = False
                        ) -> OrganizerEvent | None:
        """An organization's event, draft or published (its seats counted), or None; with
        `for_update` (inside a transaction), its row locked until the transaction ends."""
        lock = self.dialect.locked(self._in_transaction()) if for_update else ""
        row = self._one(DRAFT + lock, {"id": event_id})
        if row is not None:
            return self._draft_of(row)
        if for_update:  # the lock first, then the seats counted after it (see `get_event`)
            self.get_event(event_id, for_update=True)
        row = self._one(PUBLISHED.format(claims=self._claims()), {"id": event_id})
        return self._published_of(row) if row else None

    @guarded
    def save_event_draft(self, event: Event, version: int, account_id: str,
                         now: datetime) -> bool:
        """Write a draft's fields if it is still at `version` (counting it up); False when
        another save came first."""
        return self._run(SAVE_DRAFT, {**self._values(event), "version": version,
                                      "account_id": account_id,
                                      "now": self.dialect.moment_in(now)}) == 1

    @guarded
    def save_published_event(self, event: Event, version: int) -> bool:
        """Write a published event again (its search terms follow) if it is still at
        `version` (counting it up); False when another save came first. One transaction."""
        with self.transaction():
            if self._run(NEXT_PUBLISHED_VERSION, {"id": event.id, "version": version}) != 1:
                return False
            self.import_events([event])
            return True

    @guarded
    def publish_event_draft(self, draft: OrganizerEvent) -> None:
        """Make a draft a published event of its organization: in search, on its page and in
        the tools when this transaction commits, and no longer a draft."""
        with self.transaction():
            self.import_events([draft.event])
            self._run(PUBLISH, {"id": draft.event.id, "organization_id": draft.organization_id,
                                "version": draft.version})
            self._run(DELETE_DRAFT, {"id": draft.event.id})

    @guarded
    def record_event_edit(self, event_id: str, version: int, changed: Sequence[str],
                          account_id: str, now: datetime) -> None:
        """Note which fields the save that made `version` of an event changed."""
        self._run(RECORD_EDIT, {"event_id": event_id, "version": version,
                                "changed": " ".join(changed), "account_id": account_id,
                                "now": self.dialect.moment_in(now)})

    @guarded
    def event_edits_since(self, event_id: str, version: int) -> list[str]:
        """The fields the saves after `version` of an event changed, each once, in the order
        they were first changed."""
        changed: dict[str, None] = {}
        for row in self._rows(EDITS_SINCE, {"event_id": event_id, "version": version}):
            changed.update((name, None) for name in row["changed"].split())
        return list(changed)

    @guarded
    def organization_events(self, organization_id: str, now: datetime, past_shown: int
                            ) -> tuple[list[OrganizerEvent], int]:
        """The organization's drafts, then its published events (seats counted), each the
        latest start first, but of those ended by `now` only the latest `past_shown`; and how
        many have ended in all."""
        params = {"organization_id": organization_id, "now": self.dialect.moment_in(now)}
        counted = self._one(COUNT_PAST_EVENTS, params)
        return ([self._draft_of(row) for row in self._rows(ORGANIZATION_DRAFTS, params)]
                + [self._published_of(row) for row in self._rows(
                    ORGANIZATION_EVENTS.format(claims=self._claims()),
                    {**params, "past_shown": past_shown})],
                int(counted["past"]) if counted else 0)

    @guarded
    def account_organization_events(self, account_id: str, now: datetime, past_shown: int
                                    ) -> tuple[list[OrganizerEvent], dict[str, int]]:
        """The drafts and published events (seats counted) of every organization the account
        is in, whatever its role there, the latest start first, but of those ended by `now`
        only each organization's latest `past_shown`; and how many have ended, by
        organization (one with none left out). One read."""
        events: list[OrganizerEvent] = []
        past: dict[str, int] = {}
        for row in self._rows(ACCOUNT_EVENTS.format(claims=self._claims("listed.id")),
                              {"account_id": account_id, "now": self.dialect.moment_in(now),
                               "past_shown": past_shown}):
            events.append(self._published_of(row) if row["published"] else self._draft_of(row))
            if row["past_events"]:
                past[row["organization_id"]] = int(row["past_events"])
        return events, past

    @guarded
    def past_organization_events(self, organization_id: str, now: datetime, limit: int,
                                 offset: int) -> tuple[list[OrganizerEvent], int]:
        """A page of the organization's published events ended by `now` (seats counted), the
        latest start first, and how many have ended in all."""
        params = {"organization_id": organization_id, "now": self.dialect.moment_in(now)}
        counted = self._one(COUNT_PAST_EVENTS, params)
        return ([self._published_of(row) for row in self._rows(
                    PAST_EVENTS.format(claims=self._claims()),
                    {**params, "limit": limit, "offset": offset})],
                int(counted["past"]) if counted else 0)

    @guarded
    def active_attendees(self, event_id: str) -> list[Registration]:
        """The event's active registrations, the earliest first."""
        from .records import registration_of  # records imports this module

        return [registration_of(row, self.dialect.moment_out)
                for row in self._rows(ACTIVE_ATTENDEES, {"id": event_id})]
