"""Actions: what a tool, or a step only people take, does — declared once, with the statuses it
can answer, so the routes, the OpenAPI document and the error answers learn them from here::

    @catalog.action("find_books", answers=(Status.SUCCESS, Status.NO_RESULTS))
    def find_books(params): ...

    @human_action("confirm_order", schema=ConfirmOrderInput, creates=True,
                  answers=(Status.SUCCESS, Status.CONFLICT))
    def confirm_order(params): ...

A tool's action takes its input schema from the catalog; a human-only step names its own. The
function's own parameters are the app's business (a database, a context...): the app's
`calls.Calls.execute` hook calls it, so the extension never needs to know them.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import replace
from typing import Any
from typing import Generic
from typing import TypeVar

from marshmallow import Schema

from .result import Status
from .result import ToolResult

Run = TypeVar("Run", bound=Callable[..., ToolResult])
"""The type of an action's function: its parameters are the app's, its answer a ToolResult."""


@dataclass(frozen=True)
class Action(Generic[Run]):
    """An action and what callers need to know of it: its name, the schema of its input, the
    statuses it answers (beyond the ones any call may meet, such as invalid_input), whether
    its success creates something (HTTP 201), and whether it is for people only (no tool: an
    agent's call is refused)."""

    name: str
    run: Run
    schema: type[Schema]
    answers: tuple[Status, ...]
    creates: bool = False
    human_only: bool = False


def declare_action(name: str, schema: type[Schema], answers: Iterable[Status], *,
                   creates: bool = False, human_only: bool = False
                   ) -> Callable[[Run], Action[Run]]:
    """Declare the decorated function as the action called `name` (see `Catalog.action` for
    a tool's, `human_action` for a step only people take)."""

    def declare(run: Run) -> Action[Run]:
        return Action(name=name, run=run, schema=schema, answers=tuple(answers),
                      creates=creates, human_only=human_only)

    return declare


def human_action(name: str, *, schema: type[Schema], answers: Iterable[Status],
                 creates: bool = False) -> Callable[[Run], Action[Run]]:
    """Declare a step only people take (a confirmation, say): it is no tool of the catalog,
    its form carries no `toolname`, and an agent's call of it is refused."""
    return declare_action(name, schema, answers, creates=creates, human_only=True)


def answered_by(action: Action[Any], result: ToolResult) -> ToolResult:
    """`result` as the action answers it: a success that creates something is sent with HTTP
    201 (the action says what it does; the web says how that is sent)."""
    if action.creates and result.status is Status.SUCCESS and result.http_status is None:
        return replace(result, http_status=201)
    return result


__all__ = ["Action", "Run", "answered_by", "declare_action", "human_action"]
