"""The database schema, written once for both backends: migrations by name, in the order they
are applied (`Records.migrate`, from each backend's `prepare`), each recorded in the table
`schema_migrations`. Add a new migration for every change; never edit one that has shipped.
A migration is a tuple of single statements: sqlite3 runs one a call (its `executescript`
would commit in the middle of the transaction that `prepare` holds).

A type that the backends store differently is a slot that each one's dialect fills
(`Dialect.slots`), so that both hold the same values and sort them alike:

- `{key}`: text sorted or compared by range (ids, hashes, terms), in byte order on both:
  SQLite's `text`; PostgreSQL's `text COLLATE "C"`, whatever locale the database was made with.
- `{moment}`: a time in UTC, to the second: ISO 8601 text ending in `Z` on SQLite (text order
  is time order), `timestamptz` on PostgreSQL.
- `{json}`: a JSON object: text on SQLite, `jsonb` on PostgreSQL.
- `{serial}`: a row number the database gives: SQLite's rowid, PostgreSQL's identity column.
- `{without_rowid}`: on SQLite, a table kept in the b-tree of its primary key (a lookup by
  key reads one tree); nothing on PostgreSQL.
- `{bytes}`: bytes kept as they are (a picture): SQLite's `blob`, PostgreSQL's `bytea`.

The search index is each backend's own: its statements for a migration (the `schema` of
`fts.SQLiteIndex` and `postgres.PostgresIndex`) run after the shared ones.
tests/test_database_schema.py checks that both backends end with the same tables, columns and
indexes, apart from the search index's own. (SQLite files from before this module kept their
history with sqlite-utils: `SQLiteStorage.prepare` adopts them.)
"""

from __future__ import annotations

