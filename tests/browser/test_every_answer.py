"""Every status a tool can answer reaches the agent, with JavaScript on and off, for every tool
on every page that offers it, and after any failure the page still offers its tools.

The matrix comes from the route declarations: `offering_routes` names the pages whose answers
show each tool's form, and `route_answers` the statuses the routes running the tool can answer
(its action's declared `answers`, and those any call of its kind may meet: invalid input, a
failing database, and for a write a lost session and a rate limit). Each (tool, page, status)
is a test, with JavaScript on (the bridge answers) and off (the form navigates). A new tool,
page or status fails its test until this module knows how to reach that page (PAGES), how to
call that tool (its schema's required ids, from IDS, or GIVEN) and how to make the site answer
that status (CAUSES).

Each status is made for real against gunicorn, most of them by the site's error handlers:
  internal_error         the database file is removed during the call (tests/faults.py)
  rate_limited           on a server of its own whose budget is tiny (writes per visitor
                         for the tools that write, reads per address for the others), the
                         budget is spent just before the call
  session_expired        the visitor's cookies are gone: the form's CSRF token fails
  not_found              the event or registration the page shows is deleted meanwhile
  conflict               the visitor registered (or cancelled) in another tab meanwhile
  invalid_input          a rule no form control states (dates out of order), a name longer
                         than allowed (Chromium does not enforce maxlength on an agent's fill),
                         a body over MAX_CONTENT_LENGTH (413: a name of 70 000 characters)
  success, no_results, confirmation_required     ordinary calls
After the answer, with JavaScript the invoked form was never removed (Chromium would have
cancelled the call), after a failure the page offers every tool it offered before, and people
see the message. Without JavaScript the agent is on the answer's page: it, or else the page
the call was made on, offers those tools again (unless the failure is a change of state: a
registration made or cancelled elsewhere rightly takes its form away). Then the cause is
undone where it can be (the database returns, the budget is given back, the cookies come back, the
row is restored) and the same call, made again on the same page with no reload, is answered
as it would have been without the failure; otherwise it is answered the same way again.
Before the error slots, ten of these failed with JavaScript on: Chromium cancelled the call.

What no browser can make a tool answer is in UNREACHABLE, with the reason; those answers, and
the error handlers' 404 (an unknown address) and 405 (a wrong method), which no tool form can
send, are covered over HTTP (tests/test_error_slots.py, tests/test_fuzz_bad_input.py,
tests/test_errors_and_health.py).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import AbstractContextManager
from contextlib import contextmanager
from contextlib import nullcontext
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from faults import removed
from faults import row_taken_away
from helpers import JSON
from helpers import new_person
from playwright.sync_api import Browser
from playwright.sync_api import BrowserContext
from servers import gunicorn

from flask_webmcp.result import Status
from flask_webmcp.routes import offering_routes
from flask_webmcp.routes import route_roles
from webapp import create_app
from webapp.config import HOST_COUNTERS
from webapp.config import counters_uri
from webapp.domain.catalog import CATALOG
from webapp.storage import Event
from webapp.storage.sqlite import SQLiteStorage
from webapp.web.limit_counters import HostCounters
from webapp.web.openapi import route_answers

from .visit import Site
from .visit import Tab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The declarations of the site's routes (no request is made and no database opened).
ROUTES = create_app({"TESTING": True, "SECRET_KEY": "routes", "DATABASE": "/nonexistent"})
# On the rate-limited servers: this many writes per visitor (or reads per address) a day, more
# than any page below needs to be reached. No test outlives the window, so a budget spent stays
# spent until the test gives it back (`budget_given_back`): no clock decides what is answered.
TINY_BUDGETS = {"writes": ("FLASK_RATELIMIT_WRITES", 8),
                "reads": ("FLASK_RATELIMIT_READS_PER_ADDRESS", 30)}
FORWARD = (Status.SUCCESS, Status.CONFIRMATION_REQUIRED)


def tool_answers(tool: str) -> tuple[Status, ...]:
    """Every status the routes that run `tool` can answer."""
    answers = {status for rule, role in route_roles(ROUTES)
               if role.action is not None and role.action.name == tool
               for status in route_answers(rule, role.action)}
    return tuple(status for status in Status if status in answers)


def forward(tool: str) -> str:
    """What the tool answers when all goes well."""
    return next(status.word for status in FORWARD if status in tool_answers(tool))


# -- what each test works on --------------------------------------------------------------


@dataclass
class Target:
    """The event a test is about (made for it), and the visitor's registration for it."""

    event: str
    word: str  # a word of its title no other event has: a search for it lists only this one
    other_event: str
    registration: str | None = None
    given: dict[str, Any] = field(default_factory=dict)


