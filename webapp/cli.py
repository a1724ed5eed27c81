"""The site's data commands: `flask --app webapp init-db | import-events | generate-events |
prune | waitlist pass-on`; the mail group is `mail.commands`, with `mail remind` added here (it
needs the domain and the site's addresses); the toolkit adds `flask webmcp lint | manifest`."""

from __future__ import annotations

from datetime import timedelta
from itertools import islice
from pathlib import Path

import click
from flask import Flask
from flask import current_app
from flask.cli import with_appcontext

from .clock import site_now
from .clock import site_timezone
from .clock import site_today
from .datasets.importer import ImportProblem
from .datasets.importer import read_events
from .datasets.synthetic import generate_events
from .domain.registration_mail import queue_reminders
from .domain.waitlist import pass_on
from .domain.waitlist import pass_on_everywhere
from .mail.commands import mail_group
from .storage import Event
from .storage import StorageError
from .storage.backends import UnservableDatabase
from .storage.backends import backend_for
from .storage.connection import backend
from .storage.connection import database_location
from .storage.connection import get_db
from .storage.connection import prepare_database
from .web.calls import action_context

GENERATE_BATCH = 5000  # events per progress step


@click.command("init-db")
@with_appcontext
def init_db_command() -> None:
    """Create or migrate the database, and seed it with the sample events if it is empty."""
    try:
        seeded = prepare_database()
    except StorageError as error:
        # The driver's error, or the storage's own words (a file too old to upgrade).
        raise click.ClickException(f"{database_location()} could not be prepared "
                                   f"({error.__cause__ or error})") from None
    click.echo(f"Database ready at {database_location()}"
               + (" (seeded with the sample events)." if seeded else "."))


@click.command("import-events")
@with_appcontext
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def import_events_command(file: Path) -> None:
    """Insert or update the events of FILE (JSON); one bad row rejects the whole file."""
    try:
        events = read_events(file, site_today(), site_timezone())
    except ImportProblem as problem:
        for line in problem.problems:
            click.echo(f"{file}: {line}", err=True)
        raise click.ClickException(f"nothing imported: {len(problem.problems)} problem(s)"
                                   ) from None
    try:
        count = get_db().import_events(events)
        offered = _pass_on_seats_of(events)
    except StorageError as error:
        raise click.ClickException(f"nothing imported: the database failed ({error.__cause__})"
                                   ) from None
    click.echo(f"Imported {count} event(s) from {file}."
               + (f" {offered} seat(s) offered from waitlists." if offered else ""))


def _pass_on_seats_of(events: list[Event]) -> int:
    """Offer the seats an import freed (a raised capacity, released held seats) to the people
    waiting for them; how many offers were made."""
    db = get_db()
    with current_app.test_request_context(base_url=current_app.config.get("SITE_URL")):
        ctx = action_context(None, source="system")
        return sum(len(pass_on(db, event.id, ctx)) for event in events if event.waitlist)


@click.command("generate-events")
@with_appcontext
@click.option("--count", type=click.IntRange(min=1), default=1000, show_default=True,
              help="How many events to generate.")
@click.option("--seed", type=int, default=1, show_default=True,
              help="The same seed (on the same day) gives the same events.")
@click.option("--database", metavar="PATH|URL",
              help="A new database to fill: a file path or a postgresql:// URL "
                   "[default: the app's database].")
def generate_events_command(count: int, seed: int, database: str | None) -> None:
    """Fill an empty database with COUNT synthetic events (for benchmarks)."""
    try:
        target = backend_for(database, current_app.config["DATABASE_BUSY_TIMEOUT_MS"],
                             connections=1) if database else backend()
    except UnservableDatabase as error:
        raise click.BadParameter(str(error), param_hint="--database") from None
    path = target.location
    try:
        target.prepare(None)
        storage = target.open()
    except StorageError as error:
        raise click.ClickException(f"{path} could not be prepared ({error.__cause__ or error})"
                                   ) from None
    try:
        if storage.count_events():
            raise click.ClickException(f"{path} already holds events: choose a new database")
        events = generate_events(count, seed, site_now(), site_timezone())
        with click.progressbar(length=count, label="Generating events") as bar, \
                storage.bulk_load():
            while batch := list(islice(events, GENERATE_BATCH)):
                bar.update(storage.add_events(batch))
    finally:
        storage.close()
    click.echo(f"Generated {count} event(s) into {path} (seed {seed}).")


