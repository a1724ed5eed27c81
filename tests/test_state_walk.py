"""Every state, every page, every answer: a visitor walks the site at random.

A hypothesis state machine drives one browser through random sequences of everything the site
offers a person (save, unsave, prepare, confirm, cancel, make and stop the calendar address,
connect and disconnect an agent, the agent's MCP calls, language switches, someone else taking
seats) while the test clock jumps past a confirmation's five minutes or a visitor's lifetime.
After each step it requests every page that person can reach, in every rendering (JSON, htmx
partial, page) and both languages, and checks that nothing answered 5xx, that the app logged
no error, and that the books balance: seats add up and match what the site shows, the
visitor's My registrations page lists exactly their active registrations, and no e-mail holds
two active registrations for one event.

The pages are not a hand-kept list: `reachable_addresses` derives them from the app's url_map
and the route declarations (`webmcp.routes`), filled with what the browser knows at the time
(the walked events, its registration ids, its calendar addresses).

Each example gets an app and a database of its own (a new SQLite file, or a new PostgreSQL
schema), so examples never see each other's rows; the settings keep every run the same
(derandomized, no example database, no deadline).

What it costs and what it finds (a 2-core machine; `pytest -s` prints the counts):

- A passing run: SQLite 9 walks of 7 steps, 6 548 requests, about 39 s; PostgreSQL 3 walks of
  7 steps, 2 242 requests, about 19 s. A sweep is about 100 requests (0.5 to 0.7 s on SQLite).
- The My registrations 503 (fixed in 4b5ddbd: once a calendar address existed, the page
  answered 503 in every rendering), with that fix reverted on a throwaway branch and the
  e-mail invariant left out (main breaks it, see below). As CI runs it (derandomized), both
  backends find it in the 2nd walk, at its 4th step (the 11th step of the run), and shrink it
  to one step, `make_calendar_address(prefix='', rendering='json')`: 90 s on SQLite and 128 s
  on PostgreSQL in all, most of it shrinking. Not derandomized, `--hypothesis-seed=0..4` found
  it on SQLite in walks 7, 4, 2, 3 and 2 (steps 44, 22, 8, 20 and 12 of the run); on
  PostgreSQL seeds 2, 3 and 4 found it in walks 2, 3 and 2, and seeds 0 and 1 passed (their
  finding walks are past its 3).
- On main as of this module, the walk fails: two people in their own browsers register for one
  event with one e-mail address (in any case) and both registrations stay active. Found in the
  7th walk on SQLite (the 49th step of the run; PostgreSQL's 3 walks pass). Hypothesis stops
  shrinking it after five minutes, at 7 steps; two are enough (replayed by hand):
  `register(email='bob@example.com', event_id='evt-webmcp-intro', rendering='json',
  then='confirm at once')`, then `others_register(email='bob@example.com',
  event_id='evt-webmcp-intro', people=1)`.
"""

from __future__ import annotations

import itertools
import logging
import re
import shutil
import sqlite3
import time
import unicodedata
from collections import Counter
from collections import defaultdict
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import closing
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any
from typing import ClassVar
from typing import cast
from urllib.parse import urlencode

import pytest
from bs4 import BeautifulSoup
from flask import Flask
from flask.sessions import SecureCookieSessionInterface
from helpers import HTMX
from helpers import JSON
from helpers import RENDERINGS
from helpers import TOKEN_FIELD
from helpers import Visitor
from helpers import attribute
from helpers import query_database
from hypothesis import HealthCheck
from hypothesis import Phase
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine
from hypothesis.stateful import invariant
from hypothesis.stateful import rule
from hypothesis.stateful import run_state_machine_as_test
from mcp_helpers import ACCESS_TOKEN
from mcp_helpers import LEGACY
from mcp_helpers import MODERN
from mcp_helpers import McpClient
from routes import serves_static_files
from servers import ONE_ADDRESS_CROWD
from services import create_database
from services import database_url
from services import drop_database
from services import new_database_name
from suite_clock import Clock
from suite_clock import suite_start
from werkzeug.test import TestResponse

from flask_webmcp.mcp import INTERNAL_ERROR
from flask_webmcp.routes import ROLE
from flask_webmcp.routes import RouteRole
from flask_webmcp.routes import offering_routes
from webapp import create_app
from webapp.domain.actions.registrations import CONFIRMATION_LIFETIME
from webapp.domain.schemas import CONNECTION_ID_SHAPE
from webapp.domain.schemas import REGISTRATION_ID_SHAPE
from webapp.storage.connection import SEED
from webapp.storage.connection import close_backend
from webapp.storage.connection import open_storage
from webapp.storage.connection import prepare_database
from webapp.storage.postgres import PostgresStorage
from webapp.web.languages import COOKIE as LANGUAGE_COOKIE
from webapp.web.languages import LANGUAGES
from webapp.web.visitors import VISITOR_KEY

