"""A real SMTP server on loopback for the mail tests (aiosmtpd, in this process), and what it
received, parsed as a mail client reads it.

Its answers are the test's to choose: a 5xx or a 4xx for chosen recipients, and the reply to
one message's DATA held back until the test lets it go (the sender then waits, mid-send, for
a reply it may never read).
"""

from __future__ import annotations

import asyncio
import email
import threading
from email import policy
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller

# How long a test waits for mail before failing (never a pause: it ends as mail arrives).
ARRIVAL_TIMEOUT = 30


class Inbox:
    """An aiosmtpd handler that keeps every message it accepts."""

    def __init__(self) -> None:
        self.received: list[EmailMessage] = []
        self.bouncing: set[str] = set()  # recipients refused for good (550)
        self.busy: set[str] = set()  # recipients refused for now (451)
        self.hold_reply_to: int | None = None  # the n-th message whose DATA reply waits
        self.let_go = threading.Event()
        self._arrival = threading.Condition()

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                          rcpt_options: list[str]) -> str:
        if address in self.bouncing:
            return "550 5.1.1 No such mailbox here"
        if address in self.busy:
            return "451 4.3.0 Mailbox busy, try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        # Kept before the reply, as a server that queued it has it whether or not the
        # sender reads the reply.
        message = email.message_from_bytes(envelope.content, policy=policy.default)
        assert isinstance(message, EmailMessage)
        with self._arrival:
            self.received.append(message)
            count = len(self.received)
            self._arrival.notify_all()
        if count == self.hold_reply_to:
            await asyncio.get_running_loop().run_in_executor(
                None, self.let_go.wait, ARRIVAL_TIMEOUT)
        return "250 2.0.0 Accepted"

    def wait_for(self, count: int) -> list[EmailMessage]:
        """The messages received, once there are at least `count` (fails after a timeout)."""
        with self._arrival:
            arrived = self._arrival.wait_for(lambda: len(self.received) >= count,
                                             ARRIVAL_TIMEOUT)
            assert arrived, f"{len(self.received)} of {count} mails arrived"
            return list(self.received)


class SmtpServer:
    """aiosmtpd listening on 127.0.0.1:`port` with `inbox` as its handler."""

    def __init__(self, inbox: Inbox, port: int):
        self.inbox = inbox
        self.port = port
        self._controller = Controller(inbox, hostname="127.0.0.1", port=port)

    def start(self) -> SmtpServer:
        self._controller.start()
        return self

    def stop(self) -> None:
        self.inbox.let_go.set()  # a held reply must not keep the server's loop from stopping
        self._controller.stop()
