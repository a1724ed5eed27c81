"""Rate limits on writes: a burst of POSTs from one visitor answers 429 `rate_limited`.

Every write (each POST route, human-only confirms included) counts against one budget per
client, `RATELIMIT_WRITES`; reads are never limited. A client is the visitor of the session,
else the browser session (before its first write there is no visitor yet), else the address:
so many people behind one address (an office, a conference Wi-Fi) are counted apart.

Flask-Limiter reads its own `RATELIMIT_*` settings from the app configuration
(`FLASK_RATELIMIT_ENABLED=false` turns limiting off; `FLASK_RATELIMIT_STORAGE_URI`, e.g.
`redis://host:6379`, lets several workers and hosts share the counters). The 429 itself is
answered as an envelope by `errors.handle_http_error`.
"""

from __future__ import annotations

import hashlib

from flask import Flask
from flask import current_app
from flask import request
from flask import session
from flask_limiter import ApplicationLimit
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

from .visitors import cookie_visitor

WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")


def client_key() -> str:
    """Whose budget a request spends: the visitor, else the browser session, else the address.

    The session's CSRF secret identifies a browser before its first write created a visitor;
    only its digest is used, so the secret never reaches the limiter's storage.
    """
    visitor_id = cookie_visitor()
    if visitor_id:
        return f"visitor:{visitor_id}"
    csrf_secret = session.get(current_app.config["WTF_CSRF_FIELD_NAME"])
    if isinstance(csrf_secret, str):
        return "session:" + hashlib.sha256(csrf_secret.encode()).hexdigest()[:32]
    return f"address:{get_remote_address()}"


def write_limit() -> str:
    """The configured budget of writes per client."""
    budget: str = current_app.config["RATELIMIT_WRITES"]
    return budget


def init_app(app: Flask) -> None:
    """Limit the writes of each client (a limiter of its own for each app)."""
    writes = ApplicationLimit(limit_provider=write_limit, scope="writes")
    limiter = Limiter(client_key, app=app, application_limits=[writes])
    limiter.request_filter(is_read)


def is_read() -> bool:
    """Reads are never limited (and skipping them early keeps a search as cheap as it can be)."""
    return request.method not in WRITE_METHODS
