"""Access control attacks: who may do what.

Systematic matrices, beside the single cases of test_registration, test_cancellation and
test_visitors: every POST route refuses a missing, forged or foreign CSRF token; another
visitor's saved events, registrations and confirmation tokens are invisible (`not_found`);
a confirmation token works only for its own visitor, action and target, only once, only for
five minutes, and a refused attempt neither changes anything nor spends the token.
"""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from helpers import JSON
from helpers import RENDERINGS
from helpers import Visitor
from helpers import one
from helpers import stored_rows
from helpers import the_jsonld
from routes import HUMAN_ONLY_POST_ROUTES
from routes import POST_ROUTES
from routes import refused_unread_without_sign_in

from flask_webmcp.routes import route_roles
from webapp.domain.actions.registrations import CONFIRMATION_LIFETIME
from webapp.domain.catalog import CATALOG
from webapp.domain.tokens import hash_token


def summarize(counts) -> str:
    return (f"access control: {counts['refused']} forbidden requests refused, "
            f"{counts['rows compared']} stored rows compared unchanged around them")


class Unchanged:
    """A block after which the stored rows must be exactly as before it."""

    def __init__(self, app, tally):
        self.database = Path(app.config["DATABASE"])
        self.tally = tally

    def __enter__(self):
        self.before = stored_rows(self.database)

    def __exit__(self, *exc_info):
        if exc_info[0] is None:
            assert stored_rows(self.database) == self.before
            self.tally["rows compared"] += sum(len(rows) for rows in self.before.values())


def envelope_of(response, rendering: str) -> dict[str, Any]:
    return response.get_json() if rendering == "json" else the_jsonld(response.data)


def refused(tally, response, rendering: str, status: str, code: int, action: str) -> None:
    assert response.status_code == code
    envelope = envelope_of(response, rendering)
    assert (envelope["status"], envelope["action"]) == (status, action)
    tally["refused"] += 1


# -- CSRF: every POST route, every rendering, every way of getting the token wrong ------------


@pytest.mark.parametrize(("url", "data", "action"), POST_ROUTES)
def test_every_post_without_a_valid_form_token_is_session_expired(tally, app, visitor,
                                                                  other_visitor, url, data,
                                                                  action):
    visitor.save("evt-webmcp-intro")  # a live visitor, with something to lose
    foreign = other_visitor.csrf  # valid, but signed for another session
    wrong_tokens = {"missing": None, "empty": "", "forged": "forged-token",
                    "another session's": foreign, "cut short": visitor.csrf[:-4]}
    # The organizer area refuses a visitor who is no member before it reads the body, the
    # token in it included (test_organization_logos: a member's wrong token).
    status, code = (("invalid_input", 403) if refused_unread_without_sign_in(url)
                    else ("session_expired", 401))
    for how, token in wrong_tokens.items():
        for rendering, headers in RENDERINGS.items():
            body = dict(data) if token is None else {**data, "csrf_token": token}
            with Unchanged(app, tally):
                response = visitor.post(url, body, headers=headers, csrf=False)
            refused(tally, response, rendering, status, code, action)
            assert "csrf" not in response.get_data(as_text=True).lower(), how
    # The same request with its token gets past the check (it was the token that was refused).
    answer = visitor.post(url, data, headers=JSON)
    assert answer.status_code < 500 and answer.get_json()["status"] != "session_expired"


@pytest.mark.parametrize("header", ["X-CSRFToken", "X-CSRF-Token"])
def test_a_json_body_needs_its_token_in_a_header(tally, app, visitor, header):
    with Unchanged(app, tally):
        response = visitor.client.post("/events/evt-webmcp-intro/save", json={}, headers=JSON)
    refused(tally, response, "json", "session_expired", 401, "save_event")
    response = visitor.client.post("/events/evt-webmcp-intro/save", json={},
                                   headers={**JSON, header: visitor.csrf})
    assert response.get_json()["status"] == "success"


# -- another visitor's things are not found ---------------------------------------------------


@pytest.fixture
def owner(visitor):
    """A visitor with a saved event, an active registration and two pending confirmations."""
    visitor.save("evt-agent-testing")
    visitor.registration = visitor.register("evt-webmcp-intro")["id"]
    visitor.cancel_token = visitor.prepare_cancellation(visitor.registration)[1]
    visitor.register_token = visitor.prepare_registration("evt-a11y-101-online")[1]
    return visitor


