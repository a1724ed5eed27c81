"""`flask webmcp lint`: every rule fires on its broken fixture, at the line it names.

The fixtures (`lint_fixtures/WMCPnnn_*.html`, one per rule) are linted as templates of
`lint_shop.py`, the example shop with two more tools; each fixture's first line says which
codes it must raise.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import lint_shop
import pytest
from lint_shop import FIXTURES

from flask_webmcp.dev.lint import MAX_TOOL_DESCRIPTION
from flask_webmcp.dev.lint import RULE_CODES
from flask_webmcp.dev.lint import RULES
from flask_webmcp.dev.lint import check_tool_description
from flask_webmcp.dev.lint import columns

EXPECT = re.compile(r"\{# expect: ((?:WMCP\d{3} ?)+) --")
FINDING = re.compile(r"^(?P<path>\S+):(?P<line>\d+): (?P<code>WMCP\d{3}) \S.*$")


def findings(output: str) -> list[re.Match[str]]:
    """The finding lines of the command's output (the summary goes to stderr)."""
    return [found for line in output.splitlines() if (found := FINDING.match(line))]


def lint(*paths: str) -> tuple[int, str]:
    result = lint_shop.create_app().test_cli_runner().invoke(args=["webmcp", "lint", *paths])
    return result.exit_code, result.output


def with_marks(fixture: Path) -> Any:
    """A fixture as a test parameter: WMCP015's needs Chromium, whose V8 judges patterns."""
    marks = [pytest.mark.browser] if fixture.name.startswith("WMCP015") else []
    return pytest.param(fixture, marks=marks, id=fixture.stem)


@pytest.mark.parametrize("fixture", [with_marks(path)
                                     for path in sorted(FIXTURES.glob("WMCP*.html"))])
def test_each_rule_fires_on_its_fixture(fixture):
    expectation = EXPECT.match(fixture.read_text())
    assert expectation, f"{fixture.name} does not start with an expect comment"
    expected = set(expectation.group(1).split())
    assert fixture.name[:7] in expected
    exit_code, output = lint(str(fixture))
    assert exit_code == 1, output
    lines = [line for line in output.splitlines() if ": WMCP" in line]
    assert lines and all(FINDING.match(line) for line in lines), output
    assert {found["code"] for found in findings(output)} == expected
    assert all(found["path"].endswith(fixture.name) for found in findings(output))


def test_the_pytest_fixture_reports_what_the_command_prints(webmcp_lint):
    fixture = FIXTURES / "WMCP006_control_without_label.html"
    report = webmcp_lint(lint_shop.create_app(), fixture)
    assert [(finding.code, finding.line) for finding in report.findings] == [
        ("WMCP014", 3), ("WMCP006", 4)]
    printed = [line for line in lint(str(fixture))[1].splitlines() if FINDING.match(line)]
    assert str(report).splitlines() == [*printed, "1 templates, 0 sample pages: 2 findings"]


def test_every_rule_has_a_fixture_and_a_rationale():
    assert {path.name[:7] for path in FIXTURES.glob("WMCP*.html")} == RULE_CODES
    assert all(rule.finds and rule.rationale for rule in RULES)


def test_findings_point_at_the_template_line():
    _, output = lint(str(FIXTURES / "WMCP006_control_without_label.html"))
    lines = {found["code"]: int(found["line"]) for found in findings(output)}
    assert lines == {"WMCP006": 4, "WMCP014": 3}  # the bare <input>, the tool_form call


def test_description_lengths_are_counted_in_columns():
    """WMCP011 counts a CJK character as two columns: one limit reads alike in both languages."""
    assert columns("Search events") == 13
    assert columns("搜尋活動") == 8
    assert columns("WebMCP 工具") == 11
    chinese, english = "活" * (MAX_TOOL_DESCRIPTION // 2), "e" * MAX_TOOL_DESCRIPTION
    assert list(check_tool_description("t", chinese, [])) == []
    assert list(check_tool_description("t", english, [])) == []
    for too_long in (chinese + "動", english + "e"):
        (problem,) = check_tool_description("t", too_long, [])
        assert problem.code == "WMCP011" and "columns" in problem.message
