"""The organizer area, events: an organization drafts an event, previews it, publishes it and
edits it (issue 30). A draft is seen by nobody outside the organization; a published one is
found at once, by page and tool; an edit reindexes it, keeps every seat taken, refuses a save
made from an older version, and mails attendees a new time or place.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET  # noqa: S405 - only the app's own sitemap is parsed
from datetime import timedelta
from urllib.parse import parse_qs
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import pytest
from bs4 import BeautifulSoup
from bs4 import Tag
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
from test_door import code_of
from test_door import door_of
from test_organizers import account_id_of
from test_organizers import signed_in
from test_organizers import start

from webapp.storage.connection import get_db

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
        "capacity": "30", "waitlist": "False", "price_amount": "0", "price_currency": "TWD",
        "language": "zh-Hant-TW"}
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
    assert (f"published “{TITLE}”" if language == "en" else f"發布了「{TITLE}」") in audit
    assert (f"drafted “{TITLE}”" if language == "en" else f"建立了「{TITLE}」的草稿") in audit


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


AUDIT_LINES = {
    "en": ("{owner} checked an attendee in at “{title}”", "{owner} edited “{title}”",
           "a former member published “{title}”", "a former member drafted “{title}”"),
    # An address is spaced from the Chinese beside it, a former member's name is not.
    "zh-TW": ("{owner} 在「{title}」為一位參加者辦理了報到", "{owner} 編輯了「{title}」",
              "已離開的成員發布了「{title}」", "已離開的成員建立了「{title}」的草稿"),
}


def sentence(line: Tag) -> str:
    """An audit line's sentence, without its time."""
    one(line, ".muted").extract()
    return line.get_text().strip()


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_the_audit_log_names_each_event_by_its_title_now(app, language):
    """Every line about an event names it by the title it has when the log is read, linked
    to the organization's page of it; the log itself keeps ids, nothing of the attendee."""
    owner, manager = signed_in(app), signed_in(app)
    organization_id = start(owner)
    with app.app_context():
        get_db().add_member(organization_id, account_id_of(app, manager), "manager",
                            app.config["CLOCK"]())
    event_id = draft(app, manager, organization_id, title="暫定標題")
    assert publish(manager, organization_id, event_id).status_code == 303
    assert manager.post(f"/en/organizer/organizations/{organization_id}/leave"
                        ).status_code == 303
    assert edit(app, owner, organization_id, event_id, title=TITLE).status_code == 303
    registration = Visitor(app).register(event_id, name="王小明")
    assert owner.post(door_of(organization_id, event_id),
                      {"code": code_of(app, registration["id"])}).status_code == 303

    page = BeautifulSoup(owner.get(f"/{language}/organizer/organizations/{organization_id}")
                         .data, "html.parser")
    lines = [line for line in page.select(".activity-list li") if line.select("a")]
    expected = [words.format(owner=owner.email, title=TITLE)
                for words in AUDIT_LINES[language]]
    assert [sentence(line) for line in lines] == expected
    for line in lines:
        assert one(line, "a")["href"] == (f"/{language}/organizer/organizations/"
                                          f"{organization_id}/events/{event_id}")
    shown = one(page, ".activity-list").get_text()
    assert "暫定標題" not in shown and "王小明" not in shown
    kept = query_database(app.config["DATABASE"], "SELECT * FROM audit_log "
                          "WHERE organization_id = ?", (organization_id,))
    assert not [row for row in kept if {TITLE, "暫定標題", "王小明"} & set(map(str, row))]


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


# What an organizer adds to an event beyond its time, place and price (migration 016).
ADDRESS = "台北市大安區復興南路一段 390 號 3 樓"
PAYMENT_NOTE = "現場以現金或 LINE Pay 付款"


def published(app, **changes) -> tuple[Visitor, str, str]:
    """A manager, their organization and one event of it, published with `changes`."""
    manager = signed_in(app)
    organization_id = start(manager)
    event_id = draft(app, manager, organization_id, **changes)
    assert publish(manager, organization_id, event_id).status_code == 303
    return manager, organization_id, event_id


def event_page(visitor: Visitor, event_id: str, language: str = "en") -> BeautifulSoup:
    answer = visitor.get(f"/{language}/events/{event_id}")
    assert answer.status_code == 200
    return BeautifulSoup(answer.data, "html.parser")


def stored(app, event_id: str, *columns: str) -> tuple[object, ...]:
    (row,) = query_database(app.config["DATABASE"],
                            f"SELECT {', '.join(columns)} FROM events WHERE id = ?", (event_id,))
    return tuple(row)