@click.command("prune")
@with_appcontext
@click.option("--activity-days", type=click.IntRange(min=1), default=90, show_default=True,
              help="Keep this many days of visitors' activity.")
def prune_command(activity_days: int) -> None:
    """Delete expired confirmations (after a day), old activity, visitors whose session
    ended with no active registration (with what was theirs), expired agent connections,
    results no page took in time, mail sent more than MAIL_KEEP_SENT_DAYS ago and signed-in
    sessions that ended (SESSION_IDLE, SESSION_LIFETIME), and erase
    the name and address of attendees ATTENDEE_RETENTION_DAYS after their event; run it
    daily (cron)."""
    now = site_now()
    keep_sent = timedelta(days=int(current_app.config["MAIL_KEEP_SENT_DAYS"]))
    config = current_app.config
    removed = get_db().prune(
        confirmations_before=now - timedelta(days=1),
        activity_before=now - timedelta(days=activity_days),
        visitors_before=now, sent_mail_before=now - keep_sent,
        sessions_seen_before=now - timedelta(seconds=int(config["SESSION_IDLE"])),
        sessions_started_before=now - timedelta(seconds=int(config["SESSION_LIFETIME"])))
    click.echo(f"Removed {removed['confirmations']} expired confirmation(s), "
               f"{removed['activity']} activity line(s), {removed['visitors']} ended "
               f"visitor session(s), {removed['connections']} expired agent connection(s) and "
               f"{removed['carried']} result(s) no page took.")
    click.echo(f"Removed {removed['sent_mail']} sent mail(s) older than {keep_sent.days} "
               f"day(s); failed mail stays (`flask mail failed`).")
    click.echo(f"Removed {removed['sessions']} ended sign-in session(s).")
    retention = timedelta(days=int(current_app.config["ATTENDEE_RETENTION_DAYS"]))
    erased = get_db().anonymize_attendees(ended_before=now - retention)
    click.echo(f"Erased the name and address of {erased} attendee(s) of events that ended "
               f"more than {retention.days} day(s) ago (the registrations stay, counted).")


@mail_group.command("remind")
@with_appcontext
def remind_command() -> None:
    """Queue the reminder of every registration whose event starts within a day, in the
    language it was made in (each registration once, however often this runs: every hour
    from cron, say; `make run` does)."""
    prepare_database()
    # The mail's addresses are made as a request's would be: on SITE_URL when it is set.
    with current_app.test_request_context(base_url=current_app.config.get("SITE_URL")):
        queued = queue_reminders(get_db(), action_context(None, source="system"))
    click.echo(f"{queued} reminder(s) queued.")


@click.group("waitlist")
def waitlist_group() -> None:
    """Pass on the seats waitlists offer."""


@waitlist_group.command("pass-on")
@with_appcontext
def pass_on_command() -> None:
    """Expire the waitlist offers whose hold ran out and offer every free seat to the next
    person waiting, mailing each offer (every few minutes: cron, or `make run`; running it
    again changes nothing, and the site passes seats on as it goes without it)."""
    prepare_database()
    # The mail's addresses are made as a request's would be: on SITE_URL when it is set.
    with current_app.test_request_context(base_url=current_app.config.get("SITE_URL")):
        offered = pass_on_everywhere(get_db(), action_context(None, source="system"))
    click.echo(f"{offered} seat(s) offered from waitlists.")


def init_app(app: Flask) -> None:
    """Register the commands, and the mail group (`mail.commands`)."""
    for command in (init_db_command, import_events_command, generate_events_command,
                    prune_command, waitlist_group, mail_group):
        app.cli.add_command(command)
