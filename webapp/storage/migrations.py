"""The database schema, as migrations applied in order (sqlite-utils `Migrations`).

Add a new migration for every change; never edit one that has shipped.
"""

from sqlite_utils import Database
from sqlite_utils import Migrations

migrations = Migrations("webmcp_events")


@migrations(name="001_events")
def create_events(db: Database) -> None:
    """Events, with full-text search over title and summary and indexes for every filter."""
    db.execute(
        """
        CREATE TABLE events (
            id TEXT PRIMARY KEY,
            title TEXT NOT NULL,
            summary TEXT NOT NULL,
            description TEXT NOT NULL,
            starts_at TEXT NOT NULL,            -- UTC, ISO 8601 with Z: sorts as text
            ends_at TEXT NOT NULL,
            location TEXT NOT NULL,             -- vocabularies are checked by the schemas
            venue TEXT NOT NULL,
            price TEXT NOT NULL,
            level TEXT NOT NULL,
            capacity INTEGER NOT NULL CHECK (capacity >= 0),
            held_seats INTEGER NOT NULL DEFAULT 0 CHECK (held_seats BETWEEN 0 AND capacity),
            registration_deadline TEXT NOT NULL
        )
        """
    )
    # Every search lists upcoming events soonest first: each filter gets an index that is
    # already in that order, so a page is read without sorting the matches.
    table = db["events"]
    table.create_index(["starts_at", "id"], index_name="events_by_start")
    for column in ("location", "price", "level"):
        table.create_index([column, "starts_at", "id"], index_name=f"events_by_{column}")
    table.create_index(["location", "price", "level", "starts_at", "id"],
                       index_name="events_by_all_filters")
    table.enable_fts(["title", "summary"], create_triggers=True, tokenize="porter")
