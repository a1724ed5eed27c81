"""The pages `flask webmcp lint` checks: every template, rendered with realistic data.

A throwaway copy of the site (its own database in a temporary folder, seeded with the sample
events) is walked the way a visitor would walk it: search, preview, an event's page, save,
register and confirm, cancel, the saved list. Then every declared route (see
`webmcp.routes`) the walk did not reach is visited too, as a page and as a partial, with
input made from its action's schema: a new tool route is checked without editing this file.
Every HTML answer (page or htmx partial) is kept with the templates that rendered it, and so
is the HTML of every mail the walk queued (a registration confirmed, its reminder, one
cancelled, a sign-in link): mail is no page, but it is the site's HTML too, and a new kind of
mail is checked once the walk makes one.

The walk is made once in each of the site's languages (English first, so the manifest reads
in the catalog's source language), each time by a new visitor of a new copy of the site.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import replace
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from flask import Flask
from marshmallow import Schema
from marshmallow import fields
from marshmallow import validate
from werkzeug.test import TestResponse

from flask_webmcp.dev.lint import PageRecorder
from flask_webmcp.dev.lint import RenderedPage
from flask_webmcp.routes import route_roles

from ..web.languages import LANGUAGES

HTMX = {"HX-Request": "true", "HX-Request-Type": "partial"}
JSON = {"Accept": "application/json"}
CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')
TOKEN_FIELD = re.compile(r'name="confirmation_token" value="([^"]+)"')


def sample_pages(app: Flask) -> list[RenderedPage]:
    """Walk a sandbox copy of `app` in each language and return the pages it answered."""
    pages: list[RenderedPage] = []
    for language in sorted(LANGUAGES, key=lambda code: code != "en"):
        pages += _walk(app, f"/{language}")
    return pages


def _walk(app: Flask, prefix: str) -> list[RenderedPage]:
    """The pages of one walk through a sandbox copy of `app`, at addresses under `prefix`."""
    from .. import create_app
    from ..storage.connection import prepare_database

    with tempfile.TemporaryDirectory() as folder:
        sandbox = create_app({
            "TESTING": True,
            "SECRET_KEY": "lint samples",
            "DATABASE": str(Path(folder) / "events.sqlite"),
            "SEED_FILE": app.config["SEED_FILE"],
            # The walk asks more than a person would (signing in after every other route).
            "RATELIMIT_ENABLED": False,
        })
        with sandbox.app_context():
            prepare_database()
        visit = LanguageRecorder(sandbox, prefix)
        _find(visit)
        ids = _register_and_cancel(visit)
        ids |= _wait_for_the_person(visit, ids)
        ids |= _join_a_waitlist(visit, ids)
        _sign_an_agent_in(visit, ids)
        _visit_the_other_routes(visit, ids)
        organization = _run_an_organization(visit, ids)
        _cancel_an_event(visit, organization, ids)
        with sandbox.test_request_context(f"{prefix}/"):
            return visit.pages + _queued_mail(sandbox, prefix)


def _queued_mail(sandbox: Flask, prefix: str) -> list[RenderedPage]:
    """The HTML part of every mail queued in the sandbox, as a page in the walk's language
    (checked as if shown at its home page: a mail has no address of its own)."""
    from ..mail.kinds import REGISTRATION_CONFIRMED
    from ..mail.kinds import REGISTRATION_REMINDER
    from ..mail.kinds import WAITLIST_OFFER
    from ..mail.kinds import kind_named
    from ..mail.message import build_message
    from ..storage.connection import get_db

    now = sandbox.config["CLOCK"]()
    pages = []
    queued = get_db().claim_mail(now, timedelta(minutes=5), limit=100)
    # The reminder (queued the day before an event, which the walk never reaches) says what
    # the confirmation says: it is rendered from the confirmation's payload.
    reminders = [replace(mail, kind=REGISTRATION_REMINDER.name) for mail in queued
                 if mail.kind == REGISTRATION_CONFIRMED.name]
    # So does a waitlist's offer (a seat frees in no walk), with when its hold ends.
    offers = [replace(mail, kind=WAITLIST_OFFER.name, payload={
        **mail.payload, "entryId": "wait-sample-entry", "acceptUrl": mail.payload["manageUrl"],
        "offerEndsAt": mail.payload["event"]["startsAt"]}) for mail in reminders[:1]]
    for mail in queued + reminders + offers:
        body = build_message(mail, now).get_body(preferencelist=("html",))
        assert isinstance(body, EmailMessage)  # a mail's HTML part is one
        pages.append(RenderedPage(url=f"{prefix}/", rule=None, html=body.get_content(),
                                  templates=(kind_named(mail.kind).html_template,),
                                  shows_result=False))
    return pages


class LanguageRecorder(PageRecorder):
    """A PageRecorder that asks for every address of the site under one language prefix."""

    def __init__(self, app: Flask, prefix: str):
        super().__init__(app)
        self.prefix = prefix

    def open(self, url: str, **kwargs: Any) -> TestResponse:
        """Send one request to the address in this recorder's language."""
        return super().open(url if url.startswith(self.prefix) else self.prefix + url, **kwargs)


