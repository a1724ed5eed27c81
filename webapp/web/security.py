"""Security headers on every response, and CSRF protection for every POST.

Over HTTPS (as the trusted proxies report it, see `proxies.py`) answers also carry
Strict-Transport-Security, so browsers never reach the site over plain HTTP again
(`HSTS_MAX_AGE`; browsers ignore the header on a plain HTTP answer, so none is sent there).
"""

from __future__ import annotations

from flask import Flask
from flask import Response
from flask import current_app
from flask import request
from flask_wtf.csrf import CSRFProtect

csrf = CSRFProtect()

# Scripts only from our own files (JSON-LD data blocks are not scripts and are not blocked);
# forms post only to us; no framing.
CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'self'",
    "object-src 'none'",
])

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    # WebMCP tools for our own pages only; the powerful features the site never uses, off.
    "Permissions-Policy": "tools=(self), camera=(), microphone=(), geolocation=()",
    "Cross-Origin-Opener-Policy": "same-origin",
}


# The door page reads a check-in QR code with the camera (`web.door`): on that page alone,
# the site's own script may ask for it.
CAMERA_PERMISSIONS = "tools=(self), camera=(self), microphone=(), geolocation=()"

# What a view may set instead of a header's value above: stricter still (the organizer area
# sends no address of its pages anywhere, not even to the site's own), or the camera for the
# door page, the one feature a page may add.
CHOSEN_BY_VIEW = {"Referrer-Policy": {"no-referrer"},
                  "Permissions-Policy": {CAMERA_PERMISSIONS}}


def add_security_headers(response: Response) -> Response:
    """Set the security headers (a view may not weaken them, only choose a value of
    `CHOSEN_BY_VIEW`)."""
    for name, value in SECURITY_HEADERS.items():
        if response.headers.get(name) not in CHOSEN_BY_VIEW.get(name, ()):
            response.headers[name] = value
    max_age = int(current_app.config["HSTS_MAX_AGE"])
    if request.is_secure and max_age > 0:
        response.headers["Strict-Transport-Security"] = f"max-age={max_age}"
    return response


def init_app(app: Flask) -> None:
    """Protect POSTs with CSRF tokens and add the headers to every response."""
    csrf.init_app(app)
    app.after_request(add_security_headers)
