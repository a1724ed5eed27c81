"""`flask webmcp lint` and `flask webmcp manifest`: the toolkit's commands for people and CI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from bs4 import BeautifulSoup
from flask import Flask
from flask import current_app
from flask.cli import AppGroup
from werkzeug.utils import import_string

from ..input_schema import expected_input_schema
from ..routes import offering_routes
from .lint import RULES
from .lint import Linter
from .lint import Samples
from .lint import as_request
from .schema import page_context


def _lint_help() -> str:
    width = max(len(rule.code) for rule in RULES) + 2
    rules = "\n".join(f"{rule.code:<{width}}{rule.finds}\n{'':<{width}}{rule.rationale}"
                      for rule in RULES)
    return (
        "Check Jinja templates for WebMCP declarative-form mistakes: their source, and the "
        "pages rendered from them with the site's sample data. Prints `path:line: CODE "
        "message` for each finding and exits with status 1 when there is any.\n\n"
        "PATHS are template files or folders (default: every template folder of the app).\n\n"
        f"\b\nRules:\n{rules}"
    )


webmcp_cli = AppGroup("webmcp", help="WebMCP declarative forms: lint templates, print the tool "
                                     "manifest.")


@webmcp_cli.command("lint", help=_lint_help())
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
def lint_command(paths: tuple[Path, ...]) -> None:
    extension = current_app.extensions["webmcp"]
    linter = Linter(current_app, extension.catalog, site_samples(current_app))
    findings = linter.run(paths)
    for finding in findings:
        click.echo(str(finding))
    click.echo(f"{linter.templates_checked} templates, {linter.pages_checked} sample pages: "
               f"{len(findings) or 'no'} finding{'' if len(findings) == 1 else 's'}.", err=True)
    if linter.unchecked:
        click.echo(f"Note: {linter.unchecked}.", err=True)
    raise SystemExit(1 if findings else 0)


@webmcp_cli.command("manifest")
def manifest_command() -> None:
    """Print the tool catalog as JSON, with the input schema of each form of each tool."""
    click.echo(json.dumps(manifest(current_app), indent=2, ensure_ascii=False))


def site_samples(app: Flask) -> Samples | None:
    """The function that renders the site's sample pages (named by `WebMCP(samples=...)`)."""
    name = app.extensions["webmcp"].samples
    return import_string(name) if name else None


def manifest(app: Flask) -> dict[str, Any]:
    """The catalog as data: every tool, and the schema its form offers on each page route.

    The forms come from the site's sample pages; options a page lists (e.g. event ids) are
    left out of the schemas and named in `choicesFromPage`, so the manifest only changes when
    the tools do. Texts are in the language of the first sample page of each route (titles
    and descriptions of the tools, in the source language).
    """
    extension = app.extensions["webmcp"]
    samples = site_samples(app)
    offered = offering_routes(app)
    forms: dict[str, dict[str, dict[str, Any]]] = {tool.name: {} for tool in extension.catalog}
    for page in samples(app) if samples else ():
        soup = BeautifulSoup(page.html, "html.parser")
        for form in soup.select("form[toolname]"):
            tool = extension.catalog[form["toolname"]]
            if (page.rule or page.url) in forms[tool.name]:
                continue  # the same route in another language, say
            with as_request(app, page.url):
                context = page_context(tool, form, app.url_map, page.url.split("?")[0])
                listed = sorted(context["choices"])
                context["choices"] = {name: [] for name in listed}
                schema = expected_input_schema(tool, **context)
            forms[tool.name][page.rule or page.url] = {
                "route": page.rule or page.url,
                "inputSchema": schema,
                "choicesFromPage": listed,
            }
    return {"tools": [{
        "name": tool.name,
        "title": str(tool.title),
        "description": str(tool.description),
        "formDescription": tool.form_description,
        "autosubmit": tool.autosubmit,
        "writes": tool.writes,
        "pages": offered.get(tool.name, []),
        "forms": sorted(forms[tool.name].values(), key=lambda form: form["route"]),
    } for tool in extension.catalog]}
