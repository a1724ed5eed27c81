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
    (the event's)."""

    tried: LazyString
    done: LazyString


# Filled as the action modules are imported, and only read after that: the same in every
# worker.
ACTIVITY_WORDS: dict[str, ActivityWords] = {}


def logged_as(tried: LazyString, done: LazyString) -> Callable[[Declared], Declared]:
    """Declare how the activity log speaks of the decorated action."""

    def declare(action: Declared) -> Declared:
        ACTIVITY_WORDS[action.name] = ActivityWords(tried, done)
        return action

    return declare
