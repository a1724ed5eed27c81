"""An organization's own events, from draft to published: steps for signed-in people in the
organizer area (never tools), each audited in the organization's log.

A draft is seen by the organization alone (`storage.event_drafts`); publishing puts it in
search, on its page and in the tools at once. Every save names the version it was made from:
one made from an older version is refused, saying which fields changed in between, so nothing
another manager saved is overwritten unseen. Moving a published event's time or place mails
each of its attendees what changed, in the transaction that saves it.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import TypedDict
from typing import cast

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from marshmallow import fields
from marshmallow import validate

from flask_webmcp.actions import human_action
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.result import conflict
from flask_webmcp.result import invalid_input
from flask_webmcp.result import not_found

from ...mail.kinds import EVENT_CHANGED
from ...storage import AuditEntry
from ...storage import Event
from ...storage import OrganizerEvent
from ...storage import Storage
from ..activity import logged_as
from ..projections import local_time
from ..projections import organizer_details
from ..registration_mail import event_facts
from ..schemas import TEXT_LANGUAGES
from ..schemas import EditEventInput
from ..schemas import EditEventParams
from ..schemas import EventFieldsInput
from ..schemas import EventFieldsParams
from ..schemas import OrganizerEventInput
from ..schemas import OrganizerEventParams
from ..schemas import ToolInput
from ..waitlist import pass_on
from . import ActionContext

# The fields of an organizer's event, in the form's order: what a save compares and names.
FORM_FIELDS = tuple(name for name in EventFieldsInput().fields if name != "organization_id")
TIMES = ("starts_at", "ends_at", "registration_deadline")
# What attendees are mailed about when it moves: when and where the event is (its address
# in person, its platform online).
TIME_AND_PLACE = ("starts_at", "ends_at", "location", "venue", "street_address",
                  "online_platform")
# How a date-time control shows a time (to the minute).
FORM_TIME = "%Y-%m-%dT%H:%M"
# How the form shows the topic tags it loads (`schemas.TopicTags` reads them back).
TAGS_AS_TYPED = ", "
DEFAULT_TEXT_LANGUAGE = next(iter(TEXT_LANGUAGES))


def field_label(name: str) -> str:
    """What the form calls one of the event's fields, in the language of the request."""
    return str(EventFieldsInput().fields[name].metadata["label"])


def form_values(organizer_event: OrganizerEvent, ctx: ActionContext) -> dict[str, Any]:
    """An event as its form shows it: times in the site's zone, to the minute."""
    event = organizer_event.event
    values: dict[str, Any] = {name: getattr(event, name) for name in FORM_FIELDS
                              if name not in TIMES}
    values.update((name, getattr(event, name).astimezone(ctx.timezone).strftime(FORM_TIME))
                  for name in TIMES)
    values["price_amount"] = event.price_amount or 0
    values["topic_tags"] = TAGS_AS_TYPED.join(event.topic_tags)
    # An event the organizer area made before languages were declared: the site's default.
    values["language"] = event.language or DEFAULT_TEXT_LANGUAGE
    return values


def _event_from(params: EventFieldsParams, event_id: str, held_seats: int,
                ctx: ActionContext) -> Event:
    """The event the form's fields describe (times typed in the site's zone, kept in UTC)."""
    def utc(moment: datetime) -> datetime:
        return moment.replace(tzinfo=ctx.timezone).astimezone(UTC)

    amount = params["price_amount"]
    return Event(
        id=event_id, title=params["title"], summary=params["summary"],
        description=params["description"], starts_at=utc(params["starts_at"]),
        ends_at=utc(params["ends_at"]), location=params["location"], venue=params["venue"],
        price="paid" if amount else "free", level=params["level"],
        capacity=params["capacity"], held_seats=held_seats,
        registration_deadline=utc(params["registration_deadline"]),
        price_amount=amount or None, price_currency=params["price_currency"],
        waitlist=params["waitlist"], language=params["language"],
        street_address=params["street_address"], online_platform=params["online_platform"],
        link_sent=params["link_sent"], topic_tags=params["topic_tags"],
        payment_note=params["payment_note"])


