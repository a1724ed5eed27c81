"""`flask --app webapp mail run [--once] | failed | send-test ADDRESS`."""

from __future__ import annotations

import logging
import secrets
import signal
import threading
from functools import partial
from types import FrameType

import click
from babel import Locale
from babel import UnknownLocaleError
from flask import Flask
from flask import current_app
from flask.cli import with_appcontext
from flask_babel import get_babel

from ..clock import site_now
from ..storage import StorageError
from ..storage.connection import open_storage
from ..storage.connection import prepare_database
from .delivery import Delivery
from .delivery import DeliverySettings
from .kinds import HELLO
from .message import build_message
from .senders import sender_for


def delivery_of(app: Flask, stop: threading.Event | None = None) -> Delivery:
    """The delivery of `app`'s outbox, as its settings say (its clock, its sender)."""
    return Delivery(open_storage=open_storage,
                    open_sender=partial(sender_for, app.config, app.instance_path),
                    build=build_message, clock=app.config["CLOCK"],
                    settings=DeliverySettings.from_config(app.config), stop=stop)


def stop_on_signals(stop: threading.Event) -> None:
    """Let SIGTERM and SIGINT (Ctrl-C) end the loop between two mails, never inside one."""

    def stopping(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, stopping)
    signal.signal(signal.SIGINT, stopping)


@click.group("mail")
def mail_group() -> None:
    """Send the mail waiting in the outbox, and list what could not be sent."""


@mail_group.command("run")
@click.option("--once", is_flag=True, help="Send what is due now, then stop (for cron).")
@with_appcontext
def run_command(once: bool) -> None:
    """Send the outbox's mail as it falls due, until stopped (SIGTERM, Ctrl-C)."""
    # The loop's lines (and the .eml sender's, with any link to follow) go to stderr.
    logging.basicConfig(level=logging.INFO, format="%(asctime)s [mail] %(message)s")
    stop = threading.Event()
    stop_on_signals(stop)
    try:
        prepare_database()
        delivery = delivery_of(current_app, stop)
        if not once:
            delivery.run()
            return
        tally = delivery.deliver_due()
    except StorageError as error:
        raise click.ClickException(f"the database failed ({error.__cause__ or error})"
                                   ) from None
    click.echo(f"{tally.sent} sent, {tally.retrying} to try again later, {tally.failed} "
               f"failed, {tally.given_back} given back.")


@mail_group.command("failed")
@with_appcontext
def failed_command() -> None:
    """List the mail that failed for good, oldest first, with the reason."""
    storage = open_storage()
    try:
        failed = storage.failed_mail()
    finally:
        storage.close()
    for mail in failed:
        click.echo(f"{mail.id}\t{mail.created_at.isoformat()}\t{mail.kind}\t{mail.recipient}\t"
                   f"{mail.attempts} attempt(s)\t{mail.last_error}")
    click.echo(f"{len(failed)} failed mail(s).", err=True)


@mail_group.command("send-test")
@click.argument("address")
@click.option("--language", default="zh-TW", show_default=True,
              help="The mail's language, as a BCP 47 tag (zh-TW, en).")
@with_appcontext
def send_test_command(address: str, language: str) -> None:
    """Queue a test mail to ADDRESS (`mail run` sends it)."""
    if not has_catalog(language):
        raise click.BadParameter(f"no translation for {language!r}", param_hint="--language")
    prepare_database()
    storage = open_storage()
    try:
        storage.queue_mail(f"hello:{secrets.token_hex(8)}", address, HELLO.name, language, {},
                           site_now())
    finally:
        storage.close()
    click.echo(f"A test mail to {address} is queued.")


def has_catalog(tag: str) -> bool:
    """Whether the site speaks the language of this BCP 47 tag (English is the source)."""
    try:
        wanted = Locale.parse(tag, sep="-")
    except (ValueError, UnknownLocaleError):
        return False
    babel = get_babel().instance
    spoken = [babel.default_locale, *babel.list_translations()]
    return any(str(wanted) == str(locale) for locale in spoken)
