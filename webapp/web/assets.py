"""Static files: served compressed and cached for a year, with content-hashed URLs."""

from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import quote

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
    hashes = current_app.extensions[HASHES]
    if filename not in hashes:
        content = (Path(current_app.static_folder) / filename).read_bytes()
        hashes[filename] = hashlib.sha256(content).hexdigest()[:12]
    return url_for("static", filename=filename, v=hashes[filename])


def inline_asset(filename: str) -> str:
    """A small static SVG as a data: URL, so the page needs no request for it (the icon)."""
    inlined = current_app.extensions[INLINED]
    if filename not in inlined:
        svg = (Path(current_app.static_folder) / filename).read_text(encoding="utf-8")
        inlined[filename] = "data:image/svg+xml," + quote(svg.strip(), safe=" =:/'\"")
    return inlined[filename]


def init_app(app: Flask) -> None:
    """Serve /static through WhiteNoise (precompressed .gz files, long cache lifetimes)."""
    app.extensions[HASHES] = {}
    app.extensions[INLINED] = {}
    app.jinja_env.globals.update(asset_url=asset_url, inline_asset=inline_asset)
    app.wsgi_app = WhiteNoise(app.wsgi_app, root=app.static_folder, prefix="static/",
                              max_age=ONE_YEAR, add_headers_function=_add_security_headers)


def _add_security_headers(headers, path: str, url: str) -> None:
    # WhiteNoise answers before Flask sees the request, so it sets the same headers itself.
    for name, value in SECURITY_HEADERS.items():
        headers[name] = value
