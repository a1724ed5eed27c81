"""Organization pages in the sitemap (issue 30): an organization is listed once it runs a
published event, in each language, with when its public page last changed: the last time one
of its published events was published, edited or cancelled, else when it started."""

from __future__ import annotations

import xml.etree.ElementTree as ET  # noqa: S405 - only the app's own sitemap is parsed
from datetime import datetime

import pytest
from helpers import Visitor
from test_event_cancellation import EVENT
from test_event_cancellation import cancel_address
from test_event_cancellation import run_by
from test_organizer_events import draft
from test_organizers import signed_in
from test_organizers import start

pytestmark = pytest.mark.both_backends

SITEMAP = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}


def listed_organizations(visitor: Visitor) -> dict[str, datetime]:
    """Each organization page's address in the sitemap, with its lastmod."""
    urls = ET.fromstring(visitor.get("/sitemap.xml").data)  # noqa: S314 - our own answer
    return {loc: datetime.fromisoformat(url.findtext("s:lastmod", "", SITEMAP))
            for url in urls.findall("s:url", SITEMAP)
            if "/organizations/" in (loc := url.findtext("s:loc", "", SITEMAP))}


def addresses(organization_id: str) -> set[str]:
    return {f"http://localhost/{language}/organizations/{organization_id}"
            for language in ("zh-TW", "en")}


def test_an_organization_is_listed_once_it_runs_a_published_event(app, clock):
    owner, visitor = signed_in(app), Visitor(app)
    started = clock()
    running = start(owner, "台北網頁開發者聚會")
    drafting = start(owner, "高雄 AI 社群")
    start(owner, "還沒有活動的社群")
    draft(app, owner, drafting)
    assert listed_organizations(visitor) == {}  # drafts alone are not public

    run_by(app, running, EVENT)
    assert listed_organizations(visitor) == dict.fromkeys(addresses(running), started)

    clock.advance(hours=1)
    assert owner.post(cancel_address(running, "en"), {}).status_code == 303
    cancelled = clock()
    clock.advance(hours=1)  # looking at the attendees changes nothing public
    assert owner.get(f"/en/organizer/organizations/{running}/events/{EVENT}/attendees"
                     ).status_code == 200
    assert listed_organizations(visitor) == dict.fromkeys(addresses(running), cancelled)
