"""The synthetic databases: made with `flask generate-events` once a day (the events spread
around "now") and again whenever the generator or the schema changes, then copied for each run
so that the activity a run logs never changes them.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

from webapp.datasets import synthetic
from webapp.storage import migrations
from webapp.storage import search
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
    for module in (synthetic, migrations, search, sqlite):
        if module.__file__ is None:  # modules imported from files always know it
            raise LookupError(f"{module.__name__} has no source file to hash")
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()[:8]


def working_copy(count: int, directory: Path) -> Path:
    """A copy of the `count` events database in `directory`, for one server to write to."""
    copy = directory / f"events-{count}.sqlite"
    shutil.copyfile(dataset(count), copy)
    return copy
