"""webmcp-events: an events site people and WebMCP browser agents use through the same forms."""

from __future__ import annotations

import os
import secrets
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

from flask import Flask
from flask import redirect
from flask import url_for

from .actions import SEARCH_COUNT_CAP
from .storage.sqlite import DEFAULT_BUSY_TIMEOUT_MS

# Templates, static files and seed data sit beside the package, at the project root.
PROJECT_ROOT = Path(__file__).resolve().parent.parent
# Events are scheduled, searched by day and shown in this time zone (FLASK_SITE_TIMEZONE).
DEFAULT_SITE_TIMEZONE = "Asia/Taipei"


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """Create and configure the app (no database connection is opened here)."""
    app = Flask(
        __name__,
        instance_relative_config=True,
        template_folder=str(PROJECT_ROOT / "templates"),
        static_folder=str(PROJECT_ROOT / "static"),
    )
    app.config.from_mapping(
        DATABASE=os.path.join(app.instance_path, "events.sqlite"),
        DATABASE_BUSY_TIMEOUT_MS=DEFAULT_BUSY_TIMEOUT_MS,
        SEED_FILE=str(PROJECT_ROOT / "data" / "events.json"),
        SITE_TIMEZONE=DEFAULT_SITE_TIMEZONE,
        VISITOR_TTL=14 * 24 * 3600,
        SEARCH_COUNT_CAP=SEARCH_COUNT_CAP,
        # Tool inputs are a few short fields: refuse anything bigger before reading it.
        MAX_CONTENT_LENGTH=64 * 1024,
        MAX_FORM_MEMORY_SIZE=64 * 1024,
        SESSION_COOKIE_NAME="webmcp_events",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        # The CSRF token lives as long as the visitor session that holds it.
        WTF_CSRF_TIME_LIMIT=None,
        COMMIT=None,
        # Tests replace the clock to expire tokens and sessions without waiting.
        CLOCK=lambda: datetime.now(UTC),
    )
    if test_config is None:
        app.config.from_pyfile("config.py", silent=True)
        app.config.from_prefixed_env()
    else:
        app.config.from_mapping(test_config)
    app.config["PERMANENT_SESSION_LIFETIME"] = int(app.config["VISITOR_TTL"])
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = _instance_secret(Path(app.instance_path))

    from . import bodies
    from . import db
    from . import errors
    from . import health
    from . import limits
    from . import security
    from .lint_samples import sample_pages
    from .tools import CATALOG
    from .webmcp import WebMCP

    bodies.init_app(app)
    db.init_app(app)
    # Limits first: a client over its budget is refused before its body is even read.
    limits.init_app(app)
    security.init_app(app)
    errors.init_app(app)
    WebMCP(app, CATALOG, samples=sample_pages)

    from . import assets
    from . import compression
    from . import events
    from . import openapi
    from . import registrations
    from . import saved
    from . import templating

    assets.init_app(app)
    compression.init_app(app)
    templating.init_app(app)
    app.register_blueprint(events.bp)
    app.register_blueprint(registrations.bp)
    app.register_blueprint(saved.bp)
    app.register_blueprint(health.bp)
    app.register_blueprint(openapi.bp)

    @app.get("/")
    def index():
        """The events list is the home page."""
        return redirect(url_for("events.search"))

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
