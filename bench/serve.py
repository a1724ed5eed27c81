"""gunicorn for the mail bench (`bench/mail.py`), with the registration mail's queueing on or off.

Given to `servers.gunicorn` as its `wrapper`: `python -m bench.serve <gunicorn> <its arguments>`
runs gunicorn in this process. With `BENCH_QUEUE_MAIL=0` in its environment, confirming a
registration queues no mail: `queue_registration_confirmed`, as the confirm action imported it,
becomes a no-op before gunicorn starts, and the workers (forked from this process after it)
inherit the change. The product's code is unchanged; everything else runs as it does.
Both servers of a comparison start this way, so they differ in that one call alone.
"""

from __future__ import annotations

import os
import sys
from typing import Any

QUEUE_MAIL = "BENCH_QUEUE_MAIL"
QUEUEING = "queue_registration_confirmed"


def queue_nothing(*args: Any, **kwargs: Any) -> bool:
    """What `queue_registration_confirmed` does in the baseline: nothing (no mail queued)."""
    return False


def main() -> None:
    """Switch the mail off if asked, then run gunicorn with the arguments that follow its path."""
    if os.environ.get(QUEUE_MAIL, "1") == "0":
        from webapp.domain.actions import registrations

        # The name the confirm action calls: if it ever changes, fail here, not measure a
        # baseline that still queues its mail.
        if not callable(getattr(registrations, QUEUEING, None)):
            raise SystemExit(f"{registrations.__name__} no longer calls {QUEUEING}")
        setattr(registrations, QUEUEING, queue_nothing)
    from gunicorn.app.wsgiapp import run

    sys.argv = ["gunicorn", *sys.argv[2:]]
    run()


if __name__ == "__main__":
    main()
