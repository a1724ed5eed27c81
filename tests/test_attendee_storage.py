"""The `Storage` promises of an event's attendee list (`storage.attendees`), on both backends:
what a search matches, what is counted, and that the batches of an export hold every
attendee once, in order, even those who registered in the same second."""

from __future__ import annotations

from datetime import timedelta

import pytest
from helpers import query_database
from test_storage_contract import EVENT
from test_storage_contract import NOW
from test_storage_contract import backend  # noqa: F401 - the fixture
from test_storage_contract import opened

from webapp.storage import Registration
from webapp.storage import Storage
from webapp.storage.sqlite import to_text

pytestmark = pytest.mark.both_backends


def enrol(storage: Storage, names: list[str], state: str = "active", seconds: int = 1,
          event_id: str = EVENT.id) -> list[str]:
    """Register people named `names`, `seconds` apart (0: all in one second): their ids."""
    ids = []
    for number, name in enumerate(names):
        visitor_id = f"visitor-{event_id}-{state}-{number}"
        storage.create_visitor(visitor_id, NOW, NOW + timedelta(days=1))
        registration_id = f"reg-{state}-{number:04d}"
        storage.create_registration(Registration(
            id=registration_id, event_id=event_id, visitor_id=visitor_id,
            attendee_name=name, email=f"{state}{number}@Example.com", state=state,
            created_at=NOW + timedelta(seconds=number * seconds), event_title=EVENT.title,
            event_starts_at=EVENT.starts_at))
        ids.append(registration_id)
    return ids


def names(storage: Storage, text: str | None, limit: int = 50, offset: int = 0
          ) -> tuple[list[str], int]:
    found = storage.attendee_page(EVENT.id, text, limit=limit, offset=offset)
    return [attendee.name for attendee in found.attendees], found.matches


def test_a_search_matches_a_part_of_a_name_or_address_whatever_its_case(backend):  # noqa: F811
    with opened(backend) as storage:
        enrol(storage, ["王小明", "Ann Lee", "ANNA", "x_y", "50%", "Bob"])
        assert names(storage, None) == (["王小明", "Ann Lee", "ANNA", "x_y", "50%", "Bob"], 6)
        assert names(storage, "小明") == (["王小明"], 1)
        assert names(storage, "ann") == (["Ann Lee", "ANNA"], 2)
        assert names(storage, "ACTIVE5@example") == (["Bob"], 1)
        assert names(storage, "_") == (["x_y"], 1)  # LIKE's wildcards match as typed
        assert names(storage, "%") == (["50%"], 1)
        assert names(storage, "nobody") == ([], 0)
        assert names(storage, None, limit=2, offset=2) == (["ANNA", "x_y"], 6)
        assert names(storage, "a", limit=1, offset=1)[1] == 6  # every address holds an "a"


def test_counts_and_check_ins(backend, database_setting):  # noqa: F811
    with opened(backend) as storage:
        active = enrol(storage, ["Ann", "Bob", "Cy"])
        enrol(storage, ["Dee"], state="cancelled")
        assert storage.attendee_counts(EVENT.id).registered == 3
        query_database(database_setting,
                       "INSERT INTO check_ins (registration_id, event_id, checked_in_at, "
                       "checked_in_by) VALUES (?, ?, ?, ?) RETURNING event_id",
                       (active[1], EVENT.id, to_text(NOW + timedelta(hours=1)), "acc-door"))
        counts = storage.attendee_counts(EVENT.id)
        assert (counts.registered, counts.cancelled, counts.checked_in) == (3, 1, 1)
        page = storage.attendee_page(EVENT.id, None, limit=10, offset=0).attendees
        # Dee registered in Ann's second, after her by id.
        assert [attendee.name for attendee in page] == ["Ann", "Dee", "Bob", "Cy"]
        assert [attendee.checked_in_at for attendee in page] == [
            None, None, NOW + timedelta(hours=1), None]
        assert [attendee.state for attendee in page] == [
            "active", "cancelled", "active", "active"]
        assert storage.attendee_counts("evt-nowhere").registered == 0


@pytest.mark.parametrize("count", [0, 9, 10, 23])
def test_batches_hold_every_attendee_once_in_order(backend, count):  # noqa: F811
    """Keyset batches of 5 over attendees who all registered in one second (their ids settle
    the order), whatever the count's remainder."""
    with opened(backend) as storage:
        ids = enrol(storage, [f"Person {number}" for number in range(count)], seconds=0)
        batches = list(storage.attendee_batches(EVENT.id, 5))
        assert [len(batch) for batch in batches] == [5] * (count // 5) + (
            [count % 5] if count % 5 else [])
        assert [attendee.registration_id for batch in batches for attendee in batch] == ids
