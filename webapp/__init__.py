"""webmcp-events: an events site people and WebMCP browser agents use through the same forms.

The package is layered; each layer imports only the ones below it:

    webapp/__init__.py, cli.py   the app factory and the data commands: wire everything
    web/                         HTTP: blueprints, tool calls, errors, visitors, limits, headers
    datasets/                    events in bulk: imports, the sample events, synthetic events
    domain/                      the tool catalog, input schemas, actions and projections
    mail/                        mail: its kinds, messages, senders and the delivery loop
    storage/                     all SQL, and the storage of each request
    webmcp/, config.py, clock.py the declarative-form toolkit; settings; the site's time
    ics.py                       calendar files (pages, feeds and mail share one writer)

`dev/` and `webmcp/dev/` hold what only development needs (the linter and its sample pages,
schema synthesis); the running site never imports them.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from flask import Flask
from flask import redirect
from flask import url_for
from werkzeug.wrappers import Response

from . import config


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """Create and configure the app (no database connection is opened here)."""
    app = Flask(
        __name__,
        instance_relative_config=True,
        template_folder=str(config.SITE_ROOT / "templates"),
        static_folder=str(config.SITE_ROOT / "static"),
    )
    # JSON answers in UTF-8 as they are: a Chinese character takes 3 bytes, not a 6-byte \u
    # escape (agents pay for every byte; ten Chinese results went past 4 KB escaped).
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    app.config.from_mapping(config.defaults(app.instance_path))
    if test_config is None:
        app.config.from_pyfile("config.py", silent=True)
        app.config.from_prefixed_env()
    else:
        app.config.from_mapping(test_config)
    app.config.from_mapping(config.derived(app.config, app.instance_path))
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = _instance_secret(Path(app.instance_path))

    from flask_webmcp import WebMCP

    from . import cli
    from .datasets import seed_sample_events
    from .domain.catalog import CATALOG
    from .domain.catalog import UNTRUSTED_NOTE
    from .storage import connection
    from .web import about
    from .web import accounts
    from .web import agents
    from .web import assets
    from .web import attendees  # noqa: F401 - its routes join the organizer blueprint
    from .web import bodies
    from .web import caching
    from .web import calendars
    from .web import carried
    from .web import compression
    from .web import covers
    from .web import discovery
    from .web import door
    from .web import errors
    from .web import events
    from .web import health
    from .web import languages
    from .web import limits
    from .web import mcp
    from .web import oauth
    from .web import openapi
    from .web import organizations
    from .web import organizer
    from .web import organizer_covers  # noqa: F401  (its routes are the organizer blueprint's)
    from .web import organizer_events  # noqa: F401  (its routes are the organizer blueprint's)
    from .web import proxies
    from .web import registrations
    from .web import saved
    from .web import security
    from .web import templating

    bodies.init_app(app)
    connection.init_app(app, seed=seed_sample_events)
    # Limits first: a client over its budget is refused before its body is even read.
    limiter = limits.init_app(app)
    # Monitors probe health as often as they need, whatever else their address does.
    limiter.exempt(health.bp)
    security.init_app(app)
    # An agent's call carries its access token, never a cookie: no CSRF token to ask for.
    security.csrf.exempt(mcp.bp)
    # Token and registration requests come from clients' programs, never from a page here.
    security.csrf.exempt(oauth.server_bp)
    # The organizer area checks CSRF itself, once its `admit` has let the request in: a
    # request of no member is refused before its body (an upload, maybe) is read.
    security.csrf.exempt(organizer.bp)
    caching.init_app(app)
    errors.init_app(app)
    # A form's result waits for the page after its redirect in the database, never in the
    # readable session cookie: it may hold a secret shown once.
    WebMCP(app, CATALOG, samples="webapp.dev.samples:sample_pages",
           carried=carried.StoredResults(), untrusted_note=UNTRUSTED_NOTE)
    assets.init_app(app)
    compression.init_app(app)
    # The outermost WSGI layer: everything inside sees the client's address and scheme.
    proxies.init_app(app)
    templating.init_app(app)
    calendars.init_app(app)
    cli.init_app(app)
    # The door's routes join the organizer area, behind its `admit`.
    assert door.DOOR_BLUEPRINT is organizer.bp, "the door page is part of the organizer area"
    for blueprint in (events.bp, registrations.bp, saved.bp, agents.bp, accounts.bp, mcp.bp,
                      about.bp, health.bp, openapi.bp, discovery.bp, calendars.bp, oauth.bp,
                      oauth.server_bp, organizer.bp, organizations.bp, covers.bp):
        app.register_blueprint(blueprint)
    oauth.init_app(app)

    @app.get("/")
    def index() -> Response:
        """The events list is the home page (in the visitor's language: see `languages`)."""
        return redirect(url_for("events.search"))

    # Last: every page registered above gets its language-prefixed address.
    languages.init_app(app)
    return app


def _instance_secret(instance: Path) -> str:
    """A secret key kept in the instance folder, created once and shared by every worker."""
    instance.mkdir(parents=True, exist_ok=True)
    path = instance / "secret_key"
    if not path.exists():
        # Write a complete file aside, then link it into place: when several workers start at
        # once exactly one link succeeds and nobody ever reads a half-written key.
        draft = instance / f".secret_key.{os.getpid()}"
        draft.write_text(secrets.token_hex(32))
        draft.chmod(0o600)
        try:
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return path.read_text().strip()
