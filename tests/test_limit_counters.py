"""The rate limits' counters (`host://`, the default, and `local://`): fixed windows, expired
counters swept by the requests themselves, no thread started on a request's path (limits'
`memory://` starts one every few requests), and one count for every worker of a host. The
counters read `time.time()` of their module; tests move that clock."""

from __future__ import annotations

import itertools
import multiprocessing
import threading
from collections.abc import Callable

import pytest
from flask import Flask
from limits import RateLimitItemPerMinute
from limits.storage import Storage
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter

from webapp import create_app
from webapp.web import limit_counters
from webapp.web.limit_counters import SWEEP_EVERY_SECONDS
from webapp.web.limit_counters import HostCounters
from webapp.web.limit_counters import LocalCounters


class MovableClock:
    """A fixed instant that a test moves by hand."""

    def __init__(self):
        self.now = 1_800_000_000.0

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> MovableClock:
    moved = MovableClock()
    monkeypatch.setattr(limit_counters, "time", moved)
    return moved


@pytest.fixture(params=["host", "local"])
def make_counters(request, tmp_path) -> Callable[[], Storage]:
    """Makes empty counters of each kind (host counters in a file of their own)."""
    files = (tmp_path / f"counters-{number}.sqlite" for number in itertools.count())
    if request.param == "host":
        return lambda: HostCounters(f"host://{next(files)}")
    return LocalCounters


def test_a_window_counts_hits_until_it_is_over(clock, make_counters):
    counters = make_counters()
    assert [counters.incr("a", 60) for _ in range(3)] == [1, 2, 3]
    assert counters.get("a") == 3 and counters.get_expiry("a") == clock.now + 60
    clock.now += 59
    assert counters.incr("a", 60, amount=2) == 5
    clock.now += 1  # the window is over: the next hit starts another
    assert counters.get("a") == 0
    assert counters.incr("a", 60) == 1 and counters.get_expiry("a") == clock.now + 60


def test_expired_counters_are_swept_by_a_later_hit_at_most_once_a_second(clock,
                                                                         make_counters):
    counters = make_counters()
    for number in range(100):
        counters.incr(f"address:{number}", 60)
    clock.now += 61
    counters.incr("someone", 60)  # the sweep is due: the 100 others are over
    assert len(counters) == 1
    counters.incr("another", 0.25)
    clock.now += 0.5
    counters.incr("a third", 60)  # "another" is over, but the last sweep was half a second ago
    assert len(counters) == 3
    clock.now += SWEEP_EVERY_SECONDS
    counters.incr("a third", 60)
    assert len(counters) == 2


def test_clearing_and_resetting_forget_counters(clock, make_counters):
    counters = make_counters()
    counters.incr("a", 60)
    counters.incr("b", 60)
    counters.clear("a")
    assert counters.get("a") == 0 and counters.get("b") == 1
    assert counters.reset() == 1 and len(counters) == 0
    assert counters.check() is True


@pytest.mark.parametrize("kind", ["host", "local"])
def test_no_thread_is_started_by_making_or_counting(clock, monkeypatch, tmp_path, kind):
    started = []
    monkeypatch.setattr(threading.Thread, "start", lambda thread: started.append(thread))
    # limits' memory:// starts its timer here
    counters = storage_from_string(f"{kind}://{tmp_path / 'counters.sqlite'}")
    limiter = FixedWindowRateLimiter(counters)
    item = RateLimitItemPerMinute(1000)
    for number in range(50):
        assert limiter.hit(item, "visitor", str(number % 5))
        clock.now += 0.05  # a request at a time: memory:// would start its timer again
    assert started == []
    assert limiter.get_window_stats(item, "visitor", "0").remaining == 990


def test_threads_counting_at_once_lose_no_hit(make_counters):
    counters = make_counters()
    start = threading.Barrier(8)

    def hit_many():
        start.wait()
        for _ in range(500):
            counters.incr("shared", 60)

    threads = [threading.Thread(target=hit_many) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counters.get("shared") == 8 * 500


def default_app(tmp_path, monkeypatch) -> Flask:
    """The app as `make run` configures it, with its database in `tmp_path`."""
    monkeypatch.setenv("FLASK_DATABASE", str(tmp_path / "events.sqlite"))
    monkeypatch.setenv("FLASK_SECRET_KEY", "counters test secret")
    monkeypatch.delenv("FLASK_RATELIMIT_STORAGE_URI", raising=False)
    return create_app()


def test_the_app_counts_on_the_host_by_default(tmp_path, monkeypatch):
    app = default_app(tmp_path, monkeypatch)
    assert app.config["RATELIMIT_STORAGE_URI"] == (
        f"host://{tmp_path / 'events.rate-limits.sqlite'}")
    searched = app.test_client().get("/events", headers={"Accept": "application/json"})
    assert searched.status_code == 200
    (limiter,) = app.extensions["limiter"]
    assert isinstance(limiter.storage, HostCounters)  # made on first use
    assert len(limiter.storage) == 1  # the search's read of its address


def hit_from_another_process(uri: str, key: str, hits: int, start) -> None:
    """What one gunicorn worker does: count `hits` hits of `key` in storage of its own."""
    counters = storage_from_string(uri)
    start.wait()
    for _ in range(hits):
        counters.incr(key, 3600)


def test_every_worker_of_a_host_spends_one_budget(tmp_path, monkeypatch):
    """Two processes with the default storage, like two gunicorn workers: every hit of one is
    a hit of the other's budget (each counting alone, two workers let twice the budget
    through)."""
    uri = default_app(tmp_path, monkeypatch).config["RATELIMIT_STORAGE_URI"]
    workers = multiprocessing.get_context("spawn")
    start = workers.Barrier(2)
    processes = [workers.Process(target=hit_from_another_process,
                                 args=(uri, "event:evt-x:address:127.0.0.1", 200, start))
                 for _ in range(2)]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    assert [process.exitcode for process in processes] == [0, 0]
    assert storage_from_string(uri).get("event:evt-x:address:127.0.0.1") == 400


def open_and_hit(uri: str, start) -> None:
    """What a gunicorn worker does on its first request: open the counters' file, count."""
    counters = storage_from_string(uri)
    start.wait()
    counters.incr("address:127.0.0.1", 3600)


@pytest.mark.slow  # a gunicorn with many workers: about 8 s
def test_workers_starting_together_all_open_a_new_file(tmp_path):
    """Workers that start together race to set up a new file; every one of them must count (the
    switch to WAL mode once answered one of them "database is locked" at once, about one worker
    in a hundred)."""
    workers = multiprocessing.get_context("fork")
    exit_codes = []
    for attempt in range(12):
        uri = f"host://{tmp_path / str(attempt) / 'rate-limits.sqlite'}"
        start = workers.Barrier(8)
        processes = [workers.Process(target=open_and_hit, args=(uri, start)) for _ in range(8)]
        for process in processes:
            process.start()
        for process in processes:
            process.join()
        exit_codes += [process.exitcode for process in processes]
        assert storage_from_string(uri).get("address:127.0.0.1") == exit_codes[-8:].count(0)
    assert exit_codes == [0] * len(exit_codes)
