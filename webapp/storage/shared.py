"""What every backend shares: an event's search terms, its key, and how a search is planned
and paged. No SQL: each backend runs its own.

Keeping these in one place is what makes the backends agree: SQLite and PostgreSQL index the
same terms (`terms_of`), give the same keys (`allocate_keys`), read the same conjunctions of
terms (`plan_terms`) and page and cap their counts the same way (`page_of`).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from typing import ParamSpec
from typing import TypeVar

from . import Availability
from . import Event
from . import EventPage
from . import EventQuery
from . import EventSummary
from . import StorageError
from . import search

P = ParamSpec("P")
R = TypeVar("R")

# What a search reads of each event it shows (`summary_of`), in both backends' events tables.
SUMMARY_FIELDS = ("id", "title", "summary", "starts_at", "location", "price", "level",
                  "language")
SUMMARY_COLUMNS = ", ".join(f"e.{name}" for name in SUMMARY_FIELDS)
# A page's events, and the seats of each where they were counted (by event id).
Listing = tuple[list[EventSummary], dict[str, Availability]]
# What separates an event's topic tags in their column: never in a tag (`schemas.TopicTags`
# splits what was typed at it).
TAG_SEPARATOR = ","
# An event's times, which each backend stores its own way (`Dialect.moment_in`).
MOMENTS = ("starts_at", "ends_at", "registration_deadline")

# The filters the index holds as facet terms (the location is in every term, see `search`).
FACETS = ("price", "level")
# The character after the location mark: term@ <= term@location < term + AFTER_MARK.
AFTER_MARK = chr(ord(search.LOCATION_MARK) + 1)

def guard(*errors: type[BaseException]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator turning any of the backend's `errors` into StorageError; the cause stays
    in the server log only."""

    def guarded(method: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(method)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return method(*args, **kwargs)
            except errors as error:
                raise StorageError(f"{method.__name__} failed") from error

        return wrapper

    return guarded


def terms_of(event: Event) -> list[str]:
    """The event's search terms (`search.document_terms`): its text with its topic tags (so a
    tag's search finds it), and its city as a word (`taipei`, which the vocabulary also
    writes 台北), so the keyword finds the city too."""
    return search.document_terms(
        (event.title, event.summary, event.venue, event.description, *event.topic_tags,
         event.location),
        event.location, {name: getattr(event, name) for name in FACETS})


def tags_column(tags: tuple[str, ...]) -> str:
    """An event's topic tags as their column keeps them."""
    return TAG_SEPARATOR.join(tags)


def column_values(event: Event, names: Iterable[str], moment_in: Callable[[datetime], Any]
                  ) -> dict[str, Any]:
    """The event's fields `names` as its columns keep them: times as the backend stores them
    (`moment_in`), topic tags in one text (`tags_column`)."""
    values = {name: getattr(event, name) for name in names}
    values.update((name, moment_in(values[name])) for name in MOMENTS if name in values)
    if "topic_tags" in values:
        values["topic_tags"] = tags_column(event.topic_tags)
    return values


def tags_of(column: str) -> tuple[str, ...]:
    """An event's topic tags from their column."""
    return tuple(column.split(TAG_SEPARATOR)) if column else ()


def allocate_keys(events: list[Event], taken_keys: Iterable[int]) -> list[int]:
    """A free search key for each event (see `search.free_key`), none given twice;
    `taken_keys`: those already stored in the events' seconds (more are only ignored)."""
    taken: defaultdict[int, set[int]] = defaultdict(set)
    for key in taken_keys:
        taken[key - key % search.TIES_PER_SECOND].add(key)
    keys = []
    for event in events:
        first = search.first_key(event.starts_at)
        try:
            key = search.free_key(event.starts_at, taken[first])
        except ValueError as error:
            raise StorageError(str(error)) from error
        taken[first].add(key)
        keys.append(key)
    return keys


@dataclass(frozen=True)
class TermsPlan:
    """What a search reads, whatever the backend: the events holding every term of one of
    `conjunctions` (each rarest term first), with keys from `first` and before `end`;
    `counts`: how many events hold each of its terms at each location (`holding_ranges`)."""

    conjunctions: list[list[str]]
    first: int
    end: int | None
    counts: Mapping[str, int]


def holding_ranges(terms: Iterable[str]) -> list[tuple[str, str]]:
    """The ranges of stored terms (`low <= term < high`) that are `terms` at any location and
    anywhere, with the every-event term of each: what `plan_terms` asks counts of."""
    starts = [search.every_event(search.ANYWHERE),
              *(search.located(term, search.ANYWHERE) for term in terms)]
    return [(start, start[:-1] + AFTER_MARK) for start in starts]


def plan_terms(query: EventQuery, events_holding: Callable[[list[str]], Mapping[str, int]]
               ) -> TermsPlan | None:
    """The terms `query` reads (None: nothing can match it); `events_holding(terms)` says
    how many events hold each of `terms` at each location (see `holding_ranges`)."""
    facets = {name: getattr(query, name) for name in FACETS if getattr(query, name) is not None}
    words = search.query_terms(query.text) if query.text is not None else []
    if query.text is not None and not words:
        return None
    events = events_holding([*words, search.facet_term(facets)])
    wanted = (search.Search.of(words, facets, [query.location]) if query.location is not None
              else search.Search.anywhere(words, facets, events))
    conjunctions = wanted.by_rarity(events)
    if not conjunctions:
        return None
    starts_from = max(query.starts_after, query.starts_from or query.starts_after)
    end = search.first_key(query.starts_before) if query.starts_before is not None else None
    return TermsPlan(conjunctions, search.first_key(starts_from), end, events)


def page_of(keys: list[int], limit: int, offset: int, count_cap: int,
            events_at: Callable[[list[int]], Listing]) -> EventPage:
    """The page and capped count of a search whose matches' keys, in order, are `keys` (read
    up to `needed`); `events_at(keys)` reads those events in key order (and their seats, if
    it counts them)."""
    shown = keys[offset:offset + limit]
    events, seats = events_at(shown) if shown else ([], {})
    return EventPage(
        events=events,
        count=min(len(keys), count_cap),
        count_capped=len(keys) > count_cap,
        has_more=len(keys) > offset + limit,
        seats=seats,
    )


def needed(limit: int, offset: int, count_cap: int) -> int:
    """How many matches a search reads: enough for its page and to know the count is capped."""
    return max(count_cap, offset + limit) + 1


NO_MATCHES = EventPage(events=[], count=0, count_capped=False, has_more=False)