pytestmark = pytest.mark.slow

# -- what the walk is made of -----------------------------------------------------------------

# The events the visitor acts on, and whose pages are swept (each costs a fifth of a sweep):
# the soonest open one (8 seats; registration closes twelve days after the clock starts,
# before a visitor's lifetime ends), and a small one whose organizer wrote hostile text
# (5 seats: other people fill it in a step or two).
WALKED_EVENTS = ("evt-webmcp-intro", "evt-malicious-copy")
# Actions also name an event that does not exist (its pages are not swept: nobody links it).
EVENT_CHOICES = st.sampled_from([*WALKED_EVENTS, "evt-no-such-event"])
NAMES = st.sampled_from(["Ann Lee", "李安"])
# One person's address in three spellings (the full-width one is what a Chinese input method
# types), and someone else's: for the rule that an e-mail has one active registration, they
# are one address whatever their case and width.
EMAILS = st.sampled_from(["ann@example.com", "Ann@Example.COM", "ＡＮＮ＠ＥＸＡＭＰＬＥ．ＣＯＭ",
                          "bob@example.com"])
QUERIES = st.sampled_from(["", "webmcp", "工作坊", "台北 python", "活動" * 50])
# How a form is sent: as JSON, as an htmx partial, as a page without JavaScript (redirects
# followed, as a browser does), or by an agent in the browser (WebMCP marks its requests).
ACTION_RENDERINGS = {**RENDERINGS, "browser agent": {**HTMX, "WebMCP-Agent-Invoked": "true"}}
ACTION_RENDERING = st.sampled_from(list(ACTION_RENDERINGS))
# Where a form is sent: the language-neutral address, or one under a language prefix.
PREFIX = st.sampled_from(["", *(f"/{code}" for code in LANGUAGES)])
UNKNOWN_REGISTRATION = "reg-aaaaaaaaaaaa"
UNKNOWN_CONNECTION = "agt-aaaaaaaaaaaa"

REGISTRATION_ID = re.compile(rf"(?<![\w-])({REGISTRATION_ID_SHAPE})")
CONNECTION_ID = re.compile(rf"/agents/({CONNECTION_ID_SHAPE})/disconnect")
FEED_TOKEN = re.compile(r"/calendar/feed/([\w-]+)\.ics")

# Stable in CI: the same examples on every run, no example database, no timing deadline (an
# example is hundreds of requests). Each example builds its own app, so no fixture is shared.
# No "explain" phase: it replays the failing walk under a tracer, minutes for a few lines.
STABLE = settings(deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow],
                  phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink])
# Bounded for CI: each step costs a sweep of about a hundred requests (0.6 s on SQLite, 0.8 s
# on PostgreSQL), each example a new database (0.3 s, 0.7 s).
WALKS = {"sqlite": settings(STABLE, max_examples=9, stateful_step_count=7),
         "postgresql": settings(STABLE, max_examples=3, stateful_step_count=7)}


def summarize(counts: Counter[str]) -> str:
    """What the walks did, by backend (printed after the module, with `pytest -s`)."""
    return "state walk:\n" + "\n".join(f"  {name}: {value}"
                                        for name, value in sorted(counts.items()))


# -- every page a person can reach ------------------------------------------------------------



def reachable_addresses(app: Flask, known: Mapping[str, Collection[str]]) -> list[str]:
    """Every address a person can GET, derived from the app's url_map and route declarations.

    Each GET rule's parameters are filled with every value `known` holds for their name
    (`lang_code` with each language); a rule needing a parameter nothing is known of is
    skipped. A GET tool route (`tool_route`) whose input names a known value is asked for with
    it in the query (the event preview takes `event_id` there).
    """
    adapter = app.url_map.bind("localhost")
    rules_by_endpoint = defaultdict(list)
    for url_rule in app.url_map.iter_rules():
        # Static files are no page (and WhiteNoise serves them before the app sees a request).
        if "GET" in (url_rule.methods or ()) and not serves_static_files(url_rule.endpoint):
            rules_by_endpoint[url_rule.endpoint].append(url_rule)
    addresses: list[str] = []
    for endpoint, rules in rules_by_endpoint.items():
        prefixed = [each for each in rules if "lang_code" in each.arguments]
        # The neutral twin of a language-prefixed rule runs the same view: it redirects a page
        # to a prefixed address, and answers JSON and partials there in the language of the
        # browser, which is one of the prefixed answers already asked for.
        for url_rule in prefixed or rules:
            choices: dict[str, Collection[str]] = {
                name: LANGUAGES if name == "lang_code" else known.get(name, ())
                for name in sorted(url_rule.arguments)}
            role: RouteRole | None = getattr(app.view_functions[endpoint], ROLE, None)
            if role is not None and role.action is not None:
                for name, field in role.action.schema().fields.items():
                    key = field.data_key or name
                    if key in known and key not in choices:
                        choices[key] = known[key]
            for values in itertools.product(*choices.values()):
                addresses.append(adapter.build(endpoint, dict(zip(choices, values,
                                                                  strict=True))))
    return addresses


