"""The organizer dashboard (`/organizer/`, issue 30): each of the person's organizations with
its drafts, upcoming events (seats taken of capacity, cancelled said) and past events folded,
as far as their role there allows (the role table decides), read in the same number of
queries however many organizations they are in.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from bs4 import BeautifulSoup
from bs4 import Tag
from flask_babel import force_locale
from flask_babel import gettext
from flask_babel import ngettext
from helpers import Visitor
from helpers import one
from helpers import the_jsonld
from test_accounts import Inbox
from test_accounts import sign_in
from test_event_cancellation import cancel_address
from test_event_cancellation import register_in
from test_event_cancellation import run_by
from test_organizer_events import TAIPEI
from test_organizer_events import draft
from test_organizer_events import edit
from test_organizer_events import publish
from test_organizers import account_id_of
from test_organizers import signed_in
from test_organizers import start
from test_waitlist import SEATS
from test_waitlist import SMALL
from test_waitlist import add
from test_waitlist import fill
from test_waitlist import join
from test_waitlist import small_event

from webapp.domain.actions.organizer_events import PAST_EVENTS_PER_PAGE
from webapp.domain.actions.organizer_events import PAST_EVENTS_SHOWN
from webapp.domain.organizers import CHECK_IN
from webapp.domain.organizers import MANAGE_EVENTS
from webapp.domain.organizers import ROLES
from webapp.domain.organizers import VIEW_ORGANIZATION
from webapp.domain.organizers import may
from webapp.storage.connection import get_db
from webapp.web.languages import LANGUAGES

pytestmark = pytest.mark.both_backends

CAPACITY = 30


def in_days(app, days: int) -> dict[str, str]:
    """The form's times of an event starting `days` from the app's clock, at 19:00 Taipei."""
    starts = (app.config["CLOCK"]() + timedelta(days=days)).astimezone(TAIPEI).replace(
        hour=19, minute=0, second=0, microsecond=0)
    return {"starts_at": starts.strftime("%Y-%m-%dT%H:%M"),
            "ends_at": (starts + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M"),
            "registration_deadline": (starts - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M")}


def published(app, person: Visitor, organization_id: str, title: str, days: int) -> str:
    """Draft and publish an event of the organization starting in `days`: its id."""
    event_id = draft(app, person, organization_id, title=title, capacity=CAPACITY,
                     **in_days(app, days))
    assert publish(person, organization_id, event_id).status_code == 303
    return event_id


def dashboard(person: Visitor, language: str = "en") -> BeautifulSoup:
    answer = person.get(f"/{language}/organizer/")
    assert answer.status_code == 200, answer.get_data(as_text=True)[:300]
    return BeautifulSoup(answer.data, "html.parser")


def organization_entry(page: BeautifulSoup, name: str) -> Tag:
    """The dashboard's entry of the organization named `name`."""
    (entry,) = [item for item in page.select(".organization-list > li")
                if one(item, "h3").get_text(strip=True) == name]
    return entry


def titles(entry: Tag, selector: str) -> list[str]:
    return [link.get_text(strip=True) for link in entry.select(f"{selector} li > a")]


def words(app, language: str, *message: Any, **values: Any) -> str:
    """What the page says for `message` in `language` (ngettext when given a plural)."""
    with app.test_request_context(), force_locale(LANGUAGES[language].locale):
        if len(message) == 3:
            return ngettext(*message, **values)
        return gettext(*message, **values)


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_each_organization_shows_its_drafts_upcoming_and_past_events(app, clock, language):
    owner = signed_in(app)
    busy, quiet = start(owner, "台北網頁開發者聚會"), start(owner, "高雄 AI 社群")
    draft(app, owner, busy, title="草稿：無障礙表單")
    soon = published(app, owner, busy, "網頁效能讀書會", 5)
    later = published(app, owner, busy, "WebMCP 工作坊", 10)
    gone = published(app, owner, busy, "已辦過的聚會", 1)
    register_in(Visitor(app), "en", soon)
    register_in(Visitor(app), "en", gone)
    assert owner.post(cancel_address(busy, "en", later), {}).status_code == 303
    clock.advance(days=2)  # the first event has ended
    sign_in(app, Inbox(), owner, owner.email)  # after two days away, as a person would

    entry = organization_entry(dashboard(owner, language), "台北網頁開發者聚會")
    assert titles(entry, ".event-list--drafts") == ["草稿：無障礙表單"]
    assert one(entry, "h4").get_text(strip=True) == words(
        app, language, "%(num)d draft", "%(num)d drafts", 1)
    # Upcoming: the soonest first, each to the organizer's page of it, with its seats.
    assert titles(entry, ".event-list--upcoming") == ["網頁效能讀書會", "WebMCP 工作坊"]
    first, cancelled = entry.select(".event-list--upcoming > li")
    assert one(first, "a")["href"] == f"/{language}/organizer/organizations/{busy}/events/{soon}"
    assert words(app, language, "%(taken)d of %(capacity)d seats taken",
                 taken=1, capacity=CAPACITY) in first.get_text()
    assert not first.select(".badge--cancelled")
    assert one(cancelled, ".badge--cancelled").get_text() == words(app, language, "Cancelled")
    # Past: folded, saying how many.
    past = one(entry, "details.event-list--past")
    assert not past.has_attr("open")
    assert one(past, "summary").get_text(strip=True) == words(
        app, language, "Show %(num)d past event", "Show %(num)d past events", 1)
    assert titles(entry, ".event-list--past") == ["已辦過的聚會"]

    empty = organization_entry(dashboard(owner, language), "高雄 AI 社群")
    assert not empty.select(".organizer-event-list, details")
    assert words(app, language, "No upcoming events.") in empty.get_text()
    assert one(empty, "h3 a")["href"] == f"/{language}/organizer/organizations/{quiet}"


