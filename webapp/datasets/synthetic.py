"""Synthetic events for benchmarks: many plausible events, the same ones for the same seed.

Titles and summaries are put together from word lists so that full-text search meets what it
meets on a real site: one word (`COMMON_WORD`) appears in most events, each of `RARE_TOPICS`
in about one event in a thousand, and everything else in between. Every location, price and
level is used, and start times spread over the year before and the year after `now`, so about
half of the events are upcoming.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from datetime import datetime
from datetime import time
from datetime import timedelta
from zoneinfo import ZoneInfo

from ..domain.schemas import LEVELS
from ..domain.schemas import LOCATIONS
from ..domain.schemas import PRICES
from ..storage import Event

COMMON_WORD = "community"
COMMON_SHARE = 0.8  # of events whose summary holds COMMON_WORD
RARE_SHARE = 0.01  # of events about one of the rare topics (each: RARE_SHARE / len(RARE_TOPICS))
SPREAD_DAYS = 365  # events start up to this many days before or after `now`

TOPICS = (
    "WebMCP", "htmx", "Accessibility", "Design Tokens", "CSS Grid", "Web Performance",
    "Python", "Django", "Flask", "TypeScript", "React", "Vue", "Svelte", "Rust",
    "WebAssembly", "Kubernetes", "OpenTelemetry", "GitHub Actions", "Playwright",
    "Prompt Engineering", "LLM Agents", "Vector Search", "Data Visualization", "PostgreSQL",
    "SQLite", "Threat Modeling", "OWASP Top 10", "Progressive Web Apps", "Web Components",
    "Semantic HTML",
)
# Each is its own word stem and no prefix of another word here, so a search finds only them.
RARE_TOPICS = ("Haskell", "Elixir", "Fortran", "Smalltalk", "Prolog", "COBOL", "Lisp",
               "OCaml", "Erlang", "Zig")
FORMATS = ("Workshop", "Meetup", "Study Group", "Hack Night", "Bootcamp", "Clinic",
           "Talk Night", "Office Hours", "Reading Group", "Conference")
TITLE_PATTERNS = (
    "{topic} {format}", "{topic} for Beginners", "Hands-on {topic}", "{topic} in Production",
    "{topic} {format}: Lessons from the Field", "Practical {topic}", "Intro to {topic}",
    "{city} {topic} {format}",
)
SUMMARY_OPENINGS = (
    "A friendly {common} {format} about {topic}",
    "Join the local {common} for an evening of {topic}",
    "Bring a laptop and learn {topic} with the {common}",
    "Short talks and open discussion on {topic} from the {common}",
)
PLAIN_OPENINGS = (
    "A small-group {format} about {topic}",
    "An evening of {topic} talks and demos",
    "Learn {topic} step by step with experienced mentors",
)
SUMMARY_ENDINGS = (
    "; we start from a blank project and finish with a working demo.",
    ", with time for questions and pairing afterwards.",
    ": slides, code and recordings are shared after the session.",
    ", followed by snacks and a relaxed networking hour.",
    "; no prior experience needed, just curiosity.",
)
DESCRIPTION = (
    "{summary}\n\nWe cover the ideas behind {topic}, walk through a realistic example and "
    "leave room for your own questions. The session is run by volunteers from the {city} "
    "developer {common}; the code of conduct applies to everyone."
)
VENUES = {
    "taipei": ("Taipei Fintech Space, Xinyi District", "CLBC Daan Co-working Space",
               "Garage+ Tech Hub, Songshan", "National Taiwan University, Tsai Lecture Hall"),
    "taichung": ("Taichung Startup Hub, Wenxin Road", "Feng Chia University, Room 301",
                 "Tunghai University, Computer Science Building"),
    "kaohsiung": ("Kaohsiung Software Park, Conference Room B", "Pier-2 Art Center, Warehouse C5",
                  "National Sun Yat-sen University, Kuo-Ting Hall"),
    "online": ("Online (YouTube Live)", "Online (Google Meet)", "Online (Zoom)",
               "Online (Jitsi Meet)"),
}
CAPACITIES = (8, 12, 20, 24, 30, 40, 50, 60, 80, 100, 120, 150, 200, 300)
DURATIONS_MINUTES = (60, 90, 120, 180, 240)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def generate_events(count: int, seed: int, now: datetime, timezone: ZoneInfo
                    ) -> Iterator[Event]:
    """`count` events, always the same ones for the same seed and `now`."""
    rng = random.Random(seed)
    today = now.astimezone(timezone).date()
    locations, prices, levels = list(LOCATIONS), list(PRICES), list(LEVELS)
    for number in range(1, count + 1):
        rare = rng.random() < RARE_SHARE
        topic = rng.choice(RARE_TOPICS if rare else TOPICS)
        form = rng.choice(FORMATS)
        location = rng.choice(locations)
        words = {"topic": topic, "format": form.lower(), "city": LOCATIONS[location],
                 "common": COMMON_WORD}
        title = rng.choice(TITLE_PATTERNS).format(**{**words, "format": form})
        openings = SUMMARY_OPENINGS if rng.random() < COMMON_SHARE else PLAIN_OPENINGS
        summary = rng.choice(openings).format(**words) + rng.choice(SUMMARY_ENDINGS)
        day = today + timedelta(days=rng.randint(-SPREAD_DAYS, SPREAD_DAYS))
        starts = datetime.combine(day, time(rng.randint(9, 19), rng.choice((0, 30))),
                                  tzinfo=timezone)
        capacity = rng.choice(CAPACITIES)
        yield Event(
            id=f"evt-{_slug(topic)}-{_slug(form)}-{number:06d}",
            title=title,
            summary=summary,
            description=DESCRIPTION.format(**words, summary=summary),
            starts_at=starts,
            ends_at=starts + timedelta(minutes=rng.choice(DURATIONS_MINUTES)),
            location=location,
            venue=rng.choice(VENUES[location]),
            price=rng.choice(prices),
            level=rng.choice(levels),
            capacity=capacity,
            held_seats=rng.randint(0, capacity // 10),
            registration_deadline=starts - timedelta(days=rng.randint(0, 3)),
        )
