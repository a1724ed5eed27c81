"""Accounts: people who signed in with a link mailed to their address (no passwords).

An account is an e-mail address and a visitor of its own: while its owner is signed in, the
browser acts as that visitor, so saved events, registrations, confirmations and agent
connections are kept for accounts exactly as for anonymous visitors. Signing in brings in what
the browser did before (its anonymous visitor's rows) and every registration made with the
account's address, from any browser: a registration belongs to the address it was made with.

A sign-in link's token and a session's id are stored only as hashes. Written once for both
backends on the primitives `records.Records` names; `Records` inherits this class.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from datetime import timedelta
from typing import TYPE_CHECKING
from typing import Any

from . import Account
from .dialect import Dialect
from .dialect import guarded

Row = Mapping[str, Any]

# How long a link is kept after it expired (to be told apart from one that never was).
LINKS_KEPT = timedelta(days=1)

CREATE_SIGN_IN_LINK = (
    "INSERT INTO sign_in_links (token_hash, email, created_at, expires_at) "
    "VALUES (:token_hash, :email, :now, :expires_at)")
# Links expired long ago are of no use, not even to say "this link has expired".
PRUNE_SIGN_IN_LINKS = "DELETE FROM sign_in_links WHERE expires_at < :before"
SIGN_IN_LINK_EMAIL = ("SELECT email FROM sign_in_links WHERE token_hash = :token_hash "
                      "AND used_at IS NULL AND expires_at > :now")
# Taking a link and checking it is one statement: two requests with one link sign in once.
USE_SIGN_IN_LINK = ("UPDATE sign_in_links SET used_at = :now WHERE token_hash = :token_hash "
                    "AND used_at IS NULL AND expires_at > :now RETURNING email")
ACCOUNT_BY_EMAIL = "SELECT * FROM accounts WHERE email = :email"
CREATE_ACCOUNT = ("INSERT INTO accounts (id, email, visitor_id, created_at) "
                  "VALUES (:id, :email, :visitor_id, :now)")
CREATE_VISITOR = "INSERT INTO visitors (id, created_at, expires_at) VALUES (:id, :now, :until)"
# An account's visitor outlives every session of it (`sign_in` gives the moment).
OUTLIVE_SESSIONS = ("UPDATE visitors SET expires_at = :until "
                    "WHERE id = :id AND expires_at < :until")
CREATE_SESSION = ("INSERT INTO account_sessions (id_hash, account_id, created_at, seen_at) "
                  "VALUES (:id_hash, :account_id, :now, :now)")
SESSION_ACCOUNT = ("SELECT a.*, s.created_at AS signed_in_at, s.seen_at FROM account_sessions s "
                   "JOIN accounts a ON a.id = s.account_id WHERE s.id_hash = :id_hash")
SESSION_SEEN = "UPDATE account_sessions SET seen_at = :now WHERE id_hash = :id_hash"
END_SESSION = "DELETE FROM account_sessions WHERE id_hash = :id_hash"
END_EVERY_SESSION = "DELETE FROM account_sessions WHERE account_id = :account_id"

# What a browser did before signing in joins the account (`:from` its anonymous visitor,
# `:to` the account's). A row the account already has the like of stays where it was: a
# second active registration for one event, a second calendar feed.
ACTIVE_ALREADY = ("state = 'active' AND EXISTS (SELECT 1 FROM registrations mine "
                  "WHERE mine.visitor_id = :to AND mine.event_id = registrations.event_id "
                  "AND mine.state = 'active')")
JOIN_ACCOUNT = (
    "INSERT INTO saved_events (visitor_id, event_id, saved_at) SELECT :to, event_id, saved_at "
    "FROM saved_events WHERE visitor_id = :from ON CONFLICT DO NOTHING",
    "DELETE FROM saved_events WHERE visitor_id = :from",
    # Every registration made with the account's address, by this browser or any other.
    "UPDATE registrations SET visitor_id = :to WHERE (visitor_id = :from "
    f"OR email = :email) AND visitor_id <> :to AND NOT ({ACTIVE_ALREADY})",
    # A place in line joins too, unless the account already waits for that event.
    "UPDATE waitlist SET visitor_id = :to WHERE visitor_id = :from AND NOT EXISTS "
    "(SELECT 1 FROM waitlist mine WHERE mine.visitor_id = :to "
    "AND mine.event_id = waitlist.event_id AND mine.state IN ('waiting', 'offered'))",
    "UPDATE confirmations SET visitor_id = :to WHERE visitor_id = :from",
    "UPDATE agent_connections SET visitor_id = :to WHERE visitor_id = :from",
    "UPDATE activity SET visitor_id = :to WHERE visitor_id = :from",
    "UPDATE calendar_feeds SET visitor_id = :to WHERE visitor_id = :from AND NOT EXISTS "
    "(SELECT 1 FROM calendar_feeds mine WHERE mine.visitor_id = :to)",
)

# A registration joins the visitor of a browser that holds its manage link (`adopt`).
ADOPT_REGISTRATION = ("UPDATE registrations SET visitor_id = :to WHERE id = :id "
                      f"AND NOT ({ACTIVE_ALREADY})")

# Deleting an account (`forget_account`): seats of events still to come are given back, every
# registration made by it or with its address keeps no name or address (the counts stay), and
# everything else of it goes, mail to the address included (but what a sender holds now).
# The organizations an account is the only owner of, locked first (where rows are locked) so
# that two owners deleting their accounts at once cannot each leave the other the last.
OWNED_ORGANIZATIONS = ("SELECT id FROM organizations WHERE id IN (SELECT organization_id "
                       "FROM memberships WHERE account_id = :account AND role = 'owner') "
                       "ORDER BY id")
SOLE_OWNER_OF = (
    "SELECT o.name FROM organizations o JOIN memberships m ON m.organization_id = o.id "
    "WHERE m.account_id = :account AND m.role = 'owner' AND NOT EXISTS ("
    "SELECT 1 FROM memberships other WHERE other.organization_id = o.id "
    "AND other.role = 'owner' AND other.account_id <> :account) ORDER BY o.created_at, o.id")
FORGET_ACCOUNT = (
    "UPDATE registrations SET state = 'cancelled', cancelled_at = :now "
    "WHERE (visitor_id = :visitor OR email = :email) AND state = 'active' "
    "AND event_id IN (SELECT id FROM events WHERE starts_at > :now)",
    "UPDATE registrations SET attendee_name = '', email = '' "
    "WHERE visitor_id = :visitor OR email = :email",
    *(f"DELETE FROM {table} WHERE visitor_id = :visitor" for table in (
        "saved_events", "confirmations", "waitlist", "agent_connections", "calendar_feeds",
        "activity")),
    "DELETE FROM account_sessions WHERE account_id = :account",
    # Its places in organizations go; the audit log names it by id only, and keeps its lines.
    "DELETE FROM memberships WHERE account_id = :account",
    "DELETE FROM invitations WHERE email = :email",
    "DELETE FROM sign_in_links WHERE email = :email",
    "DELETE FROM outbox WHERE recipient = :email AND state <> 'sending'",
    "DELETE FROM accounts WHERE id = :account",
)


def account_of(row: Row, dialect: Dialect) -> Account:
    """An account from its row (with its session's times, when read through one)."""
    moment = dialect.moment_out
    return Account(id=row["id"], email=row["email"], visitor_id=row["visitor_id"],
                   created_at=moment(row["created_at"]),
                   signed_in_at=moment(row["signed_in_at"]) if "signed_in_at" in row else None,
                   seen_at=moment(row["seen_at"]) if "seen_at" in row else None)


class AccountRecords:
    """The accounts' storage methods, on the primitives a backend gives `records.Records`."""

    dialect: Dialect

    if TYPE_CHECKING:  # what the backend provides (`records.Records` says what each does)
        def transaction(self) -> AbstractContextManager[Any]: ...

        def _rows(self, sql: str, params: dict[str, Any]) -> Sequence[Row]: ...

        def _one(self, sql: str, params: dict[str, Any]) -> Row | None: ...

        def _run(self, sql: str, params: dict[str, Any]) -> int: ...

        def _returning(self, sql: str, params: dict[str, Any]) -> Row | None: ...

    @guarded
    def create_sign_in_link(self, token_hash: str, email: str, now: datetime,
                            expires_at: datetime) -> None:
        """Keep a new sign-in link for `email` until `expires_at` (and forget links that
        expired a day before `now`)."""
        moment_in = self.dialect.moment_in
        self._run(PRUNE_SIGN_IN_LINKS, {"before": moment_in(now - LINKS_KEPT)})
        self._run(CREATE_SIGN_IN_LINK, {"token_hash": token_hash, "email": email,
                                        "now": moment_in(now),
                                        "expires_at": moment_in(expires_at)})

    @guarded
    def sign_in_link_email(self, token_hash: str, now: datetime) -> str | None:
        """The address of a link still good at `now` (unused, unexpired); None otherwise."""
        row = self._one(SIGN_IN_LINK_EMAIL, {"token_hash": token_hash,
                                             "now": self.dialect.moment_in(now)})
        return str(row["email"]) if row else None

    @guarded
    def use_sign_in_link(self, token_hash: str, now: datetime) -> str | None:
        """Spend a link: its address if it was still good at `now`, else None. Atomic: of
        two requests with one link, one gets the address."""
        row = self._returning(USE_SIGN_IN_LINK, {"token_hash": token_hash,
                                                 "now": self.dialect.moment_in(now)})
        return str(row["email"]) if row else None

    @guarded
    def account_for(self, email: str, account_id: str, visitor_id: str, now: datetime
                    ) -> Account:
        """The account of `email`, made now (with these ids) if it has none yet. Call inside
        a `transaction()`."""
        row = self._one(ACCOUNT_BY_EMAIL, {"email": email})
        if row is None:
            moment = self.dialect.moment_in(now)
            self._run(CREATE_VISITOR, {"id": visitor_id, "now": moment, "until": moment})
            self._run(CREATE_ACCOUNT, {"id": account_id, "email": email,
                                       "visitor_id": visitor_id, "now": moment})
            row = self._one(ACCOUNT_BY_EMAIL, {"email": email})
            assert row is not None
        return account_of(row, self.dialect)

    @guarded
    def start_session(self, account: Account, id_hash: str, now: datetime,
                      ends_by: datetime, joining: str | None) -> None:
        """Start a signed-in session; the account's visitor is kept at least until
        `ends_by`, and what visitor `joining` did (the browser before it signed in) joins the
        account, with every registration made with its address. Call inside a
        `transaction()`."""
        moment_in = self.dialect.moment_in
        self._run(OUTLIVE_SESSIONS, {"id": account.visitor_id, "until": moment_in(ends_by)})
        self._run(CREATE_SESSION, {"id_hash": id_hash, "account_id": account.id,
                                   "now": moment_in(now)})
        for statement in JOIN_ACCOUNT:
            self._run(statement, {"from": joining or "", "to": account.visitor_id,
                                  "email": account.email})

    @guarded
    def session_account(self, id_hash: str) -> Account | None:
        """The account a session belongs to, with when it signed in and was last seen; None
        for a session that ended (signed out, or never was)."""
        row = self._one(SESSION_ACCOUNT, {"id_hash": id_hash})
        return account_of(row, self.dialect) if row else None

    @guarded
    def session_seen(self, id_hash: str, now: datetime) -> None:
        """Note that the session was used at `now` (it ends after a while without use)."""
        self._run(SESSION_SEEN, {"id_hash": id_hash, "now": self.dialect.moment_in(now)})

    @guarded
    def end_session(self, id_hash: str) -> None:
        """Sign one browser out."""
        self._run(END_SESSION, {"id_hash": id_hash})

    @guarded
    def end_every_session(self, account_id: str) -> int:
        """Sign the account out on every device; how many sessions ended."""
        return self._run(END_EVERY_SESSION, {"account_id": account_id})

    @guarded
    def adopt_registration(self, registration_id: str, visitor_id: str) -> bool:
        """Make a registration this visitor's: its manage link was followed in their browser
        (the mailbox it was sent to is the owner's proof, as for signing in). False when the
        visitor already holds an active registration for that event."""
        return self._run(ADOPT_REGISTRATION, {"id": registration_id, "to": visitor_id}) == 1

    @guarded
    def forget_account(self, account: Account, now: datetime) -> list[str]:
        """Delete an account and what it holds of its owner (`FORGET_ACCOUNT`), at once,
        unless it is the only owner of an organization (which would be left with nobody to
        run it): then nothing changes, and the names of those organizations come back."""
        with self.transaction():
            self._rows(OWNED_ORGANIZATIONS + self.dialect.locked(in_transaction=True),
                       {"account": account.id})
            sole = [row["name"] for row in self._rows(SOLE_OWNER_OF, {"account": account.id})]
            if sole:
                return sole
            for statement in FORGET_ACCOUNT:
                self._run(statement, {"visitor": account.visitor_id, "email": account.email,
                                      "account": account.id,
                                      "now": self.dialect.moment_in(now)})
        return []
