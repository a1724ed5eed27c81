"""Visitor sessions: a random id in the signed session cookie, its lifetime on the server.
Saved events, registrations and confirmations belong to a visitor. A browser signed in to an
account (`domain.actions.accounts`) is the account's visitor, for as long as its account
session (kept on the server too) lasts.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from flask import current_app
from flask import g
from flask import session

from flask_webmcp.calls import PrincipalGone

from ..clock import site_now
from ..domain.tokens import hash_token
from ..storage import Account
from ..storage import Storage
from ..storage.connection import get_db

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
    they connected) to a full lifetime from now, unless it was extended within
    SEEN_PRECISION; SessionExpired when it is already over."""
    now = site_now()
    until = now + _lifetime()
    expires = db.visitor_expires_at(visitor_id)
    if expires is None or expires <= now:
        raise SessionExpired
    # Reading is cheaper than writing (on PostgreSQL each commit of a change waits for the
    # disk), and a person's writes come in bursts: most need no extension of their own.
    if expires <= until - SEEN_PRECISION and not db.keep_visitor_alive(visitor_id, now, until):
        raise SessionExpired
    return visitor_id


def still_alive(db: Storage, visitor_id: str) -> str:
    """The visitor a read of their own data is for (the agent they connected asks), while
    their session lasts; SessionExpired when it is over. A read extends nothing."""
    expires = db.visitor_expires_at(visitor_id)
    if expires is None or expires <= site_now():
        raise SessionExpired
    return visitor_id


# The session cookie of a signed-in browser also holds the id of its account session (whose
# hash the database keeps), beside the account's visitor id under VISITOR_KEY.
ACCOUNT_SESSION_KEY = "account_session"
# How often a session's bookkeeping (an account session's "last used", a visitor's end) is
# written: every request would otherwise be a write.
SEEN_PRECISION = timedelta(minutes=5)


# A page that sent the browser to sign in, to come back to once signed in (in this browser).
RETURN_KEY = "return_to"


def return_after_sign_in(path: str) -> None:
    """Remember the site's own page `path` to come back to after signing in here."""
    session[RETURN_KEY] = path


def page_to_return_to() -> str | None:
    """The page remembered by `return_after_sign_in`, if any (only a path of this site)."""
    path = session.get(RETURN_KEY)
    return path if isinstance(path, str) and path.startswith("/") and not path.startswith(
        "//") else None


def start_account_session(session_id: str, visitor_id: str) -> None:
    """Make this browser the account's: a fresh cookie (nothing of the anonymous session
    carries over, against session fixation) naming the account session and its visitor."""
    session.clear()
    session[ACCOUNT_SESSION_KEY] = session_id
    session[VISITOR_KEY] = visitor_id
    session.permanent = True


def session_hash() -> str | None:
    """The hash of this browser's account session id, if it names one."""
    session_id = session.get(ACCOUNT_SESSION_KEY)
    return hash_token(session_id) if isinstance(session_id, str) else None


def signed_in_account(db: Storage) -> Account | None:
    """The account this browser is signed in to, or None. A session that ended (signed out
    elsewhere, unused for SESSION_IDLE, older than SESSION_LIFETIME) signs the browser out:
    the cookie forgets the account's visitor too, so nothing of the account shows."""
    if "account" in g:
        found: Account | None = g.account
        return found
    id_hash = session_hash()
    account = db.session_account(id_hash) if id_hash else None
    if id_hash and account is not None and _alive(account):
        now = site_now()
        if account.seen_at is None or now - account.seen_at >= SEEN_PRECISION:
            db.session_seen(id_hash, now)
    elif id_hash:
        if account is not None:
            db.end_session(id_hash)
        session.clear()
        account = None
    g.account = account
    return account


def _alive(account: Account) -> bool:
    """Whether the session `account` was read through is still alive now."""
    now, config = site_now(), current_app.config
    assert account.signed_in_at is not None and account.seen_at is not None
    return (now < account.signed_in_at + timedelta(seconds=int(config["SESSION_LIFETIME"]))
            and now < account.seen_at + timedelta(seconds=int(config["SESSION_IDLE"])))


def check_account_session() -> None:
    """Before each request of a browser that says it is signed in: make sure it still is."""
    if ACCOUNT_SESSION_KEY in session:
        signed_in_account(get_db())
