"""The organizer area, events: an organization drafts an event, previews it, publishes it and
edits it (issue 30). A draft is seen by nobody outside the organization; a published one is
found at once, by page and tool; an edit reindexes it, keeps every seat taken, refuses a save
made from an older version, and mails attendees a new time or place.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET  # noqa: S405 - only the app's own sitemap is parsed
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from bs4 import BeautifulSoup
from helpers import HTMX
from helpers import JSON
from helpers import TOKEN_FIELD
from helpers import Visitor
from helpers import one
from helpers import query_database
from helpers import the_jsonld
from mcp_helpers import McpClient
from test_accounts import Inbox
from test_accounts import deliver
from test_accounts import text_of
from test_organizers import signed_in
from test_organizers import start

pytestmark = pytest.mark.both_backends

TAIPEI = ZoneInfo("Asia/Taipei")
TITLE = "無障礙網頁工作坊：從表單開始"
SITEMAP = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}


def fields(app, **changes) -> dict[str, str]:
    """The form's fields of an event three weeks from the suite's clock, with `changes`."""
    starts = (app.config["CLOCK"]() + timedelta(days=21)).astimezone(TAIPEI).replace(
        hour=19, minute=0, second=0, microsecond=0)
    values = {
        "title": TITLE, "summary": "一個晚上，把一份表單改到螢幕閱讀器也好用。",
        "description": "我們從一份真實的報名表單開始。\n\n帶筆電來。",
        "starts_at": starts.strftime("%Y-%m-%dT%H:%M"),
        "ends_at": (starts + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M"),
        "registration_deadline": (starts - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M"),
        "location": "taipei", "venue": "台北市大安區復興南路一段 390 號", "level": "beginner",
        "capacity": "30", "waitlist": "False", "price_amount": "0", "price_currency": "TWD"}
    return {**values, **{name: str(value) for name, value in changes.items()}}


def events_url(organization_id: str) -> str:
    return f"/en/organizer/organizations/{organization_id}/events"


def draft(app, person: Visitor, organization_id: str, **changes) -> str:
    """Draft an event as `person`: its id (the answer leads to its preview)."""
    answer = person.post(events_url(organization_id), fields(app, **changes))
    assert answer.status_code == 303, answer.get_data(as_text=True)[:500]
    found = re.search(r"/events/(evt-[a-z0-9-]+)$", answer.headers["Location"])
    assert found, answer.headers["Location"]
    return found.group(1)


def version_on(page_html: bytes) -> str:
    return str(one(BeautifulSoup(page_html, "html.parser"), "input[name=version]")["value"])


def publish(person: Visitor, organization_id: str, event_id: str):
    preview = person.get(f"{events_url(organization_id)}/{event_id}")
    return person.post(f"{events_url(organization_id)}/{event_id}/publish",
                       {"version": version_on(preview.data)})


def edit(app, person: Visitor, organization_id: str, event_id: str, version: str | None = None,
         **changes):
    if version is None:
        version = version_on(person.get(f"{events_url(organization_id)}/{event_id}/edit").data)
    return person.post(f"{events_url(organization_id)}/{event_id}",
                       {**fields(app, **changes), "version": version})


def page_search_ids(visitor: Visitor, words: str) -> list[str]:
    found = visitor.get("/en/events", query_string={"query": words}, headers=JSON).get_json()
    return [event["id"] for event in found["data"]["events"]]


def tool_search_ids(app, words: str) -> list[str]:
    found = McpClient(app.test_client()).envelope("search_events", {"query": words})
    return [event["id"] for event in found["data"]["events"]]


def sitemap_lists(visitor: Visitor, event_id: str) -> bool:
    urls = ET.fromstring(visitor.get("/sitemap.xml").data)  # noqa: S314 - our own answer
    return any(event_id in (url.findtext("s:loc", default="", namespaces=SITEMAP))
               for url in urls.findall("s:url", SITEMAP))


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_a_draft_is_seen_by_its_organization_alone_until_published(app, language):
    manager = signed_in(app)
    organization_id = start(manager)
    form = BeautifulSoup(manager.get(f"/{language}/organizer/organizations/{organization_id}"
                                     "/events/new").data, "html.parser")
    assert not one(form, "form.stacked-form").has_attr("toolname")
    assert one(form, "textarea[name=description]")
    assert one(form, "input[name=starts_at]")["type"] == "datetime-local"
    event_id = draft(app, manager, organization_id)
    visitor = Visitor(app)
    assert event_id not in page_search_ids(visitor, "無障礙")
    assert event_id not in tool_search_ids(app, "無障礙")
    assert visitor.get(f"/en/events/{event_id}").status_code == 404
    assert not sitemap_lists(visitor, event_id)
    preview = BeautifulSoup(manager.get(f"/{language}/organizer/organizations/"
                                        f"{organization_id}/events/{event_id}").data,
                            "html.parser")
    assert one(preview, "h1").get_text() == TITLE
    listed = BeautifulSoup(manager.get(f"/{language}/organizer/organizations/"
                                       f"{organization_id}").data, "html.parser")
    assert TITLE in one(listed, ".event-list--drafts").get_text()

    published = publish(manager, organization_id, event_id)
    assert published.status_code == 303
    assert event_id in page_search_ids(visitor, "無障礙")
    assert event_id in tool_search_ids(app, "無障礙")
    assert visitor.get(f"/en/events/{event_id}").status_code == 200
    assert sitemap_lists(visitor, event_id)
    listed = BeautifulSoup(manager.get(f"/{language}/organizer/organizations/"
                                       f"{organization_id}").data, "html.parser")
    upcoming = one(listed, ".event-list--upcoming").get_text(" ", strip=True)
    taken = "0 of 30 seats taken" if language == "en" else "已報名 0 位，共 30 個座位"
    assert TITLE in upcoming and taken in upcoming
    audit = one(listed, ".activity-list").get_text()
    assert ("published an event" if language == "en" else "發布了一個活動") in audit
    assert ("drafted an event" if language == "en" else "建立了一個活動草稿") in audit


def test_an_edit_reindexes_the_published_event(app):
    manager = signed_in(app)
    organization_id = start(manager)
    event_id = draft(app, manager, organization_id)
    publish(manager, organization_id, event_id)
    edited = edit(app, manager, organization_id, event_id, title="表單設計與螢幕閱讀器實戰")
    assert edited.status_code == 303, edited.get_data(as_text=True)[:500]
    visitor = Visitor(app)
    assert event_id in page_search_ids(visitor, "螢幕閱讀器")
    assert event_id not in page_search_ids(visitor, "無障礙")
    assert event_id in tool_search_ids(app, "螢幕閱讀器")
    audit = query_database(app.config["DATABASE"], "SELECT action FROM audit_log "
                           "WHERE organization_id = ? ORDER BY id", (organization_id,))
    assert [action for (action,) in audit][-3:] == ["create_event_draft", "publish_event",
                                                    "edit_event"]


def test_bad_input_keeps_what_was_typed_with_field_errors(app):
    manager = signed_in(app)
    organization_id = start(manager)
    values = fields(app, title="好", capacity="0")
    answer = manager.post(events_url(organization_id), values)
    assert answer.status_code == 422
    page = BeautifulSoup(answer.data, "html.parser")
    for name in ("title", "capacity"):
        assert one(page, f"#create_event_draft-{name}-error").get_text().strip(), name
    assert one(page, "input[name=venue]")["value"] == values["venue"]
    assert the_jsonld(answer.data)["status"] == "invalid_input"
    # Fields that are each right may still not fit together.
    values = fields(app)
    for name, value in (("ends_at", values["starts_at"]),
                        ("registration_deadline", values["ends_at"])):
        answer = manager.post(events_url(organization_id), {**values, name: value})
        assert answer.status_code == 422
        page = BeautifulSoup(answer.data, "html.parser")
        assert one(page, f"#create_event_draft-{name}-error").get_text().strip(), name
    past = fields(app, starts_at="2001-01-01T10:00", ends_at="2001-01-01T12:00",
                  registration_deadline="2001-01-01T09:00")
    answer = manager.post(events_url(organization_id), past)
    assert answer.status_code == 422
    assert one(BeautifulSoup(answer.data, "html.parser"),
               "#create_event_draft-starts_at-error").get_text().strip()


def test_capacity_is_lowered_only_to_the_seats_taken(app):
    manager = signed_in(app)
    organization_id = start(manager)
    event_id = draft(app, manager, organization_id, capacity=5)
    publish(manager, organization_id, event_id)
    for _ in range(3):
        Visitor(app).register(event_id)
    refused = edit(app, manager, organization_id, event_id, capacity=2)
    assert refused.status_code == 422
    page = BeautifulSoup(refused.data, "html.parser")
    assert "3 seats are taken" in one(page, "#edit_event-capacity-error").get_text()
    assert edit(app, manager, organization_id, event_id, capacity=3).status_code == 303
    assert Visitor(app).seats(event_id) == 0
    assert edit(app, manager, organization_id, event_id, capacity=10).status_code == 303
    assert Visitor(app).seats(event_id) == 7


def test_a_save_from_an_older_version_is_refused_naming_what_changed(app):
    manager, other = signed_in(app), signed_in(app)
    organization_id = start(manager)
    with app.app_context():
        from webapp.storage.connection import get_db
        get_db().add_member(organization_id, account_of(app, other), "manager",
                            app.config["CLOCK"]())
    event_id = draft(app, manager, organization_id)
    form = manager.get(f"{events_url(organization_id)}/{event_id}/edit").data
    seen = version_on(form)
    moved = edit(app, other, organization_id, event_id, venue="高雄市駁二藝術特區")
    assert moved.status_code == 303
    refused = edit(app, manager, organization_id, event_id, version=seen, title="我的新標題")
    assert refused.status_code == 409
    told = the_jsonld(refused.data)
    assert told["status"] == "conflict" and "Venue" in told["message"]
    page = BeautifulSoup(refused.data, "html.parser")
    # What was typed is kept; the form now carries the version saved meanwhile.
    assert one(page, "input[name=title]")["value"] == "我的新標題"
    assert version_on(refused.data) != seen
    assert "高雄市駁二藝術特區" in one(page, ".event-facts").get_text()
    preview = manager.get(f"{events_url(organization_id)}/{event_id}").get_data(as_text=True)
    assert "高雄市駁二藝術特區" in preview and "我的新標題" not in preview


def account_of(app, person: Visitor) -> str:
    ((found,),) = query_database(app.config["DATABASE"],
                                 "SELECT id FROM accounts WHERE email = ?", (person.email,))
    return str(found)


def register_in(visitor: Visitor, language: str, event_id: str) -> None:
    """Register `visitor` on the event's page in `language` (what its mail speaks)."""
    prepared = visitor.post(f"/{language}/events/{event_id}/register",
                            {"attendee_name": "Ann Lee", "email": visitor.email}, headers=HTMX)
    token = TOKEN_FIELD.search(prepared.get_data(as_text=True))
    assert token, prepared.get_data(as_text=True)[:300]
    assert visitor.confirm_registration(token.group(1)).status_code == 201