def test_people_waiting_take_no_seat_in_the_count(app, clock):
    language = "zh-TW"
    add(app, small_event(clock()))
    owner = signed_in(app)
    running = start(owner)
    run_by(app, running, SMALL)
    fill(app)
    for _ in range(2):
        assert join(Visitor(app))["status"] == "success"  # two in line, the seats all taken
    entry = organization_entry(dashboard(owner, language), "台北網頁開發者聚會")
    assert words(app, language, "%(taken)d of %(capacity)d seats taken",
                 taken=SEATS, capacity=SEATS) in one(entry, ".event-list--upcoming").get_text()


def test_lowering_capacity_names_the_seats_taken_not_the_people_waiting(app, clock):
    add(app, small_event(clock()))
    manager = signed_in(app)
    running = start(manager)
    run_by(app, running, SMALL)
    fill(app)
    for _ in range(2):
        assert join(Visitor(app))["status"] == "success"
    refused = edit(app, manager, running, SMALL, capacity=1)
    assert refused.status_code == 422
    said = one(BeautifulSoup(refused.data, "html.parser"), "#edit_event-capacity-error")
    assert f"{SEATS} seats are taken: give at least {SEATS}." in said.get_text()


@pytest.mark.parametrize("role", ROLES)
def test_a_role_sees_what_its_rights_allow_and_every_link_opens(app, role):
    """Drafts, seats and past events for those who manage events; the doors of upcoming
    events for those who only check people in; a link to the organization's page for those
    who may see it. Every link of the entry opens for the member."""
    owner = signed_in(app)
    organization_id = start(owner, "台北網頁開發者聚會")
    draft(app, owner, organization_id, title="草稿：無障礙表單")
    upcoming = published(app, owner, organization_id, "網頁效能讀書會", 5)
    called_off = published(app, owner, organization_id, "WebMCP 工作坊", 10)
    assert owner.post(cancel_address(organization_id, "en", called_off), {}).status_code == 303
    member = owner if role == "owner" else signed_in(app)
    if member is not owner:
        with app.app_context():
            get_db().add_member(organization_id, account_id_of(app, member), role,
                                app.config["CLOCK"]())

    entry = organization_entry(dashboard(member), "台北網頁開發者聚會")
    shown = " ".join(entry.get_text().split())
    assert ("草稿：無障礙表單" in shown) == may(role, MANAGE_EVENTS)
    assert ("seats taken" in shown) == may(role, MANAGE_EVENTS)
    # A cancelled event is listed to those who manage events, never as a door.
    assert ("WebMCP 工作坊" in shown) == may(role, MANAGE_EVENTS)
    doors = {str(link["href"]) for link in entry.select("a[href$='/door']")}
    door = f"/en/organizer/organizations/{organization_id}/events/{upcoming}/door"
    assert doors == ({door} if may(role, CHECK_IN) else set())
    assert bool(entry.select(f"h3 a[href$='/organizations/{organization_id}']")) == may(
        role, VIEW_ORGANIZATION)
    for link in entry.select("a[href]"):
        assert member.get(link["href"]).status_code == 200, (role, link["href"])


def counted_reads(app, monkeypatch) -> list[str]:
    """Every statement the storage reads from here on (each `_rows` and `_one`)."""
    reads: list[str] = []
    with app.app_context():
        storage_class = type(get_db())
    for name in ("_rows", "_one"):
        original = getattr(storage_class, name)

        def counted(self, sql, params, original=original):
            reads.append(sql)
            return original(self, sql, params)

        monkeypatch.setattr(storage_class, name, counted)
    return reads


def organizations_with_events(app, owner: Visitor, count: int) -> Iterator[str]:
    for number in range(count):
        organization_id = start(owner, f"聚會 {number}")
        draft(app, owner, organization_id, title=f"草稿 {number}")
        published(app, owner, organization_id, f"活動 {number}", 5 + number)
        yield organization_id


