"""The site's actions: one function per tool or human-only step, `action(db, params, ctx)`.

A route loads the input with the tool's schema and calls the action; the action applies the
business rules through the storage layer and answers with a ToolResult. People and agents
reach the same action: `ctx.source` is recorded in the activity log, never consulted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

# A search counts its matches exactly up to this many, then says `countCapped`: ten pages of
# results, and never the whole index read to count a word most events hold.
SEARCH_COUNT_CAP = 100


@dataclass(frozen=True)
class ActionContext:
    """Who asks, and when."""

    now: datetime
    timezone: ZoneInfo
    source: str = "human"
    visitor_id: str | None = None
    search_count_cap: int = SEARCH_COUNT_CAP
