"""OAuth grants as agent connections: what a person's approval makes, and what a token is.

A person approves a client on the consent page; the code their approval gives becomes, when the
client exchanges it, an agent connection of their visitor (the same kind of row a pasted token
makes, listed and revoked on the same page) with a short-lived access token and a refresh token.
Each refresh spends its refresh token and issues a new pair. Tokens are bound to the resource
they were asked for (the MCP endpoint's address): a token for anything else is refused there.
The protocol itself (requests, grants, PKCE, errors) is Authlib's, in `web.oauth`.
"""

from __future__ import annotations

import secrets
from datetime import datetime

from ..storage import AgentConnection
from ..storage import Storage
from ..storage.oauth import OAuthTokens
from .actions.agents import LAST_USED_PRECISION
from .tokens import hash_token

# Mark each kind of token for what it is (secret scanners, logs people read); the prefix also
# tells an OAuth access token from a pasted one without a second lookup.
ACCESS_PREFIX = "wmo_"
REFRESH_PREFIX = "wmr_"
CODE_PREFIX = "wmc_"
# What an approved client may do: read; save; prepare registrations and cancellations. Never
# confirm: no token can (only the person, on the site). One scope names it all.
SCOPE = "events"


def new_code() -> tuple[str, str]:
    """A new authorization code and its hash."""
    code = CODE_PREFIX + secrets.token_urlsafe(32)
    return code, hash_token(code)


def new_connection_id() -> str:
    """The id of a new connection (shown on the page, to revoke it)."""
    return f"agt-{secrets.token_urlsafe(9)}"


def unusable_token_hash() -> str:
    """The hash a granted connection keeps where a pasted one keeps its token's: of a value
    nobody is given, so no pasted token ever finds it."""
    return hash_token(secrets.token_urlsafe(32))


def new_access_token() -> str:
    """A new access token (given once, to the client)."""
    return ACCESS_PREFIX + secrets.token_urlsafe(32)


def new_refresh_token() -> str:
    """A new refresh token (given once, to the client)."""
    return REFRESH_PREFIX + secrets.token_urlsafe(32)


def stored_tokens(access_token: str, refresh_token: str, connection_id: str, client_id: str,
                  resource: str, scope: str, access_expires_at: datetime) -> OAuthTokens:
    """What the database keeps of a new pair of tokens: their hashes and what they are for."""
    return OAuthTokens(access_hash=hash_token(access_token),
                       refresh_hash=hash_token(refresh_token), connection_id=connection_id,
                       client_id=client_id, resource=resource, scope=scope,
                       access_expires_at=access_expires_at)


def is_access_token(token: str) -> bool:
    """Whether a bearer token is one of this server's OAuth access tokens (by its form)."""
    return token.startswith(ACCESS_PREFIX)


def access_connection(db: Storage, token: str, resource: str, now: datetime
                      ) -> AgentConnection | None:
    """The live connection an OAuth access token acts for at `resource` (noting that it was
    used), or None for a token unknown, expired, revoked or issued for another resource."""
    found = db.oauth_access(hash_token(token), now)
    if found is None:
        return None
    connection, bound_to = found
    if bound_to != resource or connection.expires_at <= now:
        return None
    used = connection.last_used_at
    if used is None or now - used >= LAST_USED_PRECISION:
        db.agent_connection_used(connection.id, now)
    return connection