def test_the_dashboard_reads_as_much_for_three_organizations_as_for_one(app, monkeypatch):
    one_organization, three = signed_in(app), signed_in(app)
    list(organizations_with_events(app, one_organization, 1))
    list(organizations_with_events(app, three, 3))
    reads = counted_reads(app, monkeypatch)
    assert len(dashboard(one_organization).select(".organizer-event-list li")) == 2
    for_one = len(reads)
    reads.clear()
    assert len(dashboard(three).select(".organizer-event-list li")) == 6
    assert len(reads) == for_one, reads


def test_past_events_are_capped_with_a_paged_list_of_all_in_one_read(app, clock, monkeypatch):
    """The dashboard lists each organization's latest PAST_EVENTS_SHOWN past events and links
    to all of them, a plain paged list (links, no JavaScript); still one read of events
    however many organizations have how many past events."""
    owner = signed_in(app)
    busy, quiet = start(owner, "台北網頁開發者聚會"), start(owner, "高雄 AI 社群")
    many = PAST_EVENTS_SHOWN + 2
    titles_by_start = [f"聚會第 {day} 場" for day in range(1, many + 1)]
    for day, title in enumerate(titles_by_start, start=1):
        published(app, owner, busy, title, day)
    published(app, owner, quiet, "已辦過的聚會", 1)
    clock.advance(days=many + 1)  # every one of them has ended
    sign_in(app, Inbox(), owner, owner.email)
    latest_first = list(reversed(titles_by_start))

    reads = counted_reads(app, monkeypatch)
    entry = organization_entry(dashboard(owner), "台北網頁開發者聚會")
    # Every organization's events, the past ones capped, in one statement.
    assert len([sql for sql in reads if "events e" in sql or "event_drafts" in sql]) == 1, reads
    assert titles(entry, ".event-list--past") == latest_first[:PAST_EVENTS_SHOWN]
    link = one(entry, "a.all-past-events")
    assert str(many) in link.get_text()
    small = organization_entry(dashboard(owner), "高雄 AI 社群")
    assert titles(small, ".event-list--past") == ["已辦過的聚會"]
    assert not small.select("a.all-past-events")

    listed = BeautifulSoup(owner.get(link["href"]).data, "html.parser")
    assert [a.get_text(strip=True) for a in listed.select(".event-list--past li > a")] == \
        latest_first[:PAST_EVENTS_PER_PAGE]
    assert not listed.select("nav.pager")  # one page holds them
    monkeypatch.setattr("webapp.domain.actions.organizer_events.PAST_EVENTS_PER_PAGE", 3)
    seen: list[str] = []
    address: str | None = str(link["href"])
    while address:
        page = BeautifulSoup(owner.get(address).data, "html.parser")
        seen += [a.get_text(strip=True) for a in page.select(".event-list--past li > a")]
        following = page.select_one("a[rel=next]")
        address = str(following["href"]) if following else None
    assert seen == latest_first
    refused = owner.get(f"{link['href']}?page=0")
    assert refused.status_code == 422
    assert the_jsonld(refused.data)["status"] == "invalid_input"
    assert "page" in the_jsonld(refused.data)["errors"]


def test_the_organization_page_lists_its_latest_past_events_and_links_to_all(app, clock):
    """An organization's own page lists its upcoming events and only its latest
    PAST_EVENTS_SHOWN past ones (it used to read and list every one it ever held), with the
    dashboard's link to all of them."""
    owner = signed_in(app)
    busy = start(owner, "台北網頁開發者聚會")
    many = PAST_EVENTS_SHOWN + 2
    titles_by_start = [f"聚會第 {day} 場" for day in range(1, many + 1)]
    for day, title in enumerate(titles_by_start, start=1):
        published(app, owner, busy, title, day)
    clock.advance(days=many + 1)  # every one of them has ended
    sign_in(app, Inbox(), owner, owner.email)
    upcoming = published(app, owner, busy, "下個月的聚會", 30)
    page = BeautifulSoup(owner.get(f"/en/organizer/organizations/{busy}").data, "html.parser")
    assert titles(page, ".event-list--past") == list(reversed(titles_by_start))[
        :PAST_EVENTS_SHOWN]
    assert [a["href"] for a in page.select(".event-list--upcoming li > a")] == [
        f"/en/organizer/organizations/{busy}/events/{upcoming}"]
    link = one(page, "a.all-past-events")
    assert str(many) in link.get_text()
    assert link["href"] == f"/en/organizer/organizations/{busy}/past-events"


def test_an_organization_page_with_few_past_events_offers_no_link_to_more(app, clock):
    owner = signed_in(app)
    quiet = start(owner, "高雄 AI 社群")
    published(app, owner, quiet, "已辦過的聚會", 1)
    clock.advance(days=2)
    sign_in(app, Inbox(), owner, owner.email)
    page = BeautifulSoup(owner.get(f"/en/organizer/organizations/{quiet}").data, "html.parser")
    assert titles(page, ".event-list--past") == ["已辦過的聚會"]
    assert not page.select("a.all-past-events")
