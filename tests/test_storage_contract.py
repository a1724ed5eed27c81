"""The `Storage` promises, tested once and run against both backends (SQLite, PostgreSQL).

Each race starts its contenders together (a barrier), each on a connection of its own as
separate requests (or hosts) would be, and counts outcomes: never a timing.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from contextlib import suppress
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
from webapp.storage import Organization
from webapp.storage import Registration
from webapp.storage import RegistrationCheck
from webapp.storage import Storage
from webapp.storage import StorageError
from webapp.storage import WaitlistEntry
from webapp.storage import postgres
from webapp.storage import postings
from webapp.storage.backends import Backend
from webapp.storage.backends import backend_for
from webapp.storage.shared import terms_of

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
            confirmation = storage.get_confirmation("hash-1", for_update=True)
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
            found = storage.get_registration("reg-0", for_update=True)
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
    with opened(backend) as storage:
        someone = visitor(storage, 1)
        storage.create_registration(registration(someone, 1))
        with pytest.raises(StorageError):
            storage.create_registration(registration(someone, 2))
        assert storage.active_registration(someone, EVENT.id) is not None


def test_an_email_address_is_registered_in_any_case_until_cancelled(backend):
    with opened(backend) as storage:
        someone, other = visitor(storage, 1), visitor(storage, 2)

        def taken(email: str) -> bool:
            return storage.registration_check(other, EVENT.id, email).email_taken

        assert taken("p1@example.com") is False
        storage.create_registration(registration(someone, 1))
        assert taken("p1@example.com") is True
        assert taken("P1@Example.COM") is True  # kept before addresses were in lower case
        assert taken("p2@example.com") is False
        storage.cancel_registration("reg-1", NOW)
        assert taken("p1@example.com") is False


def test_the_registration_check_finds_the_visitors_own_active_registration(backend):
    with opened(backend) as storage:
        someone, other = visitor(storage, 1), visitor(storage, 2)
        assert storage.registration_check(someone, EVENT.id, "new@example.com") == (
            RegistrationCheck(visitor_registration=None, email_taken=False, waiting_entry=None))
        storage.create_registration(registration(someone, 1))
        mine = storage.registration_check(someone, EVENT.id, "new@example.com")
        assert mine == RegistrationCheck(
            visitor_registration=storage.active_registration(someone, EVENT.id),
            email_taken=False, waiting_entry=None)
        assert mine.visitor_registration is not None
        assert mine.visitor_registration.event_title == EVENT.title
        assert storage.registration_check(other, EVENT.id, "new@example.com") == (
            RegistrationCheck(visitor_registration=None, email_taken=False, waiting_entry=None))
        storage.cancel_registration("reg-1", NOW)
        assert storage.registration_check(someone, EVENT.id, "p1@example.com") == (
            RegistrationCheck(visitor_registration=None, email_taken=False, waiting_entry=None))


def test_the_registration_check_finds_the_visitors_live_place_in_line(backend):
    with opened(backend) as storage:
        entry = waiter(storage, 1)
        check = storage.registration_check(entry.visitor_id, EVENT.id, "new@example.com")
        assert check.waiting_entry == entry.id
        assert storage.registration_check(visitor(storage, 2), EVENT.id,
                                          "new@example.com").waiting_entry is None
        assert storage.end_waitlist_entry(entry.id, "left", NOW)
        assert storage.registration_check(entry.visitor_id, EVENT.id,
                                          "new@example.com").waiting_entry is None


def waiter(storage: Storage, number: int) -> WaitlistEntry:
    """Visitor `number` at the end of EVENT's line."""
    entry = WaitlistEntry(id=f"wait-{number:08}", event_id=EVENT.id,
                          visitor_id=visitor(storage, number), attendee_name=f"Person {number}",
                          email=f"p{number}@example.com", state="waiting",
                          joined_at=NOW + timedelta(seconds=number), event_title=EVENT.title,
                          event_starts_at=EVENT.starts_at, language="en")
    storage.join_waitlist(entry)
    return entry


def state_of(storage: Storage, entry_id: str) -> tuple[str, int | None]:
    """A place's state and position (while waiting)."""
    entry = storage.waitlist_entry(entry_id)
    assert entry is not None
    return entry.state, entry.position


