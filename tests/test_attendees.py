"""An event's attendees in the organizer area (issue 30): the list, searched, paged and
counted, and its CSV export, streamed in batches; both audited. Run on both backends."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from urllib.parse import unquote
from zoneinfo import ZoneInfo

import pytest
from bs4 import BeautifulSoup
from helpers import one
from helpers import query_database
from test_organizers import account_id_of
from test_organizers import signed_in
from test_organizers import start

from webapp.domain import attendees as attendee_domain
from webapp.storage import Registration
from webapp.storage.connection import get_db

pytestmark = pytest.mark.both_backends

EVENT_ID = "evt-agent-testing"  # a sample event, given to the organization in each test
HOSTILE = ['=HYPERLINK("x")', "-1+1", "@SUM(A1)", "+886", "\tTab", "\rReturn"]


def run_event(app, organization_id: str) -> None:
    """Give the sample event to the organization."""
    with app.app_context():
        assert get_db().set_event_organization(EVENT_ID, organization_id)


def register(app, clock, names: list[str], state: str = "active") -> list[str]:
    """Register people for the event, one a minute from the clock's now: their ids."""
    ids = []
    with app.app_context():
        db = get_db()
        for number, name in enumerate(names):
            visitor_id = f"visitor-{state}-{number}-{len(names)}"
            db.create_visitor(visitor_id, clock(), clock() + timedelta(days=1))
            registration_id = f"reg-{state}{number:06d}-{len(names)}"
            db.create_registration(Registration(
                id=registration_id, event_id=EVENT_ID, visitor_id=visitor_id,
                attendee_name=name, email=f"person{number}.{state}@example.com", state=state,
                created_at=clock() + timedelta(minutes=number), event_title="",
                event_starts_at=clock()))
            ids.append(registration_id)
    return ids


def check_in(app, clock, registration_id: str) -> None:
    """What the door page writes (another part of the organizer area): a check-in row."""
    when = clock().strftime("%Y-%m-%dT%H:%M:%SZ")
    query_database(app.config["DATABASE"],
                   "INSERT INTO check_ins (registration_id, event_id, checked_in_at, "
                   "checked_in_by) VALUES (?, ?, ?, ?) RETURNING registration_id",
                   (registration_id, EVENT_ID, when, "acc-door"))


def audit_actions(app, organization_id: str) -> list[tuple[str, str | None, str | None]]:
    return [tuple(row) for row in query_database(
        app.config["DATABASE"], "SELECT action, event_id, target FROM audit_log "
        "WHERE organization_id = ? AND action IN (?, ?) ORDER BY id",
        (organization_id, "view_attendees", "export_attendees"))]


@pytest.fixture
def organizer(app):
    """An owner whose organization runs the sample event: (person, organization id)."""
    owner = signed_in(app)
    organization_id = start(owner)
    run_event(app, organization_id)
    return owner, organization_id


def list_url(organization_id: str, language: str = "en") -> str:
    return f"/{language}/organizer/organizations/{organization_id}/events/{EVENT_ID}/attendees"


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_the_list_counts_and_shows_attendees_and_is_audited(app, clock, organizer, language):
    owner, organization_id = organizer
    active = register(app, clock, ["王小明", "Ann Lee", "Bob"])
    register(app, clock, ["Carol"], state="cancelled")
    check_in(app, clock, active[0])
    answer = owner.get(list_url(organization_id, language))
    assert answer.status_code == 200
    assert answer.headers["Cache-Control"] == "private, no-store"
    page = BeautifulSoup(answer.data, "html.parser")
    counts = [int(value.get_text()) for value in page.select(".attendee-counts dd")]
    assert counts == [3, 1, 1]  # registered, cancelled, checked in
    rows = [[cell.get_text(" ", strip=True) for cell in row.select("td")]
            for row in page.select(".attendee-table tbody tr")]
    # In the order they registered (Carol in the same minute as 王小明, after by id).
    assert [row[0] for row in rows] == ["王小明", "Carol", "Ann Lee", "Bob"]
    assert rows[0][1] == "person0.active@example.com"
    assert rows[0][3] == ("已報名" if language == "zh-TW" else "Registered")
    assert rows[1][3] == ("已取消" if language == "zh-TW" else "Cancelled")
    assert rows[0][4] and rows[2][4] == ("尚未報到" if language == "zh-TW"
                                         else "Not checked in yet")
    assert page.select("[toolname]") == []
    assert audit_actions(app, organization_id) == [("view_attendees", EVENT_ID, None)]
    # The owner reads the line in the audit log, with nothing of the attendees in it.
    log = one(BeautifulSoup(owner.get(f"/{language}/organizer/organizations/"
                                      f"{organization_id}").data, "html.parser"),
              ".activity-list").get_text()
    with app.app_context():  # the line names the event by its title as it is now
        title = get_db().get_event(EVENT_ID).title  # type: ignore[union-attr]
    assert (f"查看了「{title}」的報名名單" if language == "zh-TW"
            else f"looked at the attendee list of “{title}”") in log
    assert "王小明" not in log


