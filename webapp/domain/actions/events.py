"""Finding events: search_events, get_event_details, save_event (and removing a saved one)."""

from __future__ import annotations

from datetime import date
from datetime import datetime
from datetime import time
from datetime import timedelta
from typing import Any
from typing import cast
from zoneinfo import ZoneInfo

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel import ngettext

from flask_webmcp.actions import human_action
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.result import not_found

from ...storage import EventQuery
from ...storage import Storage
from ..activity import logged_as
from ..catalog import CATALOG
from ..directions import saved
from ..directions import to_register
from ..projections import UNTRUSTED_EVENT_FIELDS
from ..projections import event_details
from ..projections import event_listing
from ..projections import event_summary
from ..schemas import LAST_PAGE
from ..schemas import PAGE_SIZE
from ..schemas import SEARCH_COUNT_CAP
from ..schemas import EventParams
from ..schemas import SaveEventInput
from ..schemas import SearchEventsParams
from . import ActionContext


def _start_of(day: date, timezone: ZoneInfo) -> datetime:
    return datetime.combine(day, time.min, tzinfo=timezone)


def _as_json(value: Any) -> Any:
    return value.isoformat() if isinstance(value, date) else value


def event_query(params: SearchEventsParams, now: datetime, timezone: ZoneInfo) -> EventQuery:
    """What the storage is asked for a search's (loaded) input: upcoming events only, and
    dates as whole days of the site's time zone."""
    date_from, date_to = params.get("date_from"), params.get("date_to")
    return EventQuery(
        starts_after=now,
        text=params.get("query"),
        location=params.get("location"),
        price=params.get("price"),
        level=params.get("level"),
        starts_from=_start_of(date_from, timezone) if date_from else None,
        # The "to" day is inclusive: stop at the start of the day after it.
        starts_before=_start_of(date_to + timedelta(days=1), timezone) if date_to else None,
    )


@logged_as(_l("Search events"),
           _l("%(who)s searched the events"))
@CATALOG.action("search_events", answers=(Status.SUCCESS, Status.NO_RESULTS))
def search_events(db: Storage, params: SearchEventsParams, ctx: ActionContext) -> ToolResult:
    """Upcoming events matching every filter given, soonest first, a page at a time."""
    applied = {name: _as_json(value) for name, value in params.items() if name != "page"}
    page = params["page"]
    query = event_query(params, ctx.now, ctx.timezone)
    found = db.search_events(query, limit=PAGE_SIZE, offset=first_index(page),
                             count_cap=SEARCH_COUNT_CAP, count_seats=True)
    data = {
        "count": found.count,
        "countCapped": found.count_capped,
        "page": page,
        # Matches past the last page are never shown: narrowing the search finds them.
        "hasMore": found.has_more and page < LAST_PAGE,
        "events": [event_listing(event, found.seats[event.id], ctx.now, ctx.timezone,
                                 ctx.pages) for event in found.events],
    }
    if found.count == 0:
        data["nearest"] = nearest_searches(db, params, ctx)
        return ToolResult(
            action="search_events", status=Status.NO_RESULTS, data=data,
            applied_filters=applied, constraints_relaxed=False,
            message=_("No upcoming event matches all the conditions given."),
            requires_user_decision=True,
            next_action=_("Tell the user that nothing matched and ask before removing or "
                          "changing any condition; do not relax the conditions yourself. "
                          "data.nearest lists searches that would find events: offer them."))
    return ToolResult(action="search_events", status=Status.SUCCESS, data=data,
                      applied_filters=applied, constraints_relaxed=False,
                      message=_found_message(found.count, found.count_capped, page,
                                             len(found.events)),
                      next_action=_("For one event in full, call get_event_details with its "
                                    "id as given; never invent ids."),
                      untrusted_fields=("data.events[].title", "data.events[].summary"))


def nearest_searches(db: Storage, params: SearchEventsParams, ctx: ActionContext
                     ) -> list[dict[str, Any]]:
    """What an empty search could try instead, nearest first, each with how many events it
    finds (only those that find some): the same conditions on any date; everything in the
    same place on any date; the same conditions online. The search itself is unchanged
    (its applied filters still say what was searched): these are offers, for the person."""
    wanted = {name: value for name, value in params.items() if name != "page"}
    undated = {name: value for name, value in wanted.items()
               if name not in ("date_from", "date_to")}
    candidates: list[tuple[str, dict[str, Any]]] = [("any_date", undated)]
    if "location" in wanted:
        candidates.append(("same_place", {"location": wanted["location"]}))
    if wanted.get("location") != "online":
        candidates.append(("online", {**wanted, "location": "online"}))
    nearest, tried = [], []
    for kind, filters in candidates:
        if filters == wanted or filters in tried:
            continue
        tried.append(filters)
        # Only the capped count is offered: no event is read (on PostgreSQL, one trip to
        # the server fewer for each offer).
        found = db.search_events(event_query(cast(SearchEventsParams, filters), ctx.now,
                                             ctx.timezone),
                                 limit=0, offset=0, count_cap=SEARCH_COUNT_CAP)
        if found.count:
            nearest.append({"kind": kind, "count": found.count,
                            "countCapped": found.count_capped,
                            "filters": {name: _as_json(value) for name, value in filters.items()}})
    return nearest


def first_index(page: int) -> int:
    """How many results come before the first one of `page`."""
    return (page - 1) * PAGE_SIZE