def fill(storage: Storage) -> None:
    """EVENT's free seats all registered (visitors 100 and on)."""
    for number in range(100, 100 + EVENT.capacity - EVENT.held_seats):
        storage.create_registration(registration(visitor(storage, number), number))


def test_the_waitlist_keeps_its_order_and_counts_as_taken_seats(backend):
    with opened(backend) as storage:
        fill(storage)
        first, second = waiter(storage, 1), waiter(storage, 2)
        found = storage.live_waitlist_entry(second.visitor_id, EVENT.id)
        assert found == replace(second, position=2)
        assert [e.position for e in storage.visitor_waitlist(first.visitor_id)] == [1]
        with pytest.raises(StorageError):  # one place in line per visitor and event
            storage.join_waitlist(replace(first, id="wait-again-1"))
        assert seats_taken(storage) == EVENT.capacity + 2  # the waiting claim the next seats
        assert storage.availability([EVENT.id])[EVENT.id].seats_taken == EVENT.capacity + 2
        assert storage.events_waited_for(NOW) == [EVENT.id]
        assert storage.events_waited_for(EVENT.starts_at) == []


def test_availability_says_whether_each_event_takes_a_waitlist_in_one_statement(
        backend, monkeypatch):
    """The cards' read stays a single statement however many events a page shows: the
    waitlist's flag is one more column of it, not a query per card."""
    waits = replace(EVENT, id="evt-contract-waits", waitlist=True)
    with opened(backend) as storage:
        storage.import_events([waits])
        statements: list[str] = []

        def counted(run: Callable[[str, dict[str, Any]], Any]) -> Callable[..., Any]:
            def counting(sql: str, params: dict[str, Any]) -> Any:
                statements.append(sql)
                return run(sql, params)
            return counting

        for name in ("_rows", "_one", "_run"):
            monkeypatch.setattr(storage, name, counted(getattr(storage, name)))
        seats = storage.availability([EVENT.id, waits.id])
    assert len(statements) == 1
    assert (seats[EVENT.id].waitlist, seats[waits.id].waitlist) == (False, True)


def test_passing_on_offers_only_free_seats_in_line_and_expires_ended_offers(backend):
    hold = NOW + timedelta(hours=24)
    with opened(backend) as storage:
        fill(storage)
        first, second, third = (waiter(storage, number) for number in (1, 2, 3))
        with storage.transaction():
            assert storage.pass_on_seats(EVENT.id, NOW, hold) == []  # no seat is free
        storage.cancel_registration("reg-100", NOW)
        storage.cancel_registration("reg-101", NOW)
        with storage.transaction():
            offered = storage.pass_on_seats(EVENT.id, NOW, hold)
        assert [(e.id, e.state, e.offer_ends_at) for e in offered] == [
            (first.id, "offered", hold), (second.id, "offered", hold)]
        assert state_of(storage, third.id) == ("waiting", 1)
        assert storage.end_waitlist_entry(first.id, "declined", NOW) is True
        assert storage.end_waitlist_entry(first.id, "declined", NOW) is False
        with storage.transaction():
            assert [e.id for e in storage.pass_on_seats(EVENT.id, hold, None)] == []
        # Out of time, the second offer expired (registration closed: None, nothing offered).
        assert state_of(storage, second.id) == ("expired", None)
        assert state_of(storage, third.id) == ("waiting", 1)
        with storage.transaction():
            later = storage.pass_on_seats(EVENT.id, hold, hold + timedelta(hours=1))
        assert [e.id for e in later] == [third.id]


def test_passing_on_at_once_offers_each_seat_once(backend):
    with opened(backend) as storage:
        fill(storage)
        for number in range(1, 6):
            waiter(storage, number)
        for number in (100, 101, 102):
            storage.cancel_registration(f"reg-{number}", NOW)

    def pass_on(storage: Storage) -> int:
        with storage.transaction():
            storage.get_event(EVENT.id, for_update=True)
            return len(storage.pass_on_seats(EVENT.id, NOW, NOW + timedelta(hours=1)))

    offered = race(backend, pass_on)
    assert sum(offered) == 3
    with opened(backend) as storage:
        assert seats_taken(storage) == EVENT.capacity + 2
        states = [state_of(storage, f"wait-{number:08}")[0] for number in range(1, 6)]
        assert states == ["offered"] * 3 + ["waiting"] * 2


