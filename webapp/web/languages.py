"""The site's two languages, 繁體中文 (the default, for Taiwan) and English, named in the URL.

Every page lives under a language prefix: `/zh-TW/events`, `/en/events`. So a shared or
bookmarked link keeps its language, and caches and search engines see two distinct pages.
The unprefixed address of a page is language-neutral, and is the one machine data names
(an event's `url` in the envelope, which must be the same in both languages):

- a page asked for there (a GET for HTML) is redirected to the visitor's language: the one
  they chose last (a cookie, set whenever they read a prefixed page), else the best of their
  `Accept-Language`, else Chinese;
- JSON answers, htmx partials and POSTs are answered in place in that language: a JSON
  client keeps the addresses it knows, and only the sentences change.

Both kinds of answer say `Vary: Accept-Language, Cookie`. `/health`, `/openapi.json` and
`/static` have no language. Everything people read goes through the message catalogs in
`webapp/translations` (Flask-Babel); ids, tool names, option values and JSON keys never do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

from flask import Flask
from flask import Response
from flask import current_app
from flask import g
from flask import has_request_context
from flask import redirect
from flask import request
from flask import url_for
from flask_babel import Babel
from werkzeug.datastructures import LanguageAccept
from werkzeug.routing import BaseConverter
from werkzeug.wrappers import Response as BaseResponse

from flask_webmcp.negotiation import is_partial
from flask_webmcp.negotiation import wants_json

from .addresses import site_url


@dataclass(frozen=True)
class Language:
    """One language of the site: its URL prefix, its Babel locale, its BCP 47 tag (for
    `<html lang>` and `hreflang`) and its name in itself (for the switch)."""

    code: str
    locale: str
    tag: str
    name: str


LANGUAGES = {
    "zh-TW": Language("zh-TW", "zh_Hant_TW", "zh-Hant-TW", "繁體中文"),
    "en": Language("en", "en", "en", "English"),
}
DEFAULT = "zh-TW"
COOKIE = "language"
ONE_YEAR = 365 * 24 * 3600
# What a language-neutral answer depends on.
NEGOTIATED_BY = ("Accept-Language", "Cookie")
# The site's language for each primary language subtag it reads, Chinese first: of two
# equally ranked, best_match takes the first.
BY_PRIMARY_SUBTAG = {"zh": "zh-TW", "en": "en"}
SUBTAG_SEPARATOR = re.compile("[-_]")
# Endpoints with no language: they say nothing to people (an event's cover picture and an
# organization's logo are the same in every language).
NEUTRAL_ENDPOINTS = ("static", "health.", "openapi.", "discovery.", "calendars.",
                     "oauth_server.", "covers.")
# Neutral endpoints that still name something in words (a calendar feed's name): they also
# answer at a language-prefixed address, which is what sets their language, since the
# calendar application that fetches one sends no cookie and often no Accept-Language. Neither
# address is redirected, and neither remembers a language.
NAMED_IN_A_LANGUAGE = ("calendars.feed",)
# Endpoints whose neutral address answers a GET in place rather than sending it to a language:
# the home page, and the MCP endpoint (a client's GET there must learn it serves POST only).
ANSWERED_IN_PLACE = ("index", "mcp.endpoint")


class LanguageConverter(BaseConverter):
    """`<language:lang_code>`: one of the site's language prefixes, nothing else."""

    regex = "|".join(LANGUAGES)


def preferred_language() -> str:
    """The visitor's language for a neutral address: their last choice, else the site's
    language their `Accept-Language` ranks highest (any Chinese tag reads the Traditional
    Chinese site, any English tag the English one; `q=0` refuses one; Chinese wins a tie),
    else Chinese."""
    chosen = request.cookies.get(COOKIE)
    if chosen in LANGUAGES:
        return chosen
    return accepted_language() or DEFAULT


def accepted_language() -> str | None:
    """The site's language the request's `Accept-Language` ranks highest, or None when it
    names none (absent, or only `*`, as some HTTP clients send by default)."""
    if not any(tag != "*" for tag, _quality in request.accept_languages):
        return None
    # Weighed by primary subtag alone: given the full tags, best_match takes an exact match
    # ("en;q=0.5") before a better-ranked tag it only matches by its primary subtag ("zh-CN").
    ranked = LanguageAccept((SUBTAG_SEPARATOR.split(tag, maxsplit=1)[0], quality)
                            for tag, quality in request.accept_languages)
    best = ranked.best_match(BY_PRIMARY_SUBTAG)
    return BY_PRIMARY_SUBTAG[best] if best else None


def current_language() -> Language:
    """The language of this request: its URL's prefix, else the visitor's preference."""
    code = g.get("language")
    if code is None:
        first = request.path.split("/")[1] if request.path.count("/") > 1 else ""
        code = first if first in LANGUAGES else preferred_language()
    return LANGUAGES[code]


def in_language(code: str) -> str:
    """The address of this page in language `code` (the events list when the answer is not a
    page of its own, e.g. a form's failed POST or an address that matched nothing)."""
    if g.get("language_in_url") and request.method == "GET":
        rest = request.full_path.rstrip("?")[len(current_language().code) + 1:]
        return f"/{code}{rest}"
    return url_for("events.search", lang_code=code)


