"""The storage of a running app (flaskr's `db.py`): one per request, on `g`.

Connections are kept open between requests (see `pool`). The database is created, migrated
and seeded on first use in each process (after gunicorn has forked, never before) or ahead of
time with `flask --app webapp init-db`.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask
from flask import current_app
from flask import g

from .pool import ConnectionPool
from .sqlite import SQLiteStorage

PREPARED = "webapp.database_prepared"
POOL = "webapp.connection_pool"
SEED = "webapp.seed"
IDLE_CONNECTIONS = 8  # per process: more than a gunicorn worker's threads

Seed = Callable[[SQLiteStorage], None]


def prepare_database() -> bool:
    """Create, migrate and (if empty) seed the database; True when it seeded."""
    config = current_app.config
    seeded = SQLiteStorage.prepare(config["DATABASE"], seed=current_app.extensions[SEED],
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
    db: SQLiteStorage = g.db
    return db


def close_db(exception: BaseException | None = None) -> None:
    """Give the request's connection back, if it took one."""
    db = g.pop("db", None)
    if db is not None:
        current_app.extensions[POOL].release(db, g.pop("db_file"))


def init_app(app: Flask, seed: Seed | None = None) -> None:
    """Give connections back after each request; `seed` fills a new, empty database."""
    app.extensions[POOL] = ConnectionPool(IDLE_CONNECTIONS)
    app.extensions[SEED] = seed
    app.teardown_appcontext(close_db)
