"""The site's actions: one function per tool or human-only step, `action(db, params, ctx)`.

A route loads the input with the tool's schema and calls the action; the action applies the
business rules through the storage layer and answers with a ToolResult. People and agents
reach the same action: `ctx.source` is recorded, never consulted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from datetime import datetime
from datetime import time
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from .projections import event_summary
from .schemas import PAGE_SIZE
from .storage import EventQuery
from .storage import Storage
from .webmcp.result import Status
from .webmcp.result import ToolResult

SEARCH_FILTERS = ("query", "location", "price", "level", "date_from", "date_to")


@dataclass(frozen=True)
class ActionContext:
    """Who asks, and when."""

    now: datetime
    timezone: ZoneInfo
    source: str = "human"
    visitor_id: str | None = None
    search_count_cap: int = 1000


def _start_of(day: date, timezone: ZoneInfo) -> datetime:
    return datetime.combine(day, time.min, tzinfo=timezone)


def _as_json(value: Any) -> Any:
    return value.isoformat() if isinstance(value, date) else value


def search_events(db: Storage, params: dict[str, Any], ctx: ActionContext) -> ToolResult:
    """Upcoming events matching every filter given, soonest first, a page at a time."""
    applied = {name: _as_json(params[name]) for name in SEARCH_FILTERS if name in params}
    page = params["page"]
    date_from, date_to = params.get("date_from"), params.get("date_to")
    query = EventQuery(
        starts_after=ctx.now,
        text=params.get("query"),
        location=params.get("location"),
        price=params.get("price"),
        level=params.get("level"),
        starts_from=_start_of(date_from, ctx.timezone) if date_from else None,
        # The "to" day is inclusive: stop at the start of the day after it.
        starts_before=(_start_of(date_to + timedelta(days=1), ctx.timezone)
                       if date_to else None),
    )
    found = db.search_events(query, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE,
                             count_cap=ctx.search_count_cap)
    data = {
        "count": found.count,
        "countCapped": found.count_capped,
        "page": page,
        "hasMore": found.has_more,
        "events": [event_summary(event, ctx.timezone) for event in found.events],
    }
    common = {"action": "search_events", "data": data, "applied_filters": applied,
              "constraints_relaxed": False}
    if found.count == 0:
        return ToolResult(
            status=Status.NO_RESULTS,
            message="No upcoming event matches all the conditions given.",
            requires_user_decision=True,
            next_action=("Tell the user that nothing matched and ask before removing or "
                         "changing any condition; do not relax the conditions yourself."),
            **common,
        )
    return ToolResult(
        status=Status.SUCCESS,
        message=_found_message(found.count, found.count_capped, page, len(found.events)),
        next_action=("To read one event in full, call get_event_details with its id exactly "
                     "as given here; never invent or alter ids."),
        untrusted_fields=("data.events[].title", "data.events[].summary"),
        **common,
    )


def _found_message(count: int, capped: bool, page: int, shown: int) -> str:
    total = f"more than {count}" if capped else str(count)
    noun = "event" if count == 1 and not capped else "events"
    if shown == 0:
        return f"Found {total} upcoming {noun}, but page {page} is past the last page."
    first = (page - 1) * PAGE_SIZE + 1
    return (f"Found {total} upcoming {noun}; showing {first} to {first + shown - 1}."
            if total != "1" else "Found 1 upcoming event.")