_numbers = itertools.count()


def add_event(database: Path, word: str) -> str:
    """A new upcoming event, open for registration, whose title holds `word`; its id."""
    starts = datetime.now(UTC).replace(microsecond=0) + timedelta(days=7)
    event = Event(id=f"evt-{word}", title=f"Answer check {word}", summary="Made for one test.",
                  description="An event that exists for one browser test.", starts_at=starts,
                  ends_at=starts + timedelta(hours=2), location="taipei", venue="Test hall",
                  price="free", level="beginner", capacity=20, held_seats=0,
                  registration_deadline=starts - timedelta(days=1))
    storage = SQLiteStorage.open(database)
    try:
        storage.import_events([event])
    finally:
        storage.close()
    return event.id


def new_target(site: Site) -> Target:
    number = next(_numbers)
    word = f"probe{number:04d}x"
    return Target(event=add_event(site.database, word), word=word,
                  other_event=add_event(site.database, f"{word}other"))


# -- the pages that offer tools, and how a visitor gets to each --------------------------------


def registered(tab: Tab, target: Target) -> None:
    """The visitor registers for the target event as a person; then its registrations."""
    target.registration = tab.register_as_person(target.event)
    tab.open("/registrations")


def plans_refreshed(tab: Tab, target: Target) -> None:
    """The visitor registers, then its agent reads its plans on My registrations."""
    registered(tab, target)
    tab.call("get_my_plans")


def cancel_as_person(tab: Tab, registration: str) -> None:
    """The person asks (through the tool) to cancel and confirms in the dialog."""
    tab.call("prepare_registration_cancellation", {"registration_id": registration})
    tab.press("Cancel my registration", then_shows="its seat is free again")


def dialog_open(tab: Tab, target: Target) -> None:
    """Registered; the cancellation prepared, its dialog open."""
    registered(tab, target)
    tab.call("prepare_registration_cancellation", {"registration_id": target.registration})


def other_registration_cancelled(tab: Tab, target: Target) -> None:
    """Registered for two events; the panel a person's confirmed cancellation of the other
    one leaves (it still lists the target's registration)."""
    other = tab.register_as_person(target.other_event)
    registered(tab, target)
    cancel_as_person(tab, other)


def kept(tab: Tab, target: Target) -> None:
    """Registered; the cancellation prepared, then the person keeps the registration: the
    panel "Keep it" leaves."""
    dialog_open(tab, target)
    tab.press("Keep it", then_shows="nothing was cancelled")


def unsaved(tab: Tab, target: Target) -> None:
    """Saved by the agent, then taken off the list by the person on the event's page."""
    tab.open(f"/events/{target.event}")
    tab.call("save_event")
    tab.press("Remove from saved", then_shows="Removed from your saved list.")


PAGES: dict[str, Callable[[Tab, Target], Any]] = {
    "/events": lambda tab, t: tab.open(f"/events?query={t.word}"),
    "/events/<event_id>": lambda tab, t: tab.open(f"/events/{t.event}"),
    # The preview pane the list's get_event_details fills (without JavaScript: the event page).
    "/events/details": lambda tab, t: (tab.open(f"/events?query={t.word}"),
                                       tab.call("get_event_details", {"event_id": t.event})),
    # What a save leaves: the morphed save slot (without JavaScript: the event page again).
    "/events/<event_id>/save": lambda tab, t: (tab.open(f"/events/{t.event}"),
                                               tab.call("save_event")),
    # What a person's unsave leaves: the save slot again (without JavaScript: the event page).
    "/events/<event_id>/unsave": lambda tab, t: unsaved(tab, t),
    "/events/<event_id>/register": lambda tab, t: tab.open(f"/events/{t.event}/register"),
    "/registrations": registered,
    # The open confirmation dialog a prepared cancellation leaves.
    "/registrations/cancellation": lambda tab, t: dialog_open(tab, t),
    "/registrations/<registration_id>/cancel": other_registration_cancelled,
    "/registrations/<registration_id>/keep": kept,
    # What get_my_plans leaves: the panel it refreshed (without JavaScript: its own page).
    "/registrations/plans": lambda tab, t: plans_refreshed(tab, t),
}

