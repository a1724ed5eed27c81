"""One pipeline for every call, from a page or over MCP: read the input, validate it with the
action's schema, find whom the call acts for, run the action, record the call::

    CALLS = Calls(execute=lambda action, params, principal, source: action.run(params))

    @tool_route(bp, "/books", find_books)
    def books():
        result, submitted = CALLS.route_call()

What only the app knows comes in as hooks: `execute` runs an action for someone (with the
app's database, clock, context...), `record` keeps the call where the app audits them, and
`failures` names the app's exceptions that mean a dependency failed (answered with a safe
`internal_error`, never a stack trace). Whom a call acts for is asked per call
(`acting_for`): a page's visitor, an MCP client's connection.

An app with a transactional database gives `unit` too: `unit(action)` is what a call runs in
from asking whom it acts for to its record (a transaction; None for an action that changes
nothing), so that a call and its record commit together, once, or not at all.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any
from typing import NamedTuple

from flask import current_app
from flask import request

from .actions import Action
from .actions import answered_by
from .inputs import InputError
from .inputs import load_input
from .inputs import read_input
from .result import ToolResult
from .result import internal_error
from .result import invalid_input
from .result import not_found
from .result import people_only
from .result import session_expired
from .routes import current_role
from .text import _

# The bridge marks the requests it sends for an agent-invoked submit with this header.
AGENT_HEADER = "WebMCP-Agent-Invoked"


class PrincipalGone(Exception):
    """Raised by an `acting_for` hook: whoever the call would act for is gone (an expired
    session, a revoked token), so the call is answered by its `gone` answer."""


@dataclass(frozen=True)
class CallRecord:
    """What the `record` hook is told of a call: the action, where the call came from
    ("human", "agent", or what the caller names), whom it acted for, and its result."""

    action: str
    source: str
    principal: str | None
    result: ToolResult


class Ran(NamedTuple):
    """What a call answered, and the input as submitted (to show it again in the form)."""

    result: ToolResult
    submitted: dict[str, Any]


Execute = Callable[[Action[Any], dict[str, Any], str | None, str], ToolResult]


def _no_record(_call: CallRecord) -> None:
    """Keep no record (an app that audits nothing)."""


def nobody() -> str | None:
    """A call that acts for nobody in particular."""
    return None


def request_source() -> str:
    """"agent" when the bridge sent this request for an agent, else "human"."""
    return "agent" if request.headers.get(AGENT_HEADER) == "true" else "human"


@dataclass(frozen=True)
class Calls:
    """The pipeline with the app's hooks: `execute(action, params, principal, source)` runs an
    action, `record(call)` audits a call, and an exception of `failures` raised by either is a
    dependency failing.

    Without a `unit`, each part commits on its own and a failure to record never fails the
    call. With one, whom the call acts for, the action and the record run inside
    `unit(action)`: a failure in any of them (the record's too) undoes all of them, and the
    call is answered `internal_error` (recorded on its own if it can be). `unit(action)` may
    give None for an action that needs none (one that changes nothing): that call runs as
    without a `unit`.
    """

    execute: Execute
    record: Callable[[CallRecord], None] = _no_record
    failures: tuple[type[Exception], ...] = ()
    unit: Callable[[Action[Any]], AbstractContextManager[Any] | None] | None = None

    def call(self, action: Action[Any], submitted: dict[str, Any], *, source: str,
             acting_for: Callable[[], str | None] = nobody, asker: str | None = None,
             bound: dict[str, Any] | None = None,
             gone: Callable[[str], ToolResult] = session_expired, typed: bool = False) -> Ran:
        """Validate `submitted` (with the values `bound` by a page address) with the action's
        schema, ask `acting_for` whom it acts for (`gone` answers when it raises
        PrincipalGone), run it and record it, for that principal or else for the `asker`.
        `typed`: the values keep their JSON types (an MCP call's arguments; `inputs.load_input`).

        Values bound by the address that do not validate mean there is nothing at that
        address: not_found, as for an unknown id.
        """
        principal = None
        try:
            params = load_input(action.schema, submitted, bound, typed=typed)
        except InputError as error:
            if bound and set(error.errors) <= set(bound) - set(submitted):
                result = not_found(action.name, _("There is nothing at this address."),
                                   next_action=_("Use ids exactly as the site gave them; never "
                                                 "guess."))
            else:
                result = invalid_input(action.name, error.errors)
        else:
            unit = self.unit(action) if self.unit else None
            try:
                with unit or nullcontext():
                    try:
                        principal = acting_for()
                        result = answered_by(action,
                                             self.execute(action, params, principal, source))
                    except PrincipalGone:
                        result = gone(action.name)
                    if unit is not None:
                        self.record(CallRecord(action.name, source, principal or asker, result))
                        return Ran(result, submitted)  # once the unit has committed
            except self.failures:
                current_app.logger.exception("%s failed", action.name)
                result = internal_error(action.name)
        self._record(CallRecord(action.name, source, principal or asker, result))
        return Ran(result, submitted)

    def route_call(self, *, acting_for: Callable[[], str | None] = nobody,
                   asker: str | None = None, bound: dict[str, Any] | None = None) -> Ran:
        """Run the action of the route handling this request (see `routes.tool_route`) on
        the request's input: a human-only step marked as an agent's call is refused, whoever
        sent it, so that only a person ever takes it."""
        role = current_role()
        if role is None or role.action is None:
            raise LookupError("route_call() needs a route declared with tool_route() or "
                              "human_route()")
        action = role.action
        source = request_source()
        if source == "agent" and action.human_only:
            result = people_only(action.name)
        else:
            try:
                submitted = read_input()
            except InputError as error:
                result = invalid_input(action.name, error.errors)
            else:
                return self.call(action, submitted, source=source, acting_for=acting_for,
                                 asker=asker, bound=bound)
        self._record(CallRecord(action.name, source, asker, result))
        return Ran(result, {})

    def _record(self, call: CallRecord) -> None:
        try:
            self.record(call)
        except self.failures:
            current_app.logger.exception("could not record a call of %s", call.action)


__all__ = ["AGENT_HEADER", "CallRecord", "Calls", "Execute", "PrincipalGone", "Ran", "nobody",
           "request_source"]
