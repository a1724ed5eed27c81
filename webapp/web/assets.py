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


def asset_url(filename: str, endpoint: str = "static") -> str:
    """The URL of a static file, with its content hash so a new version is a new URL: the
    app's, or a blueprint's (`"webmcp.static"`: the extension's bridge)."""
    hashes: dict[tuple[str, str], str] = current_app.extensions[HASHES]
    if (endpoint, filename) not in hashes:
        content = (_static_folder(endpoint) / filename).read_bytes()
        hashes[endpoint, filename] = hashlib.sha256(content).hexdigest()[:12]
    return url_for(endpoint, filename=filename, v=hashes[endpoint, filename])


def inline_asset(filename: str) -> str:
    """A small static SVG as a data: URL, so the page needs no request for it (the icon)."""
    inlined: dict[str, str] = current_app.extensions[INLINED]
    if filename not in inlined:
        svg = (_static_folder("static") / filename).read_text(encoding="utf-8")
        inlined[filename] = "data:image/svg+xml," + quote(svg.strip(), safe=" =:/'\"")
    return inlined[filename]


def _static_folder(endpoint: str) -> Path:
    """The folder the static `endpoint` serves: the app's, or its blueprint's."""
    blueprint = endpoint.rpartition(".")[0]
    folder = (current_app.blueprints[blueprint] if blueprint else current_app).static_folder
    if folder is None:
        raise LookupError(f"{endpoint} has no static folder")
    return Path(folder)


def init_app(app: Flask) -> None:
    """Serve /static through WhiteNoise (precompressed .gz files, long cache lifetimes), and
    the static files of every blueprint registered so far (the extension's bridge) alike."""
    app.extensions[HASHES] = {}
    app.extensions[INLINED] = {}
    app.jinja_env.globals.update(asset_url=asset_url, inline_asset=inline_asset)
    served = WhiteNoise(app.wsgi_app, root=app.static_folder, prefix="static/",
                        max_age=ONE_YEAR, add_headers_function=_add_security_headers)
    for blueprint in app.blueprints.values():
        if blueprint.static_folder is not None and blueprint.static_url_path is not None:
            served.add_files(blueprint.static_folder,  # type: ignore[no-untyped-call]
                             prefix=blueprint.static_url_path.strip("/") + "/")
    # Flask's documented way to wrap the app in WSGI middleware; its types say wsgi_app is
    # only a method.
    app.wsgi_app = served  # type: ignore[method-assign]


def _add_security_headers(headers: Headers, path: str, url: str) -> None:
    # WhiteNoise answers before Flask sees the request, so it sets the same headers itself.
    for name, value in SECURITY_HEADERS.items():
        headers[name] = value