def test_search_by_name_or_address_and_paging(app, clock, organizer, monkeypatch):
    owner, organization_id = organizer
    monkeypatch.setattr(attendee_domain, "ATTENDEES_PER_PAGE", 2)
    register(app, clock, ["王小明", "王大同", "Ann Lee", "ann_b", "Bob", "100%"])

    def names(url: str) -> tuple[list[str], BeautifulSoup]:
        answer = owner.get(url)
        assert answer.status_code == 200, url
        page = BeautifulSoup(answer.data, "html.parser")
        return [row.select("td")[0].get_text() for row in
                page.select(".attendee-table tbody tr")], page

    url = list_url(organization_id)
    found, page = names(f"{url}?query=王")
    assert found == ["王小明", "王大同"]
    assert one(page, "input[name=query]")["value"] == "王"
    assert names(f"{url}?query=ANN")[0] == ["Ann Lee", "ann_b"]
    assert names(f"{url}?query=person4.active@")[0] == ["Bob"]
    # LIKE's own characters are matched as typed.
    assert names(f"{url}?query=_")[0] == ["ann_b"]
    assert names(f"{url}?query=%25")[0] == ["100%"]
    first, page = names(url)
    assert first == ["王小明", "王大同"] and page.select_one("a[rel=prev]") is None
    following = str(one(page, "a[rel=next]")["href"])
    second, page = names(following)
    assert second == ["Ann Lee", "ann_b"]
    assert "3" in one(page, ".pager-position").get_text()
    third, page = names(str(one(page, "a[rel=next]")["href"]))
    assert third == ["Bob", "100%"] and page.select_one("a[rel=next]") is None
    # Paging keeps the search.
    searched, page = names(f"{url}?query=PERSON")
    assert searched == ["王小明", "王大同"]
    assert "query=PERSON" in str(one(page, "a[rel=next]")["href"])
    assert names(f"{url}?page=9")[0] == []


def test_bad_input_is_said_and_kept_and_shows_nobody(app, clock, organizer):
    owner, organization_id = organizer
    register(app, clock, ["Ann"])
    answer = owner.get(f"{list_url(organization_id)}?query=Ann&page=zero")
    assert answer.status_code == 422
    page = BeautifulSoup(answer.data, "html.parser")
    assert one(page, ".error-list").get_text(strip=True)
    assert one(page, "input[name=query]")["value"] == "Ann"
    assert page.select(".attendee-table") == []
    assert audit_actions(app, organization_id) == []


def test_an_event_of_another_organization_is_not_found(app, clock, organizer):
    owner, organization_id = organizer
    other_owner = signed_in(app)
    elsewhere = start(other_owner, "Kaohsiung AI")
    for url in (list_url(elsewhere), list_url(elsewhere) + ".csv"):
        assert other_owner.get(url).status_code == 404  # not their event: it is `own`'s
        assert owner.get(url).status_code == 404  # not their organization
    run_event(app, elsewhere)
    assert owner.get(list_url(organization_id)).status_code == 404
    assert owner.get(list_url(organization_id) + ".csv").status_code == 404
    assert audit_actions(app, organization_id) == audit_actions(app, elsewhere) == []