def _changed_fields(before: Event, after: Event) -> list[str]:
    """The names of the form's fields whose values differ between two versions."""
    return [name for name in FORM_FIELDS if getattr(before, name) != getattr(after, name)]


def _shown(event: Event, name: str, ctx: ActionContext) -> str:
    """One field of an event as a page or mail receives it: a time in ISO 8601 in the site's
    zone (written out in the reader's language there), tags as typed, anything else as
    text."""
    value = getattr(event, name)
    if isinstance(value, datetime):
        return local_time(value, ctx.timezone)
    return TAGS_AS_TYPED.join(value) if isinstance(value, tuple) else str(value)


def _in_the_past(name: str) -> ToolResult:
    return invalid_input(name, {"starts_at": [_("Give a start still to come.")]})


def _audit(db: Storage, ctx: ActionContext, organization_id: str, action: str,
           event_id: str, detail: str | None = None) -> None:
    assert ctx.account is not None, "the organizer area is for people who signed in"
    db.record_audit(AuditEntry(at=ctx.now, organization_id=organization_id,
                               account_id=ctx.account.id, action=action, event_id=event_id,
                               target=event_id, detail=detail))


@logged_as(_l("Draft an event"), _l("%(who)s drafted an event"))
@human_action("create_event_draft", schema=EventFieldsInput,
              answers=(Status.SUCCESS,), creates=True)
def create_event_draft(db: Storage, params: EventFieldsParams, ctx: ActionContext
                       ) -> ToolResult:
    """Keep a new event of the organization as a draft: nobody outside it sees it yet.

    The web layer has checked that the account may manage the organization's events."""
    name = "create_event_draft"
    assert ctx.account is not None, "the organizer area is for people who signed in"
    event = _event_from(params, f"evt-{secrets.token_hex(8)}", 0, ctx)
    if event.starts_at <= ctx.now:
        return _in_the_past(name)
    with db.transaction():
        db.create_event_draft(event, params["organization_id"], ctx.account.id, ctx.now)
        _audit(db, ctx, params["organization_id"], name, event.id)
    return ToolResult(
        action=name, status=Status.SUCCESS,
        message=_("The draft is saved. Only your organization sees it until you publish it."),
        data={"eventId": event.id}, next_action=_("Check the preview, then publish it."),
        target=event.id)


def _conflict(db: Storage, name: str, current: OrganizerEvent, since: int,
              ctx: ActionContext) -> ToolResult:
    """Refuse a save made from version `since`: say which fields changed after it, and give
    their values now and the version to save from once the person has looked."""
    changed = db.event_edits_since(current.event.id, since) or list(FORM_FIELDS)
    event = current.event
    # Translators: what separates the names of the fields listed in one sentence.
    separator = _(", ")
    return ToolResult(
        action=name, status=Status.CONFLICT,
        message=_("Someone else saved this event after you opened it, and changed: "
                  "%(fields)s. Nothing of yours was saved: check their values below, then "
                  "save again.", fields=separator.join(field_label(field) for field in changed)),
        data={"version": current.version,
              "changed": [{"field": field, "label": field_label(field),
                           "value": _shown(event, field, ctx)} for field in changed]},
        next_action=_("Check what changed, then save again."))


@logged_as(_l("Edit an event"), _l("%(who)s edited an event"))
@human_action("edit_event", schema=EditEventInput,
              answers=(Status.SUCCESS, Status.NOT_FOUND, Status.CONFLICT))
