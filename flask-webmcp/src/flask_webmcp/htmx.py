"""What flask-webmcp knows of htmx, in one place.

The bridge drives htmx itself (`htmx.swap()`, htmx 4's API) and the answers follow htmx's
headers, so the extension is written for one version of htmx: the app vendors that version
and includes it before the bridge (`BRIDGE_SCRIPT`, from the extension's static files), and
upgrading htmx starts here.
"""

from __future__ import annotations

HTMX_VERSION = "4.0.1"  # the htmx the bridge and the answers are written for
BRIDGE_SCRIPT = "webmcp-bridge.js"  # at url_for("webmcp.static", filename=BRIDGE_SCRIPT)

# Request headers htmx sends.
REQUEST = "HX-Request"  # "true" on every request htmx makes
REQUEST_TYPE = "HX-Request-Type"  # "partial" (a swap) or "full" (a whole page)
BOOSTED = "HX-Boosted"  # a link or form boosted into a whole-page swap
HISTORY_RESTORE = "HX-History-Restore-Request"  # the page again, for history
# Response headers htmx obeys: put this answer elsewhere, in this way.
RETARGET = "HX-Retarget"
RESWAP = "HX-Reswap"

# The request headers an answer depends on (partial or page), for `Vary`.
NEGOTIATED_BY = (REQUEST, REQUEST_TYPE, BOOSTED, HISTORY_RESTORE)

__all__ = ["BOOSTED", "BRIDGE_SCRIPT", "HISTORY_RESTORE", "HTMX_VERSION", "NEGOTIATED_BY",
           "REQUEST", "REQUEST_TYPE", "RESWAP", "RETARGET"]
