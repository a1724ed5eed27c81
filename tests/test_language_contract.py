"""The machine contract never changes with the language (docs/design.md §7).

The same calls are made in Chinese and in English, each on a fresh copy of the site with the
same clock and the same random draws; every JSON answer must then be equal key by key, but
for the sentences written for people — `message`, `nextAction`, field errors, the note on
untrusted content and a review's `effect` — which must be there in both and be translated.
Every tool and human-only step is called, and every one of the nine statuses is met.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from helpers import CSRF_FIELD
from helpers import HTMX
from helpers import JSON
from helpers import TOKEN_FIELD
from helpers import database_files
from helpers import hidden_value

from flask_webmcp.result import Status
from webapp import create_app
from webapp.storage.connection import prepare_database

# Paths (in the envelope) of the sentences people read; "*" is any key or list item.
HUMAN_TEXT = {("message",), ("nextAction",), ("errors", "*", "*"), ("untrustedContent", "note"),
              ("data", "review", "effect")}
LANGUAGES = ("zh-TW", "en")
EVENT = "evt-webmcp-intro"


class Caller:
    """One visitor of one copy of the site, asking everything as JSON in one language."""

    def __init__(self, app, language: str):
        self.app = app
        self.client = app.test_client()
        self.language = language
        page = self.client.get(f"/{language}/events/{EVENT}").get_data(as_text=True)
        self.csrf = hidden_value(CSRF_FIELD, page)
        self.answers: list[tuple[str, int, dict[str, Any]]] = []

    def get(self, path: str) -> dict[str, Any]:
        return self._keep(path, self.client.get(f"/{self.language}{path}", headers=JSON))

    def post(self, path: str, data: dict[str, str] | None = None, csrf: bool = True
             ) -> dict[str, Any]:
        form = {**(data or {}), **({"csrf_token": self.csrf} if csrf else {})}
        return self._keep(path, self.client.post(f"/{self.language}{path}", data=form,
                                                 headers=JSON))

    def token(self, path: str, data: dict[str, str]) -> str:
        """The confirmation token the review page shows (the JSON answer never carries it)."""
        partial = self.client.post(f"/{self.language}{path}", headers=HTMX,
                                   data={**data, "csrf_token": self.csrf})
        return hidden_value(TOKEN_FIELD, partial.get_data(as_text=True))

    def _keep(self, path: str, response) -> dict[str, Any]:
        body: dict[str, Any] = response.get_json()
        self.answers.append((path, response.status_code, body))
        return body


def every_call(caller: Caller) -> None:
    """Each tool and human-only step, reaching each status it can answer."""
    caller.get("/events?query=webmcp")
    caller.get("/events?query=nothing-matches-this")
    caller.get("/events?date_from=2027-02-01&date_to=2027-01-01")
    caller.get("/events?location=tokyo&page=0&colour=red")
    caller.get("/events?page=99")
    caller.get(f"/events/{EVENT}")
    caller.get("/events/evt-no-such-event")
    caller.get("/events/details?event_id=evt-agent-testing")
    caller.get("/events/details?event_id=Not%20An%20Id")
    caller.post(f"/events/{EVENT}/save")
    caller.post(f"/events/{EVENT}/save")
    caller.post("/events/evt-no-such-event/save")
    caller.post(f"/saved/{EVENT}/remove")
    caller.post(f"/saved/{EVENT}/remove")
    person = {"attendee_name": "Ann Lee", "email": "ann@example.com"}
    caller.post(f"/events/{EVENT}/register", {"attendee_name": "", "email": "not-an-address"})
    caller.post(f"/events/{EVENT}/register", person)
    token = caller.token(f"/events/{EVENT}/register", person)
    registration = caller.post("/registrations/confirm", {"confirmation_token": token})
    caller.post("/registrations/confirm", {"confirmation_token": token})
    caller.post("/registrations/confirm", {"confirmation_token": "no-such-token"})
    caller.post(f"/events/{EVENT}/register", person)
    chosen = {"registration_id": registration["data"]["registration"]["id"]}
    caller.post("/registrations/cancellation", chosen)
    token = caller.token("/registrations/cancellation", chosen)
    caller.post(f"/registrations/{chosen['registration_id']}/cancel",
                {"confirmation_token": token})
    caller.post(f"/registrations/{chosen['registration_id']}/cancel",
                {"confirmation_token": token})
    caller.post("/registrations/cancellation", chosen)
    caller.post("/registrations/cancellation", {"registration_id": "reg-aaaaaaaaaaaa"})
    caller.post("/registrations/cancellation", {})
    caller.post(f"/events/{EVENT}/save", csrf=False)
    caller._keep("PUT /events", caller.client.put(f"/{caller.language}/events", headers=JSON))
    caller.get("/no-such-page")


def over_budget(caller: Caller) -> None:
    """Writes past the rate limit: the first makes the visitor, who may then write twice."""
    for _ in range(4):
        caller.post(f"/events/{EVENT}/save")


def storage_down(caller: Caller) -> None:
    """A search after the database file is gone."""
    for path in database_files(Path(caller.app.config["DATABASE"])):
        path.unlink(missing_ok=True)
    caller.get("/events?query=webmcp")


@pytest.fixture
def in_each_language(tmp_path, clock, monkeypatch):
    """in_each_language(calls, **config): the answers to `calls` made on a fresh copy of the
    site in each language, with the same clock and the same random draws."""

    copies = itertools.count()

    def run(calls, **config) -> dict[str, list[tuple[str, int, dict[str, Any]]]]:
        answers = {}
        for language in LANGUAGES:
            draws = itertools.count()
            monkeypatch.setattr("secrets.token_urlsafe",
                                lambda size=None, draws=draws: f"draw{next(draws):08d}")
            app = create_app({"TESTING": True, "SECRET_KEY": "test secret", "CLOCK": clock,
                              "DATABASE": str(tmp_path / f"copy{next(copies)}.sqlite"),
                              "RATELIMIT_WRITES": "1000 per minute", **config})
            with app.app_context():
                prepare_database()
            caller = Caller(app, language)
            calls(caller)
            answers[language] = caller.answers
        return answers

    return run


def differences(chinese: Any, english: Any, path: tuple[str, ...] = ()) -> list[str]:
    """Where two envelopes differ but in their human text (which must differ: translated)."""
    if is_human_text(path):
        if isinstance(chinese, str) and isinstance(english, str) and chinese and english \
                and chinese != english:
            return []
        return [f"{'.'.join(path)}: not translated: {chinese!r} / {english!r}"]
    if isinstance(chinese, dict) and isinstance(english, dict):
        if chinese.keys() != english.keys():
            return [f"{'.'.join(path)}: keys {sorted(chinese)} / {sorted(english)}"]
        return [found for key in chinese
                for found in differences(chinese[key], english[key], (*path, key))]
    if isinstance(chinese, list) and isinstance(english, list):
        if len(chinese) != len(english):
            return [f"{'.'.join(path)}: {len(chinese)} items / {len(english)}"]
        return [found for index, (a, b) in enumerate(zip(chinese, english, strict=True))
                for found in differences(a, b, (*path, str(index)))]
    return [] if chinese == english else [f"{'.'.join(path)}: {chinese!r} / {english!r}"]


def is_human_text(path: tuple[str, ...]) -> bool:
    return any(len(pattern) == len(path) and all(p in ("*", part) for p, part in
                                                 zip(pattern, path, strict=True))
               for pattern in HUMAN_TEXT)


def assert_same_contract(answers) -> set[str]:
    """Every pair of answers has the same HTTP status and differs only in human text; the
    statuses met."""
    chinese, english = answers["zh-TW"], answers["en"]
    assert len(chinese) == len(english)
    met = set()
    for (path, code, zh), (_, en_code, en) in zip(chinese, english, strict=True):
        assert code == en_code, path
        assert differences(zh, en) == [], path
        met.add(zh["status"])
    return met


def test_answers_differ_only_in_their_sentences(in_each_language):
    met = assert_same_contract(in_each_language(every_call))
    met |= assert_same_contract(in_each_language(over_budget, RATELIMIT_WRITES="2 per minute"))
    met |= assert_same_contract(in_each_language(storage_down))
    assert met == {status.word for status in Status}


def test_the_comparison_sees_a_changed_key_value_or_untranslated_text():
    """The comparison itself: what it must not let through."""
    envelope = {"status": "success", "message": "找到", "data": {"count": 1}}
    assert differences(envelope, {**envelope, "message": "Found"}) == []
    assert differences(envelope, {**envelope, "message": "找到"})
    assert differences(envelope, {**envelope, "message": "Found", "data": {"count": 2}})
    assert differences(envelope, {**envelope, "message": "Found", "data": {"total": 1}})
    assert differences({"errors": {"page": ["太大"]}}, {"errors": {"page": ["Too big"]}}) == []
    assert differences({"errors": {"page": ["太大"]}}, {"errors": {"pages": ["Too big"]}})
