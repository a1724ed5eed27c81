"""The synthetic databases: made with `flask generate-events` once a day (the events spread
around "now") and again whenever the generator or the schema changes, then copied for each run
so that the activity a run logs never changes them. SQLite's are files in the temporary
folder; PostgreSQL's are databases of the cluster `make services` runs (a copy is a
`CREATE DATABASE … TEMPLATE`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import psycopg
from psycopg import sql
from services import MAINTENANCE

from webapp.datasets import synthetic
from webapp.storage import dialect
from webapp.storage import fts
from webapp.storage import postgres
from webapp.storage import records
from webapp.storage import schema
from webapp.storage import search
from webapp.storage import shared
from webapp.storage import sqlite

SIZES = (1_000, 10_000, 100_000)
SEED = 1
STORE = Path(tempfile.gettempdir()) / "webmcp-events-bench"
FLASK = str(Path(sys.executable).with_name("flask"))


def dataset(count: int) -> Path:
    """The database of `count` events for today (events spread around "now"), made if missing."""
    STORE.mkdir(exist_ok=True)
    path = STORE / f"events-{count}-seed{SEED}-{date.today()}-{_source_hash()}.sqlite"
    if not path.exists():
        # Only other days' copies go: other checkouts on this machine may be benchmarking
        # other code today, with datasets of their own (another hash).
        for stale in STORE.glob(f"events-{count}-seed{SEED}-*"):
            if f"-{date.today()}-" not in stale.name:
                stale.unlink()
        draft = path.with_suffix(".draft")
        draft.unlink(missing_ok=True)
        subprocess.run([FLASK, "--app", "webapp", "generate-events", "--count", str(count),
                        "--seed", str(SEED), "--database", str(draft)], check=True)
        draft.rename(path)  # only a complete database is ever reused
    return path


def _source_hash() -> str:
    """A short hash of the code that decides what a dataset holds."""
    digest = hashlib.sha256()
    for module in (synthetic, schema, dialect, search, shared, records, fts, sqlite, postgres):
        if module.__file__ is None:  # modules imported from files always know it
            raise LookupError(f"{module.__name__} has no source file to hash")
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()[:8]


def working_copy(count: int, directory: Path) -> Path:
    """A copy of the `count` events database in `directory`, for one server to write to."""
    copy = directory / f"events-{count}.sqlite"
    shutil.copyfile(dataset(count), copy)
    return copy


def postgres_dataset(count: int) -> str:
    """The PostgreSQL database of `count` events for today, made if missing; its name."""
    prefix = f"webmcp_bench_{count}_seed{SEED}_"
    name = f"{prefix}{date.today():%Y%m%d}_{_source_hash()}"
    with psycopg.connect(MAINTENANCE, autocommit=True) as admin:
        existing = {row[0] for row in admin.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s", [prefix + "%"])}
        if name in existing:
            return name
        for stale in existing:  # other days' (and unfinished) copies
            if f"_{date.today():%Y%m%d}_" not in stale or stale.endswith("_draft"):
                admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(
                    sql.Identifier(stale)))
        draft = name + "_draft"
        admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8' "
                              "LOCALE 'C.UTF-8'").format(sql.Identifier(draft)))
        subprocess.run([FLASK, "--app", "webapp", "generate-events", "--count", str(count),
                        "--seed", str(SEED), "--database", f"postgresql:///{draft}"], check=True)
        # Only a complete database is ever reused.
        admin.execute(sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
            sql.Identifier(draft), sql.Identifier(name)))
    return name


@contextmanager
def postgres_working_copy(count: int, label: str = "") -> Iterator[str]:
    """A copy of the `count` events PostgreSQL database for one server to write to, dropped
    at the end; yields its URL. Copies open at once need their own `label`s."""
    source = postgres_dataset(count)
    copy = f"webmcp_bench_run_{os.getpid()}_{count}{label}"
    with psycopg.connect(MAINTENANCE, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(copy)))
        # Copied file by file: through the WAL (PostgreSQL 15's default) a million events'
        # 25 GB would be written twice.
        admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {} STRATEGY FILE_COPY").format(
            sql.Identifier(copy), sql.Identifier(source)))
        try:
            yield f"postgresql:///{copy}"
        finally:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(copy)))
