"""The query plans search relies on: what each search matches in the index (its FTS5 query:
one conjunction per location, rarest term first) and SQLite's EXPLAIN QUERY PLAN of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from webapp.domain.schemas import PAGE_SIZE
from webapp.domain.schemas import SEARCH_COUNT_CAP
from webapp.storage.sqlite import SQLiteStorage

from .floors import ENDPOINTS


def measure(database: Path) -> list[dict[str, Any]]:
    """The plan of each search of the floors (see `SQLiteStorage.plan_search`)."""
    storage = SQLiteStorage.open(database)
    try:
        found: list[dict[str, Any]] = []
        for endpoint in ENDPOINTS:
            if not endpoint.searches or any(p["path"] == endpoint.path for p in found):
                continue
            query = endpoint.storage_query()
            plan = storage.plan_search(query)
            if plan is None:  # no word to look for: nothing is read, there is no plan
                continue
            found.append({"endpoint": endpoint.name, "path": endpoint.path,
                          "match": plan.params["match"],
                          "steps": storage.explain_search(query, PAGE_SIZE, SEARCH_COUNT_CAP)})
        return found
    finally:
        storage.close()
