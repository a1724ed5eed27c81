"""Which `pattern` attributes browsers ignore, asked of V8 itself while a site is developed.

Browsers compile an input's `pattern` as a JavaScript regular expression with the `v` flag
(ECMA-262's UnicodeSets mode) and ignore it silently when that fails: the control then checks
nothing for people, and Chromium leaves `pattern` out of the tool's JSON Schema. The `v` flag
is stricter than Python's `re`: `[a-z0-9-]` is an error there (`-` must be escaped in a class).

A site's patterns are its own constants (marshmallow `Regexp` validators, now and then a
template's attribute), so they are checked during development, by the engine that compiles
them, and never in a request: the running site passes each pattern on as declared.

    declared_patterns(app)       every pattern the app's declarations give a form or a schema
    rejected_patterns(patterns)  those V8 does not compile, each with V8's reason

`rejected_patterns` runs `new RegExp(pattern, "v")` in a headless Chromium, once for a whole
batch, through Playwright (not a dependency of flask-webmcp[dev]: install it beside). Chromium
is the browser WebMCP forms are for; Node is V8 too, but the Node a distribution ships may
predate the `v` flag (Debian 12's Node 18 does). The browser is the `CHROMIUM` environment
variable's, else `chromium` on the PATH, else Playwright's own build; with none of them (or no
Playwright) it raises `BrowserUnavailable`, and never downloads a browser.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import cast

from flask import Flask

from ..forms import controls_for
from ..forms import remote_controls
from ..routes import route_roles

# Each pattern compiled alone: a pattern that compiles alone also compiles inside the
# `^(?:...)$` an input wraps it in, so nothing accepted here is dropped by a browser.
COMPILE = """patterns => patterns.map(pattern => {
    try { new RegExp(pattern, "v"); return null; } catch (error) { return error.message; }
})"""


class BrowserUnavailable(RuntimeError):
    """No Chromium to ask: Playwright or the browser is missing, or the browser won't start."""


def declared_patterns(app: Flask) -> dict[str, list[str]]:
    """Every pattern the app's tools and routed actions put in a form or a schema, with the
    fields (`tool.field`) that declare it."""
    schemas = {tool.name: tool.schema for tool in app.extensions["webmcp"].catalog}
    schemas |= {role.action.name: role.action.schema for _rule, role in route_roles(app)
                if role.action is not None}
    found: dict[str, list[str]] = {}
    # Labels and descriptions may be lazy translations, read in a request.
    with app.test_request_context("/"):
        for name, schema in schemas.items():
            for control in [*controls_for(schema), *remote_controls(schema)]:
                pattern = control.attrs.get("pattern")
                where = f"{name}.{control.name}"
                if pattern is not None and where not in found.get(pattern, []):
                    found.setdefault(pattern, []).append(where)
    return found


def rejected_patterns(patterns: Iterable[str], executable: str | None = None) -> dict[str, str]:
    """The patterns V8 does not compile with the `v` flag, each with V8's reason."""
    unique = list(dict.fromkeys(patterns))
    if not unique:
        return {}
    executable = executable or os.environ.get("CHROMIUM") or shutil.which("chromium")
    # Playwright's sync API refuses to start inside another session of the same thread (a
    # test suite's browser, say): a thread of its own keeps this usable anywhere.
    with ThreadPoolExecutor(max_workers=1) as worker:
        reasons = worker.submit(_compile_in_chromium, unique, executable).result()
    return {pattern: reason for pattern, reason in zip(unique, reasons, strict=True)
            if reason is not None}


def _compile_in_chromium(patterns: list[str], executable: str | None) -> list[str | None]:
    try:
        from playwright.sync_api import Error
        from playwright.sync_api import sync_playwright
    except ImportError as error:
        raise BrowserUnavailable("Playwright is not installed") from error
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=executable, headless=True)
        except Error as error:
            first_line = error.message.strip().splitlines()[0]
            raise BrowserUnavailable(f"Chromium did not start ({first_line})") from error
        try:
            return cast("list[str | None]", browser.new_page().evaluate(COMPILE, patterns))
        finally:
            browser.close()

__all__ = ["BrowserUnavailable", "declared_patterns", "rejected_patterns"]
