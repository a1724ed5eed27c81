"""The storage layer: every read and write of the site's data goes through here.

Actions call a storage object's methods and get plain dataclasses back; they never see SQL,
sqlite3, psycopg or a connection. `sqlite.SQLiteStorage` is the embedded backend and
`postgres.PostgresStorage` the one for several app hosts; both implement `Storage`, keep the
same promises (tests/test_storage_contract.py), share what is not SQL (`shared`) and write
the SQL they run alike once (`records`, each through its `dialect`), the schema included
(`schema`: one list of migrations; each backend adds only its search index).
`backends` chooses one from the DATABASE setting.
Times cross this boundary as timezone-aware UTC datetimes.
"""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from datetime import timedelta
from typing import TYPE_CHECKING
from typing import Any
from typing import Protocol

if TYPE_CHECKING:  # `oauth` reads the dataclasses below
    from .oauth import OAuthClient
    from .oauth import OAuthCode
    from .oauth import OAuthTokens


class StorageError(Exception):
    """The backend failed (unavailable, locked past its timeout, corrupt): nothing was changed."""


@dataclass(frozen=True)
class EventSummary:
    """What a list of events shows of each: a search reads only these columns (the
    description alone is most of a stored event, and reading ten whole events took half of
    a search's time in storage)."""

    id: str
    title: str
    summary: str
    starts_at: datetime
    location: str
    price: str
    level: str
    # The BCP 47 tag of the language the organizer wrote the event's text in ("": not
    # declared, as for imported events), so a card marks its title and summary with it.
    # Keyword-only: a field with a default, before the fields `Event` adds without one.
    language: str = field(default="", kw_only=True)


@dataclass(frozen=True)
class Event(EventSummary):
    """An event as stored; `seats_taken` is filled only where seats were counted."""

    description: str
    ends_at: datetime
    venue: str
    capacity: int
    held_seats: int
    registration_deadline: datetime
    seats_taken: int | None = None
    # What a paid event costs, in the currency's major unit (None: free, or not known).
    price_amount: int | None = None
    price_currency: str = "TWD"
    # Whether a full event lets people wait for a seat that frees (`storage.waitlist`).
    waitlist: bool = False
    # What an organizer adds to the above (migration 016, with `language`; "" or () when not
    # given): where in person (the street address), how online (the platform, and when
    # attendees get the link: a `schemas.LINK_TIMES` key), its topics, and how to pay.
    street_address: str = ""
    online_platform: str = ""
    link_sent: str = ""
    topic_tags: tuple[str, ...] = ()
    payment_note: str = ""
    # Read, never written by an import: the organization that runs the event (None: the
    # site's own), and when it cancelled it, with the reason it gave ("" for none).
    organization_id: str | None = None
    cancelled_at: datetime | None = None
    cancellation_reason: str = ""

    @property
    def remaining_seats(self) -> int | None:
        """Seats still free, when they were counted."""
        if self.seats_taken is None:
            return None
        return max(self.capacity - self.seats_taken, 0)


@dataclass(frozen=True)
class Availability:
    """What a list of events shows of each one's seats and cost, counted now (a card's
    "NT$1,500 · 3 seats left · registration closes Friday", or "Full · waitlist open"),
    without reading the event."""

    capacity: int
    seats_taken: int
    registration_deadline: datetime
    price_amount: int | None
    price_currency: str
    cancelled: bool = False
    # Whether the event lets people wait for a seat when it is full (`Event.waitlist`).
    waitlist: bool = False

    @property
    def remaining_seats(self) -> int:
        """Seats still free."""
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

    events: list[EventSummary]
    count: int
    count_capped: bool
    has_more: bool
    # Each shown event's seats and cost (by id), read with the page when the search was
    # asked to count them (`Storage.search_events`); else empty.
    seats: dict[str, Availability] = field(default_factory=dict)


@dataclass(frozen=True)
class Registration:
    """A visitor's registration for an event, with the event's title and start (for lists)."""

    id: str
    event_id: str
    visitor_id: str
    attendee_name: str
    email: str
    state: str
    created_at: datetime
    event_title: str
    event_starts_at: datetime
    cancelled_at: datetime | None = None
    language: str = "zh-TW"  # the BCP 47 tag of the page it was made on: its mail speaks it


