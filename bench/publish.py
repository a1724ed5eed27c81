"""15: publish → visible in search, as a ratio to a plain search measured in the same round.

On a copy of the 100 000 events dataset served by gunicorn (2 workers), a signed-in manager
starts an organization and drafts events through its forms, each carrying a Chinese word of
two characters that no other event holds (`words`: the index keeps every CJK piece of up to
four characters as one term, so a two-character word is one list of one event). Each round
drafts `PUBLISHES` events and opens each one's preview (not timed), then publishes them one
by one as the preview's form posts (a plain form post, its 303 read as the answer: the page
the browser loads after it is not part of making the event visible) and at once searches the
search page for the event's word as a visitor does (`GET /zh-TW/events?query=…`, the whole
page). Publishing commits the event and its terms in one transaction, so that first search
must already list the event: it is never retried, and a search that does not list it is
counted as a miss (a bug, reported with the figures). In turns with each publish, the same
visitor searches the page for a common word (社群, in most events): the plain search every
ratio is taken against, round by round (publish, plain; plain, publish; …). Right after the
first search the same search is timed again: the first against it shows what the search pays
for an event just written, apart from the page sizes of the two words. Round 0 warms up
and is not kept. Every request opens a connection of its own (`urllib`), both kinds alike.

`python -m bench --only publish` measures and prints it alone, on SQLite then on PostgreSQL
(about a minute on 2 cores once both 100 000 events datasets exist), and exits with 1 after
a miss.
"""

from __future__ import annotations

import re
import tempfile
import time
import urllib.request
from datetime import timedelta
from itertools import permutations
from pathlib import Path
from typing import Any
from urllib.parse import quote
from zoneinfo import ZoneInfo

from helpers import query_database
from servers import HttpVisitor
from servers import gunicorn
from suite_clock import suite_start

from webapp import create_app
from webapp.config import SITE_TIMEZONE
from webapp.datasets.synthetic import COMMON_WORDS
from webapp.domain.tokens import hash_token
from webapp.storage import EventQuery
from webapp.storage import search
from webapp.storage.connection import close_backend
from webapp.storage.connection import get_db

from .datasets import SIZES
from .datasets import postgres_working_copy
from .datasets import working_copy
from .report import spread_text
from .report import table
from .stats import percentile
from .stats import ratios
from .stats import spread

SIZE = max(SIZES)
PUBLISHES = 10  # per round
SERVER_KEY = "server test secret"  # the secret key `servers.gunicorn` gives the server
LANGUAGE = "zh-TW"
# Birds' characters, which no generated event writes: two of them make a word of one event.
BIRDS = "鷺鶴鷗鵜鷸鸛鶯鵲鷲鸚鵡鶉鴿鵪"
PLAIN_WORD = COMMON_WORDS.zh
SIGN_IN = f"/{LANGUAGE}/sign-in/bench-publish"
VERSION_FIELD = re.compile(r'name="version" value="(\d+)"')
EVENT_ADDRESS = re.compile(r"/events/(evt-[a-z0-9-]+)$")
ORGANIZATION_ADDRESS = re.compile(r"/organizer/organizations/(org-[\w-]+)$")
# What is timed: the publish, the first search after it, both, the same search once more
# (what a search of that word costs once it is no news), and the plain search.
SUBJECTS = ("publish", "search", "together", "again")
KINDS = (*SUBJECTS, "plain")


def words(count: int) -> list[str]:
    """`count` different words of two birds' characters."""
    found = ["".join(pair) for pair in permutations(BIRDS, 2)]
    if count > len(found):
        raise ValueError(f"only {len(found)} words for {count} events")
    return found[:count]


