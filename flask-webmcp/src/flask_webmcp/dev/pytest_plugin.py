"""A pytest plugin: lint an app's templates for WebMCP in its own test suite.

    def test_the_templates_are_valid_webmcp(webmcp_lint, app):
        report = webmcp_lint(app)
        assert report.findings == [], report

Installed with flask-webmcp (the `pytest11` entry point), so any app's suite has the
`webmcp_lint` fixture; it runs the linter of `flask webmcp lint` (it needs
flask-webmcp[dev]), over the app's templates and the sample pages it names with
`WebMCP(samples=...)`, and imports it only when a test asks for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from flask import Flask

    from .lint import Finding


@dataclass(frozen=True)
class LintReport:
    """What the linter found in one app: each finding, how much it read, and why it did not
    compile the patterns (WMCP015) when it could not."""

    findings: list[Finding]
    templates: int
    pages: int
    unchecked: str | None = None

    def __str__(self) -> str:
        summary = (f"{self.templates} templates, {self.pages} sample pages: "
                   f"{len(self.findings) or 'no'} findings")
        note = [f"Note: {self.unchecked}."] if self.unchecked else []
        return "\n".join([*map(str, self.findings), summary, *note])


def lint_app(app: Flask, *paths: str | Path) -> LintReport:
    """Lint `app`'s templates (or only those under `paths`) as `flask webmcp lint` does."""
    from .cli import site_samples
    from .lint import Linter

    linter = Linter(app, app.extensions["webmcp"].catalog, site_samples(app))
    findings = linter.run([Path(path) for path in paths])
    return LintReport(findings, linter.templates_checked, linter.pages_checked, linter.unchecked)


@pytest.fixture
def webmcp_lint() -> Callable[..., LintReport]:
    """`webmcp_lint(app, *paths)`: the findings of the WebMCP linter in `app`'s templates."""
    return lint_app


__all__ = ["LintReport", "lint_app", "webmcp_lint"]
