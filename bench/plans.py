"""The query plans search relies on, as SQLite reports them (EXPLAIN QUERY PLAN)."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

from webapp.storage import EventQuery
from webapp.storage.sqlite import SQLiteStorage

from .floors import ENDPOINTS


def measure(database: Path) -> list[dict[str, Any]]:
    """The plan each search uses (see `SQLiteStorage.plan_search`) and SQLite's EXPLAIN of it."""
    storage = SQLiteStorage.open(database)
    try:
        found = []
        for endpoint in ENDPOINTS:
            if endpoint.search is None or any(p["path"] == endpoint.path for p in found):
                continue
            query = EventQuery(starts_after=datetime.now(UTC), **endpoint.search)
            found.append({"endpoint": endpoint.name, "path": endpoint.path,
                          "plan": storage.plan_search(query).name,
                          **storage.explain_search(query)})
        return found
    finally:
        storage.close()
