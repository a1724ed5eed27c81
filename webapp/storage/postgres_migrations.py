"""The PostgreSQL schema, as migrations applied in order (`PostgresStorage.prepare`).

The same tables as SQLite's migrations end with (`migrations.py`: its 001 to 005 are our 001,
its 006 on are our 002 on), written for PostgreSQL from the start: times are `timestamptz`,
a confirmation's payload is `jsonb`, and an event's search terms are a `text[]` on its row
with a GIN index. Texts that are sorted or
compared by range (ids, terms) use the "C" collation: byte order, as in SQLite, whatever
locale the database was created with.

Add a new migration for every change; never edit one that has shipped.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[str, str]] = [
    ("001_schema", """
        CREATE TABLE events (
            id text COLLATE "C" PRIMARY KEY,
            -- Start in whole seconds, then a tie number (storage.search): start order.
            search_key bigint NOT NULL UNIQUE,
            title text NOT NULL,
            summary text NOT NULL,
            description text NOT NULL,
            starts_at timestamptz NOT NULL,
            ends_at timestamptz NOT NULL,
            location text NOT NULL,             -- vocabularies are checked by the schemas
            venue text NOT NULL,
            price text NOT NULL,
            level text NOT NULL,
            capacity integer NOT NULL CHECK (capacity >= 0),
            held_seats integer NOT NULL DEFAULT 0 CHECK (held_seats BETWEEN 0 AND capacity),
            registration_deadline timestamptz NOT NULL,
            -- Made in Python by storage.search, as SQLite's index holds them: the same terms
            -- give both backends the same matches.
            terms text[] COLLATE "C" NOT NULL
        );
        -- Which events hold all of a conjunction's terms (terms @> ARRAY[...]).
        CREATE INDEX events_by_terms ON events USING gin (terms);

        -- How many events hold each term: a search asks only for terms some event holds.
        CREATE TABLE search_terms (
            term text COLLATE "C" PRIMARY KEY,
            events integer NOT NULL
        );
        -- Which version of the terms the index holds (0: none yet).
        CREATE TABLE search_index (terms_version integer NOT NULL);
        INSERT INTO search_index (terms_version) VALUES (0);

        CREATE TABLE visitors (
            id text COLLATE "C" PRIMARY KEY,
            created_at timestamptz NOT NULL,
            expires_at timestamptz NOT NULL
        );
        CREATE TABLE saved_events (
            visitor_id text COLLATE "C" NOT NULL REFERENCES visitors (id),
            event_id text COLLATE "C" NOT NULL REFERENCES events (id),
            saved_at timestamptz NOT NULL,
            PRIMARY KEY (visitor_id, event_id)
        );
        CREATE TABLE registrations (
            id text COLLATE "C" PRIMARY KEY,
            event_id text COLLATE "C" NOT NULL REFERENCES events (id),
            visitor_id text COLLATE "C" NOT NULL REFERENCES visitors (id),
            attendee_name text NOT NULL,
            email text NOT NULL,
            state text NOT NULL CHECK (state IN ('active', 'cancelled')),
            created_at timestamptz NOT NULL,
            cancelled_at timestamptz
        );
        -- Seats are counted, never stored: remaining = capacity - held - active registrations.
        CREATE INDEX registrations_by_event ON registrations (event_id, state);
        CREATE INDEX registrations_by_visitor ON registrations (visitor_id, created_at);
        -- One active registration per visitor and event, whatever the application does.
        CREATE UNIQUE INDEX one_active_registration ON registrations (event_id, visitor_id)
            WHERE state = 'active';

        CREATE TABLE confirmations (
            token_hash text COLLATE "C" PRIMARY KEY,  -- SHA-256 of the token, never the token
            visitor_id text COLLATE "C" NOT NULL REFERENCES visitors (id),
            action text NOT NULL,
            target_id text COLLATE "C" NOT NULL,
            payload jsonb NOT NULL,                   -- what the person reviewed
            created_at timestamptz NOT NULL,
            expires_at timestamptz NOT NULL,
            used_at timestamptz,
            source text NOT NULL DEFAULT 'human'      -- human, agent (WebMCP) or mcp
        );
        CREATE INDEX confirmations_by_visitor ON confirmations (visitor_id, expires_at);

        CREATE TABLE agent_connections (
            id text COLLATE "C" PRIMARY KEY,
            token_hash text COLLATE "C" NOT NULL UNIQUE,  -- SHA-256 of the access token
            visitor_id text COLLATE "C" NOT NULL REFERENCES visitors (id),
            label text NOT NULL,
            created_at timestamptz NOT NULL,
            expires_at timestamptz NOT NULL,
            last_used_at timestamptz
        );
        CREATE INDEX agent_connections_by_visitor ON agent_connections
            (visitor_id, created_at);

        CREATE TABLE activity (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            at timestamptz NOT NULL,
            visitor_id text COLLATE "C",
            source text NOT NULL,
            action text NOT NULL,
            status text NOT NULL,
            target_id text COLLATE "C"              -- an event or registration id; no free text
        );
        CREATE INDEX activity_by_visitor ON activity (visitor_id, at);
    """),
    # What a paid event costs (SQLite's 006): an amount in the currency's major unit and its
    # ISO 4217 code; a free event, or one whose price is not known, has no amount.
    ("002_event_prices", """
        ALTER TABLE events ADD COLUMN price_amount integer CHECK (price_amount >= 0);
        ALTER TABLE events ADD COLUMN price_currency text NOT NULL DEFAULT 'TWD';
    """),
    # A visitor's private calendar feed, known by the hash of its token (SQLite's 007).
    ("003_calendar_feeds", """
        CREATE TABLE calendar_feeds (
            visitor_id text COLLATE "C" PRIMARY KEY REFERENCES visitors (id),
            token_hash text COLLATE "C" NOT NULL UNIQUE,  -- SHA-256 of the token in the address
            created_at timestamptz NOT NULL
        );
    """),
    # A form's result kept for the page its redirect lands on, read once (SQLite's 008): the
    # session cookie holds only a random key, whose hash finds the row.
    ("004_carried_results", """
        CREATE TABLE carried_results (
            key_hash text COLLATE "C" PRIMARY KEY,  -- SHA-256 of the key in the session cookie
            body text NOT NULL,                     -- JSON: the result and its page-only values
            expires_at timestamptz NOT NULL
        );
        CREATE INDEX carried_results_by_expiry ON carried_results (expires_at);
    """),
]