def _found_message(count: int, capped: bool, page: int, shown: int) -> str:
    # ngettext picks the form by the count, as each language's plural rules say (English:
    # 1 event, 2 events; Chinese has one form); `num` is the count in every sentence.
    if shown == 0:
        if capped:
            return ngettext("Found more than %(num)s upcoming event, but page %(page)s is past "
                            "the last page.",
                            "Found more than %(num)s upcoming events, but page %(page)s is past "
                            "the last page.", count, page=page)
        return ngettext("Found %(num)s upcoming event, but page %(page)s is past the last page.",
                        "Found %(num)s upcoming events, but page %(page)s is past the last "
                        "page.", count, page=page)
    first = first_index(page) + 1
    last = first + shown - 1
    if capped and page == LAST_PAGE:
        return ngettext("Found more than %(num)s upcoming event; showing %(first)s to %(last)s. "
                        "This is the last page: add words or filters to find others.",
                        "Found more than %(num)s upcoming events; showing %(first)s to "
                        "%(last)s. This is the last page: add words or filters to find others.",
                        count, first=first, last=last)
    if capped:
        return ngettext("Found more than %(num)s upcoming event; showing %(first)s to %(last)s.",
                        "Found more than %(num)s upcoming events; showing %(first)s to "
                        "%(last)s.", count, first=first, last=last)
    if count == 1:
        # A lone result has no range to show ("1 to 1"): its own sentence, not a plural form.
        return _("Found 1 upcoming event.")
    return ngettext("Found %(num)s upcoming event; showing %(first)s to %(last)s.",
                    "Found %(num)s upcoming events; showing %(first)s to %(last)s.",
                    count, first=first, last=last)


def unknown_event(name: str) -> ToolResult:
    """The answer of action `name` for an event id that does not exist."""
    return not_found(name, _("There is no event with this id."),
                     next_action=_("Use an event id exactly as search_events returned it; "
                                   "never guess or alter ids."))


@logged_as(_l("Get event details"),
           _l("%(who)s looked at “%(title)s”"))
@CATALOG.action("get_event_details", answers=(Status.SUCCESS, Status.NOT_FOUND))
def get_event_details(db: Storage, params: EventParams, ctx: ActionContext) -> ToolResult:
    """Everything about one event, with its seats counted now."""
    event = db.get_event(params["event_id"], count_seats=True)
    if event is None:
        return unknown_event("get_event_details")
    details = event_details(event, ctx.now, ctx.timezone, ctx.pages)
    next_steps = {
        "open": to_register(ctx.pages, event.id),
        "full": _("Tell the user the event is full. save_event still keeps it in their list."),
        "closed": _("Tell the user registration is closed. save_event still keeps it."),
        "cancelled": _("Tell the user the event is cancelled: it will not take place, and "
                       "nobody can register for it."),
    }
    return ToolResult(
        action="get_event_details",
        status=Status.SUCCESS,
        message=_("These are the event's current details."),
        data={"event": details},
        next_action=next_steps[details["state"]],
        untrusted_fields=tuple(f"data.event.{name}" for name in UNTRUSTED_EVENT_FIELDS
                               if name in details),
        target=event.id,
    )


@logged_as(_l("Save event"),
           _l("%(who)s saved “%(title)s”"))
@CATALOG.action("save_event", answers=(Status.SUCCESS, Status.NOT_FOUND))
def save_event(db: Storage, params: EventParams, ctx: ActionContext) -> ToolResult:
    """Save an event for the visitor; saving it again changes nothing."""
    assert ctx.visitor_id is not None, "saving needs a visitor"
    event = db.get_event(params["event_id"])
    if event is None:
        return unknown_event("save_event")
    newly_saved = db.save_event(ctx.visitor_id, event.id, ctx.now)
    return ToolResult(
        action="save_event",
        status=Status.SUCCESS,
        message=(_("Saved to your list.") if newly_saved
                 else _("It was already in your saved list; nothing changed.")),
        data={"eventId": event.id, "alreadySaved": not newly_saved},
        next_action=saved(ctx.pages),
        target=event.id,
    )


@logged_as(_l("Remove saved event"),
           _l("%(who)s removed “%(title)s” from the saved events"))
@human_action("remove_saved_event", answers=(Status.SUCCESS, Status.NOT_FOUND),
              schema=SaveEventInput)
def remove_saved_event(db: Storage, params: EventParams, ctx: ActionContext
                       ) -> ToolResult:
    """Take an event off the visitor's saved list (a person's action, not a tool)."""
    assert ctx.visitor_id is not None, "removing needs a visitor"
    removed = db.remove_saved_event(ctx.visitor_id, params["event_id"])
    if not removed:
        return not_found("remove_saved_event", _("This event is not in your saved list."))
    return ToolResult(action="remove_saved_event", status=Status.SUCCESS,
                      message=_("Removed from your saved list."),
                      data={"eventId": params["event_id"]}, target=params["event_id"])


def is_saved(db: Storage, event_id: str, ctx: ActionContext) -> bool:
    """Whether the visitor (if any) saved the event: what an event's save button says."""
    return ctx.visitor_id is not None and db.is_saved(ctx.visitor_id, event_id)


def saved_events(db: Storage, ctx: ActionContext) -> list[dict[str, Any]]:
    """The visitor's saved events, soonest first, as search items."""
    if ctx.visitor_id is None:
        return []
    return [event_summary(event, ctx.timezone, ctx.pages)
            for event in db.saved_events(ctx.visitor_id)]


def upcoming_events(db: Storage, ctx: ActionContext, limit: int) -> list[dict[str, Any]]:
    """The next `limit` upcoming events, soonest first, as search results show them (for
    the sitemap)."""
    found = db.search_events(EventQuery(starts_after=ctx.now), limit=limit, offset=0,
                             count_cap=1)
    return [event_summary(event, ctx.timezone, ctx.pages) for event in found.events]