def _find(visit: LanguageRecorder) -> None:
    events = visit.get("/events", headers=JSON).get_json()["data"]["events"]
    first, second = events[0]["id"], events[1]["id"]
    for url in ("/events", "/events?query=web&location=taipei", "/events?page=2",
                "/events?query=no-event-has-this-word", "/events?date_from=not-a-date"):
        visit.get(url)
    visit.get("/events?query=web", headers=HTMX)
    visit.get(f"/events/details?event_id={first}", headers=HTMX)
    visit.get(f"/events/{first}")
    visit.get("/events/evt-no-such-event")
    visit.get("/events/evt-no-such-event", headers=HTMX)
    csrf = _csrf(visit, first)
    visit.post(f"/events/{first}/save", data={"csrf_token": csrf}, headers=HTMX)
    visit.post(f"/events/{second}/save", data={"csrf_token": csrf}, follow_redirects=True)
    visit.get("/saved")
    visit.post(f"/saved/{second}/remove", data={"csrf_token": csrf}, headers=HTMX)


def _register_and_cancel(visit: LanguageRecorder) -> dict[str, str]:
    events = visit.get("/events", headers=JSON).get_json()["data"]["events"]
    first, second = events[0]["id"], events[1]["id"]
    csrf = _csrf(visit, first)
    attendee = {"csrf_token": csrf, "attendee_name": "Ann Lee", "email": "ann@example.com"}
    visit.get(f"/events/{first}/register")
    visit.post(f"/events/{first}/register", data={**attendee, "email": "not-an-address"},
               headers=HTMX)
    review = visit.post(f"/events/{first}/register", data=attendee, headers=HTMX)
    token = _field_value(TOKEN_FIELD, review.get_data(as_text=True))
    visit.post("/registrations/confirm", data={"csrf_token": csrf, "confirmation_token": token},
               headers=HTMX)
    review = visit.post(f"/events/{second}/register", data=attendee, follow_redirects=True)
    token = _field_value(TOKEN_FIELD, review.get_data(as_text=True))
    confirmed = visit.post("/registrations/confirm", headers=JSON,
                           data={"csrf_token": csrf, "confirmation_token": token}).get_json()
    registration = confirmed["data"]["registration"]["id"]
    visit.get("/registrations")
    visit.get(f"/registrations/{registration}")
    dialog = visit.post("/registrations/cancellation", headers=HTMX,
                        data={"csrf_token": csrf, "registration_id": registration})
    token = _field_value(TOKEN_FIELD, dialog.get_data(as_text=True))
    visit.post(f"/registrations/{registration}/cancel", headers=HTMX,
               data={"csrf_token": csrf, "confirmation_token": token})
    visit.get("/registrations")
    return {"event_id": first, "registration_id": registration, "csrf_token": csrf}


def _wait_for_the_person(visit: LanguageRecorder, ids: dict[str, str]) -> dict[str, str]:
    """A registration and a cancellation waiting on the review page, and an agent connected
    (its token shown once) and disconnected."""
    csrf = ids["csrf_token"]
    events = visit.get("/events", headers=JSON).get_json()["data"]["events"]
    visit.post(f"/events/{events[2]['id']}/register", headers=HTMX, data={
        "csrf_token": csrf, "attendee_name": "Ann Lee", "email": "ann@example.com"})
    listed = visit.get("/registrations", headers=HTMX).get_data(as_text=True)
    active = _field_value(re.compile(r'name="registration_id" value="([^"]+)"'), listed)
    visit.post("/registrations/cancellation", headers=HTMX,
               data={"csrf_token": csrf, "registration_id": active})
    visit.get("/registrations")
    visit.get("/registrations/pending")
    visit.post("/agents", data={"csrf_token": csrf, "label": "Ann Lee"},
               follow_redirects=True)
    connected = visit.post("/agents", headers=JSON, data={"csrf_token": csrf}).get_json()
    connection = connected["data"]["connection"]["id"]
    visit.post(f"/agents/{connection}/disconnect", data={"csrf_token": csrf},
               follow_redirects=True)
    return {"connection_id": connection}


