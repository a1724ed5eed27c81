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
    table = db.table("events")
    table.create_index(["starts_at", "id"], index_name="events_by_start")
    for column in ("location", "price", "level"):
        table.create_index([column, "starts_at", "id"], index_name=f"events_by_{column}")
    table.create_index(["location", "price", "level", "starts_at", "id"],
                       index_name="events_by_all_filters")
    table.enable_fts(["title", "summary"], create_triggers=True, tokenize="porter")


@migrations(name="002_visitors_registrations")
def create_visitor_tables(db: Database) -> None:
    """Anonymous visitors and what belongs to them; confirmations; the activity log."""
    db.execute(
        """
        CREATE TABLE visitors (
            id TEXT PRIMARY KEY,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE saved_events (
            visitor_id TEXT NOT NULL REFERENCES visitors(id),
            event_id TEXT NOT NULL REFERENCES events(id),
            saved_at TEXT NOT NULL,
            PRIMARY KEY (visitor_id, event_id)
        )
        """
    )
    db.execute(
        """
        CREATE TABLE registrations (
            id TEXT PRIMARY KEY,
            event_id TEXT NOT NULL REFERENCES events(id),
            visitor_id TEXT NOT NULL REFERENCES visitors(id),
            attendee_name TEXT NOT NULL,
            email TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('active', 'cancelled')),
            created_at TEXT NOT NULL,
            cancelled_at TEXT
        )
        """
    )
    # Seats are counted, never stored: remaining = capacity - held - active registrations.
    db.execute("CREATE INDEX registrations_by_event ON registrations (event_id, state)")
    db.execute("CREATE INDEX registrations_by_visitor ON registrations (visitor_id, created_at)")
    # One active registration per visitor and event, whatever the application does.
    db.execute("CREATE UNIQUE INDEX one_active_registration ON registrations "
               "(event_id, visitor_id) WHERE state = 'active'")
    db.execute(
        """
        CREATE TABLE confirmations (
            token_hash TEXT PRIMARY KEY,        -- SHA-256 of the token; the token is never stored
            visitor_id TEXT NOT NULL REFERENCES visitors(id),
            action TEXT NOT NULL,
            target_id TEXT NOT NULL,
            payload TEXT NOT NULL,              -- JSON: what the person reviewed
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            used_at TEXT
        )
        """
    )
    db.execute(
        """
        CREATE TABLE activity (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            visitor_id TEXT,
            source TEXT NOT NULL,               -- human or agent
            action TEXT NOT NULL,
            status TEXT NOT NULL,
            target_id TEXT                      -- an event or registration id; no free text
        )
        """
    )
    db.execute("CREATE INDEX activity_by_visitor ON activity (visitor_id, at)")


@migrations(name="003_filter_pair_indexes")
def index_filter_pairs(db: Database) -> None:
    """Location with level, and price with level, in start order too.

    Without them a search with two of the filters walked one filter's index and read every
    row to check the other: counting 1 000 upcoming events in Taipei for beginners took 6 ms
    at 100 000 events instead of 0.2 ms. (Location with price is served by the prefix of
    `events_by_all_filters`.)
    """
    table = db.table("events")
    table.create_index(["location", "level", "starts_at", "id"],
                       index_name="events_by_location_level")
    table.create_index(["price", "level", "starts_at", "id"], index_name="events_by_price_level")


@migrations(name="004_agent_connections")
def create_agent_connections(db: Database) -> None:
    """Agents a visitor connected over MCP, and who prepared each confirmation.

    A connection's access token is shown once, on the page that made it; only its hash is
    stored. `source` lets a person see on their review page who prepared what they confirm.
    """
    db.execute(
        """
        CREATE TABLE agent_connections (
            id TEXT PRIMARY KEY,                -- shown on the page, to revoke it
            token_hash TEXT NOT NULL UNIQUE,    -- SHA-256 of the access token
            visitor_id TEXT NOT NULL REFERENCES visitors(id),
            label TEXT NOT NULL,                -- the name the person gave it
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            last_used_at TEXT
        )
        """
    )
    db.execute("CREATE INDEX agent_connections_by_visitor ON agent_connections "
               "(visitor_id, created_at)")
    db.execute("ALTER TABLE confirmations ADD COLUMN source TEXT NOT NULL DEFAULT 'human'")
    db.execute("CREATE INDEX confirmations_by_visitor ON confirmations (visitor_id, expires_at)")


