"""Lighthouse (pinned in tools/lighthouse, `make lighthouse` installs it) run over the site's
pages with Debian's Chromium, one run at a time in one browser (batch.mjs), its JSON reports
read here.

Shared by the browser test (accessibility, best practices and SEO) and the benchmark (the
performance score, which is timing and so never asserted). Lighthouse never downloads a
browser here: CHROME_PATH points it at the one the browser tests drive.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import subprocess
import tempfile
from contextlib import closing
from dataclasses import dataclass
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from helpers import JSON
from helpers import PROJECT_ROOT
from servers import HttpVisitor
from suite_clock import suite_start

from webapp.storage import Event
from webapp.storage.sqlite import SQLiteStorage

from .chromium import CHROMIUM

LIGHTHOUSE = PROJECT_ROOT / "tools" / "lighthouse" / "node_modules" / ".bin" / "lighthouse"
BATCH = PROJECT_ROOT / "tools" / "lighthouse" / "batch.mjs"
# Mobile is Lighthouse's default (a phone's screen, a slow CPU and network, simulated);
# desktop is its preset.
FORM_FACTORS = ("mobile", "desktop")
# One run takes 4-30 s on an idle machine; a loaded one may take several times that.
TIMEOUT = 300


FREE_EVENT = "evt-webmcp-spec-reading"  # 200 seats: a run's registrations never fill it
PAID_EVENT = "evt-agent-testing"  # NT$800, 24 seats, no other test of a module registers
PENDING_EVENT = "evt-polars-online"  # prepared, never confirmed


@dataclass(frozen=True)
class Page:
    """A page people land on: its name in reports, its address, whether it is a visitor's
    own (opened as the visitor of `visitor_with_registrations`, or an organizer's page as the
    owner of `organizer_setup.organizer_with_an_event`) and whether search engines may index
    it (the pages of one's own say `noindex`). An address may name what only that visitor
    knows (`{manage}`: its registration's manage link; `{organization}`, `{event}`,
    `{draft}`: the organizer's)."""

    name: str
    path: str
    personal: bool = False
    indexed: bool = True

    def address(self, visit: Visit) -> str:
        """The page's address for the visitor of `visit`."""
        return self.path.format(**visit.names)


# The pages people land on, in Chinese (the site's language) and the list in English too.
PAGES = (
    Page("events list", "/zh-TW/events"),
    Page("events list (en)", "/en/events"),
    Page("second page", "/zh-TW/events?page=2"),
    # An empty search, with the nearest searches that find something.
    Page("no results", "/zh-TW/events?location=kaohsiung&level=advanced&query=webmcp"),
    Page("about", "/zh-TW/about"),
    Page("free event", f"/zh-TW/events/{FREE_EVENT}"),
    Page("paid event", f"/zh-TW/events/{PAID_EVENT}"),
    Page("registration", f"/zh-TW/events/{FREE_EVENT}/register", indexed=False),
    Page("pending review", "/zh-TW/registrations/pending", personal=True, indexed=False),
    Page("registrations", "/zh-TW/registrations", personal=True, indexed=False),
    Page("sign in", "/zh-TW/sign-in", indexed=False),
    Page("account", "/zh-TW/account", personal=True, indexed=False),
    Page("connect an agent", "/zh-TW/agents", personal=True, indexed=False),
    # Opened on another device, as a mail's link is: no cookie of the visitor's.
    Page("manage link", "/zh-TW{manage}", indexed=False),
)

# The organizer area (every page `noindex`, opened as the owner of an organization with people,
# a draft and an event with attendees), in Chinese, its two busiest pages in English too; and
# the organization's public page, indexed, opened by anyone.
ORGANIZATION = "/organizer/organizations/{organization}"
ORGANIZER_PAGES = (
    Page("organizer dashboard", "/zh-TW/organizer/", personal=True, indexed=False),
    Page("new organization", "/zh-TW/organizer/organizations/new", personal=True,
         indexed=False),
    Page("organization", f"/zh-TW{ORGANIZATION}", personal=True, indexed=False),
    Page("organization (en)", f"/en{ORGANIZATION}", personal=True, indexed=False),
    Page("new event", f"/zh-TW{ORGANIZATION}/events/new", personal=True, indexed=False),
    Page("draft preview", f"/zh-TW{ORGANIZATION}/events/{{draft}}", personal=True,
         indexed=False),
    Page("edit event", f"/zh-TW{ORGANIZATION}/events/{{event}}/edit", personal=True,
         indexed=False),
    Page("attendees", f"/zh-TW{ORGANIZATION}/events/{{event}}/attendees", personal=True,
         indexed=False),
    Page("attendees (en)", f"/en{ORGANIZATION}/events/{{event}}/attendees", personal=True,
         indexed=False),
    Page("door", f"/zh-TW{ORGANIZATION}/events/{{event}}/door", personal=True, indexed=False),
    Page("cancel event", f"/zh-TW{ORGANIZATION}/events/{{event}}/cancel", personal=True,
         indexed=False),
    Page("organization in public", "/zh-TW/organizations/{organization}"),
)


# A person on a waitlist who has been offered a seat (it is held for them): My registrations in
# Chinese and English, the page of what waits for them, and the event's page, as that person.
WAITLIST_PAGES = (
    Page("seat offered", "/zh-TW/registrations", personal=True, indexed=False),
    Page("seat offered (en)", "/en/registrations", personal=True, indexed=False),
    Page("seat offered, pending", "/zh-TW/registrations/pending", personal=True,
         indexed=False),
    Page("seat offered, its event", "/zh-TW/events/{offered}", personal=True),
)


@dataclass(frozen=True)
class Visit:
    """A visitor the personal pages are opened as: the headers that make a run that visitor
    (its Cookie), and what the pages' addresses name for it (`names`: what its mail gave it,
    or the ids of its organization)."""

    headers: dict[str, str]
    names: dict[str, str]


def visitor_with_registrations(base_url: str, database: Path) -> Visit:
    """A new visitor who holds a seat at PAID_EVENT, has a registration for PENDING_EVENT
    waiting to be confirmed and signed in with the address it registered with, on the server
    of the SQLite `database` (its outbox holds the mail)."""
    visitor = HttpVisitor(base_url)
    token = visitor.prepare_registration(PAID_EVENT, "林小安", "an@example.com")
    confirmed = visitor.confirm_registration(token)
    assert confirmed.json()["status"] == "success", confirmed.text
    visitor.prepare_registration(PENDING_EVENT, "林小安", "an@example.com")
    visitor.open_page("/sign-in")
    assert visitor.post("/sign-in", {"email": "an@example.com"}).status == 200
    link = path_of(mailed(database, "sign_in_link")["link"])
    visitor.open_page(link)
    assert visitor.post(link).status == 200
    assert "an@example.com" in visitor.open_page("/account").text, "not signed in"
    # The manage link without its language: the page names the one it is shown in.
    manage = path_of(mailed(database, "registration_confirmed")["manageUrl"])
    assert HttpVisitor(base_url).request("GET", manage).status == 200, manage
    return Visit(
        headers={"Cookie": "; ".join(f"{c.name}={c.value}" for c in visitor.cookies)},
        names={"manage": "/" + manage.split("/", 2)[2]})


_one_seat_events = itertools.count()


def full_event_with_a_waitlist(database: Path) -> Event:
    """A new event of one seat, held (so it is full), whose waitlist is on, ten days after the
    server's clock starts (its offers hold for a day), in the server's SQLite `database`."""
    starts = suite_start() + timedelta(days=10)
    event = Event(id=f"evt-one-seat-{next(_one_seat_events)}",
                  title="候補練習｜Waitlist practice", summary="一個名額，已額滿。One seat, full.",
                  description="", starts_at=starts, ends_at=starts + timedelta(hours=2),
                  location="taipei", venue="Test hall", price="free", level="beginner",
                  capacity=1, held_seats=1, registration_deadline=starts - timedelta(days=1),
                  waitlist=True)
    with closing(SQLiteStorage.open(database)) as storage:
        storage.import_events([event])
    return event


def release_the_held_seat(database: Path, event: Event) -> None:
    """The organizer's data releases the event's held seat (an import of the event with none
    held): the first one waiting is offered it when their places are next shown."""
    with closing(SQLiteStorage.open(database)) as storage:
        storage.import_events([replace(event, held_seats=0)])


def visitor_offered_a_seat(base_url: str, database: Path) -> Visit:
    """A new visitor who joined a full event's waitlist and has been offered its seat that
    then freed, on the server of the SQLite `database`."""
    event = full_event_with_a_waitlist(database)
    visitor = HttpVisitor(base_url)
    token = visitor.prepare_registration(event.id, "林小安", "an-waits@example.com")
    joined = visitor.post("/registrations/waitlist", {"confirmation_token": token}, JSON)
    assert joined.json()["data"]["waitlist"]["state"] == "waiting", joined.text
    release_the_held_seat(database, event)
    assert "Accept the seat" in visitor.open_page("/en/registrations").text, "no seat offered"
    return Visit(headers={"Cookie": "; ".join(f"{c.name}={c.value}" for c in visitor.cookies)},
                 names={"offered": event.id})


def mailed(database: Path, kind: str) -> dict[str, Any]:
    """The payload of the last mail of `kind` the server queued."""
    with closing(sqlite3.connect(database)) as db:
        row = db.execute("SELECT payload FROM outbox WHERE kind = ? ORDER BY id DESC LIMIT 1",
                         [kind]).fetchone()
    assert row is not None, f"no {kind} mail was queued"
    payload: dict[str, Any] = json.loads(row[0])
    return payload


def path_of(address: str) -> str:
    """The path of a full address the site handed out."""
    return urlsplit(address).path


# Audits that do not count towards their category's score.
UNSCORED = ("notApplicable", "manual", "informative")


class LighthouseMissing(RuntimeError):
    """tools/lighthouse has not been installed."""


@dataclass(frozen=True)
class Report:
    """What Lighthouse found on one page in one form factor."""

    url: str
    form_factor: str
    data: dict[str, Any]

    def score(self, category: str) -> float:
        """The category's score, 0 to 1 (an audit that could not run makes it null: 0)."""
        score = self.data["categories"][category]["score"]
        return float(score or 0)

    def score_without(self, category: str, left_out: tuple[str, ...]) -> float:
        """The category's score computed as Lighthouse does (the weighted mean of its scored
        audits), leaving out the audits `left_out`."""
        total = weights = 0.0
        for reference in self.data["categories"][category]["auditRefs"]:
            audit = self.data["audits"][reference["id"]]
            if reference["id"] in left_out or audit["scoreDisplayMode"] in UNSCORED:
                continue
            total += reference["weight"] * (audit["score"] or 0)
            weights += reference["weight"]
        return total / weights

    def audit_score(self, audit: str) -> float | None:
        """One audit's score (None when it did not apply)."""
        score: float | None = self.data["audits"][audit]["score"]
        return score

    def failing(self, category: str) -> list[str]:
        """The audits of the category that count and did not pass, with what they name."""
        failing = []
        for reference in self.data["categories"][category]["auditRefs"]:
            audit = self.data["audits"][reference["id"]]
            if (reference["weight"] == 0 or audit["scoreDisplayMode"] in UNSCORED
                    or audit["score"] == 1):
                continue
            items = audit.get("details", {}).get("items", [])
            where = [item.get("node", {}).get("snippet") or item.get("source") or item
                     for item in items[:5]]
            failing.append(f"{audit['id']} ({audit['score']}): {audit['title']} "
                           f"{audit.get('errorMessage', '')}{where}")
        return failing


@dataclass(frozen=True)
class Audit:
    """One Lighthouse run: a page's address in a form factor, for some categories only, with
    `headers` sent with every request (a visitor's Cookie, say)."""

    url: str
    form_factor: str
    categories: tuple[str, ...]
    headers: dict[str, str] | None = None


def run_all(audits: list[Audit], quick: bool = False) -> list[Report]:
    """Lighthouse's reports on `audits`, one after another in one Chromium (batch.mjs). A
    `quick` run leaves out the waits only performance needs. A run that fails raises with
    Lighthouse's own words."""
    if not LIGHTHOUSE.is_file():
        raise LighthouseMissing(f"{LIGHTHOUSE} is missing: run `make lighthouse`")
    with tempfile.TemporaryDirectory(prefix="lighthouse-") as scratch:
        outputs = [Path(scratch) / f"report-{number}.json" for number in range(len(audits))]
        runs = Path(scratch) / "runs.json"
        runs.write_text(json.dumps([
            {"url": audit.url, "formFactor": audit.form_factor,
             "categories": list(audit.categories), "headers": audit.headers, "quick": quick,
             "output": str(output)}
            for audit, output in zip(audits, outputs, strict=True)]))
        finished = subprocess.run(["node", str(BATCH), str(runs)], capture_output=True,
                                  text=True, timeout=TIMEOUT * len(audits),
                                  env={**os.environ, "CHROME_PATH": str(CHROMIUM)})
        if finished.returncode != 0:
            raise RuntimeError(f"lighthouse failed (exit {finished.returncode}): "
                               f"{finished.stderr[-2000:]}")
        reports = [Report(audit.url, audit.form_factor, json.loads(output.read_text()))
                   for audit, output in zip(audits, outputs, strict=True)]
    for report in reports:
        if report.data.get("runtimeError"):
            raise RuntimeError(f"lighthouse could not load {report.url}: "
                               f"{report.data['runtimeError']}")
    return reports


def run(url: str, form_factor: str, categories: tuple[str, ...],
        headers: dict[str, str] | None = None) -> Report:
    """Lighthouse over `url` in `form_factor`, for `categories` only, with every wait."""
    (report,) = run_all([Audit(url, form_factor, categories, headers)])
    return report