def test_attendees_are_mailed_a_new_time_in_their_language(app):
    manager = signed_in(app)
    organization_id = start(manager)
    event_id = draft(app, manager, organization_id)
    publish(manager, organization_id, event_id)
    english, chinese = Visitor(app), Visitor(app)
    register_in(english, "en", event_id)
    register_in(chinese, "zh-TW", event_id)
    deliver(app, Inbox())  # the confirmations, out of the way
    inbox = Inbox()
    later = fields(app)["starts_at"].replace("T19:00", "T20:00")
    moved = edit(app, manager, organization_id, event_id, starts_at=later,
                 ends_at=later.replace("T20:00", "T22:00"))
    assert moved.status_code == 303, moved.get_data(as_text=True)[:500]
    deliver(app, inbox)
    mails = {message["To"]: message for message in inbox.messages}
    assert set(mails) == {english.email, chinese.email}
    english_text, chinese_text = text_of(mails[english.email]), text_of(mails[chinese.email])
    assert re.search(r"Starts: .*19:00.* → .*20:00", english_text), english_text
    assert re.search(r"開始：.*19:00.* → .*20:00", chinese_text), chinese_text
    assert mails[english.email]["Subject"].startswith("Changed:")
    assert "已變更" in mails[chinese.email]["Subject"]
    # A second edit of something else mails nobody.
    inbox = Inbox()
    assert edit(app, manager, organization_id, event_id, starts_at=later,
                ends_at=later.replace("T20:00", "T22:00"),
                summary="一個晚上，把一份表單改到每個人都好用。").status_code == 303
    deliver(app, inbox)
    assert inbox.messages == []