def test_what_the_organizer_adds_is_kept_and_shown_on_the_event_page(app):
    manager, organization_id, event_id = published(
        app, street_address=ADDRESS, topic_tags="＃Accessibility、 forms ,  screen   readers",
        payment_note=PAYMENT_NOTE)
    assert stored(app, event_id, "language", "street_address", "topic_tags",
                  "payment_note") == ("zh-Hant-TW", ADDRESS,
                                      "Accessibility,forms,screen readers", PAYMENT_NOTE)
    page = event_page(Visitor(app), event_id)
    address = one(page, "[itemtype='https://schema.org/PostalAddress']")
    assert one(address, "[itemprop=streetAddress]").get_text() == ADDRESS
    assert [chip.get_text() for chip in page.select(".topic-tags a")] == [
        "Accessibility", "forms", "screen readers"]
    assert one(page, "meta[itemprop=keywords]")["content"] == "Accessibility,forms,screen readers"
    assert one(page, ".payment-note").get_text() == PAYMENT_NOTE
    # A chip leads to the search for its tag, which finds the event.
    chip = one(page, ".topic-tags a")["href"]
    found = Visitor(app).get(chip, headers=JSON).get_json()
    assert event_id in [event["id"] for event in found["data"]["events"]]
    # The tools say the same, declared in the output schema (the MCP tests check it).
    details = McpClient(app.test_client()).envelope("get_event_details", {"event_id": event_id})
    assert details["data"]["event"]["topicTags"] == ["Accessibility", "forms", "screen readers"]
    assert details["data"]["event"]["paymentNote"] == PAYMENT_NOTE
    # The form shows them again as they are kept.
    form = BeautifulSoup(manager.get(f"{events_url(organization_id)}/{event_id}/edit").data,
                         "html.parser")
    assert one(form, "input[name=topic_tags]")["value"] == "Accessibility, forms, screen readers"
    assert one(form, "input[name=street_address]")["value"] == ADDRESS
    assert [legend.get_text() for legend in form.select("fieldset.form-section > legend")] == [
        "What", "When", "Where", "Price and seats"]


def test_events_without_them_show_nothing_of_them(app):
    _manager, _organization_id, event_id = published(app)
    assert stored(app, event_id, "street_address", "online_platform", "link_sent",
                  "topic_tags", "payment_note") == ("", "", "", "", "")
    page = event_page(Visitor(app), event_id)
    assert not page.select(".topic-tags, .payment-note, .map-link, .online-platform, "
                           "[itemprop=streetAddress]")
    details = McpClient(app.test_client()).envelope("get_event_details", {"event_id": event_id})
    assert not {"streetAddress", "onlinePlatform", "linkSent", "topicTags",
                "paymentNote"} & set(details["data"]["event"])


def test_the_map_link_is_made_from_the_address_and_escaped(app):
    hostile = '台北市 1 號 "><script>alert(1)</script> & javascript:x'
    _manager, _organization_id, event_id = published(app, street_address=hostile)
    answer = Visitor(app).get(f"/en/events/{event_id}")
    assert b"<script>alert" not in answer.data
    link = one(BeautifulSoup(answer.data, "html.parser"), "a.map-link")
    address = urlsplit(str(link["href"]))
    assert (address.scheme, address.netloc, address.path) == ("https", "www.google.com",
                                                              "/maps/search/")
    assert parse_qs(address.query) == {"api": ["1"], "query": [hostile]}
    assert link["itemprop"] == "hasMap"


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_the_declared_language_marks_the_organizer_text(app, language):
    """An English title of a talk given in Chinese is marked as the organizer said, not as its
    script suggests: on the event page, its card and the organizer's preview."""
    manager, organization_id, event_id = published(
        app, language="zh-Hant-TW", title="Accessible forms night",
        summary="An evening of making one form work with screen readers.",
        payment_note="Pay at the door")
    page = event_page(Visitor(app), event_id, language)
    want = None if language == "zh-TW" else "zh-Hant-TW"  # nothing where the page agrees
    for selector in ("h1", ".event-summary", ".payment-note"):
        assert one(page, selector).get("lang") == want, selector
    cards = BeautifulSoup(Visitor(app).get(f"/{language}/events",
                                           query_string={"query": "Accessible"}).data,
                          "html.parser")
    (card,) = [item for item in cards.select(".event-title")
               if "Accessible forms night" in item.get_text()]
    assert card.get("lang") == want
    preview = BeautifulSoup(manager.get(f"/{language}/organizer/organizations/"
                                        f"{organization_id}/events/{event_id}").data,
                            "html.parser")
    assert one(preview, "h1").get("lang") == want
    # Declared English, the same text is marked English (where the page is not).
    assert edit(app, manager, organization_id, event_id, language="en",
                title="Accessible forms night",
                summary="An evening of making one form work with screen readers.",
                payment_note="Pay at the door").status_code == 303
    page = event_page(Visitor(app), event_id, language)
    assert one(page, "h1").get("lang") == ("en" if language == "zh-TW" else None)


