"""Rate-limit counters kept in the process: `local://`, the default `RATELIMIT_STORAGE_URI`.

limits' own `memory://` drops expired counters from a `threading.Timer` it starts again 10 ms
after each burst of hits: at one request at a time through gunicorn's threads, that is a new
thread every few requests, started on a request's path, and a thread taking the GIL in the
middle of another request when it fires. A search through gunicorn cost 0.1× `/health` more
with it (bench/README.md), and `/health`, exempt from the limits, never paid it.

These counters need no thread: a counter read after its window is over counts from zero, and
the request that finds the sweep due (at most once a second) drops every expired counter, so
the addresses and visitors that never come back do not pile up. Fixed windows only (the
strategy the site uses). As with `memory://`, each gunicorn worker counts alone: several
workers or hosts share `redis://` (README: Running on several machines).
"""

from __future__ import annotations

import threading
import time

from limits.storage import Storage

SWEEP_EVERY_SECONDS = 1.0


class LocalCounters(Storage):
    """Fixed-window counters in this process, swept on use instead of by a timer thread."""

    STORAGE_SCHEME = ["local"]

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False,
                 **options: float | str | bool):
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._expiries: dict[str, float] = {}
        self._next_sweep = time.time() + SWEEP_EVERY_SECONDS

    @property
    def base_exceptions(self) -> type[Exception]:
        """What a failing call of this storage raises (nothing here reaches a network)."""
        return ValueError

    def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        """Count `amount` more hits of `key`; a new window of `expiry` seconds starts when the
        last one is over. Returns the count in the window."""
        now = time.time()
        with self._lock:
            if now >= self._next_sweep:
                self._sweep(now)
            if self._expiries.get(key, now) <= now:
                self._counts[key] = 0
                self._expiries[key] = now + expiry
            self._counts[key] += amount
            return self._counts[key]

    def get(self, key: str) -> int:
        """The hits of `key` in its current window (0 once it is over)."""
        with self._lock:
            if self._expiries.get(key, 0) <= time.time():
                return 0
            return self._counts[key]

    def get_expiry(self, key: str) -> float:
        """When the window of `key` ends (now, when it has none)."""
        now = time.time()
        with self._lock:
            return max(self._expiries.get(key, now), now)

    def check(self) -> bool:
        """Always healthy: the counters are in this process."""
        return True

    def reset(self) -> int:
        """Forget every counter; returns how many there were."""
        with self._lock:
            held = len(self._counts)
            self._counts.clear()
            self._expiries.clear()
            return held

    def clear(self, key: str) -> None:
        """Forget the counter of `key`."""
        with self._lock:
            self._counts.pop(key, None)
            self._expiries.pop(key, None)

    def __len__(self) -> int:
        """How many counters are held, expired ones not yet swept included."""
        return len(self._counts)

    def _sweep(self, now: float) -> None:
        """Drop every counter whose window is over (call with the lock held)."""
        for key in [key for key, ends in self._expiries.items() if ends <= now]:
            del self._counts[key], self._expiries[key]
        self._next_sweep = now + SWEEP_EVERY_SECONDS
