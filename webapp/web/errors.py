"""Errors as envelopes: every failure answers like a tool result, in JSON or HTML.

Nothing from the exception reaches the client: the message is a fixed, safe sentence and the
details go to the server log.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from urllib.parse import urlsplit

from flask import Flask
from flask import Response
from flask import current_app
from flask import g
from flask import request
from flask import url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel import ngettext
from flask_babel.speaklater import LazyString
from flask_limiter import RateLimitExceeded
from flask_wtf.csrf import CSRFError
from limits import RateLimitItem
from werkzeug.exceptions import HTTPException
from werkzeug.exceptions import MethodNotAllowed

from flask_webmcp.negotiation import render_error_result
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.result import internal_error
from flask_webmcp.result import invalid_input
from flask_webmcp.result import not_found
from flask_webmcp.result import rate_limited
from flask_webmcp.result import session_expired
from flask_webmcp.routes import current_action

from ..storage import StorageError
from . import limit_counters
from .addresses import site_url

# The heading people read above an error's message.
HEADINGS = {
    Status.NOT_FOUND: _l("Not found"),
    Status.CONFLICT: _l("Not possible now"),
    Status.SESSION_EXPIRED: _l("Session expired"),
    Status.RATE_LIMITED: _l("Slow down"),
    Status.INTERNAL_ERROR: _l("Temporarily unavailable"),
    Status.INVALID_INPUT: _l("Something is wrong with the request"),
}


def reload_url() -> str:
    """Where "reload the page" leads: this page for a GET, else the page of this site the
    refused form was on (a POST address may not answer a GET at all). Always a path of this
    site, whatever the address or the Referer holds."""
    if request.method == "GET":
        return same_site_path(request.path, request.query_string.decode("latin-1"))
    referrer = urlsplit(request.referrer or "")
    here = urlsplit(site_url())
    if (referrer.scheme, referrer.netloc) != (here.scheme, here.netloc):
        return url_for("events.search")
    return same_site_path(referrer.path, referrer.query)


def same_site_path(path: str, query: str = "") -> str:
    """`path` (and `query`) as a link that stays on this site.

    Browsers read "//host/…" and "/\\host/…" as another host, and drop tabs and line breaks
    from a URL before they read it: those go, and the path starts with exactly one "/".
    """
    path = "/" + re.sub(r"[\t\n\r]", "", path).lstrip("/\\")
    query = re.sub(r"[\t\n\r]", "", query)
    return f"{path}?{query}" if query else path


# How long a rate limit's window lasts, by its unit: one of it, in words of its own ("a
# minute", not "1 minute"), and a number of them, in the plural form the number takes.
WINDOWS: dict[str, tuple[LazyString, Callable[[int], str]]] = {
    "second": (_l("a second"), lambda num: ngettext("%(num)s second", "%(num)s seconds", num)),
    "minute": (_l("a minute"), lambda num: ngettext("%(num)s minute", "%(num)s minutes", num)),
    "hour": (_l("an hour"), lambda num: ngettext("%(num)s hour", "%(num)s hours", num)),
    "day": (_l("a day"), lambda num: ngettext("%(num)s day", "%(num)s days", num)),
    "month": (_l("a month"), lambda num: ngettext("%(num)s month", "%(num)s months", num)),
    "year": (_l("a year"), lambda num: ngettext("%(num)s year", "%(num)s years", num)),
}


def window(limit: RateLimitItem) -> str:
    """How long a rate limit's budget lasts, in words ("a minute", "an hour", "2 days")."""
    one, several = WINDOWS[limit.GRANULARITY.name]
    return str(one) if limit.multiples == 1 else several(limit.multiples)


def retry_after(error: RateLimitExceeded) -> int:
    """Whole seconds (at least 1) until the budget a request met has room again: the
    envelope's `retryAfterSeconds`, which the Retry-After header repeats (`limits`)."""
    limiters = current_app.extensions.get("limiter", ())
    met = next((limiter.current_limit for limiter in limiters if limiter.current_limit), None)
    # The window's end, rounded up: a client that waits this long finds room.
    ends = met.window.reset_time if met is not None else limit_counters.now() + 1
    seconds = max(1, math.ceil(ends - limit_counters.now()))
    g.retry_after_seconds = seconds
    return seconds


def error_heading(result: ToolResult) -> str:
    """The heading of an error page."""
    return str(HEADINGS.get(result.status, _("Error")))


def render_error(result: ToolResult) -> Response:
    """Answer with the error envelope: JSON, a full page, or a partial for the error slot of
    the form that asked (never its target, which may hold the form)."""
    return render_error_result(result, "error.html", "_error.html")


def handle_http_error(error: HTTPException) -> Response:
    """404, 405, 413, 429 and the other HTTP errors, as envelopes."""
    action = current_action()
    code = error.code or 500
    if code == 404:
        result = not_found(action, _("There is no such page."),
                           next_action=_("Use the links or tools of a page you were given."))
    elif code == 405:
        result = invalid_input(action,
                               {"_schema": [_("This address does not accept that method.")]},
                               message=_("Wrong method for this address."), http_status=405)
    elif code == 413:
        result = invalid_input(action, {"_schema": [_("The request is too large.")]},
                               message=_("The request is too large."), http_status=413)
    elif code == 429:
        result = (rate_limited(action, error.description, window(error.limit.limit),
                               retry_after(error))
                  if isinstance(error, RateLimitExceeded) else rate_limited(action))
    elif code < 500:
        result = invalid_input(action, {"_schema": [_("The request could not be understood.")]},
                               message=_("The request could not be understood."),
                               http_status=code)
    else:
        result = internal_error(action)
    response = render_error(result)
    if isinstance(error, MethodNotAllowed) and error.valid_methods:
        response.headers["Allow"] = ", ".join(error.valid_methods)
    return response


def handle_csrf_error(error: CSRFError) -> Response:
    """A POST with a missing or stale form token: the session that issued it is gone."""
    return render_error(session_expired(current_action()))


def handle_storage_error(error: StorageError) -> Response:
    """The database failed outside a tool run (e.g. while rendering a page)."""
    current_app.logger.exception("storage failure")
    return render_error(internal_error(current_action()))


def handle_unexpected(error: Exception) -> Response:
    """Any other exception: log it, answer a safe internal_error."""
    current_app.logger.exception("unhandled error")
    return render_error(internal_error(current_action()))


def init_app(app: Flask) -> None:
    """Register the handlers."""
    app.jinja_env.globals.update(error_heading=error_heading, reload_url=reload_url)
    app.register_error_handler(CSRFError, handle_csrf_error)
    app.register_error_handler(HTTPException, handle_http_error)
    app.register_error_handler(StorageError, handle_storage_error)
    app.register_error_handler(Exception, handle_unexpected)