# The arguments a tool is called with where its required input alone would not do: words that
# find the target, a person of its own.
GIVEN: dict[str, Callable[[Target], dict[str, Any]]] = {
    "search_events": lambda t: {"query": t.word},
    "prepare_event_registration": lambda t: new_person(),
}
# Where each id a tool may require comes from (the others: its schema's required fields).
IDS: dict[str, Callable[[Target], str | None]] = {
    "event_id": lambda t: t.event,
    "registration_id": lambda t: t.registration,
}


def required_inputs(tool: str) -> list[str]:
    """The inputs `tool`'s schema requires."""
    return [name for name, input_field in CATALOG[tool].schema().fields.items()
            if input_field.required]


def knows_arguments(tool: str) -> bool:
    """Whether the matrix knows what to call `tool` with."""
    return tool in GIVEN or set(required_inputs(tool)) <= set(IDS)


def arguments_for(tool: str, target: Target) -> dict[str, Any]:
    """What `tool` is called with: GIVEN's, else each input its schema requires, from the
    target."""
    if tool in GIVEN:
        return GIVEN[tool](target)
    return {name: IDS[name](target) for name in required_inputs(tool)}


# -- how the site is made to answer each status ---------------------------------------------


@dataclass(frozen=True)
class Cause:
    """How to make a call answer one status: `arguments` changes the call's arguments, and
    `provoke(tab, target)` holds the cause while the call is made. `undone`: once the block
    ends, the same call succeeds again."""

    name: str
    tools: tuple[str, ...] | None = None  # None: any tool that can answer the status
    arguments: Callable[[dict[str, Any]], dict[str, Any]] = lambda given: given
    provoke: Callable[[Tab, Target], AbstractContextManager[Any]] = (
        lambda tab, target: nullcontext())
    undone: bool = False
    state_changed: bool = False  # the visitor's state changed: a fresh page may offer less
    budget: str | None = None  # made on the server whose budget of these is tiny


@contextmanager
def database_removed(tab: Tab, target: Target) -> Iterator[None]:
    with removed(tab.site.database):
        yield


@contextmanager
def cookies_lost(tab: Tab, target: Target) -> Iterator[None]:
    context = tab.page.context
    kept = context.cookies()
    context.clear_cookies()
    try:
        yield
    finally:
        context.add_cookies(kept)  # type: ignore[arg-type]


@contextmanager
def event_deleted(tab: Tab, target: Target) -> Iterator[None]:
    with row_taken_away(tab.site.database, "events", target.event):
        yield


@contextmanager
def registration_deleted(tab: Tab, target: Target) -> Iterator[None]:
    assert target.registration is not None
    with row_taken_away(tab.site.database, "registrations", target.registration):
        yield


@contextmanager
def registered_in_another_tab(tab: Tab, target: Target) -> Iterator[None]:
    tab.new_tab().register_as_person(target.event)
    yield


@contextmanager
def cancelled_in_another_tab(tab: Tab, target: Target) -> Iterator[None]:
    assert target.registration is not None
    other = tab.new_tab()
    other.open("/registrations")
    cancel_as_person(other, target.registration)
    yield


def writes(tool: str) -> bool:
    """Whether the routes that run `tool` take writes (POST)."""
    return any("POST" in (rule.methods or ()) for rule, role in route_roles(ROUTES)
               if role.action is not None and role.action.name == tool)


WRITING = tuple(tool for tool in offering_routes(ROUTES) if writes(tool))
READING = tuple(tool for tool in offering_routes(ROUTES) if not writes(tool))


def spend(tab: Tab, target: Target, budget: str, token: str) -> bool:
    """One request of this visitor that counts against `budget` (a write with the form token
    `token`, or a read); whether the site refused it for the budget."""
    api = tab.page.context.request
    if budget == "writes":
        response = api.post(tab.site.url(f"/events/{target.other_event}/save"), headers=JSON,
                            form={"csrf_token": token})
    else:
        response = api.get(tab.site.url(f"/events/{target.other_event}"), headers=JSON)
    return response.status == 429


