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

from .clock import clock_starting_at

# The folder holding `templates/`, `static/` and `data/`: the checkout, or the installed
# package when `pip install .` packed them into it (setup.cfg maps them there).
_PACKAGE = Path(__file__).resolve().parent
SITE_ROOT = _PACKAGE if (_PACKAGE / "templates").is_dir() else _PACKAGE.parent


# Defaults that code outside an app (benchmarks, data tools) needs too.
DATABASE_BUSY_TIMEOUT_MS = 5000
# The rate limits' counters in a file of this host (see `counters_uri`).
HOST_COUNTERS = "host://"
SITE_TIMEZONE = "Asia/Taipei"


def real_clock() -> datetime:
    """The current time (tests give the app a clock of their own instead)."""
    return datetime.now(UTC)


def defaults(instance_path: str) -> dict[str, Any]:
    """The default of every setting, for an app whose instance folder is `instance_path`."""
    return {
        # Where the data lives: a SQLite file, created and seeded on first use, or a
        # postgresql:// URL for several app hosts (`storage.backends`).
        "DATABASE": os.path.join(instance_path, "events.sqlite"),
        # SQLite: how long a writer waits for another to finish before giving up (SQLITE_BUSY).
        "DATABASE_BUSY_TIMEOUT_MS": DATABASE_BUSY_TIMEOUT_MS,
        # The sample events a new database is seeded with.
        "SEED_FILE": str(SITE_ROOT / "data" / "events.json"),
        # Events are scheduled, searched by day and shown in this time zone.
        "SITE_TIMEZONE": SITE_TIMEZONE,
        # A visitor session ends this many seconds after its last write.
        "VISITOR_TTL": 14 * 24 * 3600,
        # Signing in (`domain.actions.accounts`): a mailed link works once, this many seconds;
        # a signed-in browser stays so while used at least every SESSION_IDLE seconds, and
        # SESSION_LIFETIME seconds at most (then the person signs in again).
        "SIGN_IN_LINK_TTL": 15 * 60,
        # Taiwan's Personal Data Protection Act: an attendee's name and address are erased
        # this many days after the event (`flask prune`); the counts stay.
        "ATTENDEE_RETENTION_DAYS": 90,
        "SESSION_IDLE": 12 * 3600,
        "SESSION_LIFETIME": 7 * 24 * 3600,
        # Tool inputs are a few short fields: refuse anything bigger before reading it.
        "MAX_CONTENT_LENGTH": 64 * 1024,
        "MAX_FORM_MEMORY_SIZE": 64 * 1024,
        # The site's public address (scheme and host, e.g. https://events.example.tw): every
        # absolute address it hands out (sitemap, calendars, canonical links, the addresses an
        # agent is sent to) is made from it, never from a request's Host. gunicorn.conf.py
        # sets it from the bind address when unset; None: the address the request reached.
        "SITE_URL": None,
        # The commit /health/version reports (None: ask git once per process).
        "COMMIT": None,
        # The site's clock: every time the app reasons about comes from it.
        "CLOCK": real_clock,
        # An ISO 8601 instant with its offset: the clock starts there as each process starts,
        # and runs on at the real pace (servers the tests start at the edges of days and
        # years). None: the real time.
        "CLOCK_START": None,
        # Rate limits at several scopes (`web/limits.py`; Flask-Limiter reads its own
        # RATELIMIT_* settings). A person makes a few writes a minute; an agent working through
        # a list makes more, in bursts.
        "RATELIMIT_ENABLED": True,
        # `host://`: in a file every worker of this host shares (web/limit_counters.py),
        # beside the SQLite database (events.rate-limits.sqlite) or in the instance folder;
        # several hosts share redis://host:6379. (`local://` counts in each process alone:
        # one budget per worker.)
        "RATELIMIT_STORAGE_URI": HOST_COUNTERS,
        "RATELIMIT_WRITES": "30 per minute;300 per hour",
        # An address may hold many people (an office, a conference Wi-Fi), each with the
        # budget above, but not without end: a new session costs one GET.
        "RATELIMIT_WRITES_PER_ADDRESS": "120 per minute;1200 per hour",
        "RATELIMIT_NEW_VISITORS_PER_ADDRESS": "20 per minute;200 per hour",
        # Reads are cheap and bounded (no page past the capped count), yet not free.
        "RATELIMIT_READS_PER_ADDRESS": "1200 per minute",
        # Every registration is prepared first: counting those per event bounds the seats one
        # address, or one e-mail address, can take (a household, a few colleagues; a person
        # who cancels and registers again).
        "RATELIMIT_REGISTRATIONS_PER_EVENT_ADDRESS": "10 per hour;20 per day",
        "RATELIMIT_REGISTRATIONS_PER_EVENT_EMAIL": "5 per day",
        # Each sign-in link is a mail: an address gets a few an hour whoever asks, and one
        # network cannot make the site mail many addresses.
        "RATELIMIT_SIGN_IN_PER_EMAIL": "5 per hour;10 per day",
        "RATELIMIT_SIGN_IN_PER_ADDRESS": "20 per hour",
        # X-RateLimit-* on limited answers and Retry-After on a 429, for agents that read them.
        "RATELIMIT_HEADERS_ENABLED": True,
        # The session cookie holds the visitor id and the CSRF secret: script cannot read it,
        # and other sites' forms do not carry it. Served over HTTPS, set SESSION_COOKIE_SECURE
        # so that it never travels over plain HTTP (off here: `make run` serves plain HTTP).
        "SESSION_COOKIE_NAME": "webmcp_events",
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "SESSION_COOKIE_SECURE": False,
        # Answers over HTTPS tell browsers to use nothing else for this long (0: never).
        "HSTS_MAX_AGE": 365 * 24 * 3600,
        # How many reverse proxies stand in front of the app (deploy/nginx.conf: one). Their
        # X-Forwarded-For and -Proto headers say the client's address and scheme; with 0 no
        # such header is trusted, whoever sends it (`web/proxies.py`).
        "TRUSTED_PROXIES": 0,
        # An agent a person connects over MCP acts for them this long (30 days), unless they
        # disconnect it sooner; it acts only while their visitor session lasts, too.
        "AGENT_CONNECTION_TTL": 30 * 24 * 3600,
        # Browser origins allowed to call /mcp (e.g. "http://localhost:6274" for a web-based
        # MCP client). Other clients send no Origin; any origin not listed is refused, so a
        # page elsewhere cannot use the endpoint through a visitor's browser (DNS rebinding).
        "MCP_ALLOWED_ORIGINS": (),
        # OAuth for MCP clients (`web.oauth`): an access token works this long (an hour), a
        # code a person's approval gives this long (five minutes); a refresh token as long as
        # its connection (AGENT_CONNECTION_TTL). A client's metadata document is fetched again
        # after OAUTH_CLIENT_DOCUMENT_TTL, in at most OAUTH_FETCH_TIMEOUT seconds and
        # OAUTH_FETCH_LIMIT bytes. Only https client ids are fetched; with
        # OAUTH_ALLOW_HTTP_LOOPBACK (tests) also http ones on loopback.
        "OAUTH_ACCESS_TOKEN_TTL": 3600,
        "OAUTH_CODE_TTL": 300,
        "OAUTH_CLIENT_DOCUMENT_TTL": 3600,
        "OAUTH_FETCH_TIMEOUT": 5,
        "OAUTH_FETCH_LIMIT": 5 * 1024,
        "OAUTH_ALLOW_HTTP_LOOPBACK": False,
        # The font an event's share card is drawn in (`web.cards`): a bold face with Traditional
        # Chinese glyphs. None: Debian's Noto Sans CJK (fonts-noto-cjk), when it is installed;
        # with no such font the pages offer no card rather than one with boxes for Chinese.
        "CARD_FONT": None,
        # Mail (`webapp.mail`): the SMTP server the delivery loop sends through. None: no
        # server at all, each mail is written to <instance>/mail/<id>.eml and logged (`make
        # run`, development).
        "MAIL_HOST": None,
        # 587, the submission port, with STARTTLS: what mail providers offer to send through.
        "MAIL_PORT": 587,
        "MAIL_STARTTLS": True,
        # The login at the server, when it asks for one (None: none).
        "MAIL_USERNAME": None,
        "MAIL_PASSWORD": None,
        # The sender people see and reply to; its domain names the Message-IDs when
        # SITE_URL is unset.
        "MAIL_FROM": "WebMCP Events <no-reply@localhost>",
        # Seconds each step of a conversation with the server may take (connect, each reply).
        "MAIL_TIMEOUT": 20,
        # How many mails one claim takes, and for how many seconds: a sender that dies leaves
        # its mail to be sent again once the lease runs out (longer than a batch takes).
        "MAIL_BATCH_SIZE": 10,
        "MAIL_LEASE": 600,
        # A transient failure (no server, a 4xx) is retried after MAIL_RETRY_DELAY seconds,
        # doubling each time, until MAIL_MAX_ATTEMPTS; a 5xx fails at once.
        "MAIL_RETRY_DELAY": 60,
        "MAIL_MAX_ATTEMPTS": 8,
        # Seconds the loop waits before looking again when nothing was due.
        "MAIL_POLL_INTERVAL": 5,
        # Days `flask prune` keeps sent mail in the outbox (to answer "did it go?"; its
        # payload holds an address and a name, so not for ever). Failed mail stays until
        # someone has looked (`flask mail failed`).
        "MAIL_KEEP_SENT_DAYS": 30,
        # Every form post carries a CSRF token (Flask-WTF's default, named here because the
        # organizer area checks it itself, after membership: `webapp.web.organizer`).
        "WTF_CSRF_ENABLED": True,
        # The CSRF token lives as long as the visitor session that holds it.
        "WTF_CSRF_TIME_LIMIT": None,
        "WTF_CSRF_FIELD_NAME": "csrf_token",
    }


