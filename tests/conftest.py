"""Shared fixtures (flaskr style): a fresh app and database per test, its client and CLI."""

from __future__ import annotations

import fcntl
import inspect
import os
import shutil
import sqlite3
from collections import Counter
from collections import defaultdict
from collections.abc import Iterator
from contextlib import closing
from datetime import date
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from helpers import Visitor
from helpers import english
from servers import ONE_ADDRESS_CROWD
from services import create_database
from services import database_url
from services import drop_database
from services import fresh_schema
from services import new_database_name
from services import redis_server
from services import throwaway_database
from shifted_clock.sitecustomize import DESTINATION
from shifted_clock.sitecustomize import SITE_ZONE
from suite_clock import Clock
from suite_clock import suite_start
from whitenoise.compress import Compressor

from webapp import create_app
from webapp.clock import site_today
from webapp.config import SITE_ROOT as PROJECT_ROOT
from webapp.storage.connection import SEED
from webapp.storage.connection import close_backend
from webapp.storage.connection import prepare_database
from webapp.storage.postgres import PostgresStorage

# What `database_setting` can be: tests marked `both_backends` run once on each.
BACKENDS = ("sqlite", "postgresql")
# Where a test that moves or reads the clock also starts it, besides the suite's start: the
# edges of days and years in the site's zone. Fixed instants, so the verdict is the same on any
# day: 05:30 in Taipei is still the day before in UTC; at 23:59 on 31 December the day, the
# month and the year change a minute later; the 29th of February. ("start", the suite's start,
# is noon on an ordinary day.)
CLOCK_EDGES = {
    "early-morning": datetime.fromisoformat("2026-06-16T05:30:00+08:00"),
    "new-years-eve": datetime.fromisoformat("2026-12-31T23:59:00+08:00"),
    "leap-day": datetime.fromisoformat("2028-02-29T12:00:00+08:00"),
}


def pytest_configure() -> None:
    """A run that asks for a shifted clock but did not get one stops before any test."""
    try:
        suite_start()
    except RuntimeError as error:
        raise pytest.UsageError(str(error)) from None


def pytest_report_header() -> str:
    """Where the tests' clock starts, and whether every process's clock was moved."""
    start = suite_start().astimezone(SITE_ZONE).isoformat()
    if os.environ.get(DESTINATION):
        return (f"clock: every process shifted to {os.environ[DESTINATION]}; "
                f"the tests' clock starts at {start}")
    return f"clock: the tests' clock starts at {start}; servers under test keep the real time"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked `both_backends` runs once per backend (SQLite, then PostgreSQL); a test
    that takes the tests' clock itself (it moves it, or reads it) runs at every clock edge."""
    if (metafunc.definition.get_closest_marker("both_backends")
            and "backend_name" in metafunc.fixturenames):
        metafunc.parametrize("backend_name", BACKENDS, indirect=True)
    if takes_the_tests_clock(metafunc):
        # In a shifted run the tests' clock starts where every process's clock was moved, so
        # "start" is itself an edge; the main pass has run each test at the edges of CLOCK_EDGES
        # already, and they add nothing to what a moved wall clock shows.
        edges = [] if os.environ.get(DESTINATION) else [*CLOCK_EDGES]
        metafunc.parametrize("clock", ["start", *edges], indirect=True)


def takes_the_tests_clock(metafunc: pytest.Metafunc) -> bool:
    """Whether the test function names `clock` among its own arguments, and that `clock` is
    this file's (a module may have a clock of its own, for something else)."""
    if "clock" not in inspect.signature(metafunc.function).parameters:
        return False
    definitions = metafunc._arg2fixturedefs.get("clock") or ()  # noqa: SLF001 - pytest's own
    return bool(definitions) and definitions[-1].func.__module__ == __name__


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests run at the clock edges `clock_edges` (`make test-shifted` runs them), and
    those that need the PostgreSQL server `postgresql` (`make check` leaves them out); then
    put the modules of long tests first."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "clock" in callspec.params:
            item.add_marker(pytest.mark.clock_edges)
        if uses_postgresql(item):
            item.add_marker(pytest.mark.postgresql)
    # The longest modules first, as their marks tell: pytest-xdist hands out whole modules in
    # this order (`make test` keeps it: --no-loadscope-reorder), and a long one started last
    # keeps the run waiting while the other processes have finished.
    expected: defaultdict[str, float] = defaultdict(float)
    for item in items:
        expected[module_of(item)] += expected_seconds(item)
    items.sort(key=lambda item: -expected[module_of(item)])


