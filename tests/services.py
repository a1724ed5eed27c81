"""The servers the PostgreSQL and Redis tests use, for real (`make test` starts or installs
what is missing: see the Makefile's `services`).

PostgreSQL is Debian's packaged cluster, running as a service (its `initdb` refuses root);
the run's user has a role of its own name that may create databases and end their sessions
(made by the postgres user, `make postgres`: the drop at the end must also end an autovacuum
worker that happens to be busy in the database). Each test run gets a throwaway database,
dropped at its end, and each test a schema of its own in it (a `search_path` in its URL):
fresh tables at the cost of a CREATE SCHEMA. Redis is a throwaway `redis-server` on a free
port, keeping nothing on disk.
If either cannot be reached the tests that need it fail, saying how to start it: never skip.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import redis
from psycopg import sql
from servers import free_port
from servers import stop

# The cluster's socket, as the run's user (peer authentication): no password anywhere.
MAINTENANCE = "postgresql:///postgres"
HOW_TO_START = "start it with `make services` (make test does)"


class ServiceUnavailable(RuntimeError):
    """A server the tests need is not there (never a reason to skip)."""


@contextmanager
def throwaway_database() -> Iterator[str]:
    """A new, empty database for this run (UTF-8, byte order for text), dropped at the end;
    yields its URL."""
    name = new_database_name()
    with maintenance_connection() as admin:
        admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8' "
                              "LOCALE 'C.UTF-8'").format(sql.Identifier(name)))
        # A throwaway database need not survive a crash of the server: no wait for the disk.
        admin.execute(sql.SQL("ALTER DATABASE {} SET synchronous_commit = off").format(
            sql.Identifier(name)))
        try:
            yield f"postgresql:///{name}"
        finally:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def maintenance_connection() -> psycopg.Connection:
    """A connection to the cluster's maintenance database (autocommit), or ServiceUnavailable
    saying how to start the cluster."""
    try:
        return psycopg.connect(MAINTENANCE, autocommit=True)
    except psycopg.OperationalError as error:
        raise ServiceUnavailable(f"PostgreSQL is not reachable ({error}): {HOW_TO_START}"
                                 ) from error


def database_url(name: str) -> str:
    """The URL of database `name` of the cluster; a throwaway database need not survive a
    crash of the server, so its commits do not wait for the disk."""
    options = urllib.parse.quote("-c synchronous_commit=off")
    return f"postgresql:///{name}?options={options}"


def new_database_name() -> str:
    """A name for a database of this run (its process id in it, for whoever cleans up)."""
    return f"webmcp_test_{os.getpid()}_{secrets.token_hex(4)}"


def create_database(name: str, template: str = "template0") -> None:
    """Database `name` as a copy of `template` (UTF-8, byte order for text, like the one
    `throwaway_database` makes): a copy of a seeded database takes about 0.2 s, where
    migrating and seeding a new one takes 0.7-1.9 s."""
    with maintenance_connection() as admin:
        admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {} ENCODING 'UTF8' LOCALE 'C.UTF-8' "
                              "STRATEGY WAL_LOG").format(sql.Identifier(name),
                                                         sql.Identifier(template)))


def drop_database(name: str) -> None:
    """Drop database `name`, ending whatever session is still in it."""
    with maintenance_connection() as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(name)))


def fresh_schema(database: str) -> str:
    """A new schema in `database`; the URL whose connections use it (and only it)."""
    name = f"test_{secrets.token_hex(6)}"
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
    options = urllib.parse.quote(f"-c search_path={name}")
    return f"{database}?options={options}"


@contextmanager
def redis_server(directory: Path) -> Iterator[str]:
    """A throwaway redis-server on a free loopback port (nothing saved); yields its URL."""
    port = free_port()
    directory.mkdir(parents=True, exist_ok=True)
    log = open(directory / "redis.log", "wb")  # noqa: SIM115 - closed below
    try:
        process = subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(directory)],
            stdout=log, stderr=subprocess.STDOUT)
    except FileNotFoundError as error:
        log.close()
        raise ServiceUnavailable(f"redis-server is not installed: {HOW_TO_START}") from error
    url = f"redis://127.0.0.1:{port}"
    try:
        wait_until_pong(url, process)
        yield url
    finally:
        stop(process)
        log.close()


def wait_until_pong(url: str, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    client = redis.Redis.from_url(url)
    deadline = time.monotonic() + timeout
    try:
        while True:
            if process.poll() is not None:
                raise ServiceUnavailable(f"redis-server exited with {process.returncode}")
            try:
                if client.ping():
                    return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise ServiceUnavailable("redis-server did not answer in time") from None
                time.sleep(0.05)
    finally:
        client.close()
