"""What tells the two backends apart in the SQL they share (`records.Records`): how a named
parameter is written, how times and JSON go in and come out, which reads lock their rows,
and which driver errors a failed statement raises.

The shared SQL names its parameters `:name`, which sqlite3 takes as it is; psycopg wants
`%(name)s`, so `PostgresDialect.sql` rewrites each statement once and keeps the result.
"""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import UTC
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

# A string literal or quoted name (kept as it is), or a `:name` parameter. The look-behind
# leaves PostgreSQL's `::type` casts alone: neither of their colons starts a parameter.
PARAMETER = re.compile(r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|(?<!:):([A-Za-z_]\w*)""")


def to_text(moment: datetime) -> str:
    """A datetime as SQLite stores it: UTC, second precision, `Z` suffix (so text order is
    time order)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def from_text(text: str) -> datetime:
    """The datetime SQLite stores as `text`."""
    return datetime.fromisoformat(text).astimezone(UTC)


def stored(moment: datetime) -> datetime:
    """A datetime as PostgreSQL stores it: UTC, to the second (as SQLite keeps it, so both
    order alike)."""
    return moment.astimezone(UTC).replace(microsecond=0)


def moment(value: datetime) -> datetime:
    """A stored timestamptz as the storage layer hands it out: in UTC."""
    return value.astimezone(UTC)


def as_read(value: dict[str, Any]) -> dict[str, Any]:
    """A jsonb value as psycopg reads it: already a dict."""
    return value


def pyformat(sql: str) -> str:
    """`sql` with each `:name` parameter written `%(name)s` and each literal `%` doubled (psycopg's
    form); string literals and quoted names are left as they are."""

    def rewrite(match: re.Match[str]) -> str:
        name = match.group(1)
        return match.group(0) if name is None else f"%({name})s"

    return PARAMETER.sub(rewrite, sql.replace("%", "%%"))


class Dialect:
    """A backend's side of the shared SQL (see the module's docstring)."""

    # The driver's errors: `records.guarded` turns them into StorageError.
    errors: tuple[type[Exception], ...] = ()

    def sql(self, text: str) -> str:
        """`text`, a statement with `:name` parameters, as the driver takes it."""
        return text

    def locked(self, in_transaction: bool, of: str = "") -> str:
        """What ends a SELECT whose rows stay as read until the transaction ends (`of`: the
        tables locked, ` OF r`): nothing where a transaction holds the whole database."""
        return ""

    @staticmethod
    def moment_in(value: datetime, /) -> Any:
        """A datetime as this database stores it."""
        raise NotImplementedError

    @staticmethod
    def moment_out(value: Any, /) -> datetime:
        """A stored time as a datetime in UTC."""
        raise NotImplementedError

    @staticmethod
    def json_in(value: dict[str, Any], /) -> Any:
        """A JSON object as this database stores it."""
        raise NotImplementedError

    @staticmethod
    def json_out(value: Any, /) -> dict[str, Any]:
        """A stored JSON object as a dict."""
        raise NotImplementedError


class SQLiteDialect(Dialect):
    """SQLite: `:name` as written, times as `Z`-suffixed text, JSON as text."""

    errors = (sqlite3.Error,)
    # Plain functions (staticmethod): the records call them once a value, as a module's own.
    moment_in = staticmethod(to_text)
    moment_out = staticmethod(from_text)
    json_in = staticmethod(json.dumps)
    json_out = staticmethod(json.loads)


class PostgresDialect(Dialect):
    """PostgreSQL: `%(name)s`, times as timestamptz cut to the second, JSON as jsonb."""

    errors = (psycopg.Error,)
    moment_in = staticmethod(stored)
    moment_out = staticmethod(moment)
    json_in = staticmethod(Jsonb)
    json_out = staticmethod(as_read)

    def __init__(self) -> None:
        # Each statement is rewritten once per process: the records pass the same few
        # module-level strings again and again, so a lookup is all a call costs.
        self._converted: dict[str, str] = {}

    def locked(self, in_transaction: bool, of: str = "") -> str:
        """` FOR UPDATE` inside a transaction (a row lock; outside one it would end at once)."""
        return f" FOR UPDATE{of}" if in_transaction else ""

    def sql(self, text: str) -> str:
        """`text` with psycopg's `%(name)s` parameters (`pyformat`), rewritten once."""
        try:
            return self._converted[text]
        except KeyError:
            converted = self._converted[text] = pyformat(text)
            return converted