# Roughly what a test takes by its mark (`pytest --durations`): a slow one more than a few
# seconds, one in a browser a second or two, any other a fraction of one.
EXPECTED_SECONDS = {"slow": 10.0, "browser": 2.0}
UNMARKED_SECONDS = 0.2


def expected_seconds(item: pytest.Item) -> float:
    """Roughly how long `item` takes, by its marks."""
    return next((seconds for mark, seconds in EXPECTED_SECONDS.items()
                 if item.get_closest_marker(mark)), UNMARKED_SECONDS)


def module_of(item: pytest.Item) -> str:
    """The file of a test, as its node id names it."""
    return item.nodeid.split("::", 1)[0]


def uses_postgresql(item: pytest.Item) -> bool:
    """Whether the test runs on this run's PostgreSQL database (through a fixture or as one
    of the backends it is parametrized over)."""
    callspec = getattr(item, "callspec", None)
    parameters = callspec.params.values() if callspec is not None else ()
    return ("postgres_database" in getattr(item, "fixturenames", ())
            or any(value == "postgresql" for value in parameters))


@pytest.fixture
def backend_name(request) -> str:
    """The backend of the test's database: SQLite unless the test runs on both."""
    return getattr(request, "param", "sqlite")


@pytest.fixture(scope="session")
def postgres_database():
    """This run's throwaway PostgreSQL database (tests/services.py), dropped at its end."""
    with throwaway_database() as url:
        yield url


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    """This run's throwaway redis-server."""
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture
def database_setting(backend_name, tmp_path, request) -> str:
    """The app's DATABASE: a new SQLite file, or a new schema of the run's PostgreSQL."""
    if backend_name == "postgresql":
        return fresh_schema(request.getfixturevalue("postgres_database"))
    return str(tmp_path / "events.sqlite")


