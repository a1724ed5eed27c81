"""Organizations, who belongs to them in which role, and their audit log.

An organization is made with its first owner in one transaction, so none is ever without
one. The audit log is append-only: this module has no statement that changes or deletes a
line of it, and its lines name accounts, events and targets by id, never a person's name or
address. Written once for both backends on the primitives `records.Records` names;
`Records` inherits this class.
"""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING
from typing import Any

from . import AuditEntry
from . import Invitation
from . import Membership
from . import Organization
from .dialect import Dialect
from .dialect import guarded

Row = Mapping[str, Any]

CREATE_ORGANIZATION = ("INSERT INTO organizations (id, name, description, created_at) "
                       "VALUES (:id, :name, :description, :now)")
ADD_MEMBER = ("INSERT INTO memberships (organization_id, account_id, role, since) "
              "VALUES (:organization_id, :account_id, :role, :now)")
ORGANIZATION = "SELECT * FROM organizations WHERE id = :id"
MEMBERSHIP_COLUMNS = "o.*, m.account_id, m.role, m.since"
MEMBERSHIPS = "FROM memberships m JOIN organizations o ON o.id = m.organization_id"
MEMBERSHIP = (f"SELECT {MEMBERSHIP_COLUMNS} {MEMBERSHIPS} "
              "WHERE m.organization_id = :organization_id AND m.account_id = :account_id")
# In the order they were joined (the same on both backends, whatever a name's collation).
ACCOUNT_MEMBERSHIPS = (f"SELECT {MEMBERSHIP_COLUMNS} {MEMBERSHIPS} "
                       "WHERE m.account_id = :account_id ORDER BY m.since, o.id")
MEMBERS = (f"SELECT {MEMBERSHIP_COLUMNS}, a.email {MEMBERSHIPS} "
           "JOIN accounts a ON a.id = m.account_id "
           "WHERE m.organization_id = :organization_id ORDER BY m.since, m.account_id")
CREATE_INVITATION = (
    "INSERT INTO invitations (id, token_hash, organization_id, email, role, invited_by, "
    "created_at, expires_at) VALUES (:id, :token_hash, :organization_id, :email, :role, "
    ":invited_by, :created_at, :expires_at)")
INVITATION_COLUMNS = ("SELECT i.*, o.name AS organization_name FROM invitations i "
                      "JOIN organizations o ON o.id = i.organization_id")
INVITATION = f"{INVITATION_COLUMNS} WHERE i.token_hash = :token_hash"
OPEN_INVITATIONS = (f"{INVITATION_COLUMNS} WHERE i.organization_id = :organization_id "
                    "AND i.accepted_at IS NULL AND i.revoked_at IS NULL "
                    "AND i.expires_at > :now ORDER BY i.created_at, i.id")
REVOKE_INVITATION = ("UPDATE invitations SET revoked_at = :now WHERE id = :id "
                     "AND organization_id = :organization_id AND accepted_at IS NULL "
                     "AND revoked_at IS NULL AND expires_at > :now")
# Taking an invitation and checking it is one statement: two requests with one link join once.
USE_INVITATION = ("UPDATE invitations SET accepted_at = :now WHERE token_hash = :token_hash "
                  "AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > :now "
                  "RETURNING id")
# Someone already in the organization keeps the role they have, unless invited to own it:
# ownership passes only to one who accepts it.
JOIN_ORGANIZATION = (f"{ADD_MEMBER} ON CONFLICT (organization_id, account_id) DO UPDATE "
                     "SET role = excluded.role WHERE excluded.role = 'owner'")
# What keeps two owners from each leaving the other the last (`change_membership`).
LOCK_ORGANIZATION = "SELECT id FROM organizations WHERE id = :id"
OWNERS = ("SELECT count(*) AS owners FROM memberships "
          "WHERE organization_id = :organization_id AND role = 'owner'")
SET_ROLE = ("UPDATE memberships SET role = :role "
            "WHERE organization_id = :organization_id AND account_id = :account_id")
REMOVE_MEMBER = ("DELETE FROM memberships "
                 "WHERE organization_id = :organization_id AND account_id = :account_id")
RECORD_AUDIT = ("INSERT INTO audit_log (at, organization_id, account_id, action, event_id, "
                "target, detail) VALUES (:at, :organization_id, :account_id, :action, "
                ":event_id, :target, :detail)")
SET_EVENT_ORGANIZATION = "UPDATE events SET organization_id = :organization_id WHERE id = :id"
# An organization runs its published events and its drafts (`storage.event_drafts`).
EVENT_ORGANIZATION = ("SELECT coalesce((SELECT organization_id FROM events WHERE id = :id), "
                      "(SELECT organization_id FROM event_drafts WHERE id = :id)) "
                      "AS organization_id")
# The organizations with at least one published event (a draft is never public), each with
# when its public page last changed: the latest audit line of the `changes` actions about one
# of its published events, else when the organization started. The latest changed first.
LISTED_ORGANIZATIONS = (
    "SELECT o.id, coalesce((SELECT max(a.at) FROM audit_log a JOIN events e "
    "ON e.id = a.event_id WHERE a.organization_id = o.id AND e.organization_id = o.id "
    "AND a.action IN ({changes})), o.created_at) AS changed_at FROM organizations o "
    "WHERE EXISTS (SELECT 1 FROM events e WHERE e.organization_id = o.id) "
    "ORDER BY changed_at DESC, o.id LIMIT :limit")
