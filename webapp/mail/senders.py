"""Where a built message goes: an SMTP server, or a folder of .eml files.

MAIL_HOST set: `SmtpSender`, over `smtplib` (STARTTLS and login when configured, a timeout on
every step), one connection for a batch. MAIL_HOST unset: `DirectorySender`, the embedded
default that `make run` uses with no mail server at all: each message becomes
`<instance>/mail/<id>.eml` (open it in any mail client) and one log line, with the link the
person must follow when the kind has one.

A sender raises `SendFailed` saying whether trying again may help: a 5xx reply to the
recipient or the message is permanent (the address bounces, the message is refused); no
answer, a 4xx, or a refusal of the site itself (its login, its sender address: a setting to
fix, after which every waiting mail goes) is not.
"""

from __future__ import annotations

import logging
import os
import smtplib
import ssl
from collections.abc import Mapping
from email.message import EmailMessage
from pathlib import Path
from typing import Any
from typing import Protocol

from ..storage import OutboxMail
from .kinds import kind_named

log = logging.getLogger(__name__)


class SendFailed(Exception):
    """The message was not taken; `permanent` when sending it again would fail the same way."""

    def __init__(self, reason: str, permanent: bool):
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent


class Sender(Protocol):
    """Something that delivers built messages, one at a time."""

    def send(self, message: EmailMessage, mail: OutboxMail) -> None:
        """Deliver `message` (the outbox's `mail`) to its recipient, or raise SendFailed."""
        ...

    def close(self) -> None:
        """Let go of any connection (the end of a batch)."""
        ...


def refusal(code: int, reply: bytes | str, permanent_if_5xx: bool) -> SendFailed:
    """A server's refusal as SendFailed: permanent for a 5xx when the refusal is about the
    mail itself (`permanent_if_5xx`)."""
    text = reply.decode(errors="replace") if isinstance(reply, bytes) else reply
    return SendFailed(f"{code} {text}", permanent=permanent_if_5xx and 500 <= code < 600)


class SmtpSender:
    """Messages over SMTP to MAIL_HOST:MAIL_PORT, one connection per batch."""

    def __init__(self, host: str, port: int, starttls: bool, username: str | None,
                 password: str | None, timeout: float):
        self.host, self.port, self.starttls = host, port, starttls
        self.username, self.password, self.timeout = username, password, timeout
        self._smtp: smtplib.SMTP | None = None

    def send(self, message: EmailMessage, mail: OutboxMail) -> None:
        """Send over the batch's connection (opened on first use)."""
        try:
            smtp = self._connection()
            smtp.send_message(message, to_addrs=[mail.recipient])
        except smtplib.SMTPRecipientsRefused as error:
            code, reply = error.recipients[mail.recipient]
            raise refusal(code, reply, permanent_if_5xx=True) from error
        except (smtplib.SMTPAuthenticationError, smtplib.SMTPSenderRefused) as error:
            # The site's own login or sender address: fixed once, every mail goes again.
            self.close()
            raise refusal(error.smtp_code, error.smtp_error, permanent_if_5xx=False) from error
        except smtplib.SMTPResponseException as error:  # the message refused (DATA), or other
            raise refusal(error.smtp_code, error.smtp_error, permanent_if_5xx=True) from error
        except (OSError, smtplib.SMTPException) as error:  # refused, timed out, cut off
            self.close()
            raise SendFailed(f"the mail server {self.host}:{self.port} did not take it "
                             f"({error.__class__.__name__}: {error})", permanent=False) from error

    def _connection(self) -> smtplib.SMTP:
        """The batch's connection: connected, encrypted and logged in as configured."""
        if self._smtp is None:
            smtp = smtplib.SMTP(self.host, self.port, timeout=self.timeout)
            try:
                if self.starttls:
                    smtp.starttls(context=ssl.create_default_context())
                if self.username:
                    smtp.login(self.username, self.password or "")
            except BaseException:
                smtp.close()
                raise
            self._smtp = smtp
        return self._smtp

    def close(self) -> None:
        """Say goodbye to the server, if connected (it may be gone already)."""
        smtp, self._smtp = self._smtp, None
        if smtp is None:
            return
        try:
            smtp.quit()
        except (OSError, smtplib.SMTPException):
            smtp.close()


class DirectorySender:
    """Messages as .eml files in a folder, each announced by one log line: mail for
    development, with no server to run."""

    def __init__(self, folder: Path):
        self.folder = folder

    def send(self, message: EmailMessage, mail: OutboxMail) -> None:
        """Write `<folder>/<id>.eml` whole (a reader never sees half of one) and log it."""
        path = self.folder / f"{mail.id}.eml"
        draft = self.folder / f".{mail.id}.eml.{os.getpid()}"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            draft.write_bytes(message.as_bytes())
            os.replace(draft, path)
        except OSError as error:
            raise SendFailed(f"could not write {path}: {error}", permanent=False) from error
        link = kind_named(mail.kind).link(mail.payload)
        # No address in the log: the file holds it, for whoever reads the folder.
        log.info("mail %s (%s, %s) written to %s%s", mail.id, mail.kind, mail.language, path,
                 f"; its link: {link}" if link else "")

    def close(self) -> None:
        """Nothing to let go of."""


def sender_for(config: Mapping[str, Any], instance_path: str) -> Sender:
    """The sender the settings name: SMTP when MAIL_HOST is set, else .eml files in the
    instance folder."""
    if not config.get("MAIL_HOST"):
        return DirectorySender(Path(instance_path) / "mail")
    return SmtpSender(str(config["MAIL_HOST"]), int(config["MAIL_PORT"]),
                      bool(config["MAIL_STARTTLS"]), config.get("MAIL_USERNAME"),
                      config.get("MAIL_PASSWORD"), float(config["MAIL_TIMEOUT"]))