def test_another_visitors_things_are_not_found(tally, app, owner, other_visitor):
    other_visitor.save("evt-semantic-html")  # the intruder has a session of their own
    registration = owner.registration
    attempts = [
        ("post", "/saved/evt-agent-testing/remove", {}, "remove_saved_event"),
        ("post", "/registrations/cancellation", {"registration_id": registration},
         "prepare_registration_cancellation"),
        ("post", f"/registrations/{registration}/cancel",
         {"confirmation_token": owner.cancel_token}, "confirm_cancellation"),
        ("post", "/registrations/confirm", {"confirmation_token": owner.register_token},
         "confirm_registration"),
        ("get", f"/en/registrations/{registration}", None, "view_registration"),
    ]
    for method, url, data, action in attempts:
        for rendering, headers in RENDERINGS.items():
            with Unchanged(app, tally):
                if method == "get":
                    response = other_visitor.get(url, headers=headers)
                else:
                    response = other_visitor.post(url, data, headers=headers)
            if method == "get" and rendering == "json":
                assert response.status_code == 404  # a page, not a tool: no JSON answer
                continue
            refused(tally, response, rendering, "not_found", 404, action)
            text = response.get_data(as_text=True)
            assert owner.cancel_token not in text and owner.register_token not in text
    # Nor do the intruder's own pages show any of it.
    for url in ("/saved", "/registrations", "/events/evt-agent-testing"):
        text = other_visitor.get(url).get_data(as_text=True)
        assert registration not in text and "evt-agent-testing/remove" not in text
    save_button = one(BeautifulSoup(other_visitor.get("/en/events/evt-agent-testing").data,
                                    "html.parser"), "form#save_event button")
    assert save_button.get_text(strip=True) == "Save for later"


# -- only people confirm ---------------------------------------------------------------------

AGENT = "WebMCP-Agent-Invoked"


def test_human_only_steps_refuse_a_request_marked_as_an_agents(tally, app, owner):
    """The bridge marks only submits of tool forms: a confirm form (or any human-only step)
    marked as an agent's call is refused with its own token, whoever sent it, and the token
    still works for the person (docs/design.md §3)."""
    attempts = [
        ("/registrations/confirm", {"confirmation_token": owner.register_token},
         "confirm_registration"),
        (f"/registrations/{owner.registration}/cancel",
         {"confirmation_token": owner.cancel_token}, "confirm_cancellation"),
        ("/saved/evt-agent-testing/remove", {}, "remove_saved_event"),
    ]
    for url, data, action in attempts:
        for rendering, headers in RENDERINGS.items():
            with Unchanged(app, tally):
                response = owner.post(url, data, headers={**headers, AGENT: "true"})
            refused(tally, response, rendering, "invalid_input", 403, action)
            envelope = envelope_of(response, rendering)
            assert "for people" in envelope["errors"]["_schema"][0]
            assert "press the button" in envelope["nextAction"]
    assert owner.confirm_registration(owner.register_token).status_code == 201
    assert owner.confirm_cancellation(owner.registration, owner.cancel_token).status_code == 200
    with sqlite3.connect(app.config["DATABASE"]) as conn:
        refusals = conn.execute("SELECT action FROM activity WHERE source = 'agent' "
                                "AND status = 'invalid_input'").fetchall()
    assert len(refusals) == 3 * len(RENDERINGS)  # the person sees what their agent tried


def test_each_route_declares_a_tool_or_a_step_for_people(app):
    """A tool route runs a tool of the catalog, a human route a step the catalog does not
    offer: the declaration, not a list kept elsewhere, says which."""
    declared = [(rule.rule, role.action.name, role.human_only) for rule, role in route_roles(app)
                if role.action is not None]
    assert [route for route in declared if (route[1] in CATALOG) == route[2]] == []
    assert sum(human_only for _, _, human_only in declared) == len(HUMAN_ONLY_POST_ROUTES) >= 8


@pytest.mark.parametrize(("url", "data", "action"), HUMAN_ONLY_POST_ROUTES)
def test_every_step_for_people_refuses_a_call_marked_as_an_agents(tally, app, visitor, url,
                                                                   data, action):
    """Derived from the declarations: a human route added tomorrow is in this matrix."""
    for rendering, headers in RENDERINGS.items():
        with Unchanged(app, tally):
            response = visitor.post(url, data, headers={**headers, AGENT: "true"})
        refused(tally, response, rendering, "invalid_input", 403, action)


