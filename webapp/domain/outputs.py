"""The output contracts: one marshmallow schema per tool for the `data` its answers carry.

Each mirrors a projection (`projections.py`) or the data an action builds, and is declared on
the tool's catalog entry (`Tool.output`): MCP's outputSchema narrows the envelope's `data` to
it, so a client knows what a result holds before calling. They describe answers and never
load input. A key that only some statuses carry is optional; every schema lets unknown keys
pass (a later release may add some, and a client that validates results must not break), and
the tests check every real answer against its tool's schema with unknown keys refused, so a
projection that grows a key without its schema fails there.
"""

from __future__ import annotations

from marshmallow import EXCLUDE
from marshmallow import Schema
from marshmallow import fields
from marshmallow import validate

from .schemas import LEVELS
from .schemas import LINK_TIMES
from .schemas import LOCATIONS
from .schemas import PRICES
from .schemas import TEXT_LANGUAGES

EVENT_STATES = ("open", "full", "closed", "cancelled")
# What an empty search offers instead (actions/events.py, `nearest_searches`).
NEAREST_KINDS = ("any_date", "same_place", "online")
REGISTRATION_STATES = ("active", "cancelled")
# A place on a waitlist as the person's plans list it: only live ones (`storage.waitlist`).
WAITLIST_STATES = ("waiting", "offered")
# What a person confirms: the human-only steps (actions/registrations.py).
CONFIRMS = ("confirm_registration", "confirm_cancellation")


class ToolOutput(Schema):
    """Base of every output schema: unknown keys pass (see the module's docstring)."""

    class Meta:
        unknown = EXCLUDE


def _moment(key: str) -> fields.DateTime:
    """A moment a result gives as ISO 8601 with the site's UTC offset, under `key`."""
    return fields.DateTime(required=True, data_key=key)


class EventSummaryOutput(ToolOutput):
    """A search result item (`projections.event_summary`)."""

    id = fields.String(required=True)
    url = fields.String(required=True)
    title = fields.String(required=True)
    summary = fields.String(required=True)
    starts_at = _moment("startsAt")
    location = fields.String(required=True, validate=validate.OneOf(list(LOCATIONS)))
    price = fields.String(required=True, validate=validate.OneOf(list(PRICES)))
    level = fields.String(required=True, validate=validate.OneOf(list(LEVELS)))
    language = fields.String(validate=validate.OneOf(list(TEXT_LANGUAGES)), metadata={
        "description": "The language the organizer wrote the event's text in, when they "
                       "said (BCP 47)"})


class EventListingOutput(EventSummaryOutput):
    """A search result item with its seats and price at a glance (`projections.event_listing`)."""

    remaining_seats = fields.Integer(required=True, allow_none=True, data_key="remainingSeats",
                                     metadata={"description": "Seats left (null: no limit)"})
    registration_deadline = _moment("registrationDeadline")
    state = fields.String(required=True, validate=validate.OneOf(EVENT_STATES))
    waitlist = fields.Boolean(required=True, metadata={
        "description": "Whether the event takes a waitlist: when it is full, "
                       "prepare_event_registration prepares joining the waitlist (no seat) "
                       "instead of refusing"})
    price_amount = fields.Integer(required=True, allow_none=True, data_key="priceAmount",
                                  metadata={"description": "0 when free; null when paid and "
                                                           "no amount is given"})
    price_currency = fields.String(required=True, allow_none=True, data_key="priceCurrency")


class EventDetailsOutput(EventListingOutput):
    """One event in full (`projections.event_details`)."""

    description = fields.String(required=True)
    ends_at = _moment("endsAt")
    venue = fields.String(required=True)
    cancellation_reason = fields.String(data_key="cancellationReason", metadata={
        "description": "cancelled: why, in the organizer's words, when they said"})
    # What an organizer may add (`projections.organizer_details`), each only when given.
    street_address = fields.String(data_key="streetAddress", metadata={
        "description": "In person: the street address"})
    online_platform = fields.String(data_key="onlinePlatform", metadata={
        "description": "Online: the platform people join on (e.g. Google Meet)"})
    link_sent = fields.String(data_key="linkSent", validate=validate.OneOf(list(LINK_TIMES)),
                              metadata={"description": "Online: when attendees get the link "
                                                       "to join"})
    topic_tags = fields.List(fields.String(), data_key="topicTags",
                             metadata={"description": "Topics the event is about"})
    payment_note = fields.String(data_key="paymentNote", metadata={
        "description": "How to pay, in the organizer's words"})


class RegistrationOutput(ToolOutput):
    """A registration as results show it (`projections.registration_summary`; the e-mail
    masked)."""

    id = fields.String(required=True)
    event_id = fields.String(required=True, data_key="eventId")
    attendee_name = fields.String(required=True, data_key="attendeeName")
    email = fields.String(required=True)  # masked: r***@example.com
    state = fields.String(required=True, validate=validate.OneOf(REGISTRATION_STATES))
    event_title = fields.String(required=True, data_key="eventTitle")
    starts_at = _moment("startsAt")


class ReviewedEventOutput(ToolOutput):
    """The event a registration's review shows."""

    id = fields.String(required=True)
    url = fields.String(required=True)
    title = fields.String(required=True)
    starts_at = _moment("startsAt")
    venue = fields.String(required=True)


