"""The outbox: mail waiting to be sent, kept in the database beside the change it reports.

A caller queues a mail inside the `transaction()` that makes the change (a registration, a
sign-in request), so both commit or neither does; the delivery loop (`webapp.mail.delivery`)
sends it later, from another process. A mail's life:

    queued --claim--> sending --sent--> sent
       ^                 |  \\--failed for good--> failed
       |                 |
       +-- retry later --+   (or its lease runs out: the sender died; claimed again)

Claiming is atomic: one `UPDATE ... WHERE id IN (SELECT ... LIMIT) RETURNING` inside a
transaction, which on SQLite holds the write lock (BEGIN IMMEDIATE) and on PostgreSQL locks the
rows it picks, skipping those another sender holds (`Dialect.claiming`). A claim is a lease:
`claimed_until` passes and the mail is due again, so a sender killed mid-batch loses nothing.
Each claim counts an attempt, and marks name the attempt they close, so a sender whose lease
ran out (another sender has the mail now) changes nothing when it finally marks it.

Written once for both backends on the primitives `records.Records` names; `Records` inherits
this class.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from datetime import timedelta
from typing import TYPE_CHECKING
from typing import Any

from . import OutboxMail
from .dialect import Dialect
from .dialect import guarded

Row = Mapping[str, Any]

QUEUE_MAIL = (
    "INSERT INTO outbox (dedupe_key, recipient, kind, language, payload, next_attempt_at, "
    "created_at) VALUES (:dedupe_key, :recipient, :kind, :language, :payload, :now, :now) "
    "ON CONFLICT (dedupe_key) DO NOTHING")
# Due: queued and its time has come, or claimed by a sender whose lease ran out.
DUE_MAIL = ("SELECT id FROM outbox WHERE (state = 'queued' AND next_attempt_at <= :now) "
            "OR (state = 'sending' AND claimed_until <= :now) "
            "ORDER BY next_attempt_at, id LIMIT :limit")
CLAIM_MAIL = ("UPDATE outbox SET state = 'sending', attempts = attempts + 1, "
              "claimed_until = :until WHERE id IN ({due}) RETURNING *")
# Each mark closes one claim: the mail must still be the sender's, at the attempt it claimed.
HELD = "WHERE id = :id AND state = 'sending' AND attempts = :attempts"
MAIL_SENT = (f"UPDATE outbox SET state = 'sent', sent_at = :now, claimed_until = NULL, "
             f"last_error = NULL {HELD}")
MAIL_RETRIED = ("UPDATE outbox SET state = 'queued', next_attempt_at = :retry_at, "
                f"claimed_until = NULL, last_error = :reason {HELD}")
MAIL_FAILED = ("UPDATE outbox SET state = 'failed', claimed_until = NULL, "
               f"last_error = :reason {HELD}")
MAIL_RELEASED = ("UPDATE outbox SET state = 'queued', attempts = attempts - 1, "
                 f"claimed_until = NULL {HELD}")
FAILED_MAIL = "SELECT * FROM outbox WHERE state = 'failed' ORDER BY created_at, id"
MAIL_BY_KEY = "SELECT * FROM outbox WHERE dedupe_key = :dedupe_key"



def mail_of(row: Row, dialect: Dialect) -> OutboxMail:
    """A mail of the outbox from its row."""
    moment = dialect.moment_out
    return OutboxMail(
        id=int(row["id"]),
        dedupe_key=row["dedupe_key"],
        recipient=row["recipient"],
        kind=row["kind"],
        language=row["language"],
        payload=dialect.json_out(row["payload"]),
        state=row["state"],
        attempts=int(row["attempts"]),
        next_attempt_at=moment(row["next_attempt_at"]),
        created_at=moment(row["created_at"]),
        claimed_until=moment(row["claimed_until"]) if row["claimed_until"] else None,
        last_error=row["last_error"],
        sent_at=moment(row["sent_at"]) if row["sent_at"] else None,
    )


class OutboxRecords:
    """The outbox's storage methods, on the primitives a backend gives `records.Records`."""

    dialect: Dialect

    if TYPE_CHECKING:  # what the backend provides (`records.Records` says what each does)
        def transaction(self) -> AbstractContextManager[Any]: ...

        def _rows(self, sql: str, params: dict[str, Any]) -> Sequence[Row]: ...

        def _one(self, sql: str, params: dict[str, Any]) -> Row | None: ...

        def _run(self, sql: str, params: dict[str, Any]) -> int: ...

    @guarded
    def queue_mail(self, dedupe_key: str, recipient: str, kind: str, language: str,
                   payload: dict[str, Any], now: datetime) -> bool:
        """Queue a mail, due at once; inside a `transaction()` it commits or rolls back with
        the change it reports. False (nothing written) when the key was queued before."""
        return self._run(QUEUE_MAIL, {
            "dedupe_key": dedupe_key, "recipient": recipient, "kind": kind,
            "language": language, "payload": self.dialect.json_in(payload),
            "now": self.dialect.moment_in(now)}) == 1

    @guarded
    def claim_mail(self, now: datetime, lease: timedelta, limit: int) -> list[OutboxMail]:
        """Take up to `limit` due mails, oldest due first, until `now + lease` (each claim
        counts an attempt); no other claim gets them meanwhile."""
        moment_in = self.dialect.moment_in
        claim = CLAIM_MAIL.format(due=DUE_MAIL + self.dialect.claiming())
        with self.transaction():
            rows = self._rows(claim, {"now": moment_in(now), "until": moment_in(now + lease),
                                      "limit": limit})
        # RETURNING gives no order: the claimer sends them in the order they were due.
        mails = [mail_of(row, self.dialect) for row in rows]
        return sorted(mails, key=lambda mail: (mail.next_attempt_at, mail.id))

    @guarded
    def mail_sent(self, mail: OutboxMail, now: datetime) -> bool:
        """Mark a claimed mail sent; False when the claim was lost (its lease ran out and
        another sender took it)."""
        return self._run(MAIL_SENT, {"now": self.dialect.moment_in(now), **held(mail)}) == 1

    @guarded
    def mail_failed(self, mail: OutboxMail, reason: str, retry_at: datetime | None) -> bool:
        """Note why a claimed mail was not sent: queued again for `retry_at`, or failed for
        good when None; False when the claim was lost."""
        if retry_at is None:
            return self._run(MAIL_FAILED, {"reason": reason, **held(mail)}) == 1
        return self._run(MAIL_RETRIED, {"reason": reason,
                                        "retry_at": self.dialect.moment_in(retry_at),
                                        **held(mail)}) == 1

    @guarded
    def release_mail(self, mail: OutboxMail) -> bool:
        """Give back a claimed mail that was not tried: due again at once, its claim not
        counted as an attempt; False when the claim was lost."""
        return self._run(MAIL_RELEASED, held(mail)) == 1

    @guarded
    def failed_mail(self) -> list[OutboxMail]:
        """Every mail that failed for good, oldest first."""
        return [mail_of(row, self.dialect) for row in self._rows(FAILED_MAIL, {})]

    @guarded
    def get_mail(self, dedupe_key: str) -> OutboxMail | None:
        """The mail queued under this key, or None."""
        row = self._one(MAIL_BY_KEY, {"dedupe_key": dedupe_key})
        return mail_of(row, self.dialect) if row else None


def held(mail: OutboxMail) -> dict[str, Any]:
    """The parameters naming a claim: the mail and the attempt it was claimed for."""
    return {"id": mail.id, "attempts": mail.attempts}