# -- the walk ---------------------------------------------------------------------------------


class WalkDatabases:
    """The examples' databases, each a copy of one the first example seeds (a file copy, or
    CREATE DATABASE ... TEMPLATE: milliseconds, or 0.2 s, where migrating and seeding take
    0.3 s, or 0.7 s), and where each example counts its rate limits."""

    def __init__(self, backend: str, folder: Path):
        self.backend = backend
        self.folder = folder
        self.seeded_sqlite = folder / "seeded.sqlite"
        # Named after this process, like every database of the run (for whoever cleans up).
        self.seeded_postgres = new_database_name()
        self.seeded = False

    def setting_for(self, example: int) -> str:
        """The DATABASE setting of an example's app (nothing is created yet)."""
        if self.backend == "postgresql":
            return database_url(f"{self.seeded_postgres}_walk_{example}")
        return str(self.folder / f"walk-{example}.sqlite")

    def rate_limits_for(self, example: int) -> str:
        """Where an example's app counts its rate limits."""
        return f"host://{self.folder / f'rate-limits-{example}.sqlite'}"

    def prepare(self, app: Flask, example: int) -> None:
        """Give the app (in its context) its database: a copy of the seeded one."""
        if self.backend == "postgresql":
            if not self.seeded:
                create_database(self.seeded_postgres)
                PostgresStorage.prepare(database_url(self.seeded_postgres),
                                        seed=app.extensions[SEED])
            create_database(f"{self.seeded_postgres}_walk_{example}", self.seeded_postgres)
        elif self.seeded:
            shutil.copyfile(self.seeded_sqlite, app.config["DATABASE"])
        prepare_database()  # on a copy: finds everything done
        if self.backend == "sqlite" and not self.seeded:
            with closing(sqlite3.connect(app.config["DATABASE"])) as source, \
                    closing(sqlite3.connect(self.seeded_sqlite)) as copy:
                source.backup(copy)  # whatever is still in the source's WAL
        self.seeded = True

    def drop(self, example: int) -> None:
        """Drop an example's PostgreSQL database (a SQLite file stays in the test's folder)."""
        if self.backend == "postgresql":
            drop_database(f"{self.seeded_postgres}_walk_{example}")

    def close(self) -> None:
        """Drop the seeded PostgreSQL database."""
        if self.backend == "postgresql" and self.seeded:
            drop_database(self.seeded_postgres)


@dataclass
class WalkSetting:
    """What a walk needs from its test: a new database per example, the captured log and the
    module's tally."""

    backend: str
    databases: WalkDatabases
    caplog: pytest.LogCaptureFixture
    tally: Counter[str]


