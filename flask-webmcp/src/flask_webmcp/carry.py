"""Where a POST's result waits for the page its 303 redirect lands on.

The result of a form submitted without JavaScript is shown by the next page, so it must
outlive the request. It may hold what a person is shown once (an access token, a private
address, the token of a confirm form): the session cookie is signed but readable, and an old
copy of it can be sent again, so the result is never put there. The app gives the toolkit a
`CarriedResults` store, kept on the server; the session holds only the random key the store
hands out, and the store gives the result out once.
"""

from __future__ import annotations

from typing import Any
from typing import Protocol

from flask import Flask
from flask import current_app

EXTENSION = "webmcp.carried_results"


class CarriedResults(Protocol):
    """A server-side store of carried results, each read at most once."""

    def keep(self, carried: dict[str, Any]) -> str:
        """Keep `carried` (JSON-ready data) and return a new, unguessable key to it."""
        ...

    def take(self, key: str) -> dict[str, Any] | None:
        """What was kept under `key`, forgotten as it is read; None when there is nothing
        (never kept, already taken, or kept too long ago)."""
        ...


def use_carried_results(app: Flask, store: CarriedResults) -> None:
    """Make `store` the one `app`'s answers carry their results in."""
    app.extensions[EXTENSION] = store


def carried_results() -> CarriedResults:
    """The current app's store; an app that carries results without one fails loudly, as a
    fallback to the cookie would show its secrets again."""
    store: CarriedResults | None = current_app.extensions.get(EXTENSION)
    if store is None:
        raise RuntimeError("no store for carried results: pass WebMCP(carried=...) or call "
                           "webmcp.carry.use_carried_results(app, store)")
    return store

__all__ = ["CarriedResults", "carried_results", "use_carried_results"]