def test_new_seats_go_to_those_waiting_first(app):
    manager = signed_in(app)
    organization_id = start(manager)
    event_id = draft(app, manager, organization_id, capacity=1, waitlist=True)
    publish(manager, organization_id, event_id)
    Visitor(app).register(event_id)
    waiting = Visitor(app)
    prepared = waiting.post(f"/events/{event_id}/register",
                            {"attendee_name": "Wen Chen", "email": waiting.email}, headers=HTMX)
    token = TOKEN_FIELD.search(prepared.get_data(as_text=True))
    assert token, prepared.get_data(as_text=True)[:300]
    joined = waiting.post_json("/registrations/waitlist", {"confirmation_token": token.group(1)})
    assert joined.status_code < 300, joined.get_data(as_text=True)[:300]
    raised = edit(app, manager, organization_id, event_id, capacity=2, waitlist=True)
    assert raised.status_code == 303
    assert query_database(app.config["DATABASE"], "SELECT state FROM waitlist "
                          "WHERE email = ?", (waiting.email,)) == [("offered",)]
    assert Visitor(app).seats(event_id) == 0


def event_row_links(person: Visitor, organization_id: str, event_id: str) -> dict[str, str]:
    """What the organization's page offers for one of its events: link text → address."""
    page = BeautifulSoup(person.get(f"/en/organizer/organizations/{organization_id}").data,
                         "html.parser")
    (row,) = [item for item in page.select(".organizer-event-list li")
              if item.find("a", href=re.compile(re.escape(event_id)))]
    return {link.get_text(" ", strip=True).split(" ")[0]: str(link["href"])
            for link in row.select(".organizer-event-actions a")} | {
        "badge": " ".join(badge.get_text() for badge in row.select(".badge"))}


def test_a_published_event_is_run_from_the_organization_page_until_cancelled(app):
    """A draft offers its form only; once published, its row leads to the attendees, the door
    and cancelling, each of which answers; once cancelled it says so and offers no edit or
    cancel, while its attendees and door stay."""
    manager = signed_in(app)
    organization_id = start(manager)
    event_id = draft(app, manager, organization_id)
    assert set(event_row_links(manager, organization_id, event_id)) == {"Edit", "badge"}
    publish(manager, organization_id, event_id)
    links = event_row_links(manager, organization_id, event_id)
    assert set(links) == {"Edit", "Attendees", "Door", "Cancel", "badge"}
    for name in ("Edit", "Attendees", "Door", "Cancel"):
        assert manager.get(links[name]).status_code == 200, name
    assert manager.post(links["Cancel"], {"reason": ""}).status_code == 303
    links = event_row_links(manager, organization_id, event_id)
    assert set(links) == {"Attendees", "Door", "badge"} and links["badge"] == "Cancelled"
