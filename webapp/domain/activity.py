"""How the visitor's activity log speaks of each action, declared on the action itself.

Every call is logged by its action's name, and the *My registrations* page turns each line
into a sentence. The words belong with the action they describe, so an action is added (and
worded) in one place: `@logged_as(...)` above its declaration.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from typing import TypeVar

from flask_babel.speaklater import LazyString

from flask_webmcp.actions import Action

Declared = TypeVar("Declared", bound=Action[Any])


@dataclass(frozen=True)
class ActivityWords:
    """`tried` names the action in a line that did not go through ("Your agent tried: Save
    event (not found)"); `done` is the sentence when it did, with `%(who)s` and `%(title)s`
    (the event's). A step the person then settles names the actions that settle it
    (`completed_by`: confirming it, or dropping it): once one is done, the visitor's page says
    only that."""

    tried: LazyString
    done: LazyString
    completed_by: tuple[str, ...] = ()


# The outcomes after which a line says what was done (the ones waiting for the person say so);
# a call that did not go through is the caller's news, not the person's: their page leaves it
# out.
WENT_THROUGH = ("success", "no_results", "confirmation_required")


# Filled as the action modules are imported, and only read after that: the same in every
# worker.
ACTIVITY_WORDS: dict[str, ActivityWords] = {}


def logged_as(tried: LazyString, done: LazyString, completed_by: tuple[str, ...] = ()
              ) -> Callable[[Declared], Declared]:
    """Declare how the activity log speaks of the decorated action (and, for a step the
    person settles, the actions that settle it)."""

    def declare(action: Declared) -> Declared:
        ACTIVITY_WORDS[action.name] = ActivityWords(tried, done, completed_by)
        return action

    return declare