def test_a_failed_transaction_changes_nothing(backend):
    with opened(backend) as storage:
        someone = visitor(storage, 1)
        with pytest.raises(RuntimeError), storage.transaction():
            storage.create_registration(registration(someone, 1))
            raise RuntimeError("the action failed half-way")
        assert storage.active_registration(someone, EVENT.id) is None
        assert seats_taken(storage) == EVENT.held_seats


def test_a_transaction_inside_another_commits_with_it(backend):
    with opened(backend) as storage:
        someone = visitor(storage, 1)
        with pytest.raises(RuntimeError), storage.transaction():
            with storage.transaction():
                storage.create_registration(registration(someone, 1))
            assert storage.active_registration(someone, EVENT.id) is not None
            raise RuntimeError("the outer one failed after the inner one ended")
        assert storage.active_registration(someone, EVENT.id) is None


def test_a_failed_transaction_inside_another_fails_it_even_when_caught(backend):
    with opened(backend) as storage:
        someone = visitor(storage, 1)
        with pytest.raises(StorageError), storage.transaction():
            storage.save_event(someone, EVENT.id, NOW)
            with suppress(RuntimeError), storage.transaction():
                storage.create_registration(registration(someone, 1))
                raise RuntimeError("the inner one failed, and its caller went on")
        assert storage.saved_events(someone) == []
        assert storage.active_registration(someone, EVENT.id) is None
        with storage.transaction():  # the next one starts clean
            storage.save_event(someone, EVENT.id, NOW)
        assert [event.id for event in storage.saved_events(someone)] == [EVENT.id]


def test_times_come_back_as_stored_to_the_second_in_utc(backend):
    with opened(backend) as storage:
        someone = visitor(storage, 1)
        storage.save_event(someone, EVENT.id, NOW)
        later = NOW + timedelta(days=2)
        moment = later + timedelta(microseconds=654321)
        assert storage.keep_visitor_alive(someone, NOW, moment.astimezone(TAIPEI))
        assert storage.visitor_expires_at(someone) == later
        event = storage.get_event(EVENT.id)
        assert event == EVENT
        assert event is not None and event.starts_at.tzinfo == UTC


def test_keeping_a_visitor_alive_extends_a_live_session_and_never_shortens_it(backend):
    with opened(backend) as storage:
        someone = visitor(storage, 1)  # alive until NOW + 1 day
        assert storage.keep_visitor_alive(someone, NOW, NOW + timedelta(hours=1))
        assert storage.visitor_expires_at(someone) == NOW + timedelta(days=1)  # not shortened
        assert storage.keep_visitor_alive(someone, NOW, NOW + timedelta(days=3))
        assert storage.visitor_expires_at(someone) == NOW + timedelta(days=3)
        # At the moment it ends (or after), and for nobody, nothing is extended.
        ended = NOW + timedelta(days=3)
        assert not storage.keep_visitor_alive(someone, ended, ended + timedelta(days=1))
        assert storage.visitor_expires_at(someone) == ended
        assert not storage.keep_visitor_alive("visitor-nobody", NOW, NOW + timedelta(days=1))
        assert storage.visitor_expires_at("visitor-nobody") is None


def test_an_event_keeps_its_price(backend):
    priced = replace(EVENT, id="evt-priced", price="paid", price_amount=1200,
                     price_currency="USD")
    with opened(backend) as storage:
        storage.import_events([priced])
        assert storage.get_event(priced.id) == priced
        assert storage.get_event(EVENT.id) == EVENT  # no amount, the default currency


def test_an_event_is_run_by_the_organization_it_is_given_to(backend):
    with opened(backend) as storage:
        with storage.transaction():
            owner = storage.account_for("owner@example.com", "acc-owner", "visitor-owner", NOW)
        storage.create_organization(
            Organization(id="org-contract", name="合約聚會", description="", created_at=NOW),
            owner.id)
        assert storage.event_organization(EVENT.id) is None  # the site's own until given
        assert storage.set_event_organization(EVENT.id, "org-contract")
        assert storage.event_organization(EVENT.id) == "org-contract"
        assert not storage.set_event_organization("evt-nowhere", "org-contract")
        assert storage.event_organization("evt-nowhere") is None
        storage.import_events([EVENT])  # the site importing it again keeps who runs it
        assert storage.event_organization(EVENT.id) == "org-contract"


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
        storage.prune(NOW, NOW, NOW + timedelta(days=2), NOW, NOW, NOW)
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