@dataclass(frozen=True)
class RegistrationCheck:
    """What stands in the way of registering for an event: the visitor's own active
    registration for it, whether an active one (anyone's) was made with the address, and the
    visitor's place on its waitlist (waiting or offered), read in one statement."""

    visitor_registration: Registration | None
    email_taken: bool
    waiting_entry: str | None  # the id of that waitlist entry


@dataclass(frozen=True)
class WaitlistEntry:
    """A person waiting for a seat of a full event (`storage.waitlist`), with the event's
    title and start (for lists): `waiting` in line (`position`: 1 is next, when counted),
    `offered` a held seat until `offer_ends_at`, then accepted, declined, expired or left."""

    id: str
    event_id: str
    visitor_id: str
    attendee_name: str
    email: str
    state: str
    joined_at: datetime
    event_title: str
    event_starts_at: datetime
    language: str = "zh-TW"  # the BCP 47 tag of the page it was joined on: its mail speaks it
    offer_ends_at: datetime | None = None
    ended_at: datetime | None = None
    position: int | None = None


@dataclass(frozen=True)
class Confirmation:
    """A pending human confirmation: single-use, bound to visitor, action and target."""

    token_hash: str
    visitor_id: str
    action: str
    target_id: str
    created_at: datetime
    expires_at: datetime
    payload: dict[str, Any] = field(default_factory=dict)
    used_at: datetime | None = None
    source: str = "human"  # who prepared it: human, agent (WebMCP) or mcp


@dataclass(frozen=True)
class AgentConnection:
    """An agent a visitor connected over MCP: it acts for them while its token lasts.

    The access token itself is never stored (its hash is, beside this row).
    """

    id: str
    visitor_id: str
    label: str
    created_at: datetime
    expires_at: datetime
    last_used_at: datetime | None = None
    # The OAuth client it was granted to (`storage.oauth`); None for a pasted token.
    client_id: str | None = None
    # The language of the page that connected it ("zh-TW" or "en"): what its answers speak.
    language: str = "zh-TW"


@dataclass(frozen=True)
class Activity:
    """One line of the activity log: who (person or agent) did what, with which outcome."""

    at: datetime
    visitor_id: str | None
    source: str
    action: str
    status: str
    target_id: str | None = None


@dataclass(frozen=True)
class Account:
    """A person who signed in: the address they proved, and the visitor that holds what they
    do while signed in; read through a session, also when it signed in and was last used."""

    id: str
    email: str
    visitor_id: str
    created_at: datetime
    signed_in_at: datetime | None = None
    seen_at: datetime | None = None


@dataclass(frozen=True)
class Organization:
    """An organization that runs events: its public name and one-line description (written
    by its people, in whichever language they write)."""

    id: str
    name: str
    description: str
    created_at: datetime


@dataclass(frozen=True)
class Membership:
    """An account's place in an organization: its role (`domain.organizers.ROLES`), with
    the organization and, read for a list of members, the member's address."""

    organization: Organization
    account_id: str
    role: str
    since: datetime
    email: str | None = None


@dataclass(frozen=True)
class Invitation:
    """An invitation to join an organization in a role, mailed to an address; open until it
    is accepted, revoked or expires. Read with its organization's name."""

    id: str
    organization_id: str
    email: str
    role: str
    invited_by: str
    created_at: datetime
    expires_at: datetime
    accepted_at: datetime | None = None
    revoked_at: datetime | None = None
    organization_name: str = ""

    def is_open(self, now: datetime) -> bool:
        """Whether it can still be accepted at `now`."""
        return self.accepted_at is None and self.revoked_at is None and now < self.expires_at


@dataclass(frozen=True)
class OrganizerEvent:
    """An event of an organization's as the organizer area reads it: a draft (only the
    organization sees it) or published (its seats counted), and the version the next save
    must be made from (`storage.event_drafts`)."""

    event: Event
    organization_id: str
    version: int
    published: bool


