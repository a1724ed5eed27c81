"""The `Storage` promises, tested once and run against both backends (SQLite, PostgreSQL).

Each race starts its contenders together (a barrier), each on a connection of its own as
separate requests (or hosts) would be, and counts outcomes: never a timing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC
from datetime import timedelta
from itertools import product
from typing import Any
from typing import TypeVar
from zoneinfo import ZoneInfo

import pytest
from helpers import query_database
from services import fresh_schema
from suite_clock import suite_start

from webapp.datasets.synthetic import generate_events
from webapp.storage import Confirmation
from webapp.storage import Event
from webapp.storage import EventQuery
from webapp.storage import Registration
from webapp.storage import Storage
from webapp.storage import postgres
from webapp.storage.backends import Backend
from webapp.storage.backends import backend_for

pytestmark = pytest.mark.both_backends

NOW = suite_start().astimezone(UTC).replace(microsecond=0)
TAIPEI = ZoneInfo("Asia/Taipei")
CONTENDERS = 16
T = TypeVar("T")

EVENT = Event(id="evt-contract", title="Contract 合約 Meetup", summary="Seats under races.",
              description="", starts_at=NOW + timedelta(days=10),
              ends_at=NOW + timedelta(days=10, hours=2), location="taipei", venue="Hall",
              price="free", level="beginner", capacity=5, held_seats=1,
              registration_deadline=NOW + timedelta(days=9))


@pytest.fixture
def backend(database_setting) -> Iterator[Backend]:
    """A new, empty database of the test's backend holding EVENT."""
    found = backend_for(database_setting, busy_timeout_ms=10_000, connections=CONTENDERS)
    found.prepare(None)
    with opened(found) as storage:
        storage.import_events([EVENT])
    yield found
    found.close()


class opened:  # noqa: N801 - used as a context manager, like open()
    """A storage of its own on `backend`, closed at the end of the block."""

    def __init__(self, backend: Backend):
        self.storage = backend.open()

    def __enter__(self) -> Storage:
        return self.storage

    def __exit__(self, *exc: object) -> None:
        self.storage.close()


def race(backend: Backend, attempt: Callable[[Storage], T]) -> list[T]:
    """`attempt` by CONTENDERS connections at once; their results."""
    start = threading.Barrier(CONTENDERS)

    def contender(_: int) -> T:
        with opened(backend) as storage:
            start.wait()
            return attempt(storage)

    with ThreadPoolExecutor(max_workers=CONTENDERS) as pool:
        return list(pool.map(contender, range(CONTENDERS)))


def visitor(storage: Storage, number: int) -> str:
    visitor_id = f"visitor-{number}"
    storage.create_visitor(visitor_id, NOW, NOW + timedelta(days=1))
    return visitor_id


def registration(visitor_id: str, number: int) -> Registration:
    return Registration(id=f"reg-{number}", event_id=EVENT.id, visitor_id=visitor_id,
                        attendee_name=f"Person {number}", email=f"p{number}@example.com",
                        state="active", created_at=NOW, event_title=EVENT.title,
                        event_starts_at=EVENT.starts_at)


def seats_taken(storage: Storage) -> int:
    event = storage.get_event(EVENT.id, count_seats=True)
    assert event is not None and event.seats_taken is not None
    return event.seats_taken


def test_saving_is_idempotent(backend):
    with opened(backend) as storage:
        someone = visitor(storage, 1)
        assert storage.save_event(someone, EVENT.id, NOW) is True
        assert storage.save_event(someone, EVENT.id, NOW + timedelta(minutes=1)) is False
        assert [event.id for event in storage.saved_events(someone)] == [EVENT.id]
        assert storage.remove_saved_event(someone, EVENT.id) is True
        assert storage.remove_saved_event(someone, EVENT.id) is False
        assert storage.saved_events(someone) == []


def test_saving_the_same_event_at_once_saves_it_once(backend):
    with opened(backend) as storage:
        someone = visitor(storage, 1)
    saved = race(backend, lambda storage: storage.save_event(someone, EVENT.id, NOW))
    assert saved.count(True) == 1 and saved.count(False) == CONTENDERS - 1
    with opened(backend) as storage:
        assert [event.id for event in storage.saved_events(someone)] == [EVENT.id]


