"""`dev.patterns`: the patterns an app declares, and which of them V8 rejects with the `v` flag.

The browser tests compile in Chromium (Debian's `chromium`, or the one `CHROMIUM` names); the
others show what happens without one.
"""

from __future__ import annotations

import lint_shop
import pytest

from flask_webmcp.dev.patterns import declared_patterns
from flask_webmcp.dev.patterns import rejected_patterns
from flask_webmcp.input_schema import remote_input_schema

# Python's `re` takes it; the `v` flag wants "-" escaped in a class.
UNESCAPED_DASH = "[a-z0-9-]"
ESCAPED_DASH = r"[a-z0-9\-]"


@pytest.mark.browser
def test_v8_rejects_what_the_v_flag_forbids_and_compiles_the_rest():
    rejected = rejected_patterns([UNESCAPED_DASH, ESCAPED_DASH, r"[\p{L}--\d]+", "a|b)"])
    assert set(rejected) == {UNESCAPED_DASH, "a|b)"}
    assert "Invalid character class" in rejected[UNESCAPED_DASH]


def test_no_patterns_need_no_browser(monkeypatch):
    monkeypatch.setenv("CHROMIUM", "/nonexistent/chromium")
    assert rejected_patterns([]) == {}


def test_declared_patterns_come_from_the_tools_schemas():
    app = lint_shop.create_app()
    assert declared_patterns(app) == {lint_shop.VOUCHER_CODE: ["redeem_voucher.code"]}
    # A declared pattern reaches the agent's schema as written, whatever V8 makes of it.
    with app.test_request_context("/"):
        schema = remote_input_schema(lint_shop.CATALOG["redeem_voucher"])
    assert schema["properties"]["code"]["pattern"] == lint_shop.VOUCHER_CODE


def test_without_a_browser_the_linter_checks_the_rest_and_says_why(monkeypatch):
    """`rejected_patterns` raises `BrowserUnavailable`, whose reason the summary gives."""
    monkeypatch.setenv("CHROMIUM", "/nonexistent/chromium")
    fixture = lint_shop.FIXTURES / "WMCP015_ignored_pattern.html"
    result = lint_shop.create_app().test_cli_runner().invoke(args=["webmcp", "lint",
                                                                   str(fixture)])
    assert result.exit_code == 0, result.output
    assert "no findings" in result.output
    assert "1 pattern not compiled, so WMCP015 was not checked: Chromium did not start" \
        in result.output and "/nonexistent/chromium" in result.output
