"""An SMTP server on loopback that takes every message and keeps only a count: what the mail
bench (`bench/mail.py`) delivers to. `python -m bench.smtp_sink PORT`, in a process of its
own, so that the server's work (aiosmtpd's parsing of the conversation) shares no interpreter
with the delivery loop it answers; on SIGTERM it prints `received <messages> <bytes>` and
stops.

Unlike the tests' `smtp_server.Inbox` it parses no message: a mail provider's server reads
its queue later, not while the sender waits for its reply.
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import Any

from aiosmtpd.controller import Controller


class Sink:
    """An aiosmtpd handler: 250 to every message, counted."""

    def __init__(self) -> None:
        self.messages = 0
        self.bytes = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages += 1
        self.bytes += len(envelope.content)
        return "250 2.0.0 Accepted"


def main() -> None:
    """Listen on 127.0.0.1:PORT until SIGTERM, then print what was received."""
    port = int(sys.argv[1])
    sink = Sink()
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    controller.start()
    print("listening", flush=True)
    stop.wait()
    controller.stop()
    print(f"received {sink.messages} {sink.bytes}", flush=True)


if __name__ == "__main__":
    main()