def test_seats_are_never_oversold_when_everyone_confirms_at_once(backend, tally):
    with opened(backend) as storage:
        visitors = [visitor(storage, number) for number in range(CONTENDERS)]
    numbers = iter(range(CONTENDERS))
    lock = threading.Lock()

    def confirm(storage: Storage) -> bool:
        with lock:
            number = next(numbers)
        with storage.transaction():
            event = storage.get_event(EVENT.id, count_seats=True, for_update=True)
            assert event is not None and event.remaining_seats is not None
            if event.remaining_seats == 0:
                return False
            storage.create_registration(registration(visitors[number], number))
            return True

    registered = race(backend, confirm)
    free = EVENT.capacity - EVENT.held_seats
    tally["seats raced"] += CONTENDERS
    assert registered.count(True) == free, f"{registered.count(True)} took {free} seats"
    with opened(backend) as storage:
        assert seats_taken(storage) == EVENT.capacity


def test_a_token_is_spent_once_however_many_race_for_it(backend):
    with opened(backend) as storage:
        someone = visitor(storage, 1)
        storage.create_confirmation(Confirmation(
            token_hash="hash-1", visitor_id=someone, action="confirm_registration",
            target_id=EVENT.id, created_at=NOW, expires_at=NOW + timedelta(minutes=15),
            payload={"attendeeName": "陳小明", "email": "ming@example.com"}))

    def spend(storage: Storage) -> bool:
        with storage.transaction():
            confirmation = storage.get_confirmation("hash-1")
            assert confirmation is not None
            if confirmation.used_at is not None:
                return False
            storage.use_confirmation("hash-1", NOW)
            return True

    spent = race(backend, spend)
    assert spent.count(True) == 1
    with opened(backend) as storage:
        confirmation = storage.get_confirmation("hash-1")
        assert confirmation is not None and confirmation.used_at == NOW
        assert confirmation.payload == {"attendeeName": "陳小明", "email": "ming@example.com"}
        assert storage.pending_confirmations(someone, NOW) == []


def test_cancelling_at_once_frees_exactly_one_seat(backend):
    with opened(backend) as storage:
        for number in range(2):
            storage.create_registration(registration(visitor(storage, number), number))
        before = seats_taken(storage)

    def cancel(storage: Storage) -> bool:
        with storage.transaction():
            found = storage.get_registration("reg-0")
            assert found is not None
            if found.state != "active":
                return False
            storage.cancel_registration(found.id, NOW)
            return True

    cancelled = race(backend, cancel)
    assert cancelled.count(True) == 1
    with opened(backend) as storage:
        assert seats_taken(storage) == before - 1
        found = storage.get_registration("reg-0")
        assert found is not None and found.state == "cancelled" and found.cancelled_at == NOW
        assert [r.state for r in storage.visitor_registrations("visitor-0")] == ["cancelled"]


def test_one_active_registration_per_visitor_and_event(backend):
    from webapp.storage import StorageError

    with opened(backend) as storage:
        someone = visitor(storage, 1)
        storage.create_registration(registration(someone, 1))
        with pytest.raises(StorageError):
            storage.create_registration(registration(someone, 2))
        assert storage.active_registration(someone, EVENT.id) is not None


def test_an_email_address_is_registered_in_any_case_until_cancelled(backend):
    with opened(backend) as storage:
        someone = visitor(storage, 1)
        assert storage.email_registered(EVENT.id, "p1@example.com") is False
        storage.create_registration(registration(someone, 1))
        assert storage.email_registered(EVENT.id, "p1@example.com") is True
        assert storage.email_registered(EVENT.id, "P1@Example.COM") is True  # kept before
        assert storage.email_registered(EVENT.id, "p2@example.com") is False
        storage.cancel_registration("reg-1", NOW)
        assert storage.email_registered(EVENT.id, "p1@example.com") is False


def test_a_failed_transaction_changes_nothing(backend):
    with opened(backend) as storage:
        someone = visitor(storage, 1)
        with pytest.raises(RuntimeError), storage.transaction():
            storage.create_registration(registration(someone, 1))
            raise RuntimeError("the action failed half-way")
        assert storage.active_registration(someone, EVENT.id) is None
        assert seats_taken(storage) == EVENT.held_seats


def test_times_come_back_as_stored_to_the_second_in_utc(backend):
    with opened(backend) as storage:
        someone = visitor(storage, 1)
        storage.save_event(someone, EVENT.id, NOW)
        moment = NOW + timedelta(microseconds=654321)
        storage.extend_visitor(someone, moment.astimezone(TAIPEI))
        assert storage.visitor_expires_at(someone) == NOW
        event = storage.get_event(EVENT.id)
        assert event == EVENT
        assert event is not None and event.starts_at.tzinfo == UTC


