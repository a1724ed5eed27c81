"""`flask webmcp lint` on this site: its templates lint clean, and a template broken in the
ways a site's templates break is found through the sample pages.

That each rule fires on its broken fixture is the toolkit's own test
(flask-webmcp/tests/test_lint_rules.py).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from helpers import PROJECT_ROOT

import webapp.config
from flask_webmcp.dev.lint import MAX_PARAM_DESCRIPTION
from flask_webmcp.dev.lint import MAX_TOOL_DESCRIPTION
from flask_webmcp.dev.lint import RULES
from flask_webmcp.dev.lint import columns
from webapp import create_app
from webapp.domain.catalog import CATALOG

FINDING = re.compile(r"^(?P<path>\S+):(?P<line>\d+): (?P<code>WMCP\d{3}) \S.*$")


def findings(output: str) -> list[re.Match[str]]:
    """The finding lines of the command's output (the summary goes to stderr)."""
    return [found for line in output.splitlines() if (found := FINDING.match(line))]


def test_the_project_templates_lint_clean(runner):
    result = runner.invoke(args=["webmcp", "lint"])
    assert result.exit_code == 0, result.output
    assert findings(result.output) == []
    checked = re.search(r"(\d+) templates, (\d+) sample pages: no findings", result.output)
    assert checked, result.output
    templates, pages = map(int, checked.groups())
    assert templates >= 20 and pages >= 20


def test_readme_lists_every_rule():
    readme = (PROJECT_ROOT / "README.md").read_text()
    assert all(f"| {rule.code} |" in readme for rule in RULES)


def test_help_lists_every_rule_with_its_rationale(runner):
    shown = " ".join(runner.invoke(args=["webmcp", "lint", "--help"]).output.split())
    for rule in RULES:
        assert f"{rule.code} {rule.finds} {rule.rationale}" in shown


@pytest.fixture
def project_copy(tmp_path, monkeypatch):
    """A copy of the project's templates that a test may break (the app reads that copy)."""
    shutil.copytree(webapp.config.SITE_ROOT / "templates", tmp_path / "templates")
    for folder in ("static", "data"):
        (tmp_path / folder).symlink_to(webapp.config.SITE_ROOT / folder)
    monkeypatch.setattr(webapp.config, "SITE_ROOT", tmp_path)
    return tmp_path


def break_template(root: Path, name: str, old: str, new: str) -> None:
    path = root / "templates" / name
    source = path.read_text()
    assert old in source
    path.write_text(source.replace(old, new, 1))


@pytest.mark.slow  # each walks every sample page of a sandbox copy of the project (~3 s)
@pytest.mark.parametrize(("template", "old", "new", "codes", "reported_in"), [
    # the results list writes its radios by hand, under a name the schema does not know
    ("events/_event_list.html",
     "{{ radio(control, option, href=url_for('events.detail', event_id=event.id),"
     " agents_only=true) }}",
     '<label><input type="radio" name="event" value="{{ option.value }}">{{ option.label }}'
     "</label>", {"WMCP014"}, "events/_event_list.html"),
    # a second, empty search form: twice on the page, and the one in the partial drifts
    ("events/_results.html", '{% include "events/_event_list.html" %}',
     '{% include "events/_event_list.html" %}{{ tool_form("search_events", "/events") }}',
     {"WMCP004", "WMCP014"}, "events/_results.html"),
    # the save form answers into a slot it replaces instead of morphing it
    ("events/_save.html", '"hx-swap": "innerMorph"', '"hx-swap": "innerHTML"', {"WMCP016"},
     "events/_save.html"),
    # the event page's form sits inside an element named like its error slot: a failure
    # (a 503 while refreshing the details) would replace the form
    ("events/_details.html", '{% if not preview %}\n  <div class="event-description">',
     '{% if not preview %}\n  <div id="get_event_details-error">'
     '\n  <div class="event-description">',
     {"WMCP016"}, "events/_details.html"),
    # the base template stops rendering the result for agents: every page showing one is found
    ("base.html", "{% if result %}{{ jsonld(result) }}{% endif %}", "", {"WMCP013"},
     "events/index.html"),
])
def test_a_broken_project_template_is_found_through_the_sample_pages(
        project_copy, tmp_path, template, old, new, codes, reported_in):
    if "tool_form(" in new:
        break_template(project_copy, template, "{%- set data",
                       '{% from "webmcp/macros.html" import tool_form %}{%- set data')
    break_template(project_copy, template, old, new)
    app = create_app({"TESTING": True, "SECRET_KEY": "x", "DATABASE": str(tmp_path / "db")})
    result = app.test_cli_runner().invoke(args=["webmcp", "lint"])
    assert result.exit_code == 1
    found = findings(result.output)
    assert {f["code"] for f in found} == codes, result.output
    assert any(f["path"].endswith(f"templates/{reported_in}") for f in found), result.output


def test_the_site_descriptions_fit_in_both_languages(app):
    """The catalog's descriptions, as each language writes them, are within the limits."""
    for language in ("zh-TW", "en"):
        with app.test_request_context(f"/{language}/events"):
            for tool in CATALOG:
                assert columns(tool.form_description) <= MAX_TOOL_DESCRIPTION
                for field in tool.schema().fields.values():
                    described = field.metadata.get("description")
                    assert described is None or columns(str(described)) <= MAX_PARAM_DESCRIPTION