# -- confirmation tokens: bound to visitor, action and target; single-use; five minutes -------

TOKEN_MISUSES = [
    # (who, which token, where) -> what the answer is
    ("intruder", "register", "confirm registration", "not_found"),
    ("intruder", "cancel", "cancel its registration", "not_found"),
    ("owner", "cancel", "confirm registration", "not_found"),
    ("owner", "register", "cancel its registration", "not_found"),
    ("owner", "cancel", "cancel another registration", "not_found"),
    ("owner", "register", "cancel another registration", "not_found"),
    ("intruder", "register", "cancel another registration", "not_found"),
]


def confirm(owner, who, where, token):
    """Send a confirmation of `where` with `token`, as the owner or the intruder."""
    sender = owner if who == "owner" else owner.intruder
    if where == "confirm registration":
        return sender.confirm_registration(token)
    target = owner.registration if where == "cancel its registration" else owner.second
    return sender.confirm_cancellation(target, token)


@pytest.fixture
def tokens(app, owner):
    owner.intruder = Visitor(app)
    owner.intruder.save("evt-webmcp-intro")
    owner.second = owner.register("evt-agent-testing")["id"]
    return owner


def test_misused_tokens_are_refused_and_stay_usable_by_their_owner(tally, app, tokens):
    owner = tokens
    token_of = {"register": owner.register_token, "cancel": owner.cancel_token}
    for who, which, where, status in TOKEN_MISUSES:
        with Unchanged(app, tally):
            response = confirm(owner, who, where, token_of[which])
        action = "confirm_registration" if where == "confirm registration" else (
            "confirm_cancellation")
        refused(tally, response, "json", status, 404, action)
    seats = owner.seats("evt-a11y-101-online")
    # Nothing was spent by the refusals: each token still does its own job, once.
    registered = owner.confirm_registration(owner.register_token)
    assert registered.status_code == 201
    assert owner.seats("evt-a11y-101-online") == seats - 1
    cancelled = owner.confirm_cancellation(owner.registration, owner.cancel_token)
    assert cancelled.get_json()["data"]["alreadyCancelled"] is False
    with Unchanged(app, tally):
        replay = owner.confirm_registration(owner.register_token)
    refused(tally, replay, "json", "conflict", 409, "confirm_registration")


@pytest.mark.parametrize(("age", "works"), [
    (CONFIRMATION_LIFETIME - timedelta(seconds=1), True),
    (CONFIRMATION_LIFETIME, False),
    (CONFIRMATION_LIFETIME + timedelta(hours=1), False),
])
def test_both_kinds_of_token_last_five_minutes(tally, app, owner, clock, age, works):
    clock.advance(seconds=age.total_seconds())
    if works:
        assert owner.confirm_registration(owner.register_token).status_code == 201
        cancelled = owner.confirm_cancellation(owner.registration, owner.cancel_token)
        assert cancelled.get_json()["data"]["alreadyCancelled"] is False
        return
    for send in (lambda: owner.confirm_registration(owner.register_token),
                 lambda: owner.confirm_cancellation(owner.registration, owner.cancel_token)):
        with Unchanged(app, tally):
            response = send()
        assert response.status_code == 409
        assert "minutes have passed" in response.get_json()["message"]
        tally["refused"] += 1


def test_a_registration_token_registers_for_its_own_event_only(tally, app, owner):
    """The confirm form carries only the token: the event comes from what was reviewed."""
    response = owner.post_json("/registrations/confirm",
                               {"confirmation_token": owner.register_token,
                                "event_id": "evt-agent-testing"})
    refused(tally, response, "json", "invalid_input", 422, "confirm_registration")
    registration = owner.confirm_registration(owner.register_token).get_json()
    assert registration["data"]["registration"]["eventId"] == "evt-a11y-101-online"


def test_tokens_are_stored_only_as_hashes(app, owner):
    database = Path(app.config["DATABASE"])
    with sqlite3.connect(database) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything into the main file
    stored = database.read_bytes()
    for token in (owner.register_token, owner.cancel_token):
        assert token.encode() not in stored
        assert hash_token(token).encode() in stored