# Each line with the title its event has now, published or a draft, if the organization still
# runs it (the log keeps ids only; a title changes, and is not the log's to keep).
AUDIT_LOG = ("SELECT a.*, coalesce(e.title, d.title) AS event_title FROM audit_log a "
             "LEFT JOIN events e ON e.id = a.event_id "
             "AND e.organization_id = a.organization_id "
             "LEFT JOIN event_drafts d ON d.id = a.event_id "
             "AND d.organization_id = a.organization_id "
             "WHERE a.organization_id = :organization_id "
             "ORDER BY a.at DESC, a.id DESC LIMIT :limit")


def organization_of(row: Row, dialect: Dialect) -> Organization:
    """An organization from its row."""
    return Organization(id=row["id"], name=row["name"], description=row["description"],
                        created_at=dialect.moment_out(row["created_at"]))


def membership_of(row: Row, dialect: Dialect) -> Membership:
    """A membership from a row of `MEMBERSHIP_COLUMNS` (and the member's `email`, if read)."""
    return Membership(organization=organization_of(row, dialect), account_id=row["account_id"],
                      role=row["role"], since=dialect.moment_out(row["since"]),
                      email=row.get("email"))


def invitation_of(row: Row, dialect: Dialect) -> Invitation:
    """An invitation from a row of `INVITATION_COLUMNS`."""
    moment = dialect.moment_out
    return Invitation(id=row["id"], organization_id=row["organization_id"], email=row["email"],
                      role=row["role"], invited_by=row["invited_by"],
                      created_at=moment(row["created_at"]), expires_at=moment(row["expires_at"]),
                      accepted_at=moment(row["accepted_at"]) if row["accepted_at"] else None,
                      revoked_at=moment(row["revoked_at"]) if row["revoked_at"] else None,
                      organization_name=row["organization_name"])


