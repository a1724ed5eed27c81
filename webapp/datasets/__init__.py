"""Events in bulk: organizers' import files, the sample events, synthetic events for benchmarks."""

from __future__ import annotations

from flask import current_app

from ..clock import site_timezone
from ..clock import site_today
from ..storage import Storage
from .importer import read_events


def seed_sample_events(storage: Storage) -> None:
    """Fill a new database with the sample events, scheduled from today on the app's clock."""
    storage.import_events(read_events(current_app.config["SEED_FILE"], site_today(),
                                      site_timezone()))
