"""The toolkit's own sentences, in the language of the request.

The toolkit writes a few sentences itself: the envelope's default messages, the errors of
unreadable input, the "any" option of a select. It marks each with `_()`, which looks it up,
when the request runs, in the toolkit's own message catalog (the `flask_webmcp` domain, in
`translations/`), in the language `WebMCP(locale=...)` names for the request: by default
Flask-Babel's, when the app uses it. Without a language, or in one the catalog does not hold,
they stay as written (English). Everything else the toolkit renders — tool descriptions,
labels, messages — comes from the site and is rendered with `str()` at the last moment, so a
site may give lazy translations there, from its own catalog.
"""

from __future__ import annotations

import functools
import gettext
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from flask import current_app
from flask import has_request_context

DOMAIN = "flask_webmcp"
TRANSLATIONS = Path(__file__).parent / "translations"

#: A function that names the language of the current request, as a locale (`zh_Hant_TW`, or
#: a Babel `Locale`), or None for the language the sentences are written in.
LocaleSelector = Callable[[], object]


class Text(Protocol):
    """Words for people: a `str`, or an object whose `str()` is the text in the language of
    the request (a lazy translation, rendered when it is used)."""

    def __str__(self) -> str: ...


def _(message: str) -> str:
    """`message` in the language of the request (as written outside a request, or when the
    app names no language the catalog holds)."""
    if not has_request_context():
        return message
    select: LocaleSelector | None = getattr(current_app.extensions.get("webmcp"), "locale",
                                            None)
    locale = select() if select else None
    return catalog(str(locale)).gettext(message) if locale else message


@functools.cache
def catalog(locale: str) -> gettext.NullTranslations:
    """The toolkit's catalog for `locale` (its language alone, `zh` for `zh_Hant_TW`, if the
    region has none; nothing translated if neither has one). Read once per process."""
    return gettext.translation(DOMAIN, TRANSLATIONS, languages=[locale], fallback=True)


def flask_babel_locale() -> object:
    """Flask-Babel's language for the request, or None when the app does not use it."""
    if "babel" not in current_app.extensions:
        return None
    from flask_babel import get_locale

    return get_locale()


def N_(message: str) -> str:  # noqa: N802 - gettext's name for it
    """Mark `message` for the message catalog without translating it yet (a constant that
    `_()` translates when it is used)."""
    return message


__all__ = ["LocaleSelector", "N_", "Text", "catalog", "flask_babel_locale"]
