"""Helpers for HTTP tests: the three renderings of one request and their JSON-LD, the forms'
hidden tokens, what a test compares in the database, and another writer holding it.

Nothing here imports the app: the benchmarks and `servers.py` use it beside a server process.
"""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from bs4 import BeautifulSoup
from bs4 import Tag
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

PROJECT_ROOT = Path(__file__).resolve().parent.parent

# The suite's visitors read English (the site's default for them would be Chinese): at a
# language-neutral address JSON, partials and POSTs are answered in place in English, and a
# page is redirected to /en/. Tests of the languages themselves say which they want.
READS_ENGLISH = {"HTTP_ACCEPT_LANGUAGE": "en"}

JSON = {"Accept": "application/json"}
HTMX = {"HX-Request": "true", "HX-Request-Type": "partial"}
RENDERINGS = {"json": JSON, "partial": HTMX, "page": {}}

CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')
TOKEN_FIELD = re.compile(r'name="confirmation_token" value="([^"]+)"')


def confirmation_tokens(page: str) -> list[str]:
    """The confirmation tokens a page offers, each once: a review's confirm form and its
    "Don't register"/"Keep it" form carry the same token."""
    return list(dict.fromkeys(TOKEN_FIELD.findall(page)))

# What only a stack trace, an SQL error or a file path would put in an answer.
LEAK_MARKERS = ("Traceback", 'File "', "sqlite", "SQLITE", "SELECT", "INSERT ", "UPDATE ",
                "DELETE ", "events_fts", "OperationalError", "IntegrityError", "DatabaseError",
                "Exception", "werkzeug", ".py", "site-packages", str(PROJECT_ROOT), "/tmp")
# What SQLite and the system say of a file they cannot use. Only an answer without event text
# (an error page) is checked for these: organizers may well write such words.
FAULT_MARKERS = (*LEAK_MARKERS, "locked", "permission", "Permission", "denied")


def assert_no_leak(text: str, given: str = "", markers: tuple[str, ...] = LEAK_MARKERS) -> None:
    """No leak marker in an answer, but those the request itself sent (echoed input)."""
    for marker in markers:
        if marker.lower() not in given.lower():
            assert marker not in text, f"{marker!r} leaked into the answer"


def jsonld_blocks(html: bytes | str) -> list[dict[str, Any]]:
    """Every JSON-LD block of an HTML answer, parsed."""
    soup = BeautifulSoup(html, "html.parser")
    return [json.loads(tag.get_text())
            for tag in soup.find_all("script", type="application/ld+json")]


def the_jsonld(html: bytes | str) -> dict[str, Any]:
    """The single JSON-LD block of an HTML answer (fails if there is not exactly one)."""
    blocks = jsonld_blocks(html)
    assert len(blocks) == 1, f"expected one JSON-LD block, found {len(blocks)}"
    return blocks[0]


def english(client: FlaskClient) -> FlaskClient:
    """`client`, reading English (see READS_ENGLISH)."""
    client.environ_base.update(READS_ENGLISH)
    return client


def page_address(url: str, language: str = "en") -> str:
    """The address of a page in `language`: a neutral address would only redirect there."""
    return url if url.startswith(f"/{language}/") else f"/{language}{url}"


def three_answers(client: FlaskClient, url: str, method: str = "get", **kwargs: Any
                  ) -> tuple[TestResponse, TestResponse, TestResponse]:
    """The JSON, partial and full-page answers to the same request, at the English address
    of the page (the page itself is not served at a neutral address)."""
    url = page_address(url)
    send = getattr(client, method)
    as_json = send(url, headers=JSON, **kwargs)
    partial = send(url, headers=HTMX, **kwargs)
    page = send(url, **kwargs)
    return as_json, partial, page


def one(soup: Tag, selector: str) -> Tag:
    """The first element `selector` finds in `soup`; the test fails when there is none."""
    found = soup.select_one(selector)
    assert found is not None, f"nothing matches {selector!r}"
    return found


def attribute(element: Tag, name: str) -> str:
    """An attribute that holds one value (BeautifulSoup splits class-like ones into lists)."""
    value = element[name]
    assert isinstance(value, str), f"{name} holds a list: {value!r}"
    return value


def hidden_value(field: re.Pattern[str], page: str) -> str:
    """The value of a hidden form field (CSRF_FIELD, TOKEN_FIELD) in a page."""
    found = field.search(page)
    assert found is not None, f"the page has no field matching {field.pattern!r}"
    return found.group(1)


def database_files(database: Path) -> list[Path]:
    """The database file and its WAL companions (any of them may not exist at the moment)."""
    return [database, *(database.with_name(database.name + suffix) for suffix in ("-wal", "-shm"))]


