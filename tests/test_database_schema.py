"""The schema is written once (`webapp/storage/schema.py`), with a slot for each type the
backends store differently: applied on SQLite and on PostgreSQL it gives the same tables, with
the same columns in the same order, the same NOT NULLs, keys and indexes, so that no slot can
drift. Only the search index differs: it is each backend's own (`SearchIndex.schema`)."""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from typing import Any

import psycopg
from services import fresh_schema

from webapp.storage.postgres import PostgresStorage
from webapp.storage.sqlite import SQLiteStorage

# The search index's own, left out: the columns each backend adds for it (to events, and
# PostgreSQL's span length and generation to search_index), the indexes on them, and its own
# tables.
OWN_COLUMNS = {"search_key", "terms", "span_keys", "generation"}
OWN_TABLES = "event_search"  # the FTS5 table and its shadow tables
POSTGRES_OWN_TABLES = {"search_spans", "search_postings"}  # the slot postings
# CREATE [UNIQUE] INDEX name ON table USING method (columns) [WHERE ...], as pg_indexes says.
INDEX_DEFINITION = re.compile(r"CREATE (UNIQUE )?INDEX \S+ ON \S+ USING \w+ \((.*?)\)( WHERE .*)?$")

Tables = dict[str, dict[str, Any]]


def described(columns: list[tuple[str, bool]], primary_key: tuple[str, ...],
              indexes: list[tuple[str, tuple[str, ...], bool, bool]]) -> dict[str, Any]:
    """A table as both backends can say it, without the search index's own parts. A primary
    key's columns count as NOT NULL: PostgreSQL says so of them, SQLite does not."""
    return {
        "columns": [(name, not_null or name in primary_key) for name, not_null in columns
                    if name not in OWN_COLUMNS],
        "primary key": primary_key,
        "indexes": sorted(index for index in indexes if not OWN_COLUMNS & set(index[1])),
    }


def sqlite_tables(path) -> Tables:
    """Every table of a SQLite file: columns, primary key, other indexes (those a UNIQUE
    makes are named for what they hold, not SQLite's autoindex name)."""
    tables: Tables = {}
    with closing(sqlite3.connect(path)) as conn:
        names = [name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        for table in names:
            if table.startswith(OWN_TABLES):
                continue
            info = conn.execute(f"PRAGMA table_info({table})").fetchall()
            primary_key = tuple(row[1] for row in sorted(info, key=lambda row: row[5])
                                if row[5])
            indexes = []
            for _, name, unique, origin, partial in conn.execute(
                    f"PRAGMA index_list({table})"):
                if origin == "pk":
                    continue
                columns = tuple(row[2] for row in conn.execute(f"PRAGMA index_info({name})"))
                indexes.append((name if origin == "c" else "unique " + ", ".join(columns),
                                columns, bool(unique), bool(partial)))
            tables[table] = described([(row[1], bool(row[3])) for row in info], primary_key,
                                      indexes)
    return tables


def postgres_tables(url: str) -> Tables:
    """Every table of the URL's schema, said as `sqlite_tables` says them."""
    tables: Tables = {}
    with psycopg.connect(url) as conn:
        names = [name for (name,) in conn.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema()") if name not in POSTGRES_OWN_TABLES]
        constraints = {name: kind for name, kind in conn.execute(
            "SELECT conname, contype FROM pg_constraint "
            "WHERE connamespace = current_schema()::regnamespace")}
        for table in names:
            columns = [(name, nullable == "NO") for name, nullable in conn.execute(
                "SELECT column_name, is_nullable FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name = %s "
                "ORDER BY ordinal_position", [table])]
            primary_key: tuple[str, ...] = ()
            indexes = []
            for name, definition in conn.execute(
                    "SELECT indexname, indexdef FROM pg_indexes "
                    "WHERE schemaname = current_schema() AND tablename = %s", [table]):
                shape = INDEX_DEFINITION.match(definition)
                assert shape is not None, definition
                held = tuple(column.strip() for column in shape[2].split(","))
                if constraints.get(name) == "p":
                    primary_key = held
                    continue
                indexes.append((name if name not in constraints else "unique " + ", ".join(held),
                                held, shape[1] is not None, shape[3] is not None))
            tables[table] = described(columns, primary_key, indexes)
    return tables


def test_both_backends_end_with_the_same_tables_columns_and_indexes(tmp_path,
                                                                     postgres_database):
    path = tmp_path / "events.sqlite"
    SQLiteStorage.prepare(path)
    url = fresh_schema(postgres_database)
    PostgresStorage.prepare(url)
    on_sqlite, on_postgres = sqlite_tables(path), postgres_tables(url)
    assert "events" in on_sqlite and "schema_migrations" in on_sqlite
    assert sorted(on_sqlite) == sorted(on_postgres)
    for table, shape in on_sqlite.items():
        assert shape == on_postgres[table], table
