"""The delivery loop: claim a batch of due mail, send each, mark it; again, until stopped.

At least once, never lost: a mail is claimed (a lease, `Storage.claim_mail`), sent, then
marked sent. A sender killed between the server taking a mail and the mark leaves it claimed;
when the lease runs out another pass sends it again, with the same Message-ID (`message`), so
that one mail may arrive twice, and no mail is ever dropped. Everything else is sent once:
claims are atomic, and a mark names the attempt it closes.

Failures: a transient one (no server, a 4xx) queues the mail again after a delay that doubles
with each attempt (MAIL_RETRY_DELAY, at most `LONGEST_DELAY`), until MAIL_MAX_ATTEMPTS; a
permanent one (a 5xx about the recipient or the message, a mail that cannot be built) fails it
at once, with the reason, for `flask mail failed`. A stop (SIGTERM, SIGINT) is taken between
mails: the one being sent finishes and is marked, the rest of the batch is given back.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from collections.abc import Mapping
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta
from email.message import EmailMessage
from typing import Any

from ..config import Clock
from ..storage import OutboxMail
from ..storage import Storage
from ..storage import StorageError
from .message import MailNotBuilt
from .senders import Sender
from .senders import SendFailed

log = logging.getLogger(__name__)

# However many attempts came before, a mail waits at most this long for the next.
LONGEST_DELAY = timedelta(hours=6)

BuildMessage = Callable[[OutboxMail, datetime], EmailMessage]


@dataclass(frozen=True)
class DeliverySettings:
    """How the loop works through the outbox (the MAIL_* settings)."""

    batch_size: int
    lease: timedelta
    max_attempts: int
    retry_delay: timedelta
    poll_interval: float
    # A mail is sent only while its lease has at least this long to run (the sender's
    # timeout): one whose lease could run out mid-send is given back, never sent twice.
    send_time: timedelta

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> DeliverySettings:
        """The settings of an app's configuration."""
        return cls(batch_size=int(config["MAIL_BATCH_SIZE"]),
                   lease=timedelta(seconds=float(config["MAIL_LEASE"])),
                   max_attempts=int(config["MAIL_MAX_ATTEMPTS"]),
                   retry_delay=timedelta(seconds=float(config["MAIL_RETRY_DELAY"])),
                   poll_interval=float(config["MAIL_POLL_INTERVAL"]),
                   send_time=timedelta(seconds=float(config["MAIL_TIMEOUT"])))

    def delay_after(self, attempt: int) -> timedelta:
        """How long a mail waits after its `attempt`-th failed try: doubling each time."""
        doubled: timedelta = self.retry_delay * 2 ** (attempt - 1)
        return min(doubled, LONGEST_DELAY)


@dataclass
class Tally:
    """What a pass did with the mail it claimed."""

    sent: int = 0
    retrying: int = 0
    failed: int = 0
    given_back: int = 0

    @property
    def claimed(self) -> int:
        """How many mails the pass claimed."""
        return self.sent + self.retrying + self.failed + self.given_back

    def add(self, other: Tally) -> None:
        """Count `other`'s mails too."""
        self.sent += other.sent
        self.retrying += other.retrying
        self.failed += other.failed
        self.given_back += other.given_back


class Delivery:
    """One sender working through the outbox of one database."""

    def __init__(self, open_storage: Callable[[], Storage],
                 open_sender: Callable[[], Sender], build: BuildMessage, clock: Clock,
                 settings: DeliverySettings, stop: threading.Event | None = None):
        self.open_storage = open_storage
        self.open_sender = open_sender
        self.build = build
        self.clock = clock
        self.settings = settings
        self.stop = stop or threading.Event()

    def deliver_batch(self) -> Tally:
        """Claim one batch of due mail and send it, on a connection of its own (a loop
        that runs for days keeps none open between passes)."""
        with closing(self.open_storage()) as storage:
            batch = storage.claim_mail(self.clock(), self.settings.lease,
                                       self.settings.batch_size)
            if not batch:
                return Tally()
            with closing(self.open_sender()) as sender:
                return self._send(storage, sender, batch)

    def deliver_due(self) -> Tally:
        """Batches until nothing is due (or a stop): what `mail run --once` does."""
        done = Tally()
        while not self.stop.is_set():
            tally = self.deliver_batch()
            done.add(tally)
            if tally.claimed == 0:
                break
        return done

    def run(self) -> None:
        """Deliver until stopped, looking again every MAIL_POLL_INTERVAL seconds when
        nothing was due; a database that fails is tried again on the next look."""
        while not self.stop.is_set():
            try:
                tally = self.deliver_batch()
            except StorageError as error:
                log.error("mail delivery: the database failed (%s); trying again",
                          error.__cause__ or error)
                tally = Tally()
            if tally.claimed == 0:
                self.stop.wait(self.settings.poll_interval)

    def _send(self, storage: Storage, sender: Sender, batch: list[OutboxMail]) -> Tally:
        """Send a claimed batch in order; give back what a stop or the lease leaves unsent."""
        tally = Tally()
        for index, mail in enumerate(batch):
            lease_left = (mail.claimed_until or self.clock()) - self.clock()
            if self.stop.is_set() or lease_left <= self.settings.send_time:
                for unsent in batch[index:]:
                    storage.release_mail(unsent)
                    tally.given_back += 1
                break
            self._send_one(storage, sender, mail, tally)
        return tally

    def _send_one(self, storage: Storage, sender: Sender, mail: OutboxMail,
                  tally: Tally) -> None:
        """Send one claimed mail and mark how it went."""
        most = self.settings.max_attempts
        if mail.attempts > most:
            # Its last claims ended in no mark: a sender died while sending it, each time.
            self._fail(storage, mail, f"gave up after {most} attempts: "
                       f"{mail.last_error or 'the sender stopped while sending it'}", tally)
            return
        try:
            sender.send(self.build(mail, self.clock()), mail)
        except MailNotBuilt as error:
            self._fail(storage, mail, str(error), tally)
            return
        except SendFailed as failure:
            if failure.permanent:
                self._fail(storage, mail, failure.reason, tally)
            elif mail.attempts >= most:
                self._fail(storage, mail, f"gave up after {most} attempts: {failure.reason}",
                           tally)
            else:
                retry_at = self.clock() + self.settings.delay_after(mail.attempts)
                storage.mail_failed(mail, failure.reason, retry_at)
                log.warning("mail %s not sent (attempt %s: %s); trying again at %s",
                            mail.id, mail.attempts, failure.reason, retry_at.isoformat())
                tally.retrying += 1
            return
        storage.mail_sent(mail, self.clock())
        tally.sent += 1

    @staticmethod
    def _fail(storage: Storage, mail: OutboxMail, reason: str, tally: Tally) -> None:
        """Fail a mail for good, with its reason."""
        storage.mail_failed(mail, reason, None)
        log.error("mail %s failed for good: %s", mail.id, reason)
        tally.failed += 1
