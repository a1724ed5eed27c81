"""The client's address and scheme behind reverse proxies: from the proxies the site trusts.

A proxy (nginx, see `deploy/`) connects to gunicorn itself, so the connection's address is the
proxy's; it appends the address it saw to `X-Forwarded-For` and says the scheme in
`X-Forwarded-Proto`. `TRUSTED_PROXIES` says how many proxies stand in front of the app: werkzeug's
`ProxyFix` then takes the address that many hops from the right of `X-Forwarded-For` (the one
the outermost trusted proxy saw), and ignores anything a client wrote to the left of it. With
the default, 0, the app trusts no header and the connection's address is the client's: a
client that sets `X-Forwarded-For` itself changes nothing.

Everything that asks for the client's address (the rate limits) or the scheme (HSTS, external
URLs) reads `request.remote_addr` and `request.scheme`, which the fix has already set.
"""

from __future__ import annotations

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix


def init_app(app: Flask) -> None:
    """Read the client's address and scheme from the trusted proxies' headers, if any."""
    trusted = int(app.config["TRUSTED_PROXIES"])
    if trusted < 0:
        raise ValueError("TRUSTED_PROXIES is a number of proxies: 0 or more")
    if trusted:
        # Flask's documented way to wrap the app in WSGI middleware; its types say wsgi_app
        # is only a method. The proxies set Host themselves (nginx: proxy_set_header Host).
        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]
            app.wsgi_app, x_for=trusted, x_proto=trusted)