MIGRATIONS: dict[str, tuple[str, ...]] = {
    "001_schema": (
        # No index per filter: a search reads its filters as terms of the search index
        # (`storage.search`), which each backend adds with the columns it reads (the key).
        """CREATE TABLE events (
            id {key} PRIMARY KEY,
            title text NOT NULL,
            summary text NOT NULL,
            description text NOT NULL,
            starts_at {moment} NOT NULL,
            ends_at {moment} NOT NULL,
            location text NOT NULL,             -- vocabularies are checked by the schemas
            venue text NOT NULL,
            price text NOT NULL,
            level text NOT NULL,
            capacity integer NOT NULL CHECK (capacity >= 0),
            held_seats integer NOT NULL DEFAULT 0 CHECK (held_seats BETWEEN 0 AND capacity),
            registration_deadline {moment} NOT NULL
        )""",
        # How many events hold each term: a search reads the rarest lists first, and asks
        # only for terms some event holds.
        "CREATE TABLE search_terms (term {key} PRIMARY KEY, events integer NOT NULL)"
        "{without_rowid}",
        # Which version of the terms the index holds (0: none yet): `refresh_search_index`
        # rebuilds the index after the migrations whenever another version made it.
        "CREATE TABLE search_index (terms_version integer NOT NULL)",
        "INSERT INTO search_index (terms_version) VALUES (0)",

        # Anonymous visitors and what belongs to them.
        """CREATE TABLE visitors (
            id {key} PRIMARY KEY,
            created_at {moment} NOT NULL,
            expires_at {moment} NOT NULL
        )""",
        """CREATE TABLE saved_events (
            visitor_id {key} NOT NULL REFERENCES visitors (id),
            event_id {key} NOT NULL REFERENCES events (id),
            saved_at {moment} NOT NULL,
            PRIMARY KEY (visitor_id, event_id)
        )""",
        """CREATE TABLE registrations (
            id {key} PRIMARY KEY,
            event_id {key} NOT NULL REFERENCES events (id),
            visitor_id {key} NOT NULL REFERENCES visitors (id),
            attendee_name text NOT NULL,
            email text NOT NULL,
            state text NOT NULL CHECK (state IN ('active', 'cancelled')),
            created_at {moment} NOT NULL,
            cancelled_at {moment}
        )""",
        # Seats are counted, never stored: remaining = capacity - held - active registrations.
        "CREATE INDEX registrations_by_event ON registrations (event_id, state)",
        "CREATE INDEX registrations_by_visitor ON registrations (visitor_id, created_at)",
        # One active registration per visitor and event, whatever the application does.
        "CREATE UNIQUE INDEX one_active_registration ON registrations (event_id, visitor_id) "
        "WHERE state = 'active'",

        """CREATE TABLE confirmations (
            token_hash {key} PRIMARY KEY,       -- SHA-256 of the token, never the token
            visitor_id {key} NOT NULL REFERENCES visitors (id),
            action text NOT NULL,
            target_id {key} NOT NULL,
            payload {json} NOT NULL,            -- what the person reviewed
            created_at {moment} NOT NULL,
            expires_at {moment} NOT NULL,
            used_at {moment},
            -- Who prepared it: human, agent (WebMCP) or mcp. The person's review page says so.
            source text NOT NULL DEFAULT 'human'
        )""",
        "CREATE INDEX confirmations_by_visitor ON confirmations (visitor_id, expires_at)",

        # Agents a visitor connected over MCP. A connection's access token is shown once, on
        # the page that made it; only its hash is stored.
        """CREATE TABLE agent_connections (
            id {key} PRIMARY KEY,               -- shown on the page, to revoke it
            token_hash {key} NOT NULL UNIQUE,   -- SHA-256 of the access token
            visitor_id {key} NOT NULL REFERENCES visitors (id),
            label text NOT NULL,                -- the name the person gave it
            created_at {moment} NOT NULL,
            expires_at {moment} NOT NULL,
            last_used_at {moment}
        )""",
        "CREATE INDEX agent_connections_by_visitor ON agent_connections "
        "(visitor_id, created_at)",

        """CREATE TABLE activity (
            id {serial},
            at {moment} NOT NULL,
            visitor_id {key},
            source text NOT NULL,               -- human, agent (WebMCP) or mcp
            action text NOT NULL,
            status text NOT NULL,
            target_id {key}                     -- an event or registration id; no free text
        )""",
        "CREATE INDEX activity_by_visitor ON activity (visitor_id, at)",
    ),
    # What a paid event costs: an amount in the currency's major unit (whole New Taiwan
    # dollars by default) and its ISO 4217 code. A free event, or one whose price is not
    # known, has no amount.
    "002_event_prices": (
        "ALTER TABLE events ADD COLUMN price_amount integer CHECK (price_amount >= 0)",
        "ALTER TABLE events ADD COLUMN price_currency text NOT NULL DEFAULT 'TWD'",
    ),
    # A visitor's private calendar feed of their registrations: one address each, known by
    # the hash of its token (the address is shown once); making a new one replaces the old.
    "003_calendar_feeds": (
        """CREATE TABLE calendar_feeds (
            visitor_id {key} PRIMARY KEY REFERENCES visitors (id),
            token_hash {key} NOT NULL UNIQUE,   -- SHA-256 of the token in the address
            created_at {moment} NOT NULL
        )""",
    ),
    # The result a form's POST shows on the page its redirect lands on, kept for a few
    # minutes and read once: it may hold a secret shown once (an access token, a calendar
    # address), which the readable session cookie must not carry. Known by the hash of the
    # random key the cookie holds instead.
    "004_carried_results": (
        """CREATE TABLE carried_results (
            key_hash {key} PRIMARY KEY,         -- SHA-256 of the key in the session cookie
            body text NOT NULL,                 -- JSON: the result and its page-only values
            expires_at {moment} NOT NULL
        )""",
        # Keeping one deletes the expired ones: this finds them without reading the others.
        "CREATE INDEX carried_results_by_expiry ON carried_results (expires_at)",
    ),
    # Mail waiting to be sent (`storage.outbox`), written in the same transaction as the
    # change it reports; the delivery loop (`webapp.mail`) claims, sends and marks it. A row
    # keeps what builds the message (kind, language, payload), not the message: the request
    # that queues it stays short under the write lock, and the message is made as it is sent.
    "005_outbox": (
        """CREATE TABLE outbox (
            id {serial},
            dedupe_key {key} NOT NULL UNIQUE,   -- one mail per key, however often queued
            recipient text NOT NULL,
            kind text NOT NULL,                 -- which templates and subject (`mail.kinds`)
            language text NOT NULL,             -- the BCP 47 tag of the page the person used
            payload {json} NOT NULL,            -- what the templates show
            state text NOT NULL DEFAULT 'queued'
                CHECK (state IN ('queued', 'sending', 'sent', 'failed')),
            attempts integer NOT NULL DEFAULT 0,  -- claims so far, the current one included
            next_attempt_at {moment} NOT NULL,
            -- A claim's lease: a sender that died mid-batch leaves its mail 'sending' until
            -- this passes, and then another sender takes it again.
            claimed_until {moment},
            last_error text,
            created_at {moment} NOT NULL,
            sent_at {moment}
        )""",
        # What a claim looks for: queued mail that is due, oldest due first (and mail whose
        # lease ran out, few).
        "CREATE INDEX outbox_by_state ON outbox (state, next_attempt_at)",
    ),
    # People who signed in (`storage.accounts`): an account is an e-mail address its owner
    # proved by following a link mailed to it. What they do while signed in belongs to the
    # account's own visitor, so everything written for visitors serves accounts unchanged.
    "006_accounts": (
        """CREATE TABLE accounts (
            id {key} PRIMARY KEY,
            email {key} NOT NULL UNIQUE,        -- as the schema loads it: one form each
            visitor_id {key} NOT NULL UNIQUE REFERENCES visitors (id),
            created_at {moment} NOT NULL
        )""",
        # A link is good once, for `SIGN_IN_LINK_TTL`; only the hash of its token is kept.
        """CREATE TABLE sign_in_links (
            token_hash {key} PRIMARY KEY,       -- SHA-256 of the token in the link
            email text NOT NULL,
            created_at {moment} NOT NULL,
            expires_at {moment} NOT NULL,
            used_at {moment}
        )""",
        "CREATE INDEX sign_in_links_by_expiry ON sign_in_links (expires_at)",
        # A signed-in browser: the session cookie holds a random id, the table its hash. It
        # ends after a time without requests or at the latest a time after signing in.
        """CREATE TABLE account_sessions (
            id_hash {key} PRIMARY KEY,          -- SHA-256 of the id in the session cookie
            account_id {key} NOT NULL REFERENCES accounts (id),
            created_at {moment} NOT NULL,
            seen_at {moment} NOT NULL
        )""",
        "CREATE INDEX account_sessions_by_account ON account_sessions (account_id)",
        # Signing in finds every registration made with the account's address, from any
        # browser (addresses are kept in one form: the schemas fold case and width).
        "CREATE INDEX registrations_by_email ON registrations (email)",
    ),
    # PostgreSQL's slot postings of the search terms (`postings`, in `PostgresIndex.schema`):
    # nothing shared.
    "007_search_postings": (),
    # The language a person registered in: later mail about the registration (a reminder)
    # speaks it. Registrations from before it was kept were made, by default, in Chinese.
    "008_registration_language": (
        "ALTER TABLE registrations ADD COLUMN language text NOT NULL DEFAULT 'zh-TW'",
    ),
    # OAuth 2.1 for MCP clients (`storage.oauth`): the clients the site knows, the codes a
    # person's approval gives, and the tokens a code or a refresh gives. An approved grant is
    # an agent connection (listed and revoked with the pasted-token ones); its tokens go with
    # it. Codes and tokens are kept only as SHA-256 hashes.
    "009_oauth": (
        # The client a connection was granted to (none for a pasted token).
        "ALTER TABLE agent_connections ADD COLUMN client_id text",
        """CREATE TABLE oauth_clients (
            client_id {key} PRIMARY KEY,        -- ours (registered) or its metadata's URL
            metadata {json} NOT NULL,           -- client_name, redirect_uris, ... as checked
            kind text NOT NULL CHECK (kind IN ('registered', 'document')),  -- RFC 7591, CIMD
            fetched_at {moment} NOT NULL
        )""",
        """CREATE TABLE oauth_codes (
            code_hash {key} PRIMARY KEY,        -- SHA-256 of the code
            client_id {key} NOT NULL,
            visitor_id {key} NOT NULL,          -- lives minutes: pruning visitors skips it
            redirect_uri text NOT NULL,
            resource text NOT NULL,             -- RFC 8707: the tokens are for this only
            scope text NOT NULL,
            code_challenge text NOT NULL,       -- PKCE, S256 only
            label text NOT NULL,                -- the client's name, for the connection
            language text NOT NULL,             -- of the consent page: the connection speaks it
            expires_at {moment} NOT NULL,
            used_at {moment},
            connection_id {key}                 -- what the exchange made (revoked on reuse)
        )""",
        "CREATE INDEX oauth_codes_by_expiry ON oauth_codes (expires_at)",
        # One row per issue: a refresh spends its row's refresh token and writes a new row, so
        # a refresh token used twice is found spent and ends the whole connection.
        """CREATE TABLE oauth_tokens (
            access_hash {key} PRIMARY KEY,      -- SHA-256 of the access token
            refresh_hash {key} NOT NULL UNIQUE, -- SHA-256 of the refresh token
            connection_id {key} NOT NULL REFERENCES agent_connections (id) ON DELETE CASCADE,
            client_id {key} NOT NULL,
            resource text NOT NULL,
            scope text NOT NULL,
            access_expires_at {moment} NOT NULL,
            refresh_used_at {moment}
        )""",
        "CREATE INDEX oauth_tokens_by_connection ON oauth_tokens (connection_id)",
    ),
    # The language of the page that connected an agent: its answers over MCP speak it unless a
    # request asks for another. Connections from before it was kept speak the default.
    "010_agent_connection_language": (
        "ALTER TABLE agent_connections ADD COLUMN language text NOT NULL DEFAULT 'zh-TW'",
    ),
    # The waitlist of a full event (`storage.waitlist`), on where the event's data turns it on
    # (`events.waitlist`). A person waits in the order they joined (`place`); a seat that frees
    # is offered to the first one waiting, held for them until `offer_ends_at`; accepting it
    # makes a registration. Held seats, active registrations and offers never outnumber the
    # capacity; an entry that ended (accepted, declined, expired, left) never comes back.
    "011_waitlist": (
        "ALTER TABLE events ADD COLUMN waitlist boolean NOT NULL DEFAULT false",
        """CREATE TABLE waitlist (
            place {serial},                     -- the order people joined in
            id {key} NOT NULL UNIQUE,           -- what the pages name it by (accept, leave)
            event_id {key} NOT NULL REFERENCES events (id),
            visitor_id {key} NOT NULL REFERENCES visitors (id),
            attendee_name text NOT NULL,
            email text NOT NULL,
            language text NOT NULL,             -- the offer's mail speaks it
            state text NOT NULL CHECK (state IN
                ('waiting', 'offered', 'accepted', 'declined', 'expired', 'left')),
            joined_at {moment} NOT NULL,
            offer_ends_at {moment},             -- offered: the seat is held until then
            ended_at {moment}                   -- accepted, declined, expired or left
        )""",
        # What passing seats on reads: an event's live entries, in the order they joined.
        "CREATE INDEX waitlist_by_event ON waitlist (event_id, state, place)",
        "CREATE INDEX waitlist_by_visitor ON waitlist (visitor_id)",
        # One place in line per visitor and event, whatever the application does.
        "CREATE UNIQUE INDEX one_place_in_line ON waitlist (event_id, visitor_id) "
        "WHERE state IN ('waiting', 'offered')",
    ),
    # Organizations and their people (`storage.organizers`): an account's role in each, and
    # an append-only audit log of what was done in the organizer area (ids only: no name or
    # address is written in it, so it outlives the accounts it names).
    "012_organizations": (
        """CREATE TABLE organizations (
            id {key} PRIMARY KEY,
            name text NOT NULL,
            description text NOT NULL,
            created_at {moment} NOT NULL
        )""",
        """CREATE TABLE memberships (
            organization_id {key} NOT NULL REFERENCES organizations (id),
            account_id {key} NOT NULL REFERENCES accounts (id),
            role text NOT NULL CHECK (role IN ('owner', 'manager', 'check_in')),
            since {moment} NOT NULL,
            PRIMARY KEY (organization_id, account_id)
        )""",
        "CREATE INDEX memberships_by_account ON memberships (account_id)",
        # An invitation by mail: good once, until it expires or is revoked; only the hash of
        # the token in its link is kept.
        """CREATE TABLE invitations (
            id {key} PRIMARY KEY,               -- named in the address that revokes it
            token_hash {key} NOT NULL UNIQUE,   -- SHA-256 of the token in the mailed link
            organization_id {key} NOT NULL REFERENCES organizations (id),
            email {key} NOT NULL,               -- as the schema loads it: one form each
            role text NOT NULL CHECK (role IN ('owner', 'manager', 'check_in')),
            invited_by {key} NOT NULL,          -- an account id
            created_at {moment} NOT NULL,
            expires_at {moment} NOT NULL,
            accepted_at {moment},
            revoked_at {moment}
        )""",
        "CREATE INDEX invitations_by_organization ON invitations (organization_id, created_at)",
        """CREATE TABLE audit_log (
            id {serial},
            at {moment} NOT NULL,
            organization_id {key} NOT NULL REFERENCES organizations (id),
            account_id {key} NOT NULL,          -- no reference: the line outlives the account
            action text NOT NULL,
            event_id {key},
            target text,                        -- an id: the account, invitation, ...
            detail text                         -- a word of the site's: the role given, ...
        )""",
        "CREATE INDEX audit_log_by_organization ON audit_log (organization_id, at)",
    ),
    # Which organization runs an event (none for the events the site imports itself), and who
    # was let in at the door: one check-in per registration, by the member who checked it.
    "013_organization_events": (
        "ALTER TABLE events ADD COLUMN organization_id {key} REFERENCES organizations (id)",
        "CREATE INDEX events_by_organization ON events (organization_id, starts_at)",
        """CREATE TABLE check_ins (
            registration_id {key} PRIMARY KEY REFERENCES registrations (id),
            event_id {key} NOT NULL REFERENCES events (id),
            checked_in_at {moment} NOT NULL,
            checked_in_by {key} NOT NULL        -- an account id: no reference, like the audit log
        )""",
        "CREATE INDEX check_ins_by_event ON check_ins (event_id, checked_in_at)",
    ),
    # An organization's events before they are published (`storage.event_drafts`): the
    # event's own columns, with who made and last changed it. A draft is in no other table, so
    # nothing public (search, the event page, the sitemap, the tools) can read it; publishing
    # moves it into `events` under the same id. Every save of an organizer's event (draft or
    # published) counts up its version and notes the fields it changed (`event_edits`), so a
    # save made from an older version is refused with what changed in between.
    "014_event_drafts": (
        """CREATE TABLE event_drafts (
            id {key} PRIMARY KEY,               -- the event's id, kept when it is published
            organization_id {key} NOT NULL REFERENCES organizations (id),
            title text NOT NULL,
            summary text NOT NULL,
            description text NOT NULL,
            starts_at {moment} NOT NULL,
            ends_at {moment} NOT NULL,
            location text NOT NULL,
            venue text NOT NULL,
            price text NOT NULL,
            level text NOT NULL,
            capacity integer NOT NULL CHECK (capacity >= 0),
            held_seats integer NOT NULL DEFAULT 0 CHECK (held_seats BETWEEN 0 AND capacity),
            registration_deadline {moment} NOT NULL,
            price_amount integer CHECK (price_amount >= 0),
            price_currency text NOT NULL DEFAULT 'TWD',
            waitlist boolean NOT NULL DEFAULT false,
            version integer NOT NULL,
            created_by {key} NOT NULL,          -- account ids: no reference, like the audit log
            created_at {moment} NOT NULL,
            updated_by {key} NOT NULL,
            updated_at {moment} NOT NULL
        )""",
        "CREATE INDEX event_drafts_by_organization ON event_drafts (organization_id, starts_at)",
        # A published event's version goes on from its draft's (1: never edited here).
        "ALTER TABLE events ADD COLUMN version integer NOT NULL DEFAULT 1",
        """CREATE TABLE event_edits (
            event_id {key} NOT NULL,            -- a draft's or an event's id
            version integer NOT NULL,           -- the version this save made
            changed text NOT NULL,              -- the names of the fields it changed, spaced
            edited_by {key} NOT NULL,
            edited_at {moment} NOT NULL,
            PRIMARY KEY (event_id, version)
        )""",
    ),
    # When an organization cancelled an event, and the line it gave people as the reason
    # (empty: none given). A cancelled event keeps its page, its search terms and its
    # registrations: the page and calendars say it is cancelled, and registering is refused.
    "015_cancelled_events": (
        "ALTER TABLE events ADD COLUMN cancelled_at {moment}",
        "ALTER TABLE events ADD COLUMN cancellation_reason text NOT NULL DEFAULT ''",
    ),
    # What an organizer says of an event beyond the above, in a draft as in a published event
    # (`Event`): the language of its text, its street address, its online platform and when
    # the link is sent, its topic tags (`storage.shared.TAG_SEPARATOR` between them) and a
    # payment note. Each defaults to "" (not given), so events imported or generated without
    # them, and every row from before, stay valid: "" as a language means "not declared".
    "016_event_details": tuple(
        f"ALTER TABLE {table} ADD COLUMN {column} text NOT NULL DEFAULT ''"
        for table in ("events", "event_drafts")
        for column in ("language", "street_address", "online_platform", "link_sent",
                       "topic_tags", "payment_note")),
    # An event's cover picture (`storage.covers`), keyed by the event's id, which a draft keeps
    # when it is published: one row serves the draft and the published event, and no column of
    # `events` or `event_drafts` changes. Each rendition is a JPEG the site made itself from
    # the upload (`domain.images`); the digest names them in their addresses, so a new picture
    # has new addresses and a cached old one is never shown for it.
    "017_event_covers": (
        """CREATE TABLE event_covers (
            event_id {key} PRIMARY KEY,         -- a draft's or an event's id: no reference
            alt text NOT NULL,                  -- what the picture shows, for who cannot see it
            digest {key} NOT NULL,
            image_1200 {bytes} NOT NULL,        -- 1200 × 630: wide screens, link previews
            image_600 {bytes} NOT NULL,         -- 600 × 315: phones
            updated_by {key} NOT NULL,          -- an account id: no reference, like the audit log
            updated_at {moment} NOT NULL
        )""",
    ),
    # An organization's logo (`storage.covers`), kept as an event's cover is: square JPEGs the
    # site made itself from the upload, named in their addresses by their digest. An
    # organization's page is public from its start, so its logo is too: no draft to join.
    "018_organization_logos": (
        """CREATE TABLE organization_logos (
            organization_id {key} PRIMARY KEY REFERENCES organizations (id),
            alt text NOT NULL,                  -- what the logo shows, for who cannot see it
            digest {key} NOT NULL,
            image_256 {bytes} NOT NULL,         -- 256 × 256: its page, link previews
            image_96 {bytes} NOT NULL,          -- 96 × 96: beside its name on an event's page
            updated_by {key} NOT NULL,          -- an account id: no reference, like the audit log
            updated_at {moment} NOT NULL
        )""",
    ),
    # PostgreSQL's slot postings keep each span's keys uncompressed (`PostgresIndex.schema`):
    # nothing shared.
    "019_search_spans_uncompressed": (),
    # PostgreSQL's search index says which state of it is stored (`PostgresIndex.schema`), for
    # the counts a process remembers: nothing shared.
    "020_search_generation": (),
    # PostgreSQL's slot postings keep each span's keys as 4-byte offsets
    # (`PostgresIndex.schema`): nothing shared.
    "021_search_span_offsets": (),
}
