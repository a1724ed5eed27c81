"""Anonymous visitor sessions: a random id in the signed session cookie, its lifetime on the
server. Saved events, registrations and confirmations belong to a visitor.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from flask import current_app
from flask import session

from flask_webmcp.calls import PrincipalGone

from ..clock import site_now
from ..storage import Storage

VISITOR_KEY = "visitor"


class SessionExpired(PrincipalGone):
    """The visitor's session ended; a person must reload the page and start again."""


def _lifetime() -> timedelta:
    return timedelta(seconds=int(current_app.config["VISITOR_TTL"]))


def cookie_visitor() -> str | None:
    """The visitor id the cookie claims (not checked: fine for labelling the activity log)."""
    claimed: str | None = session.get(VISITOR_KEY)
    return claimed


def live_visitor(db: Storage) -> str | None:
    """The visitor of this request if their session is alive, else None.

    A dead session is forgotten here, so reloading a page starts a fresh visitor.
    """
    visitor_id: str | None = session.get(VISITOR_KEY)
    if visitor_id is None:
        return None
    expires = db.visitor_expires_at(visitor_id)
    if expires is None or expires <= site_now():
        session.pop(VISITOR_KEY, None)
        return None
    return visitor_id


def visitor_for_write(db: Storage) -> str:
    """The visitor a write belongs to, created on the first one; each write extends it.

    Raises SessionExpired when the cookie names a visitor whose session is over.
    """
    visitor_id: str | None = session.get(VISITOR_KEY)
    if visitor_id is not None:
        return keep_alive(db, visitor_id)
    now = site_now()
    visitor_id = f"vis-{secrets.token_urlsafe(16)}"
    db.create_visitor(visitor_id, now, now + _lifetime())
    session[VISITOR_KEY] = visitor_id
    session.permanent = True
    return visitor_id


def keep_alive(db: Storage, visitor_id: str) -> str:
    """Extend the session of the visitor a write belongs to (from their cookie, or the agent
    they connected); SessionExpired when it is already over."""
    now = site_now()
    expires = db.visitor_expires_at(visitor_id)
    if expires is None or expires <= now:
        raise SessionExpired
    db.extend_visitor(visitor_id, now + _lifetime())
    return visitor_id