def test_an_event_keeps_its_price(backend):
    priced = replace(EVENT, id="evt-priced", price="paid", price_amount=1200,
                     price_currency="USD")
    with opened(backend) as storage:
        storage.import_events([priced])
        assert storage.get_event(priced.id) == priced
        assert storage.get_event(EVENT.id) == EVENT  # no amount, the default currency


def test_a_new_calendar_feed_replaces_the_old_and_goes_with_its_visitor(backend):
    with opened(backend) as storage:
        someone = visitor(storage, 1)
        assert storage.calendar_feed_since(someone) is None
        storage.set_calendar_feed(someone, "old-hash", NOW)
        storage.set_calendar_feed(someone, "new-hash", NOW + timedelta(minutes=5))
        assert storage.calendar_feed_owner("old-hash") is None
        assert storage.calendar_feed_owner("new-hash") == someone
        assert storage.calendar_feed_since(someone) == NOW + timedelta(minutes=5)
        assert storage.stop_calendar_feed(someone) is True
        assert storage.stop_calendar_feed(someone) is False
        storage.set_calendar_feed(someone, "kept-hash", NOW)
        storage.prune(NOW, NOW, NOW + timedelta(days=2), NOW)
        assert storage.calendar_feed_owner("kept-hash") is None


def test_a_carried_result_is_read_once(backend):
    with opened(backend) as storage:
        storage.keep_carried_result("key-hash", '{"token": "秘密"}', NOW + timedelta(minutes=10),
                                    NOW)
        assert storage.take_carried_result("no-such-hash", NOW) is None
        assert storage.take_carried_result("key-hash", NOW) == '{"token": "秘密"}'
        assert storage.take_carried_result("key-hash", NOW) is None


def test_an_expired_carried_result_gives_nothing_and_goes(backend, database_setting):
    with opened(backend) as storage:
        storage.keep_carried_result("late", "{}", NOW + timedelta(minutes=10), NOW)
        assert storage.take_carried_result("late", NOW + timedelta(minutes=10)) is None
        storage.keep_carried_result("left", "{}", NOW + timedelta(minutes=10), NOW)
        # Keeping another one later drops the one nobody took once it expired.
        storage.keep_carried_result("next", "{}", NOW + timedelta(minutes=30),
                                    NOW + timedelta(minutes=20))
    assert query_database(database_setting, "SELECT key_hash FROM carried_results") == [
        ("next",)]


def test_a_carried_result_goes_to_one_of_those_racing_for_it(backend):
    with opened(backend) as storage:
        storage.keep_carried_result("raced", '"body"', NOW + timedelta(minutes=10), NOW)
    taken = race(backend, lambda storage: storage.take_carried_result("raced", NOW))
    assert taken.count('"body"') == 1 and taken.count(None) == CONTENDERS - 1


def test_an_updated_event_is_found_by_its_new_words_only(backend):
    with opened(backend) as storage:
        storage.import_events([replace(EVENT, title="Renamed 改名 Meetup")])
        query = EventQuery(starts_after=NOW)
        assert [e.id for e in storage.search_events(replace(query, text="改名"), 10, 0, 100)
                .events] == [EVENT.id]
        assert storage.search_events(replace(query, text="合約"), 10, 0, 100).count == 0
        assert storage.count_events() == 1


# -- the same answers from both backends, on the same data --------------------------------

WORDS = ["community", "社群", "台北", "臺北", "線上", "python", "Python 工作坊", "資安",
         "提示注入", "night", "黑客松 資料科學", "communi", "c", "台", "AI 代理人", "ＡＩ",
         "haskell", "量子計算", "zzz", "!!!", None]
FILTERS: list[dict[str, Any]] = [
    {}, {"location": "kaohsiung"}, {"price": "paid"}, {"level": "advanced"},
    {"location": "taipei", "price": "free"}, {"price": "paid", "level": "intermediate"},
    {"location": "online", "price": "free", "level": "beginner"}]
RANGES = [(None, None), (NOW + timedelta(days=7), NOW + timedelta(days=37))]
PAGES = [(10, 0), (5, 20)]
GENERATED = 1500


@pytest.fixture(scope="module")
def both_filled(tmp_path_factory, postgres_database) -> Iterator[dict[str, Storage]]:
    """The same synthetic events in a SQLite file and in a PostgreSQL schema."""
    events = list(generate_events(GENERATED, seed=15, now=NOW, timezone=TAIPEI))
    settings = {"sqlite": str(tmp_path_factory.mktemp("contract") / "events.sqlite"),
                "postgresql": fresh_schema(postgres_database)}
    storages = {}
    for name, setting in settings.items():
        filled = backend_for(setting, busy_timeout_ms=10_000, connections=1)
        filled.prepare(None)
        storages[name] = filled.open()
        with storages[name].bulk_load():
            storages[name].add_events(events)
    yield storages
    for storage in storages.values():
        storage.close()


