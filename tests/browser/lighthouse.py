"""Lighthouse (pinned in tools/lighthouse, `make lighthouse` installs it) run over the site's
pages with Debian's Chromium, one run at a time in one browser (batch.mjs), its JSON reports
read here.

Shared by the browser test (accessibility, best practices and SEO) and the benchmark (the
performance score, which is timing and so never asserted). Lighthouse never downloads a
browser here: CHROME_PATH points it at the one the browser tests drive.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers import PROJECT_ROOT
from servers import HttpVisitor

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
    own (opened as the visitor of `visitor_with_registrations`) and whether search engines
    may index it (the pages of one's own say `noindex`)."""

    name: str
    path: str
    personal: bool = False
    indexed: bool = True


# The pages people land on, in Chinese (the site's language) and the list in English too.
PAGES = (
    Page("events list", "/zh-TW/events"),
    Page("events list (en)", "/en/events"),
    Page("second page", "/zh-TW/events?page=2"),
    Page("free event", f"/zh-TW/events/{FREE_EVENT}"),
    Page("paid event", f"/zh-TW/events/{PAID_EVENT}"),
    Page("registration", f"/zh-TW/events/{FREE_EVENT}/register", indexed=False),
    Page("pending review", "/zh-TW/registrations/pending", personal=True, indexed=False),
    Page("registrations", "/zh-TW/registrations", personal=True, indexed=False),
    Page("sign in", "/zh-TW/sign-in", indexed=False),
)


def visitor_with_registrations(base_url: str) -> dict[str, str]:
    """A new visitor who holds a seat at PAID_EVENT and has a registration for PENDING_EVENT
    waiting to be confirmed: the headers that make a run that visitor (its Cookie)."""
    visitor = HttpVisitor(base_url)
    token = visitor.prepare_registration(PAID_EVENT, "林小安", "an@example.com")
    confirmed = visitor.confirm_registration(token)
    assert confirmed.json()["status"] == "success", confirmed.text
    visitor.prepare_registration(PENDING_EVENT, "林小安", "an@example.com")
    return {"Cookie": "; ".join(f"{cookie.name}={cookie.value}" for cookie in visitor.cookies)}


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