# PostgreSQL reads a search's matches through the GIN index (every holder at once) or from
# the slot postings, batch after batch (`PostgresIndex._read_matches`): each way, forced by
# its thresholds, on the searches of the matrix that find the most, against SQLite.
COMMON_WORDS = ["community", "社群", "台北", "線上", "night", "c", "台", None]
READINGS = {
    # name: the index's few_holders and most_spans, postgres.SPANS_MARGIN, and the holders
    # the counts expect (None: as they say)
    "every holder": (10**9, 0, 1.5, None),
    "postings, one batch": (0, 10**9, 10**9, None),
    "postings, batch after batch": (0, 10**9, 0.01, None),
    # The counts far off (as for words rarely written together): the postings are read
    # first, and the matches seen in the first spans send the rest to the GIN index.
    "postings, then every holder": (0, 4, 1.5, 10.0**9),
}


def common_searches() -> Iterator[tuple[EventQuery, tuple[int, int]]]:
    """Common words × every filter set × both date ranges, a page deep enough to need several
    spans of the postings."""
    for text, filters, (starts_from, starts_before) in product(COMMON_WORDS, FILTERS, RANGES):
        yield EventQuery(starts_after=NOW, text=text, starts_from=starts_from,
                         starts_before=starts_before, **filters), (10, 20)


@pytest.fixture(scope="module")
def sqlite_answers(both_filled) -> dict[tuple[EventQuery, int], tuple[list[str], int, bool, bool]]:
    """SQLite's answer to each common search, capped at 50 (asked once for every reading)."""
    return {(query, 50): answer(both_filled["sqlite"], query, page, 50)
            for query, page in common_searches()}


@pytest.mark.parametrize("reading", READINGS)
def test_postgresql_answers_alike_whichever_way_it_reads(both_filled, sqlite_answers, reading,
                                                         tally, monkeypatch):
    """Every holder through the GIN index; the postings in one batch; in batches growing
    from two spans to the last one (or the date range's end); and the postings given up for
    every holder after the spans read say the rest is too sparse: each way is taken, and
    each answers every common search as SQLite does."""
    postgresql = both_filled["postgresql"]
    index = postgresql.index
    few_holders, most_spans, margin, expected = READINGS[reading]
    monkeypatch.setattr(index, "few_holders", few_holders)
    monkeypatch.setattr(index, "most_spans", most_spans)
    monkeypatch.setattr(postgres, "SPANS_MARGIN", margin)
    if expected is not None:
        monkeypatch.setattr(postgres, "expected_holders", lambda plan: expected)
    batches = every_holder = 0
    searches = []
    read_batch, read_keys = index.postings.read, index._keys

    def batch(*args: Any) -> Any:
        nonlocal batches
        batches += 1
        return read_batch(*args)

    def keys(*args: Any) -> Any:
        nonlocal every_holder
        every_holder += 1
        return read_keys(*args)

    monkeypatch.setattr(index.postings, "read", batch)
    monkeypatch.setattr(index, "_keys", keys)
    differences = []
    for query, page in common_searches():
        batches = every_holder = 0
        found = answer(postgresql, query, page, 50)
        searches.append((batches, every_holder))
        tally["searches compared"] += 1
        if found != sqlite_answers[query, 50]:
            differences.append((query, found, sqlite_answers[query, 50]))
    assert differences == []
    read = {"every holder": sum(holders and not spans for spans, holders in searches),
            "postings, one batch": sum(spans == 1 and not holders for spans, holders in searches),
            "postings, batch after batch": sum(spans > 2 and not holders
                                               for spans, holders in searches),
            "postings, then every holder": sum(spans and holders for spans, holders in searches)}
    assert read[reading] > len(searches) / 4, read