def test_an_online_event_says_how_to_join(app):
    manager = signed_in(app)
    organization_id = start(manager)
    typed = fields(app, location="online", venue="WebMCP 社群頻道", street_address=ADDRESS)
    refused = manager.post(events_url(organization_id), typed)
    assert refused.status_code == 422
    assert the_jsonld(refused.data)["status"] == "invalid_input"
    page = BeautifulSoup(refused.data, "html.parser")
    for name in ("online_platform", "link_sent"):
        assert one(page, f"#create_event_draft-{name}-error").get_text().strip(), name
    assert one(page, "input[name=venue]")["value"] == "WebMCP 社群頻道"
    assert one(page, "input[name=street_address]")["value"] == ADDRESS
    event_id = draft(app, manager, organization_id, location="online", venue="WebMCP 社群頻道",
                     street_address=ADDRESS, online_platform="Google Meet",
                     link_sent="day_before")
    publish(manager, organization_id, event_id)
    # An online event keeps no street address: nothing stale reaches its page.
    assert stored(app, event_id, "street_address", "online_platform", "link_sent") == (
        "", "Google Meet", "day_before")
    joining = one(event_page(Visitor(app), event_id), ".online-platform").get_text(" ")
    assert "Google Meet" in joining and "the day before" in joining
    # Moved to a city, it keeps no platform.
    assert edit(app, manager, organization_id, event_id, online_platform="Zoom",
                link_sent="hour_before").status_code == 303
    assert stored(app, event_id, "online_platform", "link_sent") == ("", "")


@pytest.mark.parametrize(("typed", "kept"), [
    ("Python, python，PYTHON", ("Python",)),
    ("＃AI、  機器   學習 ,, #Rust", ("AI", "機器 學習", "Rust")),
    ("", ()),
])
def test_tags_are_kept_in_one_form(app, typed, kept):
    _manager, _organization_id, event_id = published(app, topic_tags=typed)
    assert stored(app, event_id, "topic_tags") == (",".join(kept),)


@pytest.mark.parametrize(("field", "typed"), [
    ("topic_tags", "a, b, c, d, e, f"),
    ("topic_tags", "這是一個超過二十個字的主題標籤真的太長了喔"),
    ("topic_tags", "ok, bad\u202etag"),
    ("payment_note", "付" * 501),
    ("online_platform", "P" * 41),
    ("street_address", "台北市\u200b信義區"),
    ("language", "ja"),
    ("link_sent", "whenever"),
])
def test_bad_details_are_refused_with_their_field_error(app, field, typed):
    manager = signed_in(app)
    organization_id = start(manager)
    values = fields(app, **{field: typed})
    answer = manager.post(events_url(organization_id), values)
    assert answer.status_code == 422
    told = the_jsonld(answer.data)
    assert told["status"] == "invalid_input" and set(told["errors"]) == {field}
    page = BeautifulSoup(answer.data, "html.parser")
    assert one(page, f"#create_event_draft-{field}-error").get_text().strip()
    control = one(page, f"[name={field}]")
    if control.name == "input":
        assert control["value"] == typed


def test_the_payment_note_reaches_the_review_the_registration_and_its_mail(app):
    _manager, _organization_id, event_id = published(app, payment_note=PAYMENT_NOTE,
                                                     price_amount="300")
    visitor = Visitor(app)
    deliver(app, Inbox())
    review = visitor.post(f"/en/events/{event_id}/register",
                          {"attendee_name": "Ann Lee", "email": visitor.email}, headers=HTMX)
    assert PAYMENT_NOTE in one(BeautifulSoup(review.data, "html.parser"),
                               ".review .payment-note").get_text()
    token = TOKEN_FIELD.search(review.get_data(as_text=True))
    assert token
    confirmed = visitor.post("/en/registrations/confirm",
                             {"confirmation_token": token.group(1)}, headers=HTMX)
    assert confirmed.status_code == 201, confirmed.get_data(as_text=True)[:300]
    told = BeautifulSoup(confirmed.data, "html.parser")
    assert PAYMENT_NOTE in one(told, ".notice--ok .payment-note").get_text()
    registration_id = the_jsonld(confirmed.data)["data"]["registration"]["id"]
    landing = BeautifulSoup(visitor.get(f"/en/registrations/{registration_id}").data,
                            "html.parser")
    assert one(landing, ".payment-note").get_text() == PAYMENT_NOTE
    inbox = Inbox()
    deliver(app, inbox)
    (mail,) = inbox.messages
    assert f"How to pay: {PAYMENT_NOTE}" in text_of(mail)
    html = mail.get_body(preferencelist=("html",))
    assert html is not None and f"How to pay: {PAYMENT_NOTE}" in str(html.get_content())


def test_moving_the_address_or_platform_mails_attendees(app):
    manager, organization_id, event_id = published(app)
    visitor = Visitor(app)
    register_in(visitor, "en", event_id)
    deliver(app, Inbox())
    assert edit(app, manager, organization_id, event_id, street_address=ADDRESS,
                topic_tags="forms").status_code == 303
    inbox = Inbox()
    deliver(app, inbox)
    (mail,) = inbox.messages
    assert f"Street address: — → {ADDRESS}" in text_of(mail)
    assert "forms" not in text_of(mail)  # tags are not where the event is
    # A new platform online is a move too.
    online = {"location": "online", "online_platform": "Google Meet",
              "link_sent": "on_registration"}
    assert edit(app, manager, organization_id, event_id, **online).status_code == 303
    assert edit(app, manager, organization_id, event_id,
                **{**online, "online_platform": "Discord"}).status_code == 303
    inbox = Inbox()
    deliver(app, inbox)
    assert any("Online platform: Google Meet → Discord" in text_of(mail)
               for mail in inbox.messages)