class RegistrationReviewOutput(ToolOutput):
    """What the person reviews before confirming a registration."""

    event = fields.Nested(ReviewedEventOutput, required=True)
    attendee_name = fields.String(required=True, data_key="attendeeName")
    email = fields.String(required=True)  # masked: r***@example.com
    expires_at = _moment("expiresAt")


class CancellationReviewOutput(ToolOutput):
    """What the person reviews before confirming a cancellation."""

    registration = fields.Nested(RegistrationOutput, required=True)
    effect = fields.String(required=True)
    expires_at = _moment("expiresAt")


def _review_url() -> fields.String:
    return fields.String(data_key="reviewUrl", metadata={
        "description": "confirmation_required: the page where the user confirms"})


class NearestSearchOutput(ToolOutput):
    """A search an empty one could try instead (`actions.events.nearest_searches`)."""

    kind = fields.String(required=True, validate=validate.OneOf(NEAREST_KINDS), metadata={
        "description": "any_date: the same conditions on any date; same_place: everything in "
                       "the same place; online: the same conditions online"})
    count = fields.Integer(required=True)
    count_capped = fields.Boolean(required=True, data_key="countCapped")
    filters = fields.Dict(required=True, metadata={
        "description": "The search_events arguments that find them"})


class SearchEventsOutput(ToolOutput):
    """`search_events`: a page of upcoming events."""

    count = fields.Integer(required=True)
    count_capped = fields.Boolean(required=True, data_key="countCapped")
    page = fields.Integer(required=True)
    has_more = fields.Boolean(required=True, data_key="hasMore")
    events = fields.List(fields.Nested(EventListingOutput), required=True)
    nearest = fields.List(fields.Nested(NearestSearchOutput), metadata={
        "description": "no_results: searches that would find events, nearest first (offer "
                       "them to the user; never run one without asking)"})


class GetEventDetailsOutput(ToolOutput):
    """`get_event_details`: one event in full."""

    event = fields.Nested(EventDetailsOutput, required=True)


class SaveEventOutput(ToolOutput):
    """`save_event`: which event, and whether it was saved before."""

    event_id = fields.String(required=True, data_key="eventId")
    already_saved = fields.Boolean(required=True, data_key="alreadySaved")


class PrepareEventRegistrationOutput(ToolOutput):
    """`prepare_event_registration`: the review that waits for the person."""

    review = fields.Nested(RegistrationReviewOutput, metadata={
        "description": "confirmation_required: what the user reviews"})
    review_url = _review_url()


class PrepareRegistrationCancellationOutput(ToolOutput):
    """`prepare_registration_cancellation`: the review that waits for the person."""

    review = fields.Nested(CancellationReviewOutput, metadata={
        "description": "confirmation_required: what the user reviews"})
    review_url = _review_url()


class WaitingOutput(ToolOutput):
    """Something prepared that waits for the person to confirm."""

    confirms = fields.String(required=True, validate=validate.OneOf(CONFIRMS))
    review = fields.Dict(required=True, metadata={
        "description": "As the prepare answered it: the event and attendee of a registration, "
                       "or the registration a cancellation frees and its effect"})
    expires_at = _moment("expiresAt")
    prepared_by = fields.String(required=True, data_key="preparedBy", metadata={
        "description": "Where it was prepared: human, agent (a WebMCP browser) or mcp"})


class ConfirmedOutput(ToolOutput):
    """A registration or cancellation the person confirmed lately."""

    confirms = fields.String(required=True, validate=validate.OneOf(CONFIRMS))
    registration_id = fields.String(required=True, data_key="registrationId")
    event_id = fields.String(required=True, data_key="eventId")
    event_title = fields.String(required=True, data_key="eventTitle")
    at = _moment("at")


class WaitlistPlaceOutput(ToolOutput):
    """A place on a full event's waitlist (`domain.waitlist.waitlist_view`)."""

    id = fields.String(required=True)
    event_id = fields.String(required=True, data_key="eventId")
    event_title = fields.String(required=True, data_key="eventTitle")
    starts_at = _moment("startsAt")
    attendee_name = fields.String(required=True, data_key="attendeeName")
    state = fields.String(required=True, validate=validate.OneOf(WAITLIST_STATES), metadata={
        "description": "waiting: in line for a seat; offered: a seat is held for the user, "
                       "who alone can accept it on the site"})
    position = fields.Integer(required=True, allow_none=True, metadata={
        "description": "waiting: the place in line, 1 being next (null when offered)"})
    offer_ends_at = fields.DateTime(required=True, allow_none=True, data_key="offerEndsAt",
                                    metadata={"description": "offered: when the seat goes to "
                                                             "the next one waiting (null when "
                                                             "waiting)"})


class GetMyPlansOutput(ToolOutput):
    """`get_my_plans`: the visitor's registrations, what waits, what was confirmed lately,
    their places on waitlists and their saved events."""

    registrations = fields.List(fields.Nested(RegistrationOutput), required=True)
    waiting = fields.List(fields.Nested(WaitingOutput), required=True)
    review_url = fields.String(required=True, data_key="reviewUrl", metadata={
        "description": "The page where the user confirms what waits"})
    confirmed_lately = fields.List(fields.Nested(ConfirmedOutput), required=True,
                                   data_key="confirmedLately")
    waitlist = fields.List(fields.Nested(WaitlistPlaceOutput), required=True, metadata={
        "description": "The user's places on full events' waitlists, soonest event first"})
    saved = fields.List(fields.Nested(EventSummaryOutput), required=True)