@dataclass(frozen=True)
class EventCover:
    """An event's cover picture as pages name it: what it shows (its alt text, required) and
    the digest of its renditions, which their addresses carry (`storage.covers`)."""

    event_id: str
    alt: str
    digest: str
    updated_at: datetime


@dataclass(frozen=True)
class OrganizationLogo:
    """An organization's logo as pages name it: what it shows (its alt text, required) and the
    digest of its renditions, which their addresses carry (`storage.covers`)."""

    organization_id: str
    alt: str
    digest: str
    updated_at: datetime


@dataclass(frozen=True)
class CoverImage:
    """One rendition of an uploaded picture (an event's cover, an organization's logo): a
    JPEG, and the digest of the picture it belongs to."""

    digest: str
    data: bytes


@dataclass(frozen=True)
class AuditEntry:
    """One line of an organization's audit log: who (an account id) did which organizer
    action, when, to what (`target`, an id) and how (`detail`, a word of the site's such as
    the role given): no personal data is written in it."""

    at: datetime
    organization_id: str
    account_id: str
    action: str
    event_id: str | None = None
    target: str | None = None
    detail: str | None = None
    # The title the event has now, read with the line from the event itself (never written
    # into the log); None when the line names no event, or one the organization no longer has.
    event_title: str | None = None


@dataclass(frozen=True)
class DoorAttendee:
    """A registration as the door sees it: who, in which state, and, once checked in, when and
    by whom (`checked_in_by`: the member's address; None once their account is gone)."""

    registration_id: str
    event_id: str
    attendee_name: str
    email: str
    state: str
    checked_in_at: datetime | None = None
    checked_in_by: str | None = None


@dataclass(frozen=True)
class Attendee:
    """A person registered for an event, as its organizers see them (`storage.attendees`):
    `state` active or cancelled, and when they were checked in at the door, if they were."""

    registration_id: str
    name: str
    email: str
    state: str
    registered_at: datetime
    cancelled_at: datetime | None = None
    checked_in_at: datetime | None = None


@dataclass(frozen=True)
class AttendeePage:
    """One page of an event's attendees, and how many match the search in all."""

    attendees: list[Attendee]
    matches: int


@dataclass(frozen=True)
class AttendeeCounts:
    """An event's attendees counted: registered (active), cancelled, checked in."""

    registered: int
    cancelled: int
    checked_in: int


@dataclass(frozen=True)
class OutboxMail:
    """A mail in the outbox: what builds it (its kind's templates, the language, the
    payload), whom it goes to, and how its delivery stands (`storage.outbox`)."""

    id: int
    dedupe_key: str
    recipient: str
    kind: str
    language: str  # the BCP 47 tag of the page the person used ("zh-TW", "en")
    payload: dict[str, Any]
    state: str  # queued, sending, sent or failed
    attempts: int  # claims so far, the current one included
    next_attempt_at: datetime
    created_at: datetime
    claimed_until: datetime | None = None
    last_error: str | None = None
    sent_at: datetime | None = None


