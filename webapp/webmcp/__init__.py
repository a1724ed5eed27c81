"""A small toolkit for WebMCP declarative forms on a server-rendered Flask site.

    webmcp = WebMCP(app, catalog)      # templates get the `tool_form` and `jsonld` macros

Pieces: `catalog` (tools as data), `result` (the envelope), `forms` (schema -> controls),
`inputs` (request -> validated input), `negotiation` (JSON / partial / page answers),
`schema` (form <-> JSON Schema), `lint` and `cli` (`flask webmcp lint|manifest`).
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from flask import Blueprint
from flask import Flask

from .catalog import Catalog
from .catalog import Tool
from .cli import webmcp_cli
from .forms import Control
from .forms import controls_for
from .lint import Samples
from .negotiation import is_partial


class WebMCP:
    """Registers the toolkit's templates and Jinja helpers for one catalog of tools."""

    def __init__(self, app: Flask | None = None, catalog: Catalog | None = None,
                 samples: Samples | None = None):
        self.catalog = catalog
        self.samples = samples
        if app is not None and catalog is not None:
            self.init_app(app, catalog, samples)

    def init_app(self, app: Flask, catalog: Catalog, samples: Samples | None = None) -> None:
        """Attach to `app`: templates under `webmcp/`, helpers for forms and results, and the
        `flask webmcp` commands (`samples` gives the pages the linter checks)."""
        self.catalog = catalog
        self.samples = samples
        app.extensions["webmcp"] = self
        app.register_blueprint(Blueprint("webmcp", __name__, template_folder="templates"))
        app.cli.add_command(webmcp_cli)
        app.jinja_env.globals.update(
            webmcp_tool=self.tool,
            tool_controls=self.controls,
            hx_partial_request=is_partial,
        )

    def tool(self, name: str) -> Tool:
        """The catalog entry called `name` (a template may expose no other tool)."""
        assert self.catalog is not None
        return self.catalog[name]

    def controls(self, name: str, values: Mapping[str, Any] | None = None,
                 errors: Mapping[str, Any] | None = None,
                 choices: Mapping[str, Iterable[tuple[str, str]]] | None = None,
                 bound: Iterable[str] = ()) -> list[Control]:
        """The controls of tool `name`'s form, filled in."""
        return controls_for(self.tool(name).schema, values, errors, choices, bound)


__all__ = ["Catalog", "Tool", "WebMCP"]