@pytest.fixture(scope="session", autouse=True)
def precompressed_static():
    """What `make static` does: gzip copies of the static files, for WhiteNoise to serve."""
    compressor = Compressor(quiet=True, use_brotli=False)
    # The suite's processes (pytest-xdist's workers) share the folder: one writes at a time,
    # so none of their servers reads a copy half written.
    (PROJECT_ROOT / "build").mkdir(exist_ok=True)
    with open(PROJECT_ROOT / "build" / "static.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for root, _, files in os.walk(PROJECT_ROOT / "static"):
            for name in files:
                path = os.path.join(root, name)
                if compressor.should_compress(name) and not compressed_already(path):
                    list(compressor.compress(path))


def compressed_already(path: str) -> bool:
    """Whether `path`'s gzip copy is as new as it: then it is not written again, since a
    worker's server may be sending that copy at this moment (a rewrite is not atomic)."""
    copy = path + ".gz"
    return os.path.exists(copy) and os.path.getmtime(copy) >= os.path.getmtime(path)


@pytest.fixture(scope="module", autouse=True)
def tally(request):
    """What a test module counts (inputs tried, faults injected, rows checked...).

    After the module's tests its `summarize(counts)` line is printed (shown by `pytest -s`).
    """
    counts: Counter[str] = Counter()
    yield counts
    summarize = getattr(request.module, "summarize", None)
    if summarize is not None:
        print("\n" + summarize(counts))


@pytest.fixture
def clock(request) -> Clock:
    """The app's clock, at the suite's start instant (never the wall clock) until moved; for
    a test that takes the clock itself, at each of CLOCK_EDGES in turn."""
    edge = getattr(request, "param", "start")
    return Clock(CLOCK_EDGES[edge] if edge in CLOCK_EDGES else suite_start())


@pytest.fixture
def app_config() -> dict[str, Any]:
    """Configuration a test module adds to the app's (override it, e.g. for a low limit)."""
    return {}


SeedingKey = tuple[str, date, str]


def seeding_key(app: Flask) -> SeedingKey:
    """What seeding the app's database reads: the events file, the day it schedules them from
    (on the app's clock), the time zone. Databases seeded alike are the same."""
    return str(app.config["SEED_FILE"]), site_today(), str(app.config["SITE_TIMEZONE"])


@pytest.fixture(scope="session")
def seeded_sqlite() -> dict[SeedingKey, Path]:
    """SQLite databases seeded during this run, by what their seeding read."""
    return {}


@pytest.fixture(scope="session")
def seeded_postgres() -> Iterator[dict[SeedingKey, str]]:
    """PostgreSQL databases seeded during this run (by name), dropped at its end."""
    templates: dict[SeedingKey, str] = {}
    yield templates
    for name in templates.values():
        drop_database(name)


def copy_seeded_sqlite(app: Flask, templates: dict[SeedingKey, Path], folder: Path) -> None:
    """Prepare the app's new SQLite database as a copy of one seeded alike earlier in the run
    (a file copy: milliseconds, where migrating and seeding takes 150-300 ms), or prepare it
    and keep a copy for the next tests."""
    database = Path(app.config["DATABASE"])
    template = templates.get(seeding_key(app))
    if template is not None:
        shutil.copyfile(template, database)
    prepare_database()  # on a copy: finds everything done, in a millisecond or two
    if template is None:
        template = folder / f"seeded-{len(templates)}.sqlite"
        with closing(sqlite3.connect(database)) as source, \
                closing(sqlite3.connect(template)) as copy:
            source.backup(copy)  # consistent whatever is still in the source's WAL
        templates[seeding_key(app)] = template


def copy_seeded_postgres(app: Flask, name: str, templates: dict[SeedingKey, str]) -> None:
    """Create the app's PostgreSQL database `name` as a copy of one seeded alike earlier in the
    run, seeding that one first if there is none yet."""
    template = templates.get(seeding_key(app))
    if template is None:
        template = new_database_name()
        create_database(template)
        PostgresStorage.prepare(database_url(template), seed=app.extensions[SEED])
        templates[seeding_key(app)] = template
    create_database(name, template)
    prepare_database()  # on a copy: finds everything done


@pytest.fixture
def app(backend_name, clock, app_config, tmp_path, tmp_path_factory, request):
    """The app, on a database of its own seeded with the sample events (a copy of one seeded
    once per run)."""
    postgres = backend_name == "postgresql"
    name = new_database_name()
    app = create_app({
        "TESTING": True,
        "SECRET_KEY": "test secret",
        "DATABASE": database_url(name) if postgres else str(tmp_path / "events.sqlite"),
        # Each test counts apart (a PostgreSQL app would count in the instance folder).
        "RATELIMIT_STORAGE_URI": f"host://{tmp_path / 'rate-limits.sqlite'}",
        "CLOCK": clock,
        # Limits stay on in tests, high enough that no flow test meets them.
        **ONE_ADDRESS_CROWD,
        **app_config,
    })
    with app.app_context():
        if postgres:
            copy_seeded_postgres(app, name, request.getfixturevalue("seeded_postgres"))
        else:
            copy_seeded_sqlite(app, request.getfixturevalue("seeded_sqlite"),
                               tmp_path_factory.getbasetemp())
    yield app
    close_backend(app)
    if postgres:
        drop_database(name)


@pytest.fixture
def client(app):
    """A browser that reads English (see helpers.READS_ENGLISH)."""
    return english(app.test_client())


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def visitor(app):
    """A browser with its own session."""
    return Visitor(app)


@pytest.fixture
def other_visitor(app):
    """A second, unrelated browser."""
    return Visitor(app)
