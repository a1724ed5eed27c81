"""The site's store of carried results (`webmcp.carry`): rows of its own database.

A form submitted without JavaScript shows its result on the page its redirect lands on; that
result may hold a secret shown once (an agent's access token, a calendar address, a
confirmation token, the e-mail typed). It waits in a `carried_results` row, known by the
SHA-256 of a random key that only the visitor's session cookie holds, and is deleted as it
is read. Every host of the site reads the same database, so any of them shows it.
"""

from __future__ import annotations

import json
import secrets
from datetime import timedelta
from typing import Any

from ..clock import site_now
from ..domain.tokens import hash_token
from ..storage.connection import get_db

# Long enough for any browser to follow a redirect; a result nobody took is dropped after.
LIFETIME = timedelta(minutes=10)


class StoredResults:
    """Carried results in the site's database (a `webmcp.carry.CarriedResults`)."""

    def keep(self, carried: dict[str, Any]) -> str:
        """Store `carried` for LIFETIME under a new random key, and return the key."""
        key = secrets.token_urlsafe(32)
        now = site_now()
        get_db().keep_carried_result(hash_token(key), json.dumps(carried, ensure_ascii=False),
                                     now + LIFETIME, now)
        return key

    def take(self, key: str) -> dict[str, Any] | None:
        """What was stored under `key`, deleted as it is read; None when there is nothing."""
        body = get_db().take_carried_result(hash_token(key), site_now())
        if body is None:
            return None
        carried: dict[str, Any] = json.loads(body)
        return carried
