"""Each action's `params` type says what its schema loads: the same names, the same
required ones, the same Python types.

The schema is the rule (what is valid); the TypedDict beside it is only the type mypy checks
the action against. Two declarations of one input can drift, so every declared action (the
routes', tools and human-only steps alike) is compared with its schema here.
"""

from __future__ import annotations

import typing
from datetime import date
from datetime import datetime
from typing import Any

import pytest
from marshmallow import fields
from marshmallow import missing
from routes import declared_actions

# What each kind of field loads (the first match wins: an Email is a String).
LOADS = ((fields.Integer, int), (fields.DateTime, datetime), (fields.Date, date),
         (fields.Boolean, bool), (fields.String, str))


def loaded_type(field: fields.Field[Any]) -> Any:
    """What a field loads: a field of the site's own says it in its `_deserialize`'s return
    type (topic tags load a tuple); marshmallow's by their kind (`LOADS`)."""
    if type(field).__module__.startswith("webapp."):
        return typing.get_type_hints(type(field)._deserialize)["return"]
    return next(python for kind, python in LOADS if isinstance(field, kind))


def params_type(action: Any) -> Any:
    """The TypedDict the action's function takes as `params`."""
    return typing.get_type_hints(action.run)["params"]


ACTIONS = declared_actions()


def test_the_declarations_hold_every_kind_of_action():
    """The matrix below is read from the routes: it holds tools and human-only steps."""
    assert {"search_events", "prepare_event_registration", "confirm_cancellation"} <= set(ACTIONS)
    assert any(action.human_only for action in ACTIONS.values())


@pytest.mark.parametrize("name", sorted(ACTIONS))
def test_an_actions_params_type_is_what_its_schema_loads(name):
    action = ACTIONS[name]
    declared = action.schema().fields
    typed = params_type(action)
    hints = typing.get_type_hints(typed)
    assert set(hints) == set(declared)
    required = {key for key, field in declared.items()
                if field.required or field.load_default is not missing}
    assert typed.__required_keys__ == required
    assert {key: hints[key] for key in hints} == {key: loaded_type(field)
                                                  for key, field in declared.items()}


def test_a_type_that_drifted_from_its_schema_is_seen():
    """The comparison itself: a TypedDict missing a field, or with a wrong type, differs."""

    class Drifted(typing.TypedDict):
        event_id: int

    search = ACTIONS["search_events"].schema().fields
    assert set(typing.get_type_hints(Drifted)) != set(search)
    assert typing.get_type_hints(Drifted)["event_id"] is not loaded_type(
        ACTIONS["get_event_details"].schema().fields["event_id"])
