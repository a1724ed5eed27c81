"""Access logs that never hold a calendar feed's token.

A visitor's private feed is served at /calendar/feed/<token>.ics (`webapp/web/calendars.py`):
the address is the only key to it, so a log line that keeps the address hands the feed to
whoever reads the log (a log shipper, a backup, a colleague grepping for errors). gunicorn's
access log goes through `RedactingLogger` (`logger_class` in gunicorn.conf.py); nginx's through
the `redacted` log_format of deploy/nginx.conf, whose map cuts the same part out
(tests/test_access_logs.py checks that both agree, and reads the logs real servers write).
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from gunicorn.glogging import Logger

# Everything after the feed's folder up to the end of the address: the token, and whatever a
# client may append to it (".ics", a query). Cutting it all needs no knowledge of what a token
# looks like, so a token of any shape (an old one, a mistyped one) is cut too.
FEED_ADDRESS = re.compile(r"(/calendar/feed/)\S*")
REDACTED = "[redacted]"


def redact(text: str) -> str:
    """`text` (a request line, a path, a full address) with every feed token cut out."""
    return FEED_ADDRESS.sub(rf"\g<1>{REDACTED}", text)


class RedactingLogger(Logger):
    """gunicorn's logger, whose access log shows no feed token."""

    def atoms(self, resp: Any, req: Any, environ: dict[str, Any],
              request_time: timedelta) -> dict[str, Any]:
        """gunicorn's atoms with every text redacted: the address is in many of them (the
        request line `r`, the path `U`, the query `q`, the referer `f`, environ variables such
        as `{raw_uri}e`), and an access_log_format may name any."""
        # The class named, not super(): mypy lets only a named class's untyped method be
        # called (pyproject.toml, untyped_calls_exclude).
        return {name: redact(value) if isinstance(value, str) else value
                for name, value in Logger.atoms(self, resp, req, environ, request_time).items()}
