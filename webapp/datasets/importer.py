"""Reading events from JSON files: the seed data and organizers' imports.

A file is `{"events": [...]}` (or a bare list). Each event gives its times either as ISO 8601
datetimes with an offset (`startsAt`, `endsAt`, `registrationDeadline`) or as a `schedule`
relative to the day of the import, which keeps the seed data upcoming whenever it is loaded.
Every row is checked before anything is written: one bad row rejects the whole file.
"""

from __future__ import annotations

import json
from datetime import date
from datetime import datetime
from datetime import time
from datetime import timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from marshmallow import RAISE
from marshmallow import Schema
from marshmallow import ValidationError
from marshmallow import fields
from marshmallow import post_load
from marshmallow import validate
from marshmallow import validates_schema

from flask_webmcp.inputs import flatten_messages

from ..domain.schemas import EVENT_ID
from ..domain.schemas import LEVELS
from ..domain.schemas import LOCATIONS
from ..domain.schemas import PRICES
from ..domain.schemas import WholeMatch
from ..domain.schemas import one_of
from ..storage import Event


class ImportProblem(Exception):
    """The file cannot be imported; `problems` says where and why, one line each."""

    def __init__(self, problems: list[str]):
        super().__init__(f"{len(problems)} problem(s) in the file")
        self.problems = problems


class ScheduleSchema(Schema):
    """Times relative to the import day, in the site's time zone."""

    class Meta:
        unknown = RAISE

    starts_in_days = fields.Integer(data_key="startsInDays", required=True,
                                    validate=validate.Range(min=0, max=3650))
    start_time = fields.Time(data_key="startTime", required=True)
    duration_minutes = fields.Integer(data_key="durationMinutes", required=True,
                                      validate=validate.Range(min=1, max=7 * 24 * 60))
    closes_days_before = fields.Integer(data_key="closesDaysBefore", load_default=0,
                                        validate=validate.Range(min=0, max=3650))


class EventImportSchema(Schema):
    """One event of an import file."""

    class Meta:
        unknown = RAISE

    id = fields.String(required=True, validate=EVENT_ID)
    title = fields.String(required=True, validate=validate.Length(min=1, max=120))
    summary = fields.String(required=True, validate=validate.Length(min=1, max=300))
    description = fields.String(load_default="", validate=validate.Length(max=4000))
    location = fields.String(required=True, validate=one_of(LOCATIONS))
    venue = fields.String(required=True, validate=validate.Length(min=1, max=200))
    price = fields.String(required=True, validate=one_of(PRICES))
    # What a paid event costs, in the currency's major unit (NT$ unless said otherwise).
    price_amount = fields.Integer(data_key="priceAmount", load_default=None, allow_none=True,
                                  validate=validate.Range(min=0, max=10_000_000))
    price_currency = fields.String(data_key="priceCurrency", load_default="TWD",
                                   validate=WholeMatch(r"^[A-Z]{3}$"))
    level = fields.String(required=True, validate=one_of(LEVELS))
    capacity = fields.Integer(required=True, validate=validate.Range(min=0, max=1_000_000))
    held_seats = fields.Integer(data_key="heldSeats", load_default=0,
                                validate=validate.Range(min=0))
    # Whether a full event lets people wait for a seat that frees (organizers will say so;
    # until they exist, the data does).
    waitlist = fields.Boolean(load_default=False)
    starts_at = fields.AwareDateTime(data_key="startsAt")
    ends_at = fields.AwareDateTime(data_key="endsAt")
    registration_deadline = fields.AwareDateTime(data_key="registrationDeadline")
    schedule = fields.Nested(ScheduleSchema)

    def __init__(self, *, today: date, timezone: ZoneInfo, **kwargs: Any):
        super().__init__(**kwargs)
        self.today = today
        self.timezone = timezone

    @validates_schema
    def times_given_once(self, data: dict[str, Any], **kwargs: Any) -> None:
        """Either a relative schedule or all three absolute times, not both."""
        absolute = [key for key in ("starts_at", "ends_at", "registration_deadline")
                    if key in data]
        if "schedule" in data and absolute:
            raise ValidationError("Give either schedule or absolute times, not both.")
        if "schedule" not in data and len(absolute) != 3:
            raise ValidationError(
                "Give a schedule, or startsAt, endsAt and registrationDeadline.")
        if data.get("held_seats", 0) > data.get("capacity", 0):
            raise ValidationError("Cannot be more than capacity.", "heldSeats")
        if data.get("price") == "free" and data.get("price_amount"):
            raise ValidationError("A free event costs nothing.", "priceAmount")

    @post_load
    def to_event(self, data: dict[str, Any], **kwargs: Any) -> Event:
        """The stored event, with a schedule turned into absolute times."""
        schedule = data.pop("schedule", None)
        if schedule:
            day = self.today + timedelta(days=schedule["starts_in_days"])
            starts = datetime.combine(day, schedule["start_time"], tzinfo=self.timezone)
            closes = day - timedelta(days=schedule["closes_days_before"])
            data["starts_at"] = starts
            data["ends_at"] = starts + timedelta(minutes=schedule["duration_minutes"])
            # Registration closes at the end of that day, or at the start on the day itself.
            data["registration_deadline"] = min(
                starts, datetime.combine(closes, time(23, 59, 59), tzinfo=self.timezone))
        if data["ends_at"] <= data["starts_at"]:
            raise ValidationError("Must be after the start.", "endsAt")
        if data["registration_deadline"] > data["starts_at"]:
            raise ValidationError("Must not be after the start.", "registrationDeadline")
        return Event(**data)


def read_events(path: str | Path, today: date, timezone: ZoneInfo) -> list[Event]:
    """Every event of the file at `path`, or ImportProblem naming each bad row."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ImportProblem([f"cannot read {path}: {error}"]) from None
    except json.JSONDecodeError as error:
        raise ImportProblem([f"not valid JSON: {error}"]) from None
    rows = document.get("events") if isinstance(document, dict) else document
    if not isinstance(rows, list):
        raise ImportProblem(['expected {"events": [...]} or a list of events'])

    schema = EventImportSchema(today=today, timezone=timezone)
    events: list[Event] = []
    problems: list[str] = []
    seen: set[str] = set()
    for number, row in enumerate(rows, start=1):
        label = f"event {number}"
        if isinstance(row, dict) and isinstance(row.get("id"), str):
            label += f" ({row['id']})"
        try:
            event = schema.load(row)
        except ValidationError as error:
            for field, messages in sorted(flatten_messages(error.messages).items()):
                problems.append(f"{label}: {field.replace('_schema', '(row)')}: "
                                f"{' '.join(messages)}")
            continue
        if event.id in seen:
            problems.append(f"{label}: id: appears more than once in the file")
        seen.add(event.id)
        events.append(event)
    if problems:
        raise ImportProblem(problems)
    return events