def read_csv(body: bytes) -> list[list[str]]:
    assert body.startswith(b"\xef\xbb\xbf")
    text = body[3:].decode("utf-8")
    assert text.endswith("\r\n") and "\n" not in text.replace("\r\n", "")
    return list(csv.reader(io.StringIO(text, newline="")))


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_the_export_is_excel_ready_and_never_a_formula(app, clock, organizer, language):
    owner, organization_id = organizer
    ids = register(app, clock, ["王小明", *HOSTILE, 'Quote "me", please'])
    check_in(app, clock, ids[0])
    answer = owner.get(list_url(organization_id, language) + ".csv")
    assert answer.status_code == 200 and answer.is_streamed
    assert answer.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert answer.headers["Cache-Control"] == "private, no-store"
    disposition = answer.headers["Content-Disposition"]
    assert disposition.startswith("attachment;")
    assert f'filename=attendees-{EVENT_ID}.csv' in disposition
    named = unquote(disposition.split("filename*=UTF-8''")[1])
    assert named.startswith("報名名單-" if language == "zh-TW" else "attendees-")
    rows = read_csv(answer.data)
    answer.close()  # the stream's contexts end with it
    assert rows[0] == (["姓名", "電子郵件", "報名時間（台灣時間）", "狀態", "報到時間（台灣時間）"]
                       if language == "zh-TW" else
                       ["Name", "E-mail", "Registered at (Taiwan time)", "State",
                        "Checked in at (Taiwan time)"])
    names = [row[0] for row in rows[1:]]
    assert names == ["王小明", *[f"'{name}" for name in HOSTILE], 'Quote "me", please']
    assert rows[1][4] and rows[2][4] == ""
    assert rows[1][3] == ("已報名" if language == "zh-TW" else "Registered")
    # Taiwan time: the suite's clock, shown at +08:00, to the minute.
    registered = clock().astimezone(ZoneInfo("Asia/Taipei"))
    assert rows[1][2] == registered.strftime("%Y-%m-%d %H:%M")
    assert audit_actions(app, organization_id) == [("export_attendees", EVENT_ID, None)]


def test_the_export_is_streamed_in_batches(app, clock, organizer, monkeypatch):
    """Many attendees are read a batch at a time as the file is sent, never all at once."""
    owner, organization_id = organizer
    monkeypatch.setattr(attendee_domain, "EXPORT_BATCH", 7)
    register(app, clock, [f"Person {number}" for number in range(50)])
    reads: list[int] = []
    with app.app_context():
        storage_class = type(get_db())
    original = storage_class.attendee_batch

    def counted(self, event_id, after, limit):
        batch = original(self, event_id, after, limit)
        reads.append(len(batch))
        return batch

    monkeypatch.setattr(storage_class, "attendee_batch", counted)
    answer = owner.get(list_url(organization_id) + ".csv", buffered=False)
    chunks = iter(answer.response)
    header = next(chunks)
    assert header.startswith(b"\xef\xbb\xbf") and reads == []  # nothing read before it
    first = next(chunks)
    assert reads == [7]  # one batch read for the first rows sent
    rest = b"".join(chunks)
    answer.close()
    assert reads == [7] * 7 + [1]
    rows = read_csv(header + first + rest)
    assert [row[0] for row in rows[1:]] == [f"Person {number}" for number in range(50)]


@pytest.mark.parametrize("role", ["owner", "manager"])
def test_both_roles_that_may_see_attendees_see_the_export_link(app, clock, organizer, role):
    owner, organization_id = organizer
    person = owner
    if role == "manager":
        person = signed_in(app)
        with app.app_context():
            get_db().add_member(organization_id, account_id_of(app, person), "manager",
                                clock())
    page = BeautifulSoup(person.get(list_url(organization_id)).data, "html.parser")
    link = one(page, "a[download]")
    assert str(link["href"]).endswith(f"/events/{EVENT_ID}/attendees.csv")
