"""What browsers and shared caches may keep: nothing personal, ever.

Every answer says `Cache-Control: private, no-store` unless its route is declared public
(`@public(max_age=...)`): a visitor's registrations and saved events, the pages holding a form
token (CSRF, or a registration's confirmation token), every answer to a write, health checks
and errors are never stored, neither on the visitor's disk nor by a cache between them and us.
A public route's successful answer to a GET says how long anyone may reuse it; one that sets a
cookie never does. Static files are WhiteNoise's (public, a year: their URLs name their
content).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from flask import Flask
from flask import Response
from flask import current_app
from flask import request
from flask import session

PERSONAL = "private, no-store"
# Where a view keeps its declaration.
MAX_AGE = "webapp_public_max_age"

View = TypeVar("View", bound=Callable[..., object])


def public(max_age: int) -> Callable[[View], View]:
    """Declare a route's successful GET answers the same for everyone, fresh for `max_age`
    seconds (so browsers and shared caches may keep them that long)."""
    def declare(view: View) -> View:
        setattr(view, MAX_AGE, max_age)
        return view

    return declare


def set_cache_control(response: Response) -> Response:
    """Public for `max_age` if the route says so and nothing personal came out; else never
    stored."""
    view = current_app.view_functions.get(request.endpoint or "")
    max_age = getattr(view, MAX_AGE, None)
    shared = (max_age is not None and request.method in ("GET", "HEAD")
              and response.status_code == 200 and not sets_a_cookie(response))
    response.headers["Cache-Control"] = f"public, max-age={max_age}" if shared else PERSONAL
    return response


def sets_a_cookie(response: Response) -> bool:
    """Whether the answer sets a cookie: one set already, or the session's, which Flask adds
    only after every `after_request` function (for a permanent session, on every answer)."""
    return ("Set-Cookie" in response.headers
            or current_app.session_interface.should_set_cookie(current_app, session))


def init_app(app: Flask) -> None:
    """Say what may be cached on every answer Flask makes."""
    app.after_request(set_cache_control)
