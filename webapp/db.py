"""The database of a running app: one storage connection per request (kept open between
requests, see `storage.pool`), and the CLI commands.

The file is created, migrated and seeded on first use in each process (after gunicorn has
forked, never before) or ahead of time with `flask --app webapp init-db`.
"""

from __future__ import annotations

from datetime import datetime
from datetime import timedelta
from itertools import islice
from pathlib import Path
from zoneinfo import ZoneInfo

import click
from flask import Flask
from flask import current_app
from flask import g
from flask.cli import with_appcontext

from .importer import ImportProblem
from .importer import read_events
from .storage import StorageError
from .storage.pool import ConnectionPool
from .storage.sqlite import SQLiteStorage
from .synthetic import generate_events

PREPARED = "webapp.database_prepared"
POOL = "webapp.connection_pool"
IDLE_CONNECTIONS = 8  # per process: more than a gunicorn worker's threads
GENERATE_BATCH = 5000  # events per progress step


def site_timezone() -> ZoneInfo:
    """The time zone events are scheduled and shown in."""
    return ZoneInfo(current_app.config["SITE_TIMEZONE"])


def site_now() -> datetime:
    """The current time, from the app's (replaceable) clock."""
    return current_app.config["CLOCK"]()


def _seed(storage: SQLiteStorage) -> None:
    today = site_now().astimezone(site_timezone()).date()
    storage.import_events(read_events(current_app.config["SEED_FILE"], today, site_timezone()))


def prepare_database() -> bool:
    """Create, migrate and (if empty) seed the database; True when it seeded."""
    config = current_app.config
    seeded = SQLiteStorage.prepare(config["DATABASE"], seed=_seed,
                                   busy_timeout_ms=config["DATABASE_BUSY_TIMEOUT_MS"])
    current_app.extensions[PREPARED] = True
    return seeded


def get_db() -> SQLiteStorage:
    """The storage of the current request, taken on first use and given back at its end."""
    if "db" not in g:
        if not current_app.extensions.get(PREPARED):
            prepare_database()
        config = current_app.config
        g.db, g.db_file = current_app.extensions[POOL].acquire(
            config["DATABASE"], busy_timeout_ms=config["DATABASE_BUSY_TIMEOUT_MS"])
    return g.db


def close_db(exception: BaseException | None = None) -> None:
    """Give the request's connection back, if it took one."""
    db = g.pop("db", None)
    if db is not None:
        current_app.extensions[POOL].release(db, g.pop("db_file"))


@click.command("init-db")
@with_appcontext
def init_db_command() -> None:
    """Create or migrate the database, and seed it with the sample events if it is empty."""
    seeded = prepare_database()
    path = current_app.config["DATABASE"]
    click.echo(f"Database ready at {path}" + (" (seeded with the sample events)." if seeded
                                               else "."))


@click.command("import-events")
@with_appcontext
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def import_events_command(file: Path) -> None:
    """Insert or update the events of FILE (JSON); one bad row rejects the whole file."""
    today = site_now().astimezone(site_timezone()).date()
    try:
        events = read_events(file, today, site_timezone())
    except ImportProblem as problem:
        for line in problem.problems:
            click.echo(f"{file}: {line}", err=True)
        raise click.ClickException(f"nothing imported: {len(problem.problems)} problem(s)"
                                   ) from None
    try:
        count = get_db().import_events(events)
    except StorageError as error:
        raise click.ClickException(f"nothing imported: the database failed ({error.__cause__})"
                                   ) from None
    click.echo(f"Imported {count} event(s) from {file}.")


@click.command("generate-events")
@with_appcontext
@click.option("--count", type=click.IntRange(min=1), default=1000, show_default=True,
              help="How many events to generate.")
@click.option("--seed", type=int, default=1, show_default=True,
              help="The same seed (on the same day) gives the same events.")
@click.option("--database", type=click.Path(dir_okay=False, path_type=Path),
              help="A new database file to fill [default: the app's database].")
def generate_events_command(count: int, seed: int, database: Path | None) -> None:
    """Fill an empty database with COUNT synthetic events (for benchmarks)."""
    path = database or Path(current_app.config["DATABASE"])
    SQLiteStorage.prepare(path)
    storage = SQLiteStorage.open(path)
    try:
        if storage.count_events():
            raise click.ClickException(f"{path} already holds events: choose a new file")
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
    """Delete expired confirmations (after a day) and old activity; run it daily (cron)."""
    now = site_now()
    removed = get_db().prune(confirmations_before=now - timedelta(days=1),
                             activity_before=now - timedelta(days=activity_days))
    click.echo(f"Removed {removed['confirmations']} expired confirmation(s) and "
               f"{removed['activity']} activity line(s).")


def init_app(app: Flask) -> None:
    """Give connections back after each request and register the database commands."""
    app.extensions[POOL] = ConnectionPool(IDLE_CONNECTIONS)
    app.teardown_appcontext(close_db)
    app.cli.add_command(init_db_command)
    app.cli.add_command(import_events_command)
    app.cli.add_command(generate_events_command)
    app.cli.add_command(prune_command)