def _join_a_waitlist(visit: LanguageRecorder, ids: dict[str, str]) -> dict[str, str]:
    """A full event whose waitlist is on: its page, the form that joins, the review of joining
    and the place on My registrations and the review page (none when the data has no such
    event)."""
    csrf = ids["csrf_token"]
    events = visit.get("/events", headers=JSON).get_json()["data"]["events"]
    for event in (event for event in events if event["state"] == "full"):
        register = f"/events/{event['id']}/register"
        if 'toolname="prepare_event_registration"' in visit.get(register).get_data(as_text=True):
            break
    else:
        return {}
    visit.get(f"/events/{event['id']}")
    review = visit.post(register, headers=HTMX, data={
        "csrf_token": csrf, "attendee_name": "Ann Lee", "email": "ann@example.com"})
    token = _field_value(TOKEN_FIELD, review.get_data(as_text=True))
    visit.post("/registrations/waitlist", headers=HTMX,
               data={"csrf_token": csrf, "confirmation_token": token})
    visit.get(f"/events/{event['id']}")
    visit.get(register)
    visit.get("/registrations/pending")
    listed = visit.get("/registrations").get_data(as_text=True)
    return {"entry_id": _field_value(re.compile(r"/registrations/waitlist/(wait-[^/]+)/"),
                                     listed)}


