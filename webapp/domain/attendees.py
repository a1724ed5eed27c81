"""An event's attendees, for the organization that runs it: the attendee list (searched,
paged, counted) and its CSV export. Both are organizer steps for people only, and each time
one is shown or exported its organization's audit log says who did it, for which event, and
nothing of the attendees.

The export is written for Excel as people in Taiwan open it: UTF-8 with a byte order mark
(without it Excel reads the file as Big5 and garbles every Chinese name), CRLF line ends, and
quoting by Python's `csv`. A cell that a spreadsheet would take for a formula (it starts with
`=`, `+`, `-`, `@`, a tab, a carriage return or NUL) gets a leading `'`, so that a name someone
typed when registering never runs in an organizer's spreadsheet. It is produced a batch at a
time (`Storage.attendee_batches`): however many attendees, the memory it takes is one batch.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from collections.abc import Iterator
from datetime import datetime
from typing import Any
from typing import TypedDict
from typing import cast

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel.speaklater import LazyString
from marshmallow import fields
from marshmallow import validate

from ..storage import Attendee
from ..storage import AuditEntry
from ..storage import Event
from ..storage import Membership
from ..storage import Storage
from .actions import ActionContext
from .organizers import EXPORT_ATTENDEES
from .organizers import may
from .projections import local_time
from .schemas import ToolInput
from .schemas import length

# How many attendees a page of the list shows.
ATTENDEES_PER_PAGE = 50
# How many attendees the export reads at a time: its memory is about this many rows.
EXPORT_BATCH = 500
# Far past any event's list; a bound so that a typed page number is never a huge offset.
LAST_ATTENDEE_PAGE = 10_000
# What a spreadsheet would read as the start of a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\0")

STATE_NAMES: dict[str, LazyString] = {
    "active": _l("Registered"),
    "cancelled": _l("Cancelled"),
}


class AttendeeSearchInput(ToolInput):
    """The attendee list's search (a GET form): words of a name or an e-mail address, and the
    page of the list."""

    query = fields.String(
        load_default="", validate=length(max=100),
        metadata={"label": _l("Name or e-mail"), "autocomplete": "off"})
    page = fields.Integer(
        load_default=1,
        validate=validate.Range(min=1, max=LAST_ATTENDEE_PAGE,
                                error=cast(str, _l("Give a page from {min} to {max}."))),
        metadata={"label": _l("Page")})


class AttendeeSearchParams(TypedDict):
    """What `AttendeeSearchInput` loads."""

    query: str
    page: int


def _audit(db: Storage, membership: Membership, event_id: str, action: str,
           ctx: ActionContext) -> None:
    """Say in the organization's audit log that the member saw or exported the attendees."""
    assert ctx.account is not None, "the organizer area is for people who signed in"
    db.record_audit(AuditEntry(at=ctx.now, organization_id=membership.organization.id,
                               account_id=ctx.account.id, action=action, event_id=event_id))


def event_view(event: Event, ctx: ActionContext) -> dict[str, Any]:
    """The event an attendee list is of, as its heading shows it."""
    return {"id": event.id, "title": event.title,
            "startsAt": local_time(event.starts_at, ctx.timezone)}


def attendee_view(attendee: Attendee, ctx: ActionContext) -> dict[str, Any]:
    """An attendee as the list shows them (times in the site's time zone)."""
    checked_in = attendee.checked_in_at
    return {"name": attendee.name, "email": attendee.email, "state": attendee.state,
            "stateName": STATE_NAMES.get(attendee.state, attendee.state),
            "registeredAt": local_time(attendee.registered_at, ctx.timezone),
            "checkedInAt": local_time(checked_in, ctx.timezone) if checked_in else None}


def attendee_list(db: Storage, membership: Membership, event: Event,
                  params: AttendeeSearchParams, ctx: ActionContext) -> dict[str, Any]:
    """What the attendee list shows a member who may see it: the event, its counts, and the
    page asked for of the attendees matching the search; the view is audited."""
    text = params["query"].strip() or None
    found = db.attendee_page(event.id, text, limit=ATTENDEES_PER_PAGE,
                             offset=(params["page"] - 1) * ATTENDEES_PER_PAGE)
    counts = db.attendee_counts(event.id)
    _audit(db, membership, event.id, "view_attendees", ctx)
    return {"event": event_view(event, ctx),
            "counts": {"registered": counts.registered, "cancelled": counts.cancelled,
                       "checkedIn": counts.checked_in},
            "attendees": [attendee_view(attendee, ctx) for attendee in found.attendees],
            "matches": found.matches, "query": text or "", "page": params["page"],
            "pages": max(-(-found.matches // ATTENDEES_PER_PAGE), 1),
            "first": (params["page"] - 1) * ATTENDEES_PER_PAGE + 1,
            "may_export": may(membership.role, EXPORT_ATTENDEES)}


def safe_cell(value: str) -> str:
    """A cell's text as a spreadsheet shows it and never runs it: one that would start a
    formula gets a leading `'`."""
    return f"'{value}" if value.startswith(FORMULA_STARTS) else value


def _spreadsheet_time(moment: datetime | None, ctx: ActionContext) -> str:
    """A time as a spreadsheet reads it, in the site's time zone (2026-12-05 19:02)."""
    return moment.astimezone(ctx.timezone).strftime("%Y-%m-%d %H:%M") if moment else ""


def csv_lines(rows: Iterable[Iterable[str]]) -> str:
    """Rows as CSV text (CRLF line ends, quoted where needed), every cell made safe."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerows([safe_cell(cell) for cell in row] for row in rows)
    return buffer.getvalue()


def export_attendees(db: Storage, membership: Membership, event: Event,
                     ctx: ActionContext) -> Iterator[str]:
    """The event's attendees as CSV text, produced a batch at a time: the byte order mark and
    the header row (in the language of the request), then each batch's rows. The export is
    audited when it is asked for, before its first row."""
    _audit(db, membership, event.id, "export_attendees", ctx)
    header = [_("Name"), _("E-mail"), _("Registered at (Taiwan time)"), _("State"),
              _("Checked in at (Taiwan time)")]
    # Read now, in the request's language: the rows are written later, as they are sent.
    states = {state: str(name) for state, name in STATE_NAMES.items()}

    def lines() -> Iterator[str]:
        yield "\ufeff" + csv_lines([header])
        for batch in db.attendee_batches(event.id, EXPORT_BATCH):
            yield csv_lines([attendee.name, attendee.email,
                             _spreadsheet_time(attendee.registered_at, ctx),
                             states.get(attendee.state, attendee.state),
                             _spreadsheet_time(attendee.checked_in_at, ctx)]
                            for attendee in batch)

    return lines()


def export_filename(event: Event) -> tuple[str, str]:
    """The export's file name: in ASCII (the event's id, for clients that read no other), and
    in the request's language with the event's title (RFC 5987's `filename*`)."""
    title = "".join(char if char.isalnum() or char in " -_" else "_"
                    for char in event.title).strip() or event.id
    return (f"attendees-{event.id}.csv",
            _("attendees-%(title)s.csv", title=title))