# Everything a request could change. Not the activity log (refusals are logged) nor when a
# visitor's session ends (any write they attempt extends it).
STORED = {"visitors": "id, created_at", "saved_events": "*", "registrations": "*",
          "confirmations": "*"}


def stored_rows(database: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row a write could leave behind, by table."""
    with sqlite3.connect(database) as conn:
        return {table: conn.execute(f"SELECT {columns} FROM {table} ORDER BY 1, 2").fetchall()
                for table, columns in STORED.items()}


@contextmanager
def write_lock_held(database: Path) -> Iterator[None]:
    """Another writer holds the database's write lock while the block runs (in WAL mode
    readers still read; writers wait in their busy timeout, then fail)."""
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


PEOPLE = itertools.count(1)


def unique_email() -> str:
    """An e-mail address no other registration of the run uses (one address holds one seat
    of an event, and servers are shared between tests)."""
    return f"ann.{next(PEOPLE)}@example.com"


def new_person(name: str = "Ann Lee") -> dict[str, str]:
    """A registration's attendee, with an address of their own."""
    return {"attendee_name": name, "email": unique_email()}


class Visitor:
    """One browser: its own cookies, the CSRF token its pages carry, and shortcuts; `address`
    is the one it connects from (the test client's default is 127.0.0.1)."""

    def __init__(self, app, address: str | None = None):
        self.client = english(app.test_client())
        # Each person registers with an address of their own: one address holds one seat of
        # an event, whoever uses it.
        self.email = unique_email()
        if address is not None:
            self.client.environ_base["REMOTE_ADDR"] = address
        self._csrf: str | None = None

    @property
    def csrf(self) -> str:
        if self._csrf is None:
            page = self.client.get("/en/events/evt-webmcp-intro").get_data(as_text=True)
            self._csrf = hidden_value(CSRF_FIELD, page)
        return self._csrf

    def new_session(self) -> None:
        """Forget the form token: the browser's session was replaced (signing in or out)."""
        self._csrf = None

    def get(self, url, **kwargs):
        return self.client.get(url, **kwargs)

    def post(self, url, data=None, headers=None, csrf=True, **kwargs):
        data = dict(data or {})
        if csrf:
            data.setdefault("csrf_token", self.csrf)
        return self.client.post(url, data=data, headers=headers or {}, **kwargs)

    def post_json(self, url, data=None, **kwargs):
        return self.post(url, data, headers=JSON, **kwargs)

    def save(self, event_id="evt-webmcp-intro"):
        return self.post_json(f"/events/{event_id}/save").get_json()

    def prepare_registration(self, event_id="evt-webmcp-intro", name="Ann Lee",
                             email: str | None = None) -> tuple[dict[str, Any], str | None]:
        """The prepare answer (from the htmx partial) and the token of its confirm form; with
        this visitor's own e-mail address unless another is given."""
        response = self.post(f"/events/{event_id}/register",
                             {"attendee_name": name, "email": email or self.email},
                             headers=HTMX)
        token = TOKEN_FIELD.search(response.get_data(as_text=True))
        return the_jsonld(response.data), token.group(1) if token else None

    def confirm_registration(self, token):
        return self.post_json("/registrations/confirm", {"confirmation_token": token})

    def register(self, event_id="evt-webmcp-intro", **kwargs) -> dict[str, Any]:
        """Prepare and confirm: the confirmed registration."""
        _, token = self.prepare_registration(event_id, **kwargs)
        confirmed = self.confirm_registration(token).get_json()
        registration: dict[str, Any] = confirmed["data"]["registration"]
        return registration

    def prepare_cancellation(self, registration_id) -> tuple[dict[str, Any], str | None]:
        response = self.post("/registrations/cancellation",
                             {"registration_id": registration_id}, headers=HTMX)
        token = TOKEN_FIELD.search(response.get_data(as_text=True))
        return the_jsonld(response.data), token.group(1) if token else None

    def confirm_cancellation(self, registration_id, token):
        return self.post_json(f"/registrations/{registration_id}/cancel",
                              {"confirmation_token": token})

    def seats(self, event_id="evt-webmcp-intro") -> int:
        body = self.get(f"/events/{event_id}", headers=JSON).get_json()
        seats: int = body["data"]["event"]["remainingSeats"]
        return seats


def query_database(setting: str | Path, statement: str, params: Sequence[object] = ()
                   ) -> list[tuple[Any, ...]]:
    """The rows of a query (`?` placeholders) on a database (the DATABASE setting of either
    backend)."""
    if str(setting).startswith("postgresql://"):
        with psycopg.connect(str(setting)) as conn:
            return conn.execute(statement.replace("?", "%s"), params).fetchall()
    with sqlite3.connect(setting) as conn:
        return conn.execute(statement, params).fetchall()