def answer(storage: Storage, query: EventQuery, page: tuple[int, int], cap: int
           ) -> tuple[list[str], int, bool, bool]:
    found = storage.search_events(query, limit=page[0], offset=page[1], count_cap=cap)
    return [event.id for event in found.events], found.count, found.count_capped, found.has_more


def every_search() -> Iterator[tuple[EventQuery, tuple[int, int]]]:
    """Every text × filter set × date range × page of the contract's matrix."""
    for text, filters, (starts_from, starts_before), page in product(WORDS, FILTERS, RANGES,
                                                                      PAGES):
        yield EventQuery(starts_after=NOW, text=text, starts_from=starts_from,
                         starts_before=starts_before, **filters), page


def compare_every_search(both_filled: dict[str, Storage], cap: int, tally) -> None:
    """The same events in the same order, the same capped count, on SQLite and on
    PostgreSQL, for every search of the matrix."""
    differences = []
    found_some = 0
    for query, page in every_search():
        answers = {name: answer(storage, query, page, cap)
                   for name, storage in both_filled.items()}
        tally["searches compared"] += 1
        found_some += answers["sqlite"][1] > 0
        if answers["sqlite"] != answers["postgresql"]:
            differences.append((query, page, answers))
    assert differences == []
    assert found_some > len(WORDS) * len(FILTERS), "the matrix must find events, not nothing"


@pytest.mark.slow  # every search of the matrix on both backends: 10 to 40 s
@pytest.mark.parametrize("cap", [50, 400])
def test_both_backends_answer_every_search_alike(both_filled, cap, tally):
    """Every text × filter set × date range × page: the same events in the same order, the
    same capped count, on SQLite and on PostgreSQL."""
    compare_every_search(both_filled, cap, tally)


@pytest.mark.slow  # windows far too small, every search: 15 to 25 s a cell
@pytest.mark.parametrize("cap", [50, 400])
@pytest.mark.parametrize(("walked_event_cost", "said"), [(10**9, "intersected with the holders"),
                                                         (0, "walked")])
def test_postgresql_reading_window_by_window_answers_alike(both_filled, cap, walked_event_cost,
                                                           said, tally, monkeypatch):
    """PostgreSQL reads the matches of many holders window by window of the key index, each
    window's keys intersected with the holders or walked; at 100 000 events only common
    words do, so here every search that can does, each way, its windows far too small
    (several windows, growing, to find a page): still SQLite's answers."""
    postgresql = both_filled["postgresql"]
    monkeypatch.setattr(postgresql.index, "read_whole_up_to", 0)
    monkeypatch.setattr(postgresql.index, "window_floor", 1)
    monkeypatch.setattr(postgresql.index, "widest_window", 1.0)
    monkeypatch.setattr(postgres, "WALKED_EVENT_IN_POSTINGS", walked_event_cost)
    # Windows sized for a fiftieth of the matches they should hold: read four times wider,
    # again and again, until a page and a capped count are found or the events end.
    monkeypatch.setattr(postgres, "WINDOW_MARGIN", 0.02)
    windowed = sum(said in "".join(postgresql.explain_search(query, page[0], cap)[:1])
                   for query, page in every_search())
    assert windowed > len(WORDS) * len(FILTERS) / 2, "many searches must read windows here"
    compare_every_search(both_filled, cap, tally)


def test_a_search_inside_a_transaction_leaves_the_planner_as_it_was(both_filled,
                                                                    monkeypatch):
    """A window's planner settings last until the transaction ends: inside another one,
    the search puts them back, so later statements of that transaction are planned as usual."""
    postgresql = both_filled["postgresql"]
    monkeypatch.setattr(postgresql.index, "read_whole_up_to", 0)
    monkeypatch.setattr(postgresql.index, "window_floor", 1)
    monkeypatch.setattr(postgres, "WALKED_EVENT_IN_POSTINGS", 0)  # walked: no bitmap scans
    query = EventQuery(starts_after=NOW, text="community")
    assert "walked" in postgresql.explain_search(query, 10, 50)[0]
    with postgresql.transaction() as conn:
        assert postgresql.search_events(query, 10, 0, 50).events
        assert conn.execute("SHOW enable_bitmapscan").fetchone()["enable_bitmapscan"] == "on"


def summarize(counts) -> str:
    return (f"storage contract: {counts['searches compared']} searches compared on both "
            f"backends, {counts['seats raced']} confirmations raced")
