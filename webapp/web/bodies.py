"""Request bodies: one larger than MAX_CONTENT_LENGTH is refused (413), never read whole.

Werkzeug already refuses a declared Content-Length over the limit before reading anything, and
caps a streamed body (chunked, no Content-Length) at the limit. But when such a body is read
in one go (`request.get_data()`, url-encoded form parsing), it stops at the limit and returns
what it read as if the body ended there: a larger body would be silently cut, then validated.
This request class reads one byte past the limit instead, and refuses the body if it is there.

A route that takes files (an event's cover picture) declares its own, larger limit with
`@accepts_body(limit)`: the request reads it from the route it was matched to, before anything
(the CSRF check included) reads the body.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO
from typing import TypeVar
from typing import cast

from flask import Flask
from flask import Request
from flask import current_app
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.utils import cached_property
from werkzeug.wsgi import LimitedStream

# Where a view keeps the body limit it declares.
BODY_LIMIT = "webapp_body_limit"

View = TypeVar("View", bound=Callable[..., object])


def accepts_body(limit: int) -> Callable[[View], View]:
    """Declare that the route takes bodies of up to `limit` bytes (instead of
    MAX_CONTENT_LENGTH): one that uploads files."""
    def declare(view: View) -> View:
        setattr(view, BODY_LIMIT, limit)
        return view

    return declare


class WholeBodyStream(LimitedStream):
    """A streamed body capped at `limit` bytes that refuses a longer one instead of cutting it."""

    def __init__(self, source: IO[bytes], limit: int):
        super().__init__(source, limit, is_max=True)
        self.source = source

    def readall(self) -> bytes:
        """The whole body; RequestEntityTooLarge if it goes on past the limit."""
        body = super().readall()
        if self.is_exhausted and self.source.read(1):
            raise RequestEntityTooLarge()
        return body


class BoundedRequest(Request):
    """Flask's request, whose streamed body is refused past MAX_CONTENT_LENGTH (or its
    route's own limit), never cut."""

    @property
    def max_content_length(self) -> int | None:
        """The limit the matched route declares (`accepts_body`), else Flask's."""
        view = current_app.view_functions.get(self.endpoint or "") if current_app else None
        declared = getattr(view, BODY_LIMIT, None)
        return declared if declared is not None else super().max_content_length

    @max_content_length.setter
    def max_content_length(self, value: int | None) -> None:
        # Where Flask keeps a view's own limit (its setter, which this property hides).
        self._max_content_length = value

    @cached_property
    def stream(self) -> IO[bytes]:
        """The body: as Werkzeug gives it, except a streamed one (see WholeBodyStream)."""
        limit = self.max_content_length
        streamed = self.content_length is None and "wsgi.input_terminated" in self.environ
        if limit is None or not streamed:
            return super().stream
        # A raw binary stream serves as the IO[bytes] Werkzeug declares (its own
        # LimitedStream is cast the same way in `werkzeug.wsgi.get_input_stream`).
        return cast(IO[bytes], WholeBodyStream(self.environ["wsgi.input"], limit))


def init_app(app: Flask) -> None:
    """Use the bounded request class."""
    app.request_class = BoundedRequest