def derived(config: dict[str, Any], instance_path: str) -> dict[str, Any]:
    """Settings that follow from others once every source has been applied."""
    start = config.get("CLOCK_START")
    return {
        **({"CLOCK": clock_starting_at(datetime.fromisoformat(str(start)))} if start else {}),
        "RATELIMIT_STORAGE_URI": counters_uri(config, instance_path),
        "PERMANENT_SESSION_LIFETIME": int(config["VISITOR_TTL"]),
        # Flask-Babel writes times in the zone events are shown in.
        "BABEL_DEFAULT_TIMEZONE": config["SITE_TIMEZONE"],
    }


def counters_uri(config: dict[str, Any], instance_path: str) -> str:
    """Where the rate limits count: a bare `host://` names a file beside the SQLite database,
    named after it (each database, each site, counts apart), or in the instance folder for
    PostgreSQL."""
    uri = str(config["RATELIMIT_STORAGE_URI"])
    if uri != HOST_COUNTERS:
        return uri
    database = str(config["DATABASE"])
    if "://" in database:
        return f"{HOST_COUNTERS}{os.path.join(instance_path, 'rate-limits.sqlite')}"
    return f"{HOST_COUNTERS}{os.path.splitext(os.path.abspath(database))[0]}.rate-limits.sqlite"


Clock = Callable[[], datetime]