@contextmanager
def budget_spent(tab: Tab, target: Target, budget: str) -> Iterator[None]:
    """Requests of this visitor until the site refuses one, then the call; afterwards the
    budget is given back, as a new window would."""
    token = ((tab.page.locator("input[name=csrf_token]").first.get_attribute("value") or "")
             if budget == "writes" else "")
    # One more than the budget, and one more again: a visitor's first write counts against its
    # browser session, which it leaves as it becomes a visitor.
    most = TINY_BUDGETS[budget][1] + 2
    try:
        assert any(spend(tab, target, budget, token) for _ in range(most)), (
            f"{most} requests did not spend the {budget} budget")
        yield
    finally:
        budget_given_back(tab.site)


def budget_given_back(site: Site) -> None:
    """Every rate-limit counter of `site` cleared: the file its workers count in, emptied."""
    uri = counters_uri({"RATELIMIT_STORAGE_URI": HOST_COUNTERS, "DATABASE": str(site.database)},
                       instance_path="")
    HostCounters(uri).reset()


CAUSES: dict[str, tuple[Cause, ...]] = {
    "success": (Cause("an ordinary call", undone=True),),
    "no_results": (Cause("words no event has",
                         arguments=lambda given: {**given, "query": "zzqqxx nothing"}),),
    "confirmation_required": (Cause("an ordinary call", undone=True),),
    "invalid_input": (
        Cause("dates out of order", tools=("search_events",),
              arguments=lambda given: {**given, "date_from": "2030-02-01",
                                       "date_to": "2030-01-01"}),
        Cause("a name too long", tools=("prepare_event_registration",),
              arguments=lambda given: {**given, "attendee_name": "A" * 81}),
        Cause("a body too large (413)", tools=("prepare_event_registration",),
              arguments=lambda given: {**given, "attendee_name": "A" * 70_000}),
    ),
    "not_found": (
        Cause("the event deleted", tools=("get_event_details", "save_event",
                                          "prepare_event_registration"),
              provoke=event_deleted, undone=True),
        Cause("the registration deleted", tools=("prepare_registration_cancellation",),
              provoke=registration_deleted, undone=True),
    ),
    "conflict": (
        Cause("registered in another tab", tools=("prepare_event_registration",),
              provoke=registered_in_another_tab, state_changed=True),
        Cause("cancelled in another tab", tools=("prepare_registration_cancellation",),
              provoke=cancelled_in_another_tab, state_changed=True),
    ),
    "session_expired": (Cause("the cookies lost", provoke=cookies_lost, undone=True),),
    "rate_limited": (
        Cause("the write budget spent", tools=WRITING, budget="writes", undone=True,
              provoke=lambda tab, target: budget_spent(tab, target, "writes")),
        Cause("the read budget spent", tools=READING, budget="reads", undone=True,
              provoke=lambda tab, target: budget_spent(tab, target, "reads")),
    ),
    "internal_error": (Cause("the database removed", provoke=database_removed, undone=True),),
}

# Statuses a tool can answer that no browser can make it answer, and why.
UNREACHABLE = {
    ("get_event_details", "invalid_input"):
        "its one input is a radio group of the ids listed (none on an event's page) and "
        "Chromium refuses any other value before sending; a GET has no body to be too large",
    ("save_event", "invalid_input"):
        "it has no input: the form sends only its CSRF token",
    ("get_my_plans", "invalid_input"):
        "it has no input: the form sends nothing, and a GET has no body to be too large",
    ("prepare_registration_cancellation", "invalid_input"):
        "its one input is a radio group of the visitor's registrations; Chromium refuses any "
        "other value, and no field can make the body too large",
}


def cells() -> Iterator[Any]:
    """(tool, page, status, cause) for every status of every tool on every page offering it."""
    for tool, pages in offering_routes(ROUTES).items():
        for page in pages:
            for status in tool_answers(tool):
                if (tool, status.word) in UNREACHABLE:
                    continue
                causes: list[Cause | None] = [
                    cause for cause in CAUSES.get(status.word, ())
                    if cause.tools is None or tool in cause.tools]
                for cause in causes or [None]:
                    name = f"{tool}@{page}-{status.word}" + (
                        f"-{cause.name.replace(' ', '-')}" if cause and len(causes) > 1 else "")
                    yield pytest.param(tool, page, status.word, cause, id=name)


# -- the servers and tabs ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    database = tmp_path_factory.mktemp("answers") / "events.sqlite"
    with gunicorn(database, workers=2, threads=4) as (base_url, _):
        yield Site(base_url, database)


