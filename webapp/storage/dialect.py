"""What tells the two backends apart in the SQL they share (`records.Records`, `schema`): how a
named parameter is written, how times and JSON go in and come out, which reads lock their rows,
which driver errors a failed statement raises, and what fills the slots of the schema.

The shared SQL names its parameters `:name`, which sqlite3 takes as it is; psycopg wants
`%(name)s`, so `postgres.PostgresDialect.sql` rewrites each statement once and keeps the
result. The PostgreSQL dialect lives with its backend: psycopg is an optional dependency, and
a site on SQLite never imports it.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable
from collections.abc import Mapping
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import Concatenate
from typing import ParamSpec
from typing import Protocol
from typing import TypeVar

from . import StorageError


def to_text(moment: datetime) -> str:
    """A datetime as SQLite stores it: UTC, second precision, `Z` suffix (so text order is
    time order)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def from_text(text: str) -> datetime:
    """The datetime SQLite stores as `text`."""
    return datetime.fromisoformat(text).astimezone(UTC)


class Dialect:
    """A backend's side of the shared SQL (see the module's docstring)."""

    # The driver's errors: `guarded` turns them into StorageError.
    errors: tuple[type[Exception], ...] = ()
    # What fills each slot of the schema's statements (`schema`'s docstring says what each is).
    slots: Mapping[str, str] = {}

    def sql(self, text: str) -> str:
        """`text`, a statement with `:name` parameters, as the driver takes it."""
        return text

    def locked(self, in_transaction: bool, of: str = "") -> str:
        """What ends a SELECT whose rows stay as read until the transaction ends (`of`: the
        tables locked, ` OF r`): nothing where a transaction holds the whole database."""
        return ""

    def claiming(self) -> str:
        """What ends the SELECT (inside a transaction) choosing rows to claim from a queue:
        where rows are locked, it locks them and passes over those another transaction holds
        (`FOR UPDATE SKIP LOCKED`), so two claims never take one row and neither waits for the
        other; nothing where a transaction holds the whole database."""
        lock = self.locked(in_transaction=True)
        return f"{lock} SKIP LOCKED" if lock else ""

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
    slots = {"key": "text", "moment": "text", "json": "text", "serial": "integer PRIMARY KEY",
             "without_rowid": " WITHOUT ROWID", "bytes": "blob"}
    # Plain functions (staticmethod): the records call them once a value, as a module's own.
    moment_in = staticmethod(to_text)
    moment_out = staticmethod(from_text)
    json_in = staticmethod(json.dumps)
    json_out = staticmethod(json.loads)


class OnDialect(Protocol):
    """Storage that runs its SQL through a dialect (`records.Records` and its parts)."""

    dialect: Dialect


P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S", bound=OnDialect)


def guarded(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """A decorator turning the backend's driver errors (`Dialect.errors`) into StorageError;
    the cause stays in the server log only."""

    @functools.wraps(method)
    def wrapper(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except self.dialect.errors as error:  # only looked up once something failed
            raise StorageError(f"{method.__name__} failed") from error

    return wrapper