def edit_event(db: Storage, params: EditEventParams, ctx: ActionContext) -> ToolResult:
    """Save an event of the organization's, draft or published, from the version the person
    saw. A published event is written again with its search terms; a lower capacity must
    still seat everyone who has a seat; a new time or place is mailed to each attendee."""
    name = "edit_event"
    assert ctx.account is not None, "the organizer area is for people who signed in"
    organization_id, event_id = params["organization_id"], params["event_id"]
    with db.transaction():
        current = db.organizer_event(event_id, for_update=True)
        if current is None or current.organization_id != organization_id:
            return not_found(name, _("This organization has no such event."))
        if current.version != params["version"]:
            return _conflict(db, name, current, params["version"], ctx)
        before = current.event
        event = _event_from(params, event_id, before.held_seats, ctx)
        changed = _changed_fields(before, event)
        if not changed:
            return ToolResult(action=name, status=Status.SUCCESS,
                              message=_("Nothing was changed."), next_action=_("Done."),
                              target=event_id)
        if "starts_at" in changed and event.starts_at <= ctx.now:
            return _in_the_past(name)
        taken = min(before.seats_taken or 0, before.capacity)  # people waiting hold no seat
        if event.capacity < taken:
            return invalid_input(name, {"capacity": [_(
                "%(taken)d seats are taken: give at least %(taken)d.", taken=taken)]})
        version = current.version + 1
        saved = (db.save_published_event(event, current.version) if current.published
                 else db.save_event_draft(event, current.version, ctx.account.id, ctx.now))
        assert saved, "the event is locked: no other save can come between"
        db.record_event_edit(event_id, version, changed, ctx.account.id, ctx.now)
        _audit(db, ctx, organization_id, name, event_id, " ".join(changed))
        mailed = 0
        if current.published:
            mailed = _mail_attendees(db, before, event, changed, version, ctx)
            if event.capacity > before.capacity and event.waitlist:
                pass_on(db, event_id, ctx)  # the new seats go to those waiting first
    message = (_("Saved. We are mailing the %(count)d attendees what changed.", count=mailed)
               if mailed else _("Saved."))
    return ToolResult(action=name, status=Status.SUCCESS, message=message,
                      data={"changed": changed, "version": version},
                      next_action=_("Done."), target=event_id)


def _mail_attendees(db: Storage, before: Event, after: Event, changed: list[str],
                    version: int, ctx: ActionContext) -> int:
    """Queue to each active attendee the mail saying how the event's time or place moved
    (in the language they registered in; once per attendee and save); how many."""
    moved = [name for name in TIME_AND_PLACE if name in changed]
    if not moved:
        return 0

    changes = [{"field": name, "before": _shown(before, name, ctx),
                "after": _shown(after, name, ctx)}
               for name in moved]
    facts = event_facts(replace(after, seats_taken=None), ctx)
    attendees = db.active_attendees(after.id)
    for registration in attendees:
        db.queue_mail(f"event-changed:{after.id}:{version}:{registration.id}",
                      registration.email, EVENT_CHANGED.name, registration.language,
                      {"attendeeName": registration.attendee_name, "event": facts,
                       "changes": changes}, ctx.now)
    return len(attendees)


@logged_as(_l("Publish an event"), _l("%(who)s published an event"))
@human_action("publish_event", schema=OrganizerEventInput,
              answers=(Status.SUCCESS, Status.NOT_FOUND, Status.CONFLICT))
def publish_event(db: Storage, params: OrganizerEventParams, ctx: ActionContext
                  ) -> ToolResult:
    """Publish a draft as the person previewed it (its version): in search, on its page and
    in the tools as this commits."""
    name = "publish_event"
    organization_id, event_id = params["organization_id"], params["event_id"]
    with db.transaction():
        current = db.organizer_event(event_id, for_update=True)
        if current is None or current.organization_id != organization_id:
            return not_found(name, _("This organization has no such event."))
        if current.published:
            return conflict(name, _("This event is already published."))
        if current.version != params["version"]:
            return _conflict(db, name, current, params["version"], ctx)
        if current.event.starts_at <= ctx.now:
            return conflict(name, _("This event's start has passed: give it a start still "
                                    "to come, then publish it."))
        db.publish_event_draft(current)
        _audit(db, ctx, organization_id, name, event_id)
    return ToolResult(
        action=name, status=Status.SUCCESS,
        message=_("Published: people can find the event and register now."),
        data={"eventId": event_id, "url": ctx.pages.event(event_id)},
        next_action=_("Done."), target=event_id)


