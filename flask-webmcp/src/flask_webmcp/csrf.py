"""The CSRF token of POST forms, from whatever protects the app against cross-site requests.

A POST tool form carries the token as a hidden field: Chromium keeps hidden fields out of the
tool's input schema but submits them, so an agent's submit passes the same check as a
person's. The extension protects nothing itself; it writes the field the app's protection
expects and leaves that field out of the tool's input. By default that is Flask-WTF's
(`flask-webmcp[csrf]`) when the app uses it; `WebMCP(csrf=CsrfField(...))` names another, and
`WebMCP(csrf=False)` writes none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flask import current_app


@dataclass(frozen=True)
class CsrfField:
    """The hidden field POST forms carry: its name, and the function that gives the token of
    the current request."""

    name: str
    token: Callable[[], str]


def csrf_field() -> CsrfField | None:
    """The CSRF field of this app's POST forms, or None when they carry none."""
    chosen = getattr(current_app.extensions.get("webmcp"), "csrf", None)
    if chosen is False:
        return None
    if isinstance(chosen, CsrfField):
        return chosen
    if "csrf" in current_app.extensions:  # Flask-WTF's CSRFProtect is initialised
        from flask_wtf.csrf import generate_csrf

        return CsrfField(current_app.config.get("WTF_CSRF_FIELD_NAME", "csrf_token"),
                         generate_csrf)
    return None


__all__ = ["CsrfField", "csrf_field"]