def alternate_pages() -> list[tuple[str, str]]:
    """(hreflang, absolute URL) of this page in every language, and as `x-default` its
    neutral address (which sends each visitor to their own language)."""
    host = site_url()
    pages = [(language.tag, host + in_language(language.code)) for language in LANGUAGES.values()]
    own = in_language(current_language().code)
    neutral = own[len(current_language().code) + 1:] or "/"
    return [*pages, ("x-default", host + neutral)]


def is_neutral_endpoint(endpoint: str | None) -> bool:
    """True for the endpoints that have no language (health, OpenAPI, static files: the
    app's, and a blueprint's such as the extension's bridge)."""
    return (endpoint is None or endpoint.startswith(NEUTRAL_ENDPOINTS)
            or endpoint.endswith(".static"))


def _take_language_from_url(endpoint: str | None, values: dict[str, object] | None) -> None:
    """The prefix's language becomes the request's; views never see it."""
    if values and "lang_code" in values:
        g.language = values.pop("lang_code")
        g.language_in_url = True


def _keep_language_in_urls(endpoint: str, values: dict[str, object]) -> None:
    """Every address the site builds for a page keeps the language of this request."""
    if "lang_code" not in values and current_app.url_map.is_endpoint_expecting(endpoint,
                                                                               "lang_code"):
        values["lang_code"] = current_language().code


def _negotiate() -> BaseResponse | None:
    """At a neutral address: pick the visitor's language, and send a person who asked for a
    page to that page in their language."""
    if g.get("language_in_url") or is_neutral_endpoint(request.endpoint):
        return None
    # A blueprint may have chosen it already (the MCP endpoint: `mcp.choose_language`).
    g.language = g.get("language") or preferred_language()
    if (request.method in ("GET", "HEAD") and request.endpoint not in ANSWERED_IN_PLACE
            and not wants_json() and not is_partial()):
        query = request.query_string.decode()
        # The path as it was sent: decoded, it may hold characters no header may carry.
        path = quote(request.path, safe="/!$&'()*+,;=:@~")
        target = f"/{g.language}{path}" + (f"?{query}" if query else "")
        return redirect(target, code=302)
    return None


def _mark_language(response: Response) -> Response:
    """Say which language an answer is in, what chose it, and remember a prefix's choice."""
    if is_neutral_endpoint(request.endpoint) and request.url_rule is not None:
        return response
    language = current_language()
    response.headers["Content-Language"] = language.tag
    if g.get("language_in_url"):
        # A picture (an event's share card) is fetched by link previewers and by pages, not
        # read by a person choosing a language: it remembers nothing, and stays public.
        if (request.cookies.get(COOKIE) != language.code
                and not (response.mimetype or "").startswith("image/")):
            response.set_cookie(COOKIE, language.code, max_age=ONE_YEAR, samesite="Lax",
                                httponly=True)
    else:
        response.vary.update(NEGOTIATED_BY)
    return response


def _prefix_every_page(app: Flask) -> None:
    """Give every rule that shows people something a second, language-prefixed address.

    Both rules have the same endpoint, so views, `url_for` and the route declarations are
    unchanged; `url_for` builds the prefixed one whenever the request has a language.
    """
    for rule in list(app.url_map.iter_rules()):
        if is_neutral_endpoint(rule.endpoint) and rule.endpoint not in NAMED_IN_A_LANGUAGE:
            continue
        # OPTIONS stays where the view answers it itself (the MCP endpoint's CORS preflight);
        # elsewhere Flask answers it, as it does at the neutral address.
        automatic = getattr(rule, "provide_automatic_options", True)
        methods = set(rule.methods or ()) - ({"HEAD", "OPTIONS"} if automatic else {"HEAD"})
        app.add_url_rule("/<language:lang_code>" + rule.rule, endpoint=rule.endpoint,
                         methods=sorted(methods))


def request_locale() -> str:
    """The Babel locale of this request; outside one (commands), the source language."""
    return current_language().locale if has_request_context() else LANGUAGES["en"].locale


def _template_helpers() -> dict[str, object]:
    language = current_language()
    return {
        "language": language,
        "other_languages": [other for other in LANGUAGES.values() if other != language],
        "in_language": in_language,
        "alternate_pages": alternate_pages,
    }


def init_app(app: Flask) -> None:
    """Set up Flask-Babel, the prefixed addresses and the negotiation (after every blueprint
    is registered: each of their pages gets its prefixed address)."""
    Babel(app, locale_selector=request_locale)
    app.url_map.converters["language"] = LanguageConverter
    _prefix_every_page(app)
    app.url_value_preprocessor(_take_language_from_url)
    app.url_defaults(_keep_language_in_urls)
    app.before_request(_negotiate)
    app.after_request(_mark_language)
    app.context_processor(_template_helpers)
    app.jinja_env.globals.update(LANGUAGES=LANGUAGES)