class OrganizerRecords:
    """The organizers' storage methods, on the primitives a backend gives `records.Records`."""

    dialect: Dialect

    if TYPE_CHECKING:  # what the backend provides (`records.Records` says what each does)
        def transaction(self) -> AbstractContextManager[Any]: ...

        def _rows(self, sql: str, params: dict[str, Any]) -> Sequence[Row]: ...

        def _one(self, sql: str, params: dict[str, Any]) -> Row | None: ...

        def _run(self, sql: str, params: dict[str, Any]) -> int: ...

        def _returning(self, sql: str, params: dict[str, Any]) -> Row | None: ...

        def _in_transaction(self) -> bool: ...

    @guarded
    def create_organization(self, organization: Organization, owner_id: str) -> None:
        """Keep a new organization with `owner_id` as its owner, and say so in its audit log
        (one transaction: no organization is ever without an owner)."""
        now = self.dialect.moment_in(organization.created_at)
        with self.transaction():
            self._run(CREATE_ORGANIZATION, {"id": organization.id, "name": organization.name,
                                            "description": organization.description,
                                            "now": now})
            self._run(ADD_MEMBER, {"organization_id": organization.id,
                                   "account_id": owner_id, "role": "owner", "now": now})
            self.record_audit(AuditEntry(
                at=organization.created_at, organization_id=organization.id,
                account_id=owner_id, action="create_organization", target=owner_id))

    @guarded
    def add_member(self, organization_id: str, account_id: str, role: str,
                   now: datetime) -> None:
        """Give an account a role in an organization (it had none there)."""
        self._run(ADD_MEMBER, {"organization_id": organization_id, "account_id": account_id,
                               "role": role, "now": self.dialect.moment_in(now)})

    @guarded
    def get_organization(self, organization_id: str) -> Organization | None:
        """An organization by id, or None."""
        row = self._one(ORGANIZATION, {"id": organization_id})
        return organization_of(row, self.dialect) if row else None

    @guarded
    def membership(self, organization_id: str, account_id: str) -> Membership | None:
        """The account's membership of the organization, or None if it has none."""
        row = self._one(MEMBERSHIP, {"organization_id": organization_id,
                                     "account_id": account_id})
        return membership_of(row, self.dialect) if row else None

    @guarded
    def account_memberships(self, account_id: str) -> list[Membership]:
        """Every organization the account belongs to, in the order it joined them."""
        return [membership_of(row, self.dialect)
                for row in self._rows(ACCOUNT_MEMBERSHIPS, {"account_id": account_id})]

    @guarded
    def organization_members(self, organization_id: str) -> list[Membership]:
        """Everyone in the organization, with their address, the earliest first."""
        return [membership_of(row, self.dialect)
                for row in self._rows(MEMBERS, {"organization_id": organization_id})]

    @guarded
    def create_invitation(self, invitation: Invitation, token_hash: str) -> None:
        """Keep a new invitation (its token only as `token_hash`)."""
        moment_in = self.dialect.moment_in
        self._run(CREATE_INVITATION, {
            "id": invitation.id, "token_hash": token_hash,
            "organization_id": invitation.organization_id, "email": invitation.email,
            "role": invitation.role, "invited_by": invitation.invited_by,
            "created_at": moment_in(invitation.created_at),
            "expires_at": moment_in(invitation.expires_at)})

    @guarded
    def invitation(self, token_hash: str) -> Invitation | None:
        """The invitation whose link holds the token hashed to `token_hash`, or None."""
        row = self._one(INVITATION, {"token_hash": token_hash})
        return invitation_of(row, self.dialect) if row else None

    @guarded
    def open_invitations(self, organization_id: str, now: datetime) -> list[Invitation]:
        """The organization's invitations that can still be accepted, the oldest first."""
        return [invitation_of(row, self.dialect) for row in self._rows(
            OPEN_INVITATIONS, {"organization_id": organization_id,
                               "now": self.dialect.moment_in(now)})]

    @guarded
    def revoke_invitation(self, organization_id: str, invitation_id: str,
                          now: datetime) -> bool:
        """Revoke an open invitation of the organization; False when there was none."""
        return self._run(REVOKE_INVITATION, {"id": invitation_id,
                                             "organization_id": organization_id,
                                             "now": self.dialect.moment_in(now)}) == 1

    @guarded
    def accept_invitation(self, token_hash: str, account_id: str, now: datetime
                          ) -> Invitation | None:
        """Spend an open invitation and give the account its role there (one who is already a
        member keeps theirs); the invitation, or None when it was not open."""
        with self.transaction():
            if self._returning(USE_INVITATION, {"token_hash": token_hash,
                                                "now": self.dialect.moment_in(now)}) is None:
                return None
            found = self.invitation(token_hash)
            assert found is not None, "an invitation just spent is there"
            self._run(JOIN_ORGANIZATION, {"organization_id": found.organization_id,
                                          "account_id": account_id, "role": found.role,
                                          "now": self.dialect.moment_in(now)})
            return found

    @guarded
    def change_membership(self, organization_id: str, account_id: str,
                          role: str | None) -> str:
        """Give a member another role (None: remove them) unless the organization would be
        left without an owner: "changed", "last_owner" or "not_member"."""
        member = {"organization_id": organization_id, "account_id": account_id}
        with self.transaction():
            self._one(LOCK_ORGANIZATION + self.dialect.locked(self._in_transaction()),
                      {"id": organization_id})
            current = self.membership(organization_id, account_id)
            if current is None:
                return "not_member"
            if current.role == "owner" and role != "owner":
                owners = self._one(OWNERS, {"organization_id": organization_id})
                if owners is None or owners["owners"] <= 1:
                    return "last_owner"
            if role is None:
                self._run(REMOVE_MEMBER, member)
            else:
                self._run(SET_ROLE, {**member, "role": role})
            return "changed"

    @guarded
    def set_event_organization(self, event_id: str, organization_id: str | None) -> bool:
        """Say which organization runs an event (None: the site's own); False if there is no
        such event."""
        return self._run(SET_EVENT_ORGANIZATION,
                         {"id": event_id, "organization_id": organization_id}) > 0

    @guarded
    def event_organization(self, event_id: str) -> str | None:
        """The id of the organization that runs an event or holds it as a draft, or None (no
        such event, or the site's own)."""
        row = self._one(EVENT_ORGANIZATION, {"id": event_id})
        return row["organization_id"] if row else None

    @guarded
    def listed_organizations(self, changes: Collection[str], limit: int
                             ) -> list[tuple[str, datetime]]:
        """Up to `limit` organizations with a published event, each with when its public page
        last changed (its last audit line of a `changes` action on a published event, else its
        start), the latest changed first."""
        actions = {f"action_{number}": action for number, action in enumerate(changes)}
        assert actions, "an IN list names one action at least"
        sql = LISTED_ORGANIZATIONS.format(changes=", ".join(f":{name}" for name in actions))
        return [(row["id"], self.dialect.moment_out(row["changed_at"]))
                for row in self._rows(sql, {**actions, "limit": limit})]

    @guarded
    def record_audit(self, entry: AuditEntry) -> None:
        """Append a line to the organization's audit log."""
        self._run(RECORD_AUDIT, {"at": self.dialect.moment_in(entry.at),
                                 "organization_id": entry.organization_id,
                                 "account_id": entry.account_id, "action": entry.action,
                                 "event_id": entry.event_id, "target": entry.target,
                                 "detail": entry.detail})

    @guarded
    def audit_log(self, organization_id: str, limit: int) -> list[AuditEntry]:
        """The organization's latest audit lines, the newest first, each with the title its
        event has now (one read)."""
        moment_out = self.dialect.moment_out
        return [AuditEntry(at=moment_out(row["at"]), organization_id=row["organization_id"],
                           account_id=row["account_id"], action=row["action"],
                           event_id=row["event_id"], target=row["target"],
                           detail=row["detail"], event_title=row["event_title"])
                for row in self._rows(AUDIT_LOG, {"organization_id": organization_id,
                                                  "limit": limit})]
