"""Static files: served compressed and cached for a year, with content-hashed URLs."""

from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import quote
from wsgiref.headers import Headers

from flask import Flask
from flask import current_app
from flask import url_for
from whitenoise import WhiteNoise

from .security import SECURITY_HEADERS

ONE_YEAR = 365 * 24 * 3600
HASHES = "webapp.asset_hashes"
INLINED = "webapp.inlined_assets"


def asset_url(filename: str) -> str:
    """The URL of a static file, with its content hash so a new version is a new URL."""
    hashes: dict[str, str] = current_app.extensions[HASHES]
    if filename not in hashes:
        content = _static_file(filename).read_bytes()
        hashes[filename] = hashlib.sha256(content).hexdigest()[:12]
    return url_for("static", filename=filename, v=hashes[filename])


def inline_asset(filename: str) -> str:
    """A small static SVG as a data: URL, so the page needs no request for it (the icon)."""
    inlined: dict[str, str] = current_app.extensions[INLINED]
    if filename not in inlined:
        svg = _static_file(filename).read_text(encoding="utf-8")
        inlined[filename] = "data:image/svg+xml," + quote(svg.strip(), safe=" =:/'\"")
    return inlined[filename]


def _static_file(filename: str) -> Path:
    """A file of the app's static folder (create_app always gives the site one)."""
    folder = current_app.static_folder
    if folder is None:
        raise LookupError("the app has no static folder")
    return Path(folder) / filename


def init_app(app: Flask) -> None:
    """Serve /static through WhiteNoise (precompressed .gz files, long cache lifetimes)."""
    app.extensions[HASHES] = {}
    app.extensions[INLINED] = {}
    app.jinja_env.globals.update(asset_url=asset_url, inline_asset=inline_asset)
    # Flask's documented way to wrap the app in WSGI middleware; its types say wsgi_app is
    # only a method.
    app.wsgi_app = WhiteNoise(  # type: ignore[method-assign]
        app.wsgi_app, root=app.static_folder, prefix="static/", max_age=ONE_YEAR,
        add_headers_function=_add_security_headers)


def _add_security_headers(headers: Headers, path: str, url: str) -> None:
    # WhiteNoise answers before Flask sees the request, so it sets the same headers itself.
    for name, value in SECURITY_HEADERS.items():
        headers[name] = value