def _sign_an_agent_in(visit: LanguageRecorder, ids: dict[str, str]) -> None:
    """An MCP client signs in with OAuth: the consent page (the client's name is its own
    words), approved, then asked again and denied (each answer a page that sends the browser
    back to the client)."""
    callback = "http://127.0.0.1:8765/callback"
    registered = visit.app.test_client().post("/oauth/register", json={
        "client_name": "Ann's <agent>", "redirect_uris": [callback]}).get_json()
    query = urlencode({"response_type": "code", "client_id": registered["client_id"],
                       "redirect_uri": callback, "state": "sample",
                       "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                       "code_challenge_method": "S256"})
    for decision in ("approve", "deny"):
        visit.get(f"/oauth/authorize?{query}")
        visit.post(f"/oauth/authorize?{query}",
                   data={"csrf_token": ids["csrf_token"], "decision": decision})


def _visit_the_other_routes(visit: LanguageRecorder, ids: dict[str, str]) -> None:
    """Every declared route no page came from yet, as a page and as a partial, with ids from
    the walk in its address and input made from its action's schema."""
    visited = {page.rule for page in visit.pages}
    for rule, role in route_roles(visit.app):
        if rule.rule in visited or not set(rule.arguments) <= set(ids):
            continue
        url = rule.rule
        for argument in rule.arguments:
            url = url.replace(f"<{argument}>", ids[argument])
        given = _sample_input(role.action.schema, set(rule.arguments)) if role.action else {}
        for headers in ({}, HTMX):
            if "POST" in (rule.methods or ()):
                visit.post(url, data={**given, "csrf_token": ids["csrf_token"]},
                           headers=headers)
            else:
                visit.get(url, query_string=given, headers=headers)


def _run_an_organization(visit: LanguageRecorder, ids: dict[str, str]) -> str:
    """Signed in (with a link made here), a person starts an organization, invites someone
    (once with a bad address), and the invited person's link shows its page; the organization
    runs the event registered for, whose attendee list is shown (searched, and once with a bad
    page): the organizer area's pages, and the invitation's mail."""
    from ..domain.tokens import hash_token
    from ..storage.connection import get_db

    app = visit.app
    now = app.config["CLOCK"]()
    with app.app_context():
        get_db().create_sign_in_link(hash_token("sample-sign-in"), "owner@example.com", now,
                                     now + timedelta(minutes=15))
    csrf = _field_value(CSRF_FIELD, visit.get("/sign-in/sample-sign-in").get_data(as_text=True))
    visit.post("/sign-in/sample-sign-in", data={"csrf_token": csrf})
    csrf = _field_value(CSRF_FIELD, visit.get("/organizer/organizations/new")
                        .get_data(as_text=True))
    visit.post("/organizer/organizations", data={"csrf_token": csrf, "name": ""})
    started = visit.post("/organizer/organizations",
                         data={"csrf_token": csrf, "name": "台北網頁開發者聚會"})
    organization = started.headers["Location"].rsplit("/", 1)[1]
    invitations = f"/organizer/organizations/{organization}/invitations"
    visit.post(invitations, data={"csrf_token": csrf, "email": "not-an-address",
                                  "role": "manager"})
    visit.post(invitations, data={"csrf_token": csrf, "email": "bob@example.com",
                                  "role": "manager"})
    visit.get(f"/organizer/organizations/{organization}")
    visit.get("/organizer/")
    visit.get("/organizer/invitations/no-such-invitation")
    with app.app_context():
        (open_one,) = get_db().open_invitations(organization, now)
        get_db().create_invitation(replace(open_one, id="inv-sample", email="owner@example.com"),
                                   hash_token("sample-invitation"))
    visit.get("/organizer/invitations/sample-invitation")
    with app.app_context():
        get_db().set_event_organization(ids["event_id"], organization)
    attendees = f"/organizer/organizations/{organization}/events/{ids['event_id']}/attendees"
    visit.get(attendees)
    visit.get(attendees, query_string={"query": "web"})
    visit.get(attendees, query_string={"query": "Ann", "page": "0"})
    past = f"/organizer/organizations/{organization}/past-events"
    visit.get(past)
    visit.get(past, query_string={"page": "0"})
    _check_in_at_the_door(visit, organization, csrf)
    _run_an_event(visit, organization, csrf)
    return organization


def _cancel_an_event(visit: LanguageRecorder, organization: str, ids: dict[str, str]) -> None:
    """The organization runs the event the walk holds a registration for: its public page
    and the event's name it; the organizer cancels it (once with a reason too long), which
    mails the attendee; then the event's page, its registration form and the search say it is
    cancelled."""
    from ..storage.connection import get_db

    event = ids["event_id"]
    with visit.app.app_context():
        get_db().set_event_organization(event, organization)
    visit.get(f"/organizations/{organization}")
    visit.get(f"/events/{event}")
    cancel = f"/organizer/organizations/{organization}/events/{event}/cancel"
    csrf = _field_value(CSRF_FIELD, visit.get(cancel).get_data(as_text=True))
    reason = "講者臨時生病。"
    visit.post(cancel, data={"csrf_token": csrf, "reason": reason * 50})
    visit.post(cancel, data={"csrf_token": csrf, "reason": reason}, follow_redirects=True)
    visit.get(f"/events/{event}")
    visit.get(f"/events/{event}/register")
    visit.get("/events")


def _check_in_at_the_door(visit: LanguageRecorder, organization: str, csrf: str) -> None:
    """The organization runs a seed event: its door page, a code typed wrong and one of
    nobody (as pages and as htmx's panel), an attendee checked in, then refused a second
    time."""
    from ..domain.tokens import CheckInCodes
    from ..storage.connection import get_db

    app = visit.app
    event_id = "evt-design-tokens-taipei"
    with app.app_context():
        get_db().set_event_organization(event_id, organization)
    door = f"/organizer/organizations/{organization}/events/{event_id}/door"
    visit.get(door)
    for headers in ({}, HTMX):
        visit.post(door, data={"csrf_token": csrf, "code": "not a code"}, headers=headers)
        visit.post(door, data={"csrf_token": csrf, "code": "AAAA-AAAA-AAAA"}, headers=headers)
    review = visit.post(f"/events/{event_id}/register", headers=HTMX, data={
        "csrf_token": csrf, "attendee_name": "Ann Lee", "email": "ann.door@example.com"})
    token = _field_value(TOKEN_FIELD, review.get_data(as_text=True))
    confirmed = visit.post("/registrations/confirm", headers=JSON,
                           data={"csrf_token": csrf, "confirmation_token": token}).get_json()
    key = app.secret_key
    code = CheckInCodes(key if isinstance(key, bytes) else str(key).encode()).code_for(
        confirmed["data"]["registration"]["id"])
    visit.post(door, data={"csrf_token": csrf, "code": code}, follow_redirects=True)
    visit.post(door, data={"csrf_token": csrf, "code": code}, headers=HTMX)
    visit.post(door, data={"csrf_token": csrf, "code": code})


# What the walk's organizer writes of the event it drafts, and the venues it gives it (tests
# of the pages' languages cut them out as typed).
SAMPLE_EVENT = {"title": "無障礙網頁工作坊",
                "summary": "一個晚上，把一份報名表單改到螢幕閱讀器也好用。",
                "description": "我們從一份真實的表單開始。\n\n帶筆電來。",
                "language": "zh-Hant-TW", "street_address": "台北市大安區復興南路一段 390 號",
                "topic_tags": "無障礙、表單", "payment_note": "現場以現金或 LINE Pay 付款"}
SAMPLE_VENUES = ("台北市大安區", "台北市信義區")


def _run_an_event(visit: LanguageRecorder, organization: str, csrf: str) -> None:
    """The organization drafts an event (once with a bad field), previews it, publishes it,
    someone registers, and its start moves: the event pages of the organizer area, and the
    mail an attendee gets."""
    app = visit.app
    zone = ZoneInfo(app.config["SITE_TIMEZONE"])
    starts = (app.config["CLOCK"]() + timedelta(days=21)).astimezone(zone)
    starts = starts.replace(hour=19, minute=0, second=0, microsecond=0)
    minute = "%Y-%m-%dT%H:%M"
    event = {"csrf_token": csrf, **SAMPLE_EVENT, "venue": SAMPLE_VENUES[0],
             "starts_at": starts.strftime(minute),
             "ends_at": (starts + timedelta(hours=2)).strftime(minute),
             "registration_deadline": (starts - timedelta(days=1)).strftime(minute),
             "location": "taipei", "level": "beginner",
             "capacity": "30", "waitlist": "False", "price_amount": "0", "price_currency": "TWD"}
    events = f"/organizer/organizations/{organization}/events"
    visit.get(f"{events}/new")
    visit.post(events, data={**event, "capacity": "0"})
    drafted = visit.post(events, data=event)
    event_id = drafted.headers["Location"].rsplit("/", 1)[1]
    visit.get(f"{events}/{event_id}")
    visit.get(f"{events}/{event_id}/edit")
    visit.post(f"{events}/{event_id}/publish", data={"csrf_token": csrf, "version": "1"})
    visit.get(f"{events}/{event_id}")
    attendee = {"csrf_token": csrf, "attendee_name": "Ann Lee", "email": "ann@example.com"}
    review = visit.post(f"/events/{event_id}/register", data=attendee, headers=HTMX)
    token = _field_value(TOKEN_FIELD, review.get_data(as_text=True))
    visit.post("/registrations/confirm", data={"csrf_token": csrf, "confirmation_token": token},
               headers=HTMX)
    later = {**event, "version": "1", "starts_at": (starts + timedelta(hours=1)).strftime(minute)}
    visit.post(f"{events}/{event_id}", data=later)
    # A second save from the same version: the form saying what changed meanwhile.
    visit.post(f"{events}/{event_id}", data={**later, "venue": SAMPLE_VENUES[1]})
    visit.get(f"/organizer/organizations/{organization}")


def _sample_input(schema: type[Schema], bound: set[str]) -> dict[str, str]:
    """A plausible value for each required field of `schema` not bound by the address."""
    values = {}
    for name, field in schema().load_fields.items():
        if name in bound or not field.required:
            continue
        choices = [v for v in field.validators if isinstance(v, validate.OneOf)]
        if choices:
            values[name] = str(next(iter(choices[0].choices)))
        elif isinstance(field, fields.Email):
            values[name] = "ann@example.com"
        elif isinstance(field, fields.Date):
            values[name] = "2030-01-01"
        elif isinstance(field, fields.Number):
            values[name] = "1"
        else:
            values[name] = "Ann Lee"
    return values


def _csrf(visit: LanguageRecorder, event_id: str) -> str:
    """The visitor's form token, read from an event page (its save form posts)."""
    page = visit.client.get(f"{visit.prefix}/events/{event_id}").get_data(as_text=True)
    return _field_value(CSRF_FIELD, page)


def _field_value(field: re.Pattern[str], page: str) -> str:
    """The value of a hidden field the walk needs; a page without it stops the walk here."""
    found = field.search(page)
    if found is None:
        raise LookupError(f"the page has no field matching {field.pattern!r}")
    return found.group(1)