def test_a_search_after_a_write_counts_its_terms_again(backend):
    """A storage may keep the term counts a search read (PostgreSQL does, for the searches a
    request makes after finding nothing): a write through it must not leave them stale."""
    with opened(backend) as storage:
        query = EventQuery(starts_after=NOW, text="Zephyrine 澤菲琳")
        assert answer(storage, query, (10, 0), 50) == ([], 0, False, False)
        written = replace(EVENT, id="evt-zephyrine", title="Zephyrine 澤菲琳 night",
                          starts_at=NOW + timedelta(days=2))
        storage.add_events([written])
        assert answer(storage, query, (10, 0), 50) == (["evt-zephyrine"], 1, False, False)


@pytest.mark.parametrize("first_place", [None, "kaohsiung"])
def test_a_search_sees_what_another_process_wrote_after_its_terms_were_counted(
        backend, first_place, monkeypatch):
    """A process may remember the term counts its searches read (PostgreSQL does, for every
    connection of the process): an event another process (or host) writes is found all the
    same by the next request, whether the counts said no event held the word (none found
    before) or only events elsewhere (one found before, in Kaohsiung)."""
    query = EventQuery(starts_after=NOW, text="Quillon 鵲翎")
    with opened(backend) as writer:
        if first_place:
            writer.add_events([replace(EVENT, id="evt-quillon", title="Quillon 鵲翎 talk",
                                       location=first_place, starts_at=NOW + timedelta(days=4))])
        with opened(backend) as request:
            assert answer(request, query, (10, 0), 50)[0] == (["evt-quillon"] if first_place
                                                               else [])
        with monkeypatch.context() as elsewhere:
            # Written as another process would: what this one remembers is left as it was.
            elsewhere.setattr(postgres.REMEMBERED, "forget", lambda: None)
            writer.add_events([replace(EVENT, id="evt-quillon-taipei", title="Quillon 鵲翎 night",
                                       starts_at=NOW + timedelta(days=2))])
    with opened(backend) as next_request:
        found = answer(next_request, query, (10, 0), 50)
    expected = ["evt-quillon-taipei", *(["evt-quillon"] if first_place else [])]
    assert found == (expected, len(expected), False, False)


def span_length(conn: Any) -> int:
    """How many keys a span of the postings holds."""
    row = conn.execute("SELECT span_keys FROM search_index").fetchone()
    assert row is not None and row["span_keys"]  # the postings are built
    return int(row["span_keys"])


def posted_keys(conn: Any, term: str) -> set[int]:
    """The keys of the events the slot postings say hold `term`."""
    span_keys = span_length(conn)
    rows = conn.execute("SELECT p.span, p.slots, s.packed FROM search_postings p "
                        "JOIN search_spans s USING (span) WHERE p.term = %s", [term]).fetchall()
    return {key for row in rows for key in postings.matching_keys(
        [0, row["span"], row["slots"], row["packed"]], 1, span_keys)}


def slotted_keys(conn: Any) -> list[int]:
    """The keys holding a slot in the spans of the postings, span by span."""
    span_keys = span_length(conn)
    return [key for row in conn.execute("SELECT span, packed FROM search_spans ORDER BY span")
            for key in postings.unpacked_keys(row["packed"], row["span"] * span_keys)
            if key != postings.FREE]


class RolledBack(Exception):
    """Ends a test's transaction without committing it."""


