"""Every action a route runs says how the activity log speaks of it (`@logged_as`), in words
the catalogs translate: a new action cannot reach the log as a bare name."""

from __future__ import annotations

import pytest
from routes import declared_actions

from webapp.domain.activity import ACTIVITY_WORDS

ACTIONS = sorted(declared_actions())


def test_the_actions_are_found():
    assert {"search_events", "confirm_registration", "connect_agent"} <= set(ACTIONS)


@pytest.mark.parametrize("name", ACTIONS)
def test_each_action_is_worded_for_the_activity_log(name):
    words = ACTIVITY_WORDS[name]
    assert str(words.tried) and "%(who)s" in str(words.done)
