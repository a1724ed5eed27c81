"""The storage of a running app (flaskr's `db.py`): one per request, on `g`.

The DATABASE setting chooses the backend (`backends.backend_for`); nothing outside this
package knows which one runs. Connections are kept between requests by the backend, opened
in the process that uses them. The database is created, migrated and seeded on first use in
each process, or ahead of time with `flask --app webapp init-db`; under gunicorn the master
does it once before forking (gunicorn.conf.py) and the workers only migrate it.
"""

from __future__ import annotations

from flask import Flask
from flask import current_app
from flask import g

from . import Storage
from .backends import Backend
from .backends import Seed
from .backends import backend_for

PREPARED = "webapp.database_prepared"
CREATES = "webapp.creates_database"
BACKEND = "webapp.storage_backend"
SEED = "webapp.seed"
CONNECTIONS = 8  # per process: more than a gunicorn worker's threads


def backend() -> Backend:
    """The current app's backend."""
    found: Backend = current_app.extensions[BACKEND]
    return found


def prepare_database() -> bool:
    """Create (unless `never_create_database`), migrate and (if empty) seed the database;
    True when it seeded."""
    seeded = backend().prepare(current_app.extensions[SEED],
                               create=current_app.extensions.get(CREATES, True))
    current_app.extensions[PREPARED] = True
    return seeded


def never_create_database(app: Flask) -> None:
    """Let this app migrate the database but never create it: a gunicorn worker, whose master
    made it before forking. A worker that starts while the file is missing (moved, a mount not
    there yet) then answers 503 until it is back, instead of starting a second, empty database
    that would split the workers between two."""
    app.extensions[CREATES] = False


def database_location() -> str:
    """Where the current app's data lives, for messages (never a password)."""
    return backend().location


def open_storage() -> Storage:
    """A storage of its own, outside any request (commands); the caller closes it."""
    return backend().open()


def get_db() -> Storage:
    """The storage of the current request, taken on first use and given back at its end."""
    if "db" not in g:
        if not current_app.extensions.get(PREPARED):
            prepare_database()
        g.db_lease = backend().lease()
        g.db = g.db_lease.storage
    db: Storage = g.db
    return db


def close_db(exception: BaseException | None = None) -> None:
    """Give the request's connection back, if it took one."""
    g.pop("db", None)
    lease = g.pop("db_lease", None)
    if lease is not None:
        lease.release()


def close_backend(app: Flask) -> None:
    """Close the connections the app keeps (tests that make many apps; shutdown)."""
    app.extensions[BACKEND].close()


def init_app(app: Flask, seed: Seed | None = None) -> None:
    """Choose the backend from DATABASE (failing now, clearly, if none can serve it), and
    give connections back after each request; `seed` fills a new, empty database."""
    config = app.config
    app.extensions[BACKEND] = backend_for(config["DATABASE"],
                                          busy_timeout_ms=config["DATABASE_BUSY_TIMEOUT_MS"],
                                          connections=CONNECTIONS)
    app.extensions[SEED] = seed
    app.teardown_appcontext(close_db)
