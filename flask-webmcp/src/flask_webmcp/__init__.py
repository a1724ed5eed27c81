"""A small toolkit for WebMCP declarative forms on a server-rendered Flask site.

    webmcp = WebMCP(app, catalog)      # templates get the `tool_form` and `jsonld` macros

What a request needs lives here: `catalog` (tools as data), `result` (the envelope), `forms`
(schema -> controls), `inputs` (request -> validated input), `negotiation` (JSON / partial /
page answers), `carry` (where a POST's result waits for the page after its redirect,
server-side), `htmx` (the htmx version and headers it is written for), `input_schema`
(each tool's JSON Schema, as a browser derives it from the form or for a client shown no
page), `apidoc` (OpenAPI), `mcp` (the same tools for MCP clients) and the macros in
`templates/webmcp/`. What development
needs lives in `dev/` — schema synthesis, the linter and the `flask webmcp lint|manifest`
commands — and is imported only when such a command or a test runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any
from typing import Literal

import click
from flask import Blueprint
from flask import Flask

from . import htmx
from .carry import CarriedResults
from .carry import use_carried_results
from .catalog import Catalog
from .catalog import Tool
from .csrf import CsrfField
from .csrf import csrf_field
from .forms import Control
from .forms import agent_at_work
from .forms import controls_for
from .negotiation import error_slot_id
from .negotiation import is_partial
from .text import LocaleSelector
from .text import Text
from .text import flask_babel_locale

# Where the extension's static files (the bridge) are served, beside the app's /static.
STATIC_URL_PATH = "/static/webmcp"


class WebMCP:
    """Registers the toolkit's templates and Jinja helpers for one catalog of tools.

    `samples` names the function (``"package.module:function"``) that renders the site's
    sample pages for the linter and the manifest; it is imported only by those commands.
    `locale` names the language of the request for the toolkit's own few sentences, which
    its own catalog translates (see `text`); by default it is Flask-Babel's, when the app
    uses it, and without one they stay English. `carried` is the server-side store a POST's
    result waits in for the page its redirect lands on (see `carry`); an app that answers
    POSTs with `render_post_result` needs one. `untrusted_note` is what a result tells an
    agent of the fields it lists as written by others, in the app's words (who wrote them);
    by default the extension's `result.UNTRUSTED_NOTE`. `csrf` is the hidden field POST forms
    carry (see `csrf`): by default Flask-WTF's when the app uses it; False for none.
    """

    def __init__(self, app: Flask | None = None, catalog: Catalog | None = None,
                 samples: str | None = None, locale: LocaleSelector | None = None,
                 carried: CarriedResults | None = None, untrusted_note: Text | None = None,
                 csrf: CsrfField | Literal[False] | None = None):
        self.catalog = catalog
        self.samples = samples
        self.locale = locale
        self.carried = carried
        self.untrusted_note = untrusted_note
        self.csrf = csrf
        if app is not None and catalog is not None:
            self.init_app(app, catalog, samples, locale, carried, untrusted_note, csrf)

    def init_app(self, app: Flask, catalog: Catalog, samples: str | None = None,
                 locale: LocaleSelector | None = None, carried: CarriedResults | None = None,
                 untrusted_note: Text | None = None,
                 csrf: CsrfField | Literal[False] | None = None) -> None:
        """Attach to `app`: templates under `webmcp/`, helpers for forms and results, the
        store of carried results, and the `flask webmcp` commands."""
        self.catalog = catalog
        self.samples = samples
        self.locale = locale or self.locale or flask_babel_locale
        self.carried = carried or self.carried
        self.untrusted_note = untrusted_note or self.untrusted_note
        self.csrf = self.csrf if csrf is None else csrf
        app.extensions["webmcp"] = self
        if self.carried is not None:
            use_carried_results(app, self.carried)
        # The bridge (`htmx.BRIDGE_SCRIPT`) at url_for("webmcp.static", filename=...).
        app.register_blueprint(Blueprint("webmcp", __name__, template_folder="templates",
                                         static_folder="static",
                                         static_url_path=STATIC_URL_PATH))
        app.cli.add_command(DevCommands("webmcp", help="WebMCP declarative forms: lint "
                                                       "templates, print the tool manifest."))
        app.jinja_env.globals.update(
            webmcp_catalog=catalog,
            webmcp_tool=self.tool,
            tool_controls=self.controls,
            hx_partial_request=is_partial,
            webmcp_error_slot=error_slot_id,
            webmcp_csrf_field=csrf_field,
            webmcp_bridge_script=htmx.BRIDGE_SCRIPT,
            webmcp_htmx_version=htmx.HTMX_VERSION,
            webmcp_agent_at_work=agent_at_work,
        )

    def tool(self, name: str) -> Tool:
        """The catalog entry called `name` (a template may expose no other tool)."""
        if self.catalog is None:
            raise RuntimeError("WebMCP has no catalog: call init_app first")
        return self.catalog[name]

    def controls(self, name: str, values: Mapping[str, Any] | None = None,
                 errors: Mapping[str, Any] | None = None,
                 choices: Mapping[str, Iterable[tuple[str, str]]] | None = None,
                 bound: Iterable[str] = ()) -> list[Control]:
        """The controls of tool `name`'s form, filled in."""
        return controls_for(self.tool(name).schema, values, errors, choices, bound)


class DevCommands(click.Group):
    """`flask webmcp …`: the commands of `dev.cli`, imported when one of them is asked for
    (they need BeautifulSoup, which the running site never loads)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from .dev.cli import webmcp_cli

        return webmcp_cli.list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from .dev.cli import webmcp_cli

        return webmcp_cli.get_command(ctx, cmd_name)


__all__ = ["STATIC_URL_PATH", "CarriedResults", "Catalog", "CsrfField", "Tool", "WebMCP"]