class Storage(Protocol):
    """What a storage backend provides (the SQLite backend is the reference).

    `transaction()` holds the write lock for a check-then-change sequence (SQLite: BEGIN
    IMMEDIATE; PostgreSQL: a transaction whose `get_event(..., for_update=True)` locks the
    event row, and whose reads of a confirmation or registration lock theirs). Every other
    method is atomic on its own.
    """

    def transaction(self) -> AbstractContextManager[Any]: ...

    def close(self) -> None: ...

    # events
    def search_events(self, query: EventQuery, limit: int, offset: int,
                      count_cap: int, count_seats: bool = False) -> EventPage:
        """A page of the upcoming events matching `query`, soonest first, and their count
        (bounded by `count_cap`); with `count_seats`, the page's seats too, in the same read."""
        ...

    def availability(self, event_ids: list[str]) -> dict[str, Availability]:
        """The seats and cost of each of these events (an organization's list), counted now,
        in one query; an id that names no event is left out."""
        ...

    def get_event(self, event_id: str, count_seats: bool = False,
                  for_update: bool = False) -> Event | None: ...

    def import_events(self, events: list[Event]) -> int: ...

    def add_events(self, events: Iterable[Event]) -> int: ...

    def bulk_load(self) -> AbstractContextManager[Any]: ...

    def count_events(self) -> int: ...

    def explain_search(self, query: EventQuery, limit: int, count_cap: int) -> list[str]:
        """The database's plan for reading a search's matches (benchmarks print it)."""
        ...

    # visitors
    def create_visitor(self, visitor_id: str, now: datetime, expires_at: datetime) -> None: ...

    def visitor_expires_at(self, visitor_id: str) -> datetime | None: ...

    def keep_visitor_alive(self, visitor_id: str, now: datetime, until: datetime) -> bool: ...

    # saved events
    def save_event(self, visitor_id: str, event_id: str, now: datetime) -> bool: ...

    def remove_saved_event(self, visitor_id: str, event_id: str) -> bool: ...

    def saved_events(self, visitor_id: str) -> list[Event]: ...

    def is_saved(self, visitor_id: str, event_id: str) -> bool: ...

    # registrations
    def create_registration(self, registration: Registration) -> None: ...

    def get_registration(self, registration_id: str, for_update: bool = False
                         ) -> Registration | None: ...

    def active_registration(self, visitor_id: str, event_id: str) -> Registration | None: ...

    def registration_check(self, visitor_id: str, event_id: str, email: str
                           ) -> RegistrationCheck: ...

    def visitor_registrations(self, visitor_id: str) -> list[Registration]: ...

    def registrations_starting(self, after: datetime, before: datetime
                               ) -> list[Registration]: ...

    def cancel_registration(self, registration_id: str, now: datetime) -> None: ...

    # the waitlist (`storage.waitlist`)
    def join_waitlist(self, entry: WaitlistEntry) -> None:
        """Put a person at the end of an event's line (inside `transaction()`, the event
        locked, after checking they may wait)."""
        ...

    def waitlist_entry(self, entry_id: str, for_update: bool = False) -> WaitlistEntry | None:
        """One entry, or None (with `for_update`, locked until the end of the transaction
        reading it)."""
        ...

    def live_waitlist_entry(self, visitor_id: str, event_id: str) -> WaitlistEntry | None:
        """The visitor's entry waiting or offered for the event, if any, with its position."""
        ...

    def visitor_waitlist(self, visitor_id: str) -> list[WaitlistEntry]:
        """The visitor's entries waiting or offered, soonest event first, with positions."""
        ...

    def event_waitlist(self, event_id: str) -> list[WaitlistEntry]:
        """The event's entries waiting or offered, in the order they joined."""
        ...

    def end_waitlist_entry(self, entry_id: str, state: str, now: datetime) -> bool:
        """End a live entry as accepted, declined or left; False when it had ended."""
        ...

    def pass_on_seats(self, event_id: str, now: datetime, offer_ends_at: datetime | None
                      ) -> list[WaitlistEntry]:
        """Expire the event's offers that ended by `now`, then offer each seat free to the
        first one waiting, held until `offer_ends_at` (None: offer nothing); the new offers.
        Call inside `transaction()` with the event locked."""
        ...

    def events_waited_for(self, now: datetime) -> list[str]:
        """The events still to start after `now` where someone waits or holds an offer."""
        ...

    # confirmations
    def create_confirmation(self, confirmation: Confirmation) -> None: ...

    def get_confirmation(self, token_hash: str, for_update: bool = False
                         ) -> Confirmation | None: ...

    def use_confirmation(self, token_hash: str, now: datetime) -> None: ...

    def pending_confirmations(self, visitor_id: str, now: datetime) -> list[Confirmation]: ...

    # calendar feeds
    def set_calendar_feed(self, visitor_id: str, token_hash: str, now: datetime) -> None: ...

    def stop_calendar_feed(self, visitor_id: str) -> bool: ...

    def calendar_feed_owner(self, token_hash: str) -> str | None: ...

    def calendar_feed_since(self, visitor_id: str) -> datetime | None: ...

    # agent connections
    def create_agent_connection(self, connection: AgentConnection, token_hash: str) -> None: ...

    def agent_connection(self, token_hash: str) -> AgentConnection | None: ...

    def visitor_agent_connections(self, visitor_id: str) -> list[AgentConnection]: ...

    def agent_connection_used(self, connection_id: str, now: datetime) -> None: ...

    def revoke_agent_connection(self, visitor_id: str, connection_id: str) -> bool: ...

    # OAuth clients, codes and tokens (`storage.oauth`)
    def keep_oauth_client(self, client: OAuthClient) -> None: ...

    def oauth_client(self, client_id: str) -> OAuthClient | None: ...

    def create_oauth_code(self, code: OAuthCode, now: datetime) -> None: ...

    def use_oauth_code(self, code_hash: str, now: datetime) -> OAuthCode | None:
        """Spend a code still good at `now` (atomic); a code spent before ends the
        connection it made."""
        ...

    def grant_oauth_connection(self, connection: AgentConnection, unusable_hash: str,
                               code_hash: str, tokens: OAuthTokens) -> None: ...

    def add_oauth_tokens(self, tokens: OAuthTokens) -> None: ...

    def oauth_access(self, access_hash: str, now: datetime
                     ) -> tuple[AgentConnection, str] | None: ...

    def spend_refresh_token(self, refresh_hash: str, now: datetime) -> OAuthTokens | None:
        """Spend a refresh token (atomic); one spent before ends its connection."""
        ...

    # carried results
    def keep_carried_result(self, key_hash: str, body: str, expires_at: datetime,
                            now: datetime) -> None:
        """Keep a result (JSON) under the hash of its key until `expires_at`, and drop every
        kept result that expired by `now`."""
        ...

    def take_carried_result(self, key_hash: str, now: datetime) -> str | None:
        """The result kept under this key hash, deleted as it is read (a second take gets
        None); None too when there is none or it expired by `now`."""
        ...

    # activity
    def record_activity(self, entry: Activity) -> None: ...

    def recent_activity(self, visitor_id: str, limit: int) -> list[Activity]: ...

    # the outbox (mail waiting to be sent: `storage.outbox`)
    def queue_mail(self, dedupe_key: str, recipient: str, kind: str, language: str,
                   payload: dict[str, Any], now: datetime) -> bool:
        """Queue a mail, due at once; inside a `transaction()` it commits with the change it
        reports. False (nothing written) when a mail with this key was queued before."""
        ...

    def claim_mail(self, now: datetime, lease: timedelta, limit: int) -> list[OutboxMail]:
        """Take up to `limit` due mails for one sender until `now + lease`, atomically: no
        other sender gets them until they are marked, released or their lease runs out."""
        ...

    def mail_sent(self, mail: OutboxMail, now: datetime) -> bool:
        """Mark a claimed mail sent; False when its claim was lost (the lease ran out)."""
        ...

    def mail_failed(self, mail: OutboxMail, reason: str, retry_at: datetime | None) -> bool:
        """Note why a claimed mail could not be sent: tried again from `retry_at`, or never
        (None: failed for good); False when its claim was lost."""
        ...

    def release_mail(self, mail: OutboxMail) -> bool:
        """Give back a claimed mail not tried (a sender stopping): due again at once, the
        claim not counted as an attempt; False when its claim was lost."""
        ...

    def failed_mail(self) -> list[OutboxMail]:
        """Every mail that failed for good, oldest first."""
        ...

    def get_mail(self, dedupe_key: str) -> OutboxMail | None:
        """The mail queued under this key, or None."""
        ...

    # accounts (people who signed in: `storage.accounts`)
    def create_sign_in_link(self, token_hash: str, email: str, now: datetime,
                            expires_at: datetime) -> None: ...

    def sign_in_link_email(self, token_hash: str, now: datetime) -> str | None: ...

    def use_sign_in_link(self, token_hash: str, now: datetime) -> str | None:
        """Spend a link still good at `now`: its address, or None (atomic)."""
        ...

    def account_for(self, email: str, account_id: str, visitor_id: str, now: datetime
                    ) -> Account: ...

    def start_session(self, account: Account, id_hash: str, now: datetime,
                      ends_by: datetime, joining: str | None) -> None: ...

    def session_account(self, id_hash: str) -> Account | None: ...

    def session_seen(self, id_hash: str, now: datetime) -> None: ...

    def end_session(self, id_hash: str) -> None: ...

    def end_every_session(self, account_id: str) -> int: ...

    def adopt_registration(self, registration_id: str, visitor_id: str) -> bool: ...

    def forget_account(self, account: Account, now: datetime) -> list[str]:
        """Delete an account and its owner's data: upcoming seats given back, registrations
        without name or address (counted still), the rest deleted; one transaction. Not while
        it is the only owner of an organization: the names of those come back instead."""
        ...

    def anonymize_attendees(self, ended_before: datetime) -> int:
        """Erase the name and address of every attendee of an event that ended before
        `ended_before` (registrations stay, counted); how many were erased."""
        ...

    # organizers (`storage.organizers`)
    def create_organization(self, organization: Organization, owner_id: str) -> None:
        """Keep a new organization with its first owner and its first audit line; one
        transaction."""
        ...

    def add_member(self, organization_id: str, account_id: str, role: str,
                   now: datetime) -> None: ...

    def get_organization(self, organization_id: str) -> Organization | None: ...

    def membership(self, organization_id: str, account_id: str) -> Membership | None: ...

    def account_memberships(self, account_id: str) -> list[Membership]: ...

    def organization_members(self, organization_id: str) -> list[Membership]: ...

    def create_invitation(self, invitation: Invitation, token_hash: str) -> None: ...

    def invitation(self, token_hash: str) -> Invitation | None: ...

    def open_invitations(self, organization_id: str, now: datetime) -> list[Invitation]: ...

    def revoke_invitation(self, organization_id: str, invitation_id: str,
                          now: datetime) -> bool: ...

    def accept_invitation(self, token_hash: str, account_id: str, now: datetime
                          ) -> Invitation | None:
        """Spend an open invitation and give the account its role (atomic): the invitation,
        or None when it was not open."""
        ...

    def change_membership(self, organization_id: str, account_id: str,
                          role: str | None) -> str:
        """Give a member another role (None: remove them) unless the organization would be
        left without an owner; "changed", "last_owner" or "not_member" (one transaction,
        the organization locked)."""
        ...

    def set_event_organization(self, event_id: str, organization_id: str | None) -> bool:
        """Say which organization runs an event (None: the site's own); False if there is
        no such event."""
        ...

    def event_organization(self, event_id: str) -> str | None: ...

    def public_organization_events(self, organization_id: str, limit: int) -> list[Event]:
        """The latest `limit` events the organization runs, the latest start first."""
        ...

    def event_attendees(self, event_id: str) -> list[Registration]:
        """The event's active registrations, the earliest first."""
        ...

    def cancel_event(self, event_id: str, reason: str, now: datetime) -> bool:
        """Cancel an event not cancelled yet and end its waitlist (atomic); False when there
        is no such event or it was cancelled already."""
        ...

    def listed_organizations(self, changes: Collection[str], limit: int
                             ) -> list[tuple[str, datetime]]:
        """Up to `limit` organizations with a published event, with when their public page last
        changed (their last audit line of a `changes` action on a published event, else their
        start), the latest changed first."""
        ...

    def record_audit(self, entry: AuditEntry) -> None: ...

    def audit_log(self, organization_id: str, limit: int) -> list[AuditEntry]: ...

    # the door (check-ins)
    def event_registration_ids(self, event_id: str) -> list[str]: ...

    def other_registration_ids(self, organization_id: str, event_id: str) -> dict[str, str]:
        """The registrations for the organization's other events: id → event id."""
        ...

    def door_attendee(self, registration_id: str) -> DoorAttendee | None: ...

    def check_in(self, registration_id: str, event_id: str, account_id: str,
                 at: datetime) -> bool:
        """Check an active registration of the event in, once (one statement: of two at once,
        one is refused); False when it was already, or is not an active one of the event."""
        ...

    def door_counts(self, event_id: str) -> tuple[int, int]:
        """(checked in, registered) of the event's active registrations."""
        ...

    # attendees (`storage.attendees`)
    def attendee_page(self, event_id: str, text: str | None, limit: int,
                      offset: int) -> AttendeePage:
        """The event's attendees whose name or address holds `text` (None: all), in the order
        they registered, a page of them; and how many match in all."""
        ...

    def attendee_counts(self, event_id: str) -> AttendeeCounts: ...

    def attendee_batch(self, event_id: str, after: Attendee | None,
                       limit: int) -> list[Attendee]:
        """Up to `limit` of the event's attendees registered after `after` (None: from the
        first), in the order they registered: one read."""
        ...

    def attendee_batches(self, event_id: str, size: int) -> Iterator[list[Attendee]]:
        """Every attendee of the event, in the order they registered, `size` at a time: one
        read per batch, never the whole list at once."""
        ...

    # an organization's own events (`storage.event_drafts`)
    def create_event_draft(self, event: Event, organization_id: str, account_id: str,
                           now: datetime) -> None: ...

    def organizer_event(self, event_id: str, for_update: bool = False
                        ) -> OrganizerEvent | None:
        """An organization's event, draft or published (seats counted), or None."""
        ...

    def save_event_draft(self, event: Event, version: int, account_id: str,
                         now: datetime) -> bool:
        """Write a draft still at `version` (atomic); False when another save came first."""
        ...

    def save_published_event(self, event: Event, version: int) -> bool:
        """Write a published event still at `version`, its search terms with it (one
        transaction); False when another save came first."""
        ...

    def publish_event_draft(self, draft: OrganizerEvent) -> None:
        """Move a draft into the published events, search index included (one
        transaction)."""
        ...

    def record_event_edit(self, event_id: str, version: int, changed: Sequence[str],
                          account_id: str, now: datetime) -> None: ...

    def event_edits_since(self, event_id: str, version: int) -> list[str]: ...

    def organization_events(self, organization_id: str, now: datetime, past_shown: int
                            ) -> tuple[list[OrganizerEvent], int]:
        """The organization's drafts and published events (seats counted), the latest start
        first, but of those ended by `now` only the latest `past_shown`; and how many have
        ended."""
        ...

    def account_organization_events(self, account_id: str, now: datetime, past_shown: int
                                    ) -> tuple[list[OrganizerEvent], dict[str, int]]:
        """The drafts and published events (seats counted) of every organization the account
        is in, the latest start first, but of those ended by `now` only each organization's
        latest `past_shown`; and how many have ended, by organization: one read, whatever
        the number of organizations."""
        ...

    def past_organization_events(self, organization_id: str, now: datetime, limit: int,
                                 offset: int) -> tuple[list[OrganizerEvent], int]:
        """A page of the organization's published events ended by `now` (seats counted), the
        latest start first, and how many have ended in all."""
        ...

    def active_attendees(self, event_id: str) -> list[Registration]: ...

    # events' cover pictures (`storage.covers`)
    def set_event_cover(self, cover: EventCover, images: Mapping[int, bytes],
                        account_id: str) -> None:
        """Keep the event's cover with its renditions by width, in place of any it had."""
        ...

    def event_cover(self, event_id: str, published_only: bool = False) -> EventCover | None:
        """The event's cover without its pictures (`published_only`: none for a draft)."""
        ...

    def cover_image(self, event_id: str, width: int, published_only: bool = False
                    ) -> CoverImage | None:
        """One rendition of the event's cover (`published_only`: none for a draft)."""
        ...

    def remove_event_cover(self, event_id: str) -> bool: ...

    # organizations' logos (`storage.covers`)
    def set_organization_logo(self, logo: OrganizationLogo, images: Mapping[int, bytes],
                              account_id: str) -> None:
        """Keep the organization's logo with its renditions by width, in place of any."""
        ...

    def organization_logo(self, organization_id: str) -> OrganizationLogo | None:
        """The organization's logo without its pictures, or None."""
        ...

    def logo_image(self, organization_id: str, width: int) -> CoverImage | None:
        """One rendition of the organization's logo, or None."""
        ...

    def remove_organization_logo(self, organization_id: str) -> bool: ...

    # housekeeping
    def prune(self, confirmations_before: datetime, activity_before: datetime,
              visitors_before: datetime, sent_mail_before: datetime,
              sessions_seen_before: datetime, sessions_started_before: datetime
              ) -> dict[str, int]: ...

