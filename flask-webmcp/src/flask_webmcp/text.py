"""The toolkit's own sentences, in the language of the request.

The toolkit writes a few sentences itself: the envelope's default messages, the errors of
unreadable input, the "any" option of a select. It marks each with `_()`, which looks it up,
when the request runs, with the `gettext` the site handed to `WebMCP(..., gettext=...)`
(Flask-Babel's, say), so the site's message catalog translates them with its own; without one
they stay as written. Everything else the toolkit renders — tool descriptions, labels, messages
— comes from the site and is rendered with `str()` at the last moment, so a site may give lazy
translations there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from flask import current_app
from flask import has_app_context

#: A function that translates a message into the language of the request (Flask-Babel's
#: `gettext`, say).
Gettext = Callable[[str], str]


class Text(Protocol):
    """Words for people: a `str`, or an object whose `str()` is the text in the language of
    the request (a lazy translation, rendered when it is used)."""

    def __str__(self) -> str: ...


def _(message: str) -> str:
    """`message` in the language of the request (as written outside a request or without a
    gettext)."""
    if not has_app_context():
        return message
    extension = current_app.extensions.get("webmcp")
    gettext: Gettext | None = getattr(extension, "gettext", None)
    return gettext(message) if gettext else message


def N_(message: str) -> str:  # noqa: N802 - gettext's name for it
    """Mark `message` for the message catalog without translating it yet (a constant that
    `_()` translates when it is used)."""
    return message

__all__ = ["Gettext", "N_", "Text"]
