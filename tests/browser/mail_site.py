"""The site under gunicorn with its mail delivered for real: a real SMTP server on loopback
(aiosmtpd, `smtp_server.py`) fed by the delivery loop running as `flask --app webapp mail run`,
and what a test reads of the mail that arrives there. The browser tests that follow a mail
(sign-in links, confirmations, an organizer's changes) share it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

from helpers import PROJECT_ROOT
from servers import free_port
from servers import gunicorn
from servers import stop
from smtp_server import Inbox
from smtp_server import SmtpServer
from suite_clock import suite_start

from webapp import create_app
from webapp.mail.kinds import HELLO
from webapp.storage.connection import close_backend
from webapp.storage.connection import open_storage
from webapp.storage.connection import prepare_database

from .visit import Site

SECRET_KEY = "server test secret"  # what `servers.gunicorn` gives the server too
# The mail queued before the servers start: its arrival says the loop is delivering.
LOOP_READY = "loop-ready@example.com"
HELLO_SUBJECT = "A test mail from WebMCP Events"


@dataclass(frozen=True)
class MailSite:
    """The site under gunicorn, its delivery loop, and the SMTP server's inbox it sends to."""

    site: Site
    inbox: Inbox


@contextmanager
def serving_with_mail(database: str, folder: Path) -> Iterator[MailSite]:
    """An SMTP server on a free loopback port, the delivery loop sending to it, then gunicorn
    sending its mail through the outbox, on the fresh `database` (a SQLite file's path or a
    PostgreSQL URL); `folder` keeps the logs and the rate limits' counts.

    The loop starts first and the servers once it has delivered a mail queued beforehand: each
    process's clock starts at the suite's instant as the process starts, so the loop's runs
    ahead of every worker's and a mail a worker queues is due for the loop at once.
    """
    inbox = Inbox()
    smtp_port = free_port()
    settings = {
        "FLASK_SECRET_KEY": SECRET_KEY, "FLASK_CLOCK_START": suite_start().isoformat(),
        # The limits count beside this run's files, never in the instance folder.
        "FLASK_RATELIMIT_STORAGE_URI": f"host://{folder / 'rate-limits.sqlite'}",
        "FLASK_MAIL_HOST": "127.0.0.1", "FLASK_MAIL_PORT": str(smtp_port),
        "FLASK_MAIL_STARTTLS": "false", "FLASK_MAIL_TIMEOUT": "10",
        "FLASK_MAIL_FROM": "WebMCP 社群活動 <no-reply@events.example.tw>",
        # The loop looks again this often when nothing is due (a person waits for each mail).
        "FLASK_MAIL_POLL_INTERVAL": "0.2",
    }
    prepare_with_a_mail(database, folder)
    smtp = SmtpServer(inbox, smtp_port).start()
    log = open(folder / "mail-loop.log", "wb")  # noqa: SIM115 - closed below
    loop = subprocess.Popen(
        [sys.executable, "-m", "flask", "--app", "webapp", "mail", "run"], cwd=PROJECT_ROOT,
        env={**os.environ, "FLASK_DATABASE": database, **settings},
        stdout=log, stderr=subprocess.STDOUT)
    try:
        mail_to(inbox, LOOP_READY, HELLO_SUBJECT)
        with gunicorn(database, workers=2, threads=4, env=settings,
                      log=folder / "gunicorn.log") as (base_url, _):
            # (Site's database is a URL on PostgreSQL: nothing here reads it.)
            yield MailSite(Site(base_url, Path(database)), inbox)
    finally:
        stop(loop)
        log.close()
        smtp.stop()


def prepare_with_a_mail(database: str, folder: Path) -> None:
    """Create, migrate and seed the database (on the suite's clock, as the servers would), and
    queue one English test mail to LOOP_READY."""
    app = create_app({"SECRET_KEY": SECRET_KEY, "DATABASE": database,
                      "CLOCK_START": suite_start().isoformat(),
                      "RATELIMIT_STORAGE_URI": f"host://{folder / 'rate-limits.sqlite'}"})
    try:
        with app.app_context():
            prepare_database()
            storage = open_storage()
            try:
                storage.queue_mail("hello:loop-ready", LOOP_READY, HELLO.name, "en", {},
                                   app.config["CLOCK"]())
            finally:
                storage.close()
    finally:
        close_backend(app)


def mail_to(inbox: Inbox, recipient: str, subject: str) -> EmailMessage:
    """The first mail to `recipient` with `subject` the SMTP server received, once it has
    (each wait ends as mail arrives, or fails after the inbox's timeout)."""
    seen = 0
    while True:
        try:
            received = inbox.wait_for(seen + 1)
        except AssertionError as error:
            # Name what came instead: a wrong subject or recipient is found at a glance.
            arrived = [(message["To"], message["Subject"]) for message in inbox.received]
            raise AssertionError(f"no mail {subject!r} to {recipient}; arrived: "
                                 f"{arrived}") from error
        for message in received[seen:]:
            if message["To"] == recipient and message["Subject"] == subject:
                return message
        seen = len(received)


def text_part(message: EmailMessage) -> str:
    """What the mail says in plain text."""
    part = message.get_body(("plain",))
    assert part is not None, "the mail has no text part"
    return str(part.get_content())


def html_part(message: EmailMessage) -> str:
    """The mail's HTML."""
    part = message.get_body(("html",))
    assert part is not None, "the mail has no HTML part"
    return str(part.get_content())
