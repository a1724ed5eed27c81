"""The input contracts: one marshmallow schema per tool and per human-only action.

Each schema drives the server validation, the rendered form (labels, agent descriptions, HTML
constraints: see `webapp.webmcp.forms`), the agent's input schema and the OpenAPI document.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from marshmallow import RAISE
from marshmallow import Schema
from marshmallow import ValidationError
from marshmallow import fields
from marshmallow import validate
from marshmallow import validates_schema

# The vocabularies of the filters: value -> label people read.
LOCATIONS = {"taipei": "Taipei", "taichung": "Taichung", "kaohsiung": "Kaohsiung",
             "online": "Online"}
PRICES = {"free": "Free", "paid": "Paid"}
LEVELS = {"beginner": "Beginner", "intermediate": "Intermediate", "advanced": "Advanced"}

EVENT_ID = validate.Regexp(r"^evt-[a-z0-9][a-z0-9-]{0,63}$", error="Not a valid event id.")
REGISTRATION_ID = validate.Regexp(r"^reg-[A-Za-z0-9_-]{8,64}$",
                                  error="Not a valid registration id.")
PAGE_SIZE = 10
MAX_PAGE = 1000
# The dates a search may name: wider than any real search, yet narrow enough that turning a
# day into the UTC start of the next one in the site's time zone never leaves the calendar.
SEARCH_DATES = validate.Range(min=date(2000, 1, 1), max=date(2999, 12, 31),
                              error="Give a date from {min} to {max}.")


def one_of(vocabulary: dict[str, str]) -> validate.OneOf:
    """A choice validator whose labels become the options people and agents see."""
    return validate.OneOf(list(vocabulary), labels=list(vocabulary.values()))


class ToolInput(Schema):
    """Base of every input schema: unknown fields are an error, not silently dropped."""

    class Meta:
        unknown = RAISE


class SearchEventsInput(ToolInput):
    """Filters of `search_events`; every one is optional and "" means "any"."""

    query = fields.String(
        validate=validate.Length(max=100),
        metadata={"label": "Keywords", "input_type": "search", "autocomplete": "off",
                  "description": "Words to find in event titles and summaries"})
    location = fields.String(
        validate=one_of(LOCATIONS),
        metadata={"label": "Location", "empty_label": "Any location",
                  "description": "City where the event takes place, or online"})
    price = fields.String(
        validate=one_of(PRICES),
        metadata={"label": "Price", "empty_label": "Free or paid",
                  "description": "Whether attending is free or paid"})
    level = fields.String(
        validate=one_of(LEVELS),
        metadata={"label": "Level", "empty_label": "Any level",
                  "description": "Experience the event is aimed at"})
    date_from = fields.Date(
        validate=SEARCH_DATES,
        metadata={"label": "From", "description": "Earliest start date, inclusive"})
    date_to = fields.Date(
        validate=SEARCH_DATES,
        metadata={"label": "To", "description": "Latest start date, inclusive"})
    page = fields.Integer(
        load_default=1,
        validate=validate.Range(min=1, max=MAX_PAGE),
        metadata={"label": "Page", "description": f"Page of results, {PAGE_SIZE} per page"})

    @validates_schema
    def dates_in_order(self, data: dict[str, Any], **kwargs: object) -> None:
        """A date range must not end before it starts (no form control can say this)."""
        start, end = data.get("date_from"), data.get("date_to")
        if start and end and start > end:
            raise ValidationError("The 'from' date is after the 'to' date.", "date_from")


class GetEventDetailsInput(ToolInput):
    """The event to show: bound to a detail page, or chosen among the listed results."""

    event_id = fields.String(
        required=True, validate=EVENT_ID,
        metadata={"label": "Events on this page", "widget": "radio",
                  "description": "Id of one of the events listed on this page "
                                 "(option titles are organizer-written event titles)"})


class SaveEventInput(ToolInput):
    """The event to save: always the one the page or preview pane shows."""

    event_id = fields.String(required=True, validate=EVENT_ID)


class PrepareEventRegistrationInput(ToolInput):
    """Who attends the event of the page; nothing is registered until a person confirms."""

    event_id = fields.String(required=True, validate=EVENT_ID)
    attendee_name = fields.String(
        required=True, validate=validate.Length(min=1, max=80),
        metadata={"label": "Attendee name", "autocomplete": "name",
                  "description": "Full name of the person attending, as on the attendee list"})
    email = fields.Email(
        required=True, validate=validate.Length(max=254),
        metadata={"label": "E-mail", "autocomplete": "email",
                  "description": "E-mail address the organizer uses to reach the attendee"})


class PrepareRegistrationCancellationInput(ToolInput):
    """Which of the visitor's active registrations to cancel (a person confirms)."""

    registration_id = fields.String(
        required=True, validate=REGISTRATION_ID,
        metadata={"label": "Your active registrations", "widget": "radio",
                  "description": "Id of the registration to cancel, from the list on this page"})


class ConfirmInput(ToolInput):
    """A human-only confirm form: the single-use token of the review it confirms."""

    confirmation_token = fields.String(required=True, validate=validate.Length(min=1, max=200))


class ConfirmCancellationInput(ConfirmInput):
    """Confirming a cancellation: the token, and the registration its address names."""

    registration_id = fields.String(required=True, validate=REGISTRATION_ID)
