"""Every pattern the site declares compiles in V8 with the `v` flag, as browsers compile it.

The running site passes patterns on as declared (to its forms, and to the schemas an MCP client
gets), so a pattern a browser would ignore is caught here: the list is read from the
declarations themselves (`declared_patterns`: the catalog's tools and the routed actions), and
compiled by Chromium's engine (`rejected_patterns`).
"""

from __future__ import annotations

import pytest

from flask_webmcp.dev.patterns import declared_patterns
from flask_webmcp.dev.patterns import rejected_patterns
from webapp import create_app
from webapp.domain.schemas import EVENT_ID
from webapp.domain.schemas import REGISTRATION_ID

pytestmark = pytest.mark.browser

# Python's `re` takes it; the `v` flag wants "-" escaped in a class. Sent with the site's
# patterns, it shows that the check can fail at all.
KNOWN_BAD = "[a-z0-9-]"


def test_every_declared_pattern_compiles_with_the_v_flag(tmp_path):
    app = create_app({"TESTING": True, "SECRET_KEY": "patterns",
                      "DATABASE": str(tmp_path / "unused.sqlite")})
    declared = declared_patterns(app)
    # Read from the declarations, so it holds the ids' patterns without being told them.
    assert {EVENT_ID.regex.pattern, REGISTRATION_ID.regex.pattern} <= set(declared)
    rejected = rejected_patterns([*declared, KNOWN_BAD])
    assert {pattern: declared.get(pattern) for pattern in rejected} == {KNOWN_BAD: None}