class SiteWalk(RuleBasedStateMachine):
    """One person's browser on a site of their own (an app and a database per example)."""

    setting: ClassVar[WalkSetting]

    def __init__(self) -> None:
        super().__init__()
        self.count("examples")
        self.example = self.counted("examples")
        self.steps = -1  # the invariants run once before the first step
        self.setting.caplog.clear()
        started = time.perf_counter()
        self.clock = Clock(suite_start())
        databases = self.setting.databases
        self.database = databases.setting_for(self.example)
        self.app = create_app({
            "TESTING": True, "SECRET_KEY": "test secret", "DATABASE": self.database,
            # Each example counts apart (a PostgreSQL app would count in the instance folder).
            "RATELIMIT_STORAGE_URI": databases.rate_limits_for(self.example),
            "CLOCK": self.clock, **ONE_ADDRESS_CROWD})
        with self.app.app_context():
            databases.prepare(self.app, self.example)
        self.count("ms building apps", round((time.perf_counter() - started) * 1000))
        self.browser = Visitor(self.app)
        # The person lands on an event's page (in English), which gives the browser the CSRF
        # token its forms carry: fetched later, that read would switch the language back.
        assert self.browser.csrf
        self.others = 0
        # What the browser has been given: confirm tokens (the cancellation ones with the
        # registration they cancel), registration ids, calendar feed tokens, agent tokens.
        self.registration_tokens: list[str] = []
        self.cancellation_tokens: list[tuple[str, str]] = []
        self.registration_ids: set[str] = set()
        self.feed_tokens: set[str] = set()
        self.agent_tokens: list[str] = []

    def teardown(self) -> None:
        """Count how far the walk got (what the browser was given), and close the app."""
        self.count("registration ids seen", len(self.registration_ids))
        self.count("calendar addresses seen", len(self.feed_tokens))
        self.count("agent tokens seen", len(self.agent_tokens))
        self.count("confirm tokens seen",
                   len(self.registration_tokens) + len(self.cancellation_tokens))
        self.count("other people", self.others)
        close_backend(self.app)
        self.setting.databases.drop(self.example)

    # -- checks -------------------------------------------------------------------------------

    def count(self, name: str, amount: int = 1) -> None:
        """Add `amount` to what the module's tally counts under `name` for this backend."""
        self.setting.tally[f"{self.setting.backend}: {name}"] += amount

    def counted(self, name: str) -> int:
        """What the module's tally counted under `name` for this backend."""
        return self.setting.tally[f"{self.setting.backend}: {name}"]

    def require(self, condition: bool, kind: str, message: str) -> None:
        """Fail the example with `message` unless `condition`. The first failure of each
        `kind` in a run notes how many examples and steps it took to find (the step 0 is the
        state an example starts in)."""
        if condition:
            return
        first = f"first {kind} at"
        if not self.counted(f"{first} example"):
            self.count(f"{first} example", self.example)
            self.count(f"{first} its step", self.steps + 1)
            self.count(f"{first} step of the run", self.counted("steps") + 1)
        raise AssertionError(message)

    def answered(self, response: TestResponse, what: str) -> TestResponse:
        """`response` (and every redirect on its way) answered without a server error, and
        the app logged none."""
        self.count("requests", 1 + len(response.history))
        for hop in [*response.history, response]:
            self.require(hop.status_code < 500, "server error",
                         f"{what} answered {hop.status_code} at {hop.request.path}")
        self.log_has_no_error(what)
        return response

    def log_has_no_error(self, what: str) -> None:
        """Nothing the app did was logged as an error (a traceback goes with each)."""
        errors = [record for record in self.setting.caplog.records
                  if record.levelno >= logging.ERROR or record.exc_info]
        self.require(not errors, "logged error", f"after {what} the log says: " + "; ".join(
            f"{record.getMessage()} ({record.exc_info[1]!r})" if record.exc_info
            else record.getMessage() for record in errors))

    @contextmanager
    def language_kept(self) -> Iterator[None]:
        """Reading pages under a language prefix sets the language cookie: what the walk reads
        to check the site must not change the language the person chose."""
        # The value, not the cookie: the test client updates the cookie it handed out.
        cookie = self.browser.client.get_cookie(LANGUAGE_COOKIE)
        chosen = cookie.value if cookie else None
        try:
            yield
        finally:
            if chosen is None:
                self.browser.client.delete_cookie(LANGUAGE_COOKIE)
            else:
                self.browser.client.set_cookie(LANGUAGE_COOKIE, chosen)

    def learn(self, response: TestResponse) -> None:
        """Remember the registration ids and calendar addresses an answer showed (a picture,
        an event's share card, shows none)."""
        texts = [hop.get_data(as_text=True) for hop in [*response.history, response]
                 if not (hop.mimetype or "").startswith("image/")]
        texts += [hop.headers.get("Location", "") for hop in response.history]
        for text in texts:
            self.registration_ids.update(REGISTRATION_ID.findall(text))
            self.feed_tokens.update(FEED_TOKEN.findall(text))

    def submit(self, path: str, data: dict[str, str], rendering: str, prefix: str = ""
               ) -> TestResponse:
        """Send one of the site's forms as `rendering` asks, to its address under `prefix`."""
        response = self.answered(
            self.browser.post(prefix + path, data, headers=ACTION_RENDERINGS[rendering],
                              follow_redirects=rendering == "page"),
            f"POST {prefix}{path} ({rendering})")
        self.learn(response)
        return response

    def read(self, path: str) -> str:
        """A page as the person reads it: at its neutral address, sent on to their language."""
        response = self.answered(self.browser.get(path, follow_redirects=True), f"GET {path}")
        self.learn(response)
        return response.get_data(as_text=True)

    # -- what a person does -------------------------------------------------------------------

    @rule(language=st.sampled_from(list(LANGUAGES)))
    def switch_language(self, language: str) -> None:
        """The person picks a language: the site remembers it for neutral addresses."""
        self.answered(self.browser.get(f"/{language}/events"), f"switching to {language}")

    @rule(event_id=EVENT_CHOICES, rendering=ACTION_RENDERING, prefix=PREFIX)
    def save_event(self, event_id: str, rendering: str, prefix: str) -> None:
        """Press "Save" on an event (or let the browser's agent call save_event)."""
        self.submit(f"/events/{event_id}/save", {}, rendering, prefix)

    @rule(event_id=EVENT_CHOICES, where=st.sampled_from(["on its page", "on the saved list"]),
          rendering=ACTION_RENDERING, prefix=PREFIX)
    def unsave_event(self, event_id: str, where: str, rendering: str, prefix: str) -> None:
        """Take an event off the saved list, with the button on its page or on the list."""
        path = (f"/events/{event_id}/unsave" if where == "on its page"
                else f"/saved/{event_id}/remove")
        self.submit(path, {}, rendering, prefix)

    @rule(query=QUERIES, rendering=st.sampled_from(list(RENDERINGS)), prefix=PREFIX)
    def search_events(self, query: str, rendering: str, prefix: str) -> None:
        """Search the events, as a page, its results partial or JSON."""
        address = f"{prefix}/events?{urlencode({'query': query})}"
        self.answered(self.browser.get(address, headers=RENDERINGS[rendering],
                                       follow_redirects=True), f"GET {address} ({rendering})")

    # One rule per action with its variants as arguments, rather than a rule per variant: each
    # rule is drawn as often as any other, so fewer rules reach each action in fewer steps.
    @rule(event_id=EVENT_CHOICES, name=NAMES, email=EMAILS, rendering=ACTION_RENDERING,
          prefix=PREFIX, then=st.sampled_from(["confirm at once", "leave it for later"]))
    def register(self, event_id: str, name: str, email: str, rendering: str, prefix: str,
                 then: str) -> None:
        """Fill in the registration form (or let the browser's agent fill it in), and confirm
        at once, as most people do (on the review the answer shows, else on the review page),
        or keep its token for later."""
        response = self.submit(f"/events/{event_id}/register",
                               {"attendee_name": name, "email": email}, rendering, prefix)
        tokens = TOKEN_FIELD.findall(response.get_data(as_text=True))
        self.registration_tokens += tokens
        if then == "leave it for later":
            return
        # Only a person confirms: after the agent, they press the button the partial shows.
        human = "partial" if rendering == "browser agent" else rendering
        for token in tokens:
            self.submit("/registrations/confirm", {"confirmation_token": token}, human, prefix)
        if not tokens:
            for action, token in self.review_page_forms():
                self.submit(action, {"confirmation_token": token}, human)

    @rule(data=st.data(), rendering=ACTION_RENDERING, prefix=PREFIX,
          then=st.sampled_from(["confirm at once", "leave it for later"]))
    def cancel_registration(self, data: st.DataObject, rendering: str, prefix: str, then: str
                            ) -> None:
        """Choose one of the registrations the browser has seen (or an unknown one) to
        cancel, and confirm at once or keep the token for later."""
        registration_id = data.draw(st.sampled_from(
            [*sorted(self.registration_ids), UNKNOWN_REGISTRATION]), label="registration")
        response = self.submit("/registrations/cancellation",
                               {"registration_id": registration_id}, rendering, prefix)
        tokens = TOKEN_FIELD.findall(response.get_data(as_text=True))
        self.cancellation_tokens += [(registration_id, token) for token in tokens]
        if then == "leave it for later":
            return
        human = "partial" if rendering == "browser agent" else rendering
        for token in tokens:
            self.submit(f"/registrations/{registration_id}/cancel",
                        {"confirmation_token": token}, human, prefix)

    @rule(data=st.data(), rendering=ACTION_RENDERING, prefix=PREFIX)
    def confirm_a_review_shown_earlier(self, data: st.DataObject, rendering: str, prefix: str
                                       ) -> None:
        """Press the confirm button of a review the browser was shown earlier: maybe spent,
        expired, or of a session that ended since."""
        path, token = data.draw(st.sampled_from([
            *(("/registrations/confirm", token) for token in self.registration_tokens),
            *((f"/registrations/{registration_id}/cancel", token)
              for registration_id, token in self.cancellation_tokens),
            ("/registrations/confirm", "not-a-token")]), label="confirm form")
        self.submit(path, {"confirmation_token": token}, rendering, prefix)

    @rule(data=st.data(), rendering=ACTION_RENDERING)
    def confirm_what_waits_on_the_review_page(self, data: st.DataObject, rendering: str
                                              ) -> None:
        """Open the review page (where what an agent prepared waits) and press one of its
        confirm buttons."""
        forms = self.review_page_forms()
        if forms:
            action, token = data.draw(st.sampled_from(forms), label="confirm form")
            self.submit(action, {"confirmation_token": token}, rendering)

    def review_page_forms(self) -> list[tuple[str, str]]:
        """The confirm forms of the review page, as (address, token)."""
        page = BeautifulSoup(self.read("/registrations/pending"), "html.parser")
        return [(attribute(form, "action"),
                 attribute(form.select("input[name=confirmation_token]")[0], "value"))
                for form in page.select("form.confirm-form")]

    @rule(rendering=ACTION_RENDERING, prefix=PREFIX)
    def make_calendar_address(self, rendering: str, prefix: str) -> None:
        """Make (or replace) the private calendar address on My registrations."""
        self.submit("/registrations/calendar", {}, rendering, prefix)

    @rule(rendering=ACTION_RENDERING, prefix=PREFIX)
    def stop_calendar_address(self, rendering: str, prefix: str) -> None:
        """Stop the private calendar address (whether or not there is one)."""
        self.submit("/registrations/calendar/stop", {}, rendering, prefix)

    # People connect agents on the page (its form has no htmx): the page is drawn most often.
    @rule(rendering=st.one_of(st.just("page"), ACTION_RENDERING), prefix=PREFIX)
    def connect_agent(self, rendering: str, prefix: str) -> None:
        """Connect an agent; the page (without JavaScript) shows its access token once."""
        response = self.submit("/agents", {"label": "Ann's laptop"}, rendering, prefix)
        self.agent_tokens += ACCESS_TOKEN.findall(response.get_data(as_text=True))

    @rule(data=st.data(), rendering=ACTION_RENDERING, prefix=PREFIX)
    def disconnect_agent(self, data: st.DataObject, rendering: str, prefix: str) -> None:
        """Press "Disconnect" beside one of the agents the page lists (or an unknown one)."""
        listed = CONNECTION_ID.findall(self.read("/agents"))
        connection_id = data.draw(st.sampled_from([*listed, UNKNOWN_CONNECTION]),
                                  label="connection")
        self.submit(f"/agents/{connection_id}/disconnect", {}, rendering, prefix)

    @rule(data=st.data(), era=st.sampled_from([MODERN, LEGACY]),
          language=st.sampled_from(list(LANGUAGES)))
    def agent_calls_a_tool(self, data: st.DataObject, era: str, language: str) -> None:
        """An MCP client calls one of the tools, with one of the tokens the person was given
        (maybe disconnected or expired since) or none."""
        token = data.draw(st.sampled_from([*self.agent_tokens, None]), label="access token")
        registrations = st.sampled_from([*sorted(self.registration_ids), UNKNOWN_REGISTRATION])
        tool, arguments = data.draw(st.one_of(
            st.tuples(st.just("search_events"), st.fixed_dictionaries({"query": QUERIES})),
            st.tuples(st.just("get_event_details"),
                      st.fixed_dictionaries({"event_id": EVENT_CHOICES})),
            st.tuples(st.just("save_event"), st.fixed_dictionaries({"event_id": EVENT_CHOICES})),
            st.tuples(st.just("prepare_event_registration"), st.fixed_dictionaries(
                {"event_id": EVENT_CHOICES, "attendee_name": NAMES, "email": EMAILS})),
            st.tuples(st.just("prepare_registration_cancellation"),
                      st.fixed_dictionaries({"registration_id": registrations})),
            st.tuples(st.just("get_my_plans"), st.just({}))),
            label="tool call")
        agent = McpClient(self.app.test_client(), era, token, language)
        what = f"the MCP call {tool}"
        response = self.answered(agent.rpc("tools/call", {"name": tool, "arguments": arguments}),
                                 what)
        answer = response.get_json()
        self.require(isinstance(answer, dict), "MCP failure",
                     f"{what} answered no JSON-RPC message")
        error = answer.get("error") or {}
        self.require(error.get("code") != INTERNAL_ERROR, "MCP failure",
                     f"{what} failed: {error}")
        envelope = answer.get("result", {}).get("structuredContent", {})
        self.require(envelope.get("status") != "internal_error", "MCP failure",
                     f"{what} failed: {envelope}")

    @rule(event_id=EVENT_CHOICES, people=st.integers(min_value=1, max_value=5), email=EMAILS)
    def others_register(self, event_id: str, people: int, email: str) -> None:
        """Other people, each in a browser and on a network of their own, take seats: the
        first with `email` (maybe the visitor's, in another spelling), the rest with their
        own addresses."""
        for person in range(people):
            self.others += 1
            other = Visitor(self.app, address=f"10.0.{self.others // 250}.{self.others % 250 + 1}")
            address = email if person == 0 else f"guest{self.others}@example.net"
            prepared = self.answered(other.post(f"/events/{event_id}/register",
                                                {"attendee_name": "Guest", "email": address},
                                                headers=HTMX), "someone else's prepare")
            for token in TOKEN_FIELD.findall(prepared.get_data(as_text=True)):
                self.answered(other.confirm_registration(token), "someone else's confirmation")

    @rule(span=st.sampled_from(["past a confirmation's lifetime", "a day",
                                "past a visitor's lifetime"]))
    def let_time_pass(self, span: str) -> None:
        """Move the test clock: confirmations expire, sessions end, registration closes."""
        self.clock.advance(seconds={
            "past a confirmation's lifetime": CONFIRMATION_LIFETIME.total_seconds() + 1,
            "a day": timedelta(days=1).total_seconds(),
            "past a visitor's lifetime": self.app.config["VISITOR_TTL"] + 1}[span])

    # -- after each step ----------------------------------------------------------------------

    @invariant()
    def the_whole_site_holds(self) -> None:
        """After every step: every page answers, the log is clean and the books balance."""
        # Every example starts in the same state (a new database, the clock at the suite's
        # start, a browser without cookies): the first example's sweep of it is enough.
        if self.steps >= 0 or self.example == 1:
            self.every_page_answers()
        self.seats_add_up()
        self.registrations_are_visible_to_their_owner()
        self.one_active_registration_per_email_and_event()
        self.steps += 1
        self.count("steps", self.steps > 0)

    def known(self) -> dict[str, Collection[str]]:
        """What the browser can put in an address: path parameters by name."""
        return {"event_id": WALKED_EVENTS, "registration_id": sorted(self.registration_ids),
                "token": sorted(self.feed_tokens)}

    def every_page_answers(self) -> None:
        """Every page the person can reach answers without a server error, in every rendering
        and both languages."""
        started = time.perf_counter()
        with self.language_kept():
            for address in reachable_addresses(self.app, self.known()):
                for rendering, headers in RENDERINGS.items():
                    response = self.browser.get(address, headers=headers)
                    self.answered(response, f"GET {address} ({rendering})")
                    self.learn(response)
        self.count("ms sweeping", round((time.perf_counter() - started) * 1000))

    def storage_read(self, read: Callable[[Any], Any]) -> Any:
        """What `read` finds in the example's database, through the storage layer."""
        with self.app.app_context():
            db = open_storage()
            try:
                return read(db)
            finally:
                db.close()

    def seats_add_up(self) -> None:
        """capacity - held seats - active registrations is never negative, and is what the
        event's JSON shows as remaining seats. The active registrations are counted in SQL:
        the storage's own count is what is checked."""
        events = self.storage_read(lambda db: [db.get_event(event_id)
                                               for event_id in WALKED_EVENTS])
        active = dict(query_database(
            self.database, "SELECT event_id, count(*) FROM registrations "
            "WHERE state = 'active' GROUP BY event_id"))
        for event in events:
            taken = active.get(event.id, 0)
            free = event.capacity - event.held_seats - taken
            self.require(free >= 0, "seat count",
                         f"{event.id}: {taken} active registrations and "
                         f"{event.held_seats} held seats in {event.capacity}")
            shown = self.answered(self.browser.get(f"/events/{event.id}", headers=JSON),
                                  f"the details of {event.id}").get_json()
            remaining = shown["data"]["event"]["remainingSeats"]
            self.require(remaining == free, "seat count",
                         f"{event.id} shows {remaining} remaining seats, {free} are free")

    def session_visitor(self) -> str | None:
        """The visitor id the browser's session cookie holds (alive or not)."""
        cookie = self.browser.client.get_cookie(self.app.config["SESSION_COOKIE_NAME"])
        if cookie is None:
            return None
        interface = cast(SecureCookieSessionInterface, self.app.session_interface)
        serializer = interface.get_signing_serializer(self.app)
        assert serializer is not None
        visitor_id: str | None = serializer.loads(cookie.value).get(VISITOR_KEY)
        return visitor_id

    def registrations_are_visible_to_their_owner(self) -> None:
        """While their session lives, My registrations lists exactly the visitor's active
        registrations (its cancellation form offers each; the page has no JSON of its own)
        and each one's page shows it; once the session ended, none is listed."""
        visitor_id = self.session_visitor()

        def active_of_live_visitor(db: Any) -> set[str]:
            expires = db.visitor_expires_at(visitor_id) if visitor_id else None
            if expires is None or expires <= self.clock.now:
                return set()
            return {registration.id for registration in db.visitor_registrations(visitor_id)
                    if registration.state == "active"}

        active = self.storage_read(active_of_live_visitor)
        with self.language_kept():
            page = self.answered(self.browser.get("/en/registrations"), "My registrations")
            for registration_id in sorted(active):
                shown = self.answered(self.browser.get(f"/en/registrations/{registration_id}"),
                                      f"the page of {registration_id}")
                self.require(shown.status_code == 200, "hidden registration",
                             f"the owner of {registration_id} cannot see it: {shown.status}")
        soup = BeautifulSoup(page.data, "html.parser")
        listed = {attribute(option, "value")
                  for option in soup.select("input[name=registration_id]")}
        self.require(listed == active, "hidden registration",
                     f"My registrations lists {sorted(listed)}; the visitor's active "
                     f"registrations are {sorted(active)}")

    def one_active_registration_per_email_and_event(self) -> None:
        """No e-mail address (whatever its case or width) holds two active registrations for
        one event. Compared here, not in SQL: SQL's lower() folds neither width nor every
        case."""
        addresses = Counter(
            (event_id, unicodedata.normalize("NFKC", email).casefold())
            for event_id, email in query_database(
                self.database, "SELECT event_id, email FROM registrations "
                "WHERE state = 'active'"))
        twice = sorted(key for key, count in addresses.items() if count > 1)
        self.require(not twice, "e-mail registered twice",
                     f"several active registrations per e-mail and event: {twice}")


