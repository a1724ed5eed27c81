"""Every setting the site reads, with its default: the one place defaults live.

`create_app` applies these, then `instance/config.py`, then `FLASK_`-prefixed environment
variables (or a test's mapping). The README's configuration table documents each setting;
`tests/test_config.py` checks that it names every setting the code reads.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

# The folder holding `templates/`, `static/` and `data/`: the checkout, or the installed
# package when `pip install .` packed them into it (setup.cfg maps them there).
_PACKAGE = Path(__file__).resolve().parent
SITE_ROOT = _PACKAGE if (_PACKAGE / "templates").is_dir() else _PACKAGE.parent


# Defaults that code outside an app (benchmarks, data tools) needs too.
DATABASE_BUSY_TIMEOUT_MS = 5000
SITE_TIMEZONE = "Asia/Taipei"


def real_clock() -> datetime:
    """The current time (tests give the app a clock of their own instead)."""
    return datetime.now(UTC)


def defaults(instance_path: str) -> dict[str, Any]:
    """The default of every setting, for an app whose instance folder is `instance_path`."""
    return {
        # Where the data lives: a SQLite file, created and seeded on first use.
        "DATABASE": os.path.join(instance_path, "events.sqlite"),
        # How long a writer waits for another to finish before giving up (SQLITE_BUSY).
        "DATABASE_BUSY_TIMEOUT_MS": DATABASE_BUSY_TIMEOUT_MS,
        # The sample events a new database is seeded with.
        "SEED_FILE": str(SITE_ROOT / "data" / "events.json"),
        # Events are scheduled, searched by day and shown in this time zone.
        "SITE_TIMEZONE": SITE_TIMEZONE,
        # A visitor session ends this many seconds after its last write.
        "VISITOR_TTL": 14 * 24 * 3600,
        # Tool inputs are a few short fields: refuse anything bigger before reading it.
        "MAX_CONTENT_LENGTH": 64 * 1024,
        "MAX_FORM_MEMORY_SIZE": 64 * 1024,
        # The commit /health/version reports (None: ask git once per process).
        "COMMIT": None,
        # The site's clock: every time the app reasons about comes from it.
        "CLOCK": real_clock,
        # Rate limits (Flask-Limiter reads its own RATELIMIT_* settings). A person makes a
        # few writes a minute; an agent working through a list makes more, in bursts.
        "RATELIMIT_ENABLED": True,
        "RATELIMIT_STORAGE_URI": "memory://",
        "RATELIMIT_WRITES": "30 per minute;300 per hour",
        # X-RateLimit-* on limited answers and Retry-After on a 429, for agents that read them.
        "RATELIMIT_HEADERS_ENABLED": True,
        # The session cookie holds the visitor id and the CSRF secret: script cannot read it,
        # and other sites' forms do not carry it.
        "SESSION_COOKIE_NAME": "webmcp_events",
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        # The CSRF token lives as long as the visitor session that holds it.
        "WTF_CSRF_TIME_LIMIT": None,
        "WTF_CSRF_FIELD_NAME": "csrf_token",
    }


def derived(config: dict[str, Any]) -> dict[str, Any]:
    """Settings that follow from others once every source has been applied."""
    return {
        "PERMANENT_SESSION_LIFETIME": int(config["VISITOR_TTL"]),
        # Flask-Babel writes times in the zone events are shown in.
        "BABEL_DEFAULT_TIMEZONE": config["SITE_TIMEZONE"],
    }


Clock = Callable[[], datetime]