@pytest.fixture(scope="module")
def writes_limited_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A server whose visitors may write only TINY_BUDGETS["writes"]."""
    yield from limited_server(tmp_path_factory, "writes")


@pytest.fixture(scope="module")
def reads_limited_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A server that takes only TINY_BUDGETS["reads"] from an address."""
    yield from limited_server(tmp_path_factory, "reads")


def limited_server(tmp_path_factory: pytest.TempPathFactory, budget: str) -> Iterator[Site]:
    database = tmp_path_factory.mktemp(f"{budget}-limited") / "events.sqlite"
    setting, allowed = TINY_BUDGETS[budget]
    with gunicorn(database, workers=1, threads=4,
                  env={setting: f"{allowed} per day"}) as (base_url, _):
        yield Site(base_url, database)


@pytest.fixture
def contexts(chromium: Browser) -> Iterator[list[BrowserContext]]:
    opened: list[BrowserContext] = []
    yield opened
    for context in opened:
        context.close()


def new_tab(chromium: Browser, contexts: list[BrowserContext], site: Site,
            javascript: bool) -> Tab:
    """A new visitor whose browser asks for English (the statuses are the same in Chinese)."""
    context = chromium.new_context(java_script_enabled=javascript, locale="en")
    contexts.append(context)
    return Tab(context.new_page(), site, javascript, "en")


# -- the matrix --------------------------------------------------------------------------------


@pytest.mark.parametrize("javascript", [True, False], ids=["js-on", "js-off"])
@pytest.mark.parametrize(("tool", "page", "status", "cause"), list(cells()))
def test_every_answer_reaches_the_agent(request, chromium, contexts, tool, page, status, cause,
                                        javascript):
    assert page in PAGES, f"no way to reach {page}, which offers {tool}: add it to PAGES"
    assert knows_arguments(tool), f"no way to call {tool}: add its arguments to GIVEN or IDS"
    assert cause is not None, f"no way to make {tool} answer {status}: add a cause to CAUSES"
    site: Site = request.getfixturevalue(f"{cause.budget}_limited_site" if cause.budget else "site")
    if cause.budget:
        budget_given_back(site)  # whatever a test before this one left spent
    tab = new_tab(chromium, contexts, site, javascript)
    target = new_target(site)
    PAGES[page](tab, target)
    offered = set(tab.agent.tools())
    assert tool in offered, f"{page} does not offer {tool}"

    # Only what the form asks for here (a form bound to its page's event asks for no id).
    parameters = tab.agent.tools()[tool].input_schema.get("properties", {})
    arguments = {name: value for name, value in cause.arguments(arguments_for(tool, target)).items()
                 if name in parameters}
    with cause.provoke(tab, target):
        answer = tab.call(tool, arguments)
    envelope = tab.result(answer)  # Completed (never Canceled), holding one result
    assert (envelope["status"], envelope["action"]) == (status, tool), envelope
    assert envelope["retryable"] is Status.from_word(status).retryable

    failed = Status.from_word(status) not in (*FORWARD, Status.NO_RESULTS)
    if javascript:
        # The invoked form stayed: Chromium cancels a call whose form is removed.
        assert tool in answer.page_tools
        if failed:
            assert offered <= set(answer.page_tools), "a failure took a tool off the page"
            if status != "invalid_input":  # invalid input marks the fields instead
                assert tab.page.get_by_text(envelope["message"]).first.is_visible()
    if failed and not cause.state_changed:
        # Without JavaScript the agent is on the answer's page: it, or else the page the call
        # was made on, offers the tools again.
        if not offered <= set(tab.agent.tools()):
            tab.page.go_back()
        assert offered <= set(tab.agent.tools()), "after the failure, a tool is missing"

    if not javascript and cause.state_changed:
        return  # a fresh page rightly offers no tool the new state rules out
    if not javascript and not can_call(tab, tool, arguments):
        tab.page.go_back()  # the page the call was made on
    again = tab.result(tab.call(tool, arguments))  # the cause undone, where it can be
    assert again["status"] == (forward(tool) if cause.undone else status), again


def can_call(tab: Tab, tool: str, arguments: dict[str, Any]) -> bool:
    """Whether the page offers `tool` taking these arguments."""
    offered = tab.agent.tools().get(tool)
    return offered is not None and set(arguments) <= set(
        offered.input_schema.get("properties", {}))