# -- the tests --------------------------------------------------------------------------------


def test_the_walk_reaches_every_page_of_the_site(app):
    """The derived page list is not empty, holds My registrations in both languages, reaches
    every GET endpoint but static files once every parameter is known, and skips a page whose
    parameter nothing is known of."""
    everything = {"event_id": ["evt-webmcp-intro"], "registration_id": [UNKNOWN_REGISTRATION],
                  "token": ["cal_unknown"], "signature": ["x" * 43],
                  "organization_id": ["org-unknown"], "digest": ["0123456789abcdef"],
                  "width": ["600"]}
    addresses = reachable_addresses(app, everything)
    assert addresses
    assert {"/en/registrations", "/zh-TW/registrations", "/en/registrations/pending",
            f"/zh-TW/registrations/{UNKNOWN_REGISTRATION}", "/en/calendar/feed/cal_unknown.ics",
            "/en/events/details?event_id=evt-webmcp-intro"} <= set(addresses)
    adapter = app.url_map.bind("localhost")
    reached = {adapter.match(address.split("?")[0])[0] for address in addresses}
    get_endpoints = {url_rule.endpoint for url_rule in app.url_map.iter_rules()
                     if "GET" in (url_rule.methods or ())}
    assert reached == {endpoint for endpoint in get_endpoints
                       if not serves_static_files(endpoint)}
    offering_pages = {url_rule.endpoint for url_rule in app.url_map.iter_rules()
                      if "GET" in (url_rule.methods or ())
                      and any(url_rule.rule in routes for routes in offering_routes(app).values())}
    assert offering_pages and offering_pages <= reached
    nothing_known = reachable_addresses(app, {"event_id": ["evt-webmcp-intro"]})
    assert not [address for address in nothing_known
                if re.search(rf"/registrations/{REGISTRATION_ID_SHAPE}|/feed/", address)]


@pytest.mark.both_backends
def test_a_visitor_walking_the_site_meets_no_failure(backend_name, tmp_path, caplog, tally):
    """Random walks through every action, with every reachable page checked after each step:
    no 5xx, no error in the log, the invariants hold."""
    databases = WalkDatabases(backend_name, tmp_path)
    walk = type("Walk", (SiteWalk,),
                {"setting": WalkSetting(backend_name, databases, caplog, tally)})
    try:
        run_state_machine_as_test(walk, settings=WALKS[backend_name])
    finally:
        databases.close()