def test_postgresql_postings_follow_every_write_of_a_transaction(both_filled, monkeypatch):
    """Events added, one's words changed, one moved to another span, one taken out of the
    index: in the same transaction, each stored event holds one slot, each of their terms'
    postings holds exactly the events whose rows hold it, and every search reads the same
    from the postings as through the GIN index alone."""
    postgresql = both_filled["postgresql"]
    index = postgresql.index
    layout = index.postings.layout()
    assert layout is not None
    span_keys = layout.span_keys
    added = [replace(EVENT, id=f"evt-written-{number}", title=f"Community night 寫入 {number}",
                     starts_at=NOW + timedelta(days=3 + number)) for number in range(4)]
    edited = replace(added[0], title="Workshop 改寫")
    moved = replace(added[1], starts_at=added[1].starts_at + timedelta(seconds=3 * span_keys
                                                                       // 1024))
    conn = postgresql.conn
    with pytest.raises(RolledBack), postgresql.transaction():
        postgresql.import_events(added)
        postgresql.import_events([edited, moved])
        gone = conn.execute("SELECT search_key, terms FROM events WHERE id = %s",
                            [added[2].id]).fetchone()
        conn.execute("SELECT pg_advisory_xact_lock(%s)", [postgres.CATALOG_LOCK])
        index.remove([(gone["search_key"], gone["terms"])])
        conn.execute("DELETE FROM events WHERE id = %s", [added[2].id])

        # Each stored event holds one slot, and no other key does.
        assert sorted(slotted_keys(conn)) == [row["search_key"] for row in conn.execute(
            "SELECT search_key FROM events ORDER BY search_key")]
        touched = {term for event in added + [edited, moved] for term in terms_of(event)}
        wrong = [term for term in sorted(touched) if posted_keys(conn, term) != {
            row["search_key"] for row in conn.execute(
                "SELECT search_key FROM events WHERE terms @> ARRAY[%s]::text[]", [term])}]
        assert wrong == []
        assert answer(postgresql, EventQuery(starts_after=NOW, text="改寫"), (10, 0), 50)[0] == [
            edited.id]

        def read(few_holders: int, most_spans: int) -> list[Any]:
            monkeypatch.setattr(index, "few_holders", few_holders)
            monkeypatch.setattr(index, "most_spans", most_spans)
            return [answer(postgresql, query, page, 50) for query, page in common_searches()]

        assert read(0, 10**9) == read(10**9, 0)
        raise RolledBack
    assert postgresql.get_event(added[3].id) is None


def test_a_bulk_load_posts_events_given_out_of_time_order_as_their_rows_hold_them(
        postgres_database):
    """Events loaded in batches that each cover the whole calendar (as a generator or an
    import gives them) are posted once the load ends: each holds one slot, in spans sized for
    the events stored, and each term's postings hold exactly the events whose rows hold it."""
    events = list(generate_events(400, seed=7, now=NOW, timezone=TAIPEI))
    filled = backend_for(fresh_schema(postgres_database), busy_timeout_ms=10_000, connections=1)
    filled.prepare(None)
    with closing(filled.open()) as storage:
        assert isinstance(storage, postgres.PostgresStorage)
        with storage.bulk_load():
            storage.add_events(events[1::2])
            storage.add_events(events[::2])
        conn = storage.conn
        keys = [row["search_key"] for row in conn.execute(
            "SELECT search_key FROM events ORDER BY search_key")]
        assert sorted(slotted_keys(conn)) == keys and len(keys) == len(events)
        layout = storage.index.postings.layout()
        assert layout is not None
        assert layout.span_keys == postings.span_keys_for(len(keys), keys[0], keys[-1])
        sampled = sorted({term for event in events[:12] for term in terms_of(event)})
        wrong = [term for term in sampled if posted_keys(conn, term) != {
            row["search_key"] for row in conn.execute(
                "SELECT search_key FROM events WHERE terms @> ARRAY[%s]::text[]", [term])}]
        assert sampled and wrong == []


def test_an_upgraded_postgresql_database_gets_the_postings_of_its_events(postgres_database):
    """A database from before the slot postings, holding events, gets them by migrating:
    its searches then read the postings and find what the GIN index finds."""
    url = fresh_schema(postgres_database)
    postgres.PostgresStorage.prepare(url)
    with closing(postgres.PostgresStorage.open(url)) as storage:
        storage.add_events(generate_events(80, seed=3, now=NOW, timezone=TAIPEI))
        # As the release before them left it.
        storage.conn.execute("DROP TABLE search_spans, search_postings")
        storage.conn.execute("ALTER TABLE search_index DROP COLUMN span_keys")
        storage.conn.execute("DELETE FROM schema_migrations WHERE name IN "
                             "('007_search_postings', '019_search_spans_uncompressed')")
    postgres.PostgresStorage.prepare(url)
    with closing(postgres.PostgresStorage.open(url)) as storage:
        for text in (None, "c"):
            query = EventQuery(starts_after=NOW, text=text)
            storage.index.few_holders, storage.index.most_spans = 10**9, 0
            by_gin = answer(storage, query, (10, 0), 50)
            storage.index.few_holders, storage.index.most_spans = 0, 10**9
            assert "slot postings" in storage.explain_search(query, 10, 50)[0]
            assert answer(storage, query, (10, 0), 50) == by_gin
            assert by_gin[1] > 10


COMPRESSED_SPANS = ("SELECT count(*) AS spans FROM search_spans "
                    "WHERE pg_column_size(packed) < octet_length(packed)")


def compressed_spans(storage: postgres.PostgresStorage) -> int:
    """How many of the storage's spans are kept compressed."""
    row = storage.conn.execute(COMPRESSED_SPANS).fetchone()
    assert row is not None  # an aggregate's one row
    return int(row["spans"])


def test_an_upgraded_postgresql_database_keeps_its_spans_uncompressed(postgres_database):
    """Spans written compressed, as before migration 019, are written again uncompressed (a
    search no longer waits for the server to inflate them) and read the same."""
    url = fresh_schema(postgres_database)
    postgres.PostgresStorage.prepare(url)
    query = EventQuery(starts_after=NOW, text="c")
    with closing(postgres.PostgresStorage.open(url)) as storage:
        storage.add_events(generate_events(400, seed=5, now=NOW, timezone=TAIPEI))
        storage.index.few_holders, storage.index.most_spans = 0, 10**9
        found = answer(storage, query, (10, 0), 50)
        assert compressed_spans(storage) == 0
        # As the release before it left them: PostgreSQL's default, compressed. The sample's
        # spans are too short to be (a few keys each): each gets 2 000 free slots more
        # (never a match), 8 KB that compress.
        storage.conn.execute("ALTER TABLE search_spans ALTER COLUMN packed SET STORAGE EXTENDED")
        storage.conn.execute("UPDATE search_spans SET packed = packed || "
                             "decode(repeat('ff', 8000), 'hex')")
        assert compressed_spans(storage) > 0
        storage.conn.execute("DELETE FROM schema_migrations "
                             "WHERE name = '019_search_spans_uncompressed'")
    postgres.PostgresStorage.prepare(url)
    with closing(postgres.PostgresStorage.open(url)) as storage:
        assert compressed_spans(storage) == 0
        storage.index.few_holders, storage.index.most_spans = 0, 10**9
        assert "slot postings" in storage.explain_search(query, 10, 50)[0]
        assert answer(storage, query, (10, 0), 50) == found and found[1] > 10


def spans_keys(conn: Any) -> dict[int, list[int]]:
    """Each span of the postings' keys, slot by slot (`postings.FREE`: a free slot)."""
    span_keys = span_length(conn)
    return {row["span"]: postings.unpacked_keys(row["packed"], row["span"] * span_keys)
            for row in conn.execute("SELECT span, packed FROM search_spans")}


def test_an_upgraded_postgresql_database_gets_its_spans_keys_as_offsets(postgres_database):
    """Spans of 8-byte keys, as before migration 021, are written again as 4-byte offsets from
    their first key, a free slot (key 0) still free, and read the same."""
    url = fresh_schema(postgres_database)
    postgres.PostgresStorage.prepare(url)
    query = EventQuery(starts_after=NOW, text="c")
    with closing(postgres.PostgresStorage.open(url)) as storage:
        storage.add_events(generate_events(400, seed=5, now=NOW, timezone=TAIPEI))
        storage.index.few_holders, storage.index.most_spans = 0, 10**9
        found = answer(storage, query, (10, 0), 50)
        before = spans_keys(storage.conn)
        # As the release before it left them, each with a free slot at its end.
        for span, keys in before.items():
            storage.conn.execute("UPDATE search_spans SET packed = %s WHERE span = %s",
                                 [struct.pack(f">{len(keys) + 1}q", *keys, postings.FREE), span])
        storage.conn.execute("DELETE FROM schema_migrations "
                             "WHERE name = '021_search_span_offsets'")
    postgres.PostgresStorage.prepare(url)
    with closing(postgres.PostgresStorage.open(url)) as storage:
        assert spans_keys(storage.conn) == {span: [*keys, postings.FREE]
                                            for span, keys in before.items()}
        storage.index.few_holders, storage.index.most_spans = 0, 10**9
        assert "slot postings" in storage.explain_search(query, 10, 50)[0]
        assert answer(storage, query, (10, 0), 50) == found and found[1] > 10


def summarize(counts) -> str:
    return (f"storage contract: {counts['searches compared']} searches compared on both "
            f"backends, {counts['seats raced']} confirmations raced")