@migrations(name="005_search_terms")
def index_search_terms(db: Database) -> None:
    """Search by the terms of `storage.search` (Chinese, prefixes, every field) in start order.

    The porter-stemmed index of titles and summaries goes: it could not find a word inside a
    run of Chinese characters nor a word half typed. Each event gets a `search_key` (its
    start, then a tie number) and the new index `event_search` holds its terms under that
    key, filter values included, so one walk of the index in key order finds a search's
    matches soonest first, whatever its words and filters. The filter indexes on `events` go
    with it: no search reads them any more.

    The index is filled (and the keys given) by `SQLiteStorage.refresh_search_index`, which
    runs after the migrations whenever the index was built by another version of the terms.
    """
    for trigger in ("events_ai", "events_ad", "events_au"):
        db.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    db.execute("DROP TABLE IF EXISTS events_fts")
    for index in ("events_by_start", "events_by_location", "events_by_price", "events_by_level",
                  "events_by_all_filters", "events_by_location_level", "events_by_price_level"):
        db.execute(f"DROP INDEX IF EXISTS {index}")
    db.execute("ALTER TABLE events ADD COLUMN search_key INTEGER")
    db.execute("CREATE UNIQUE INDEX events_by_search_key ON events (search_key)")
    # The terms are made in Python (`storage.search`) and joined by spaces: the ascii tokenizer
    # splits on spaces and leaves every other character of a term as it is. No content is
    # stored and no positions (detail=none): a term's list of keys is all a search reads.
    # Leaf pages of 512 bytes let a walk skip the parts of a long list between two entries
    # of a rarer one, where 4 KB pages were read entry by entry (a rare word within a
    # filter: 0.15 -> 0.05 ms at 100 000 events; bench/README.md).
    db.execute("CREATE VIRTUAL TABLE event_search USING fts5(terms, content='', columnsize=0, "
               "detail=none, tokenize=\"ascii tokenchars '_@'\")")
    db.execute("INSERT INTO event_search (event_search, rank) VALUES ('pgsz', 512)")
    # How many events hold each term: a search reads the rarest lists first.
    db.execute("CREATE TABLE search_terms (term TEXT PRIMARY KEY, events INTEGER NOT NULL) "
               "WITHOUT ROWID")
    # Which version of the terms the index holds (0: none yet).
    db.execute("CREATE TABLE search_index (terms_version INTEGER NOT NULL)")
    db.execute("INSERT INTO search_index (terms_version) VALUES (0)")


@migrations(name="006_event_prices")
def add_event_prices(db: Database) -> None:
    """What a paid event costs: an amount in the currency's major unit (whole New Taiwan
    dollars by default) and its ISO 4217 code. A free event, or one whose price is not known,
    has no amount."""
    db.execute("ALTER TABLE events ADD COLUMN price_amount INTEGER "
               "CHECK (price_amount IS NULL OR price_amount >= 0)")
    db.execute("ALTER TABLE events ADD COLUMN price_currency TEXT NOT NULL DEFAULT 'TWD'")


@migrations(name="007_calendar_feeds")
def create_calendar_feeds(db: Database) -> None:
    """A visitor's private calendar feed of their registrations: one address each, known by
    the hash of its token (the address is shown once); making a new one replaces the old."""
    db.execute(
        """
        CREATE TABLE calendar_feeds (
            visitor_id TEXT PRIMARY KEY REFERENCES visitors(id),
            token_hash TEXT NOT NULL UNIQUE,    -- SHA-256 of the token in the address
            created_at TEXT NOT NULL
        )
        """
    )


@migrations(name="008_carried_results")
def create_carried_results(db: Database) -> None:
    """The result a form's POST shows on the page its redirect lands on, kept here for a few
    minutes and read once: it may hold a secret shown once (an access token, a calendar
    address), which the readable session cookie must not carry. Known by the hash of the
    random key the cookie holds instead."""
    db.execute(
        """
        CREATE TABLE carried_results (
            key_hash TEXT PRIMARY KEY,          -- SHA-256 of the key in the session cookie
            body TEXT NOT NULL,                 -- JSON: the result and its page-only values
            expires_at TEXT NOT NULL
        )
        """
    )
    # Keeping one deletes the expired ones: this finds them without reading the others.
    db.execute("CREATE INDEX carried_results_by_expiry ON carried_results (expires_at)")