class NotFollowed(urllib.request.HTTPRedirectHandler):
    """Leaves a redirect to its reader: the 303 is the answer."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        """Follow nothing."""
        return None


class Manager(HttpVisitor):
    """A manager's browser that reads each answer itself, a 303 included: a publish is timed
    to its answer, not to the preview the browser loads after it."""

    def __init__(self, base: str):
        super().__init__(base)
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.cookies), NotFollowed())

    def posted_to(self, path: str, data: dict[str, str], pattern: re.Pattern[str]) -> str:
        """Post a form that answers 303: what `pattern` finds in the address it leads to."""
        answer = self.post(path, data)
        found = pattern.search(answer.headers.get("Location", "") if answer.status == 303
                               else "")
        if not found:
            raise RuntimeError(f"POST {path} answered {answer.status}: {answer.text[:300]}")
        return found.group(1)


def measure(rounds: int, publishes: int = PUBLISHES) -> list[dict[str, Any]]:
    """Table 15 on a copy of the `SIZE` events dataset, on SQLite then on PostgreSQL (each
    its own words, so neither finds the other's events)."""
    with tempfile.TemporaryDirectory(prefix="webmcp-bench-publish-") as scratch:
        on_sqlite = measure_on(working_copy(SIZE, Path(scratch)), rounds, publishes)
        with postgres_working_copy(SIZE, "_publish") as database:
            on_postgres = measure_on(database, rounds, publishes,
                                     log=Path(scratch) / "gunicorn.log")
    return [on_sqlite, on_postgres]


def measure_on(database: Path | str, rounds: int, publishes: int = PUBLISHES,
               log: Path | None = None) -> dict[str, Any]:
    """Publish → found, against a plain search, on `database` (a SQLite file or a PostgreSQL
    URL, then with the server's `log`)."""
    chosen = words(publishes * (rounds + 1))
    prepare(database, chosen)
    ((events,),) = query_database(database, "SELECT count(*) FROM events")
    with gunicorn(database, workers=2, log=log) as (base, _):
        manager = Manager(base)
        organization_id = open_organization(manager)
        found = interleaved(manager, HttpVisitor(base), organization_id, chosen, publishes,
                            rounds)
    return {"backend": "PostgreSQL" if "://" in str(database) else "SQLite",
            "events": events, **found}


def prepare(database: Path | str, chosen: list[str]) -> None:
    """Check that no event holds any chosen word yet; keep a sign-in link for the manager."""
    app = create_app({"DATABASE": str(database), "SECRET_KEY": SERVER_KEY, "TESTING": True})
    try:
        with app.app_context():
            db = get_db()
            for word in chosen:
                if db.search_events(EventQuery(starts_after=search.EPOCH, text=word), 0, 0,
                                    1).count:
                    raise LookupError(f"events already hold {word}: choose other characters")
            db.create_sign_in_link(hash_token(SIGN_IN.rsplit("/", 1)[1]),
                                   "bench-publish@example.com", suite_start(),
                                   suite_start() + timedelta(days=1))
    finally:
        close_backend(app)


def open_organization(manager: Manager) -> str:
    """The manager signs in from the mailed link and starts an organization: its id."""
    manager.open_page(SIGN_IN)
    manager.post(SIGN_IN)
    manager.open_page(f"/{LANGUAGE}/organizer/organizations/new")
    return manager.posted_to(f"/{LANGUAGE}/organizer/organizations",
                             {"name": "發布速度測試社"}, ORGANIZATION_ADDRESS)


def fields(word: str) -> dict[str, str]:
    """The draft form of an event carrying `word`, three weeks after the server's clock starts
    (in the site's zone, as the form is typed)."""
    starts = (suite_start() + timedelta(days=21)).astimezone(ZoneInfo(SITE_TIMEZONE)).replace(
        hour=19, minute=0, second=0, microsecond=0)
    return {
        "title": f"{word} 發布測試", "summary": f"{word}：一場只為量測發布速度而建立的活動。",
        "description": "發布後立刻搜尋這個活動。\n\n報名與報到都不會用到。",
        "starts_at": f"{starts:%Y-%m-%dT%H:%M}",
        "ends_at": f"{starts + timedelta(hours=2):%Y-%m-%dT%H:%M}",
        "registration_deadline": f"{starts - timedelta(days=1):%Y-%m-%dT%H:%M}",
        "location": "taipei", "venue": "台北市大安區復興南路一段 390 號", "level": "beginner",
        "capacity": "30", "waitlist": "False", "price_amount": "0", "price_currency": "TWD",
        "language": "zh-Hant-TW"}


def draft(manager: Manager, organization_id: str, word: str) -> tuple[str, str]:
    """Draft an event with `word` and open its preview, as the manager does before publishing:
    the event's id and the version its publish form carries."""
    events = f"/{LANGUAGE}/organizer/organizations/{organization_id}/events"
    event_id = manager.posted_to(events, fields(word), EVENT_ADDRESS)
    found = VERSION_FIELD.search(manager.open_page(f"{events}/{event_id}").text)
    if not found:
        raise RuntimeError(f"the preview of {event_id} has no publish form")
    return event_id, found.group(1)


def search_page(word: str) -> str:
    """The search page's address for `word`."""
    return f"/{LANGUAGE}/events?query={quote(word)}"


def interleaved(manager: Manager, visitor: HttpVisitor, organization_id: str,
                chosen: list[str], publishes: int, rounds: int) -> dict[str, Any]:
    """Each round: `publishes` drafts, then each published and searched for, in turns with a
    plain search."""
    kept: dict[str, list[list[float]]] = {kind: [] for kind in KINDS}
    missed: list[str] = []
    events = f"/{LANGUAGE}/organizer/organizations/{organization_id}/events"

    def get(path: str) -> str:
        answer = visitor.request("GET", path)
        if answer.status != 200:
            raise RuntimeError(f"GET {path} answered {answer.status}")
        return answer.text

    def publish_then_search(times: dict[str, list[float]], word: str, event_id: str,
                            version: str) -> None:
        started = time.perf_counter()
        answer = manager.post(f"{events}/{event_id}/publish", {"version": version})
        published = time.perf_counter()
        if answer.status != 303:
            raise RuntimeError(f"publishing {event_id} answered {answer.status}")
        page = get(search_page(word))
        ended = time.perf_counter()
        if f"/events/{event_id}\"" not in page:
            missed.append(event_id)
        times["publish"].append((published - started) * 1000)
        times["search"].append((ended - published) * 1000)
        times["together"].append((ended - started) * 1000)
        again = time.perf_counter()
        get(search_page(word))
        times["again"].append((time.perf_counter() - again) * 1000)

    def plain(times: dict[str, list[float]]) -> None:
        started = time.perf_counter()
        get(search_page(PLAIN_WORD))
        times["plain"].append((time.perf_counter() - started) * 1000)

    for number in range(rounds + 1):
        batch = chosen[number * publishes:(number + 1) * publishes]
        drafts = [draft(manager, organization_id, word) for word in batch]
        times: dict[str, list[float]] = {kind: [] for kind in KINDS}
        for i, (word, (event_id, version)) in enumerate(zip(batch, drafts, strict=True)):
            if i % 2 == 0:
                publish_then_search(times, word, event_id, version)
                plain(times)
            else:
                plain(times)
                publish_then_search(times, word, event_id, version)
        if number:
            for kind in KINDS:
                kept[kind].append(times[kind])
    p50 = {kind: [percentile(ms, 0.50) for ms in kept[kind]] for kind in KINDS}
    pooled = {kind: [ms for batch in kept[kind] for ms in batch] for kind in KINDS}
    return {
        # Every first search counts, the warm-up's too: a miss is a bug whenever it happens.
        "publishes": publishes * rounds, "searched": len(chosen), "missed": missed,
        **{kind: {"p50Ms": spread(p50[kind]), "p95Ms": percentile(pooled[kind], 0.95)}
           for kind in KINDS},
        **{f"{kind}OverPlain": ratios(p50[kind], p50["plain"]) for kind in SUBJECTS},
        "searchOverAgain": ratios(p50["search"], p50["again"]),
    }


def tables(found: dict[str, Any]) -> str:
    """Table 15 as text, then the misses (none expected)."""
    rows = [[label, spread_text(found[kind]["p50Ms"]), f"{found[kind]['p95Ms']:.2f}",
             spread_text(found[f"{kind}OverPlain"]) if kind != "plain" else "1"]
            for label, kind in (("publish (POST → 303)", "publish"),
                                ("first search, listing it", "search"),
                                ("publish + first search", "together"),
                                ("the same search again", "again"),
                                (f"plain search ({PLAIN_WORD})", "plain"))]
    missed = found["missed"]
    verdict = (f"Listed by the first search after publishing: {found['searched'] - len(missed)}"
               f" of {found['searched']} (the warm-up round's included)"
               + (f"; MISSED (a bug): {', '.join(missed)}" if missed else "."))
    first = (f"The first search ÷ the same search again: "
             f"{spread_text(found['searchOverAgain'])}.\n")
    return table(f"15. Publish → visible in search ({found['publishes']} publishes, "
                 f"{found['events']:,} events, {found['backend']}, gunicorn 2 workers)",
                 ["request", "p50 ms (min–max of rounds)", "p95 ms", "p50 ÷ plain search"],
                 rows) + first + verdict