def event_row(organizer_event: OrganizerEvent, ctx: ActionContext) -> dict[str, Any]:
    """An organization's event as the lists of its page show it."""
    event = organizer_event.event
    return {"id": event.id, "title": event.title, "published": organizer_event.published,
            "startsAt": local_time(event.starts_at, ctx.timezone),
            # The people waiting count as claims (a seat that frees is theirs), but they
            # take no seat: "12 of 10 seats taken" is never said.
            "seatsTaken": min(event.seats_taken or 0, event.capacity),
            "capacity": event.capacity,
            "cancelled": event.cancelled_at is not None,
            "url": ctx.pages.event(event.id) if organizer_event.published else None}


def organization_events(db: Storage, organization_id: str, ctx: ActionContext
                        ) -> dict[str, Any]:
    """The organization's events as its page lists them: drafts, upcoming (the soonest
    first) and the latest PAST_EVENTS_SHOWN past ones (the latest first), with how many have
    ended in all (`pastEvents`)."""
    found, past = db.organization_events(organization_id, ctx.now, PAST_EVENTS_SHOWN)
    return {**events_by_time(found, ctx), "pastEvents": past}


def events_by_time(found: Sequence[OrganizerEvent], ctx: ActionContext
                   ) -> dict[str, list[dict[str, Any]]]:
    """Events read the latest start first, as the organizer pages list them: drafts,
    upcoming (not ended yet, the soonest first) and past (the latest first)."""
    return {
        "drafts": [event_row(one, ctx) for one in found if not one.published],
        "upcoming": [event_row(one, ctx) for one in reversed(found)
                     if one.published and one.event.ends_at > ctx.now],
        "past": [event_row(one, ctx) for one in found
                 if one.published and one.event.ends_at <= ctx.now]}


# How many of an organization's past events its page and the dashboard list, the latest first
# (all of them are a link away, a page at a time).
PAST_EVENTS_SHOWN = 5
# How many past events a page of an organization's past events lists.
PAST_EVENTS_PER_PAGE = 20
# Far past any organization's list; a bound so that a typed page number is never a huge offset.
LAST_PAST_EVENTS_PAGE = 10_000


class PastEventsInput(ToolInput):
    """Which page of an organization's past events (an address's query)."""

    page = fields.Integer(
        load_default=1,
        validate=validate.Range(min=1, max=LAST_PAST_EVENTS_PAGE,
                                error=cast(str, _l("Give a page from {min} to {max}."))),
        metadata={"label": _l("Page")})


class PastEventsParams(TypedDict):
    """What `PastEventsInput` loads."""

    page: int


def past_events(db: Storage, organization_id: str, params: PastEventsParams,
                ctx: ActionContext) -> dict[str, Any]:
    """A page of the organization's published events that have ended (the latest first), as
    its lists show them, with how many there are and how many pages they fill."""
    page = params["page"]
    found, total = db.past_organization_events(organization_id, ctx.now, PAST_EVENTS_PER_PAGE,
                                               (page - 1) * PAST_EVENTS_PER_PAGE)
    return {"events": [event_row(one, ctx) for one in found], "total": total, "page": page,
            "pages": -(-total // PAST_EVENTS_PER_PAGE)}


def event_preview(organizer_event: OrganizerEvent, ctx: ActionContext) -> dict[str, Any]:
    """What the preview shows of an organization's event: what its page will show."""
    event = organizer_event.event
    return {**event_row(organizer_event, ctx), "summary": event.summary,
            "description": event.description,
            "endsAt": local_time(event.ends_at, ctx.timezone),
            "registrationDeadline": local_time(event.registration_deadline, ctx.timezone),
            "location": event.location, "venue": event.venue, "level": event.level,
            "price": event.price, "priceAmount": event.price_amount,
            "priceCurrency": event.price_currency, "waitlist": event.waitlist,
            "version": organizer_event.version, **organizer_details(event)}
