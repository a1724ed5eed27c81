"""Lighthouse scores accessibility, best practices and SEO at 0.97 or more on the pages people
land on, as a phone and as a desktop: the events list (in Chinese and English), its second
page, an empty search with its nearest matches, the About page, a free and a paid event, the
registration form, the review of a pending registration, the visitor's registrations, signing
in, the account, a mailed manage link and connecting an agent; a seat a waitlist offers a
person (My registrations in Chinese and English, what waits for them, the event's page); and
the organizer's pages (the
dashboard, a new organization, an organization's page in Chinese and English, a new event's
form, a draft's preview, the edit form, the attendee list in both languages, the door, the
cancel confirmation) with an organization's public page.

Lighthouse audits every page the run's tests name (all of them, unless `-k` picks some) in
every form factor one after another in one Chromium (`tests/browser/lighthouse.py`), without
the waits only performance needs, and its JSON reports are read here; a page below the bar
names the audits that failed. Performance is
timing, never asserted: `python -m bench --only lighthouse` prints it, with every wait.

The pages of one's own (the registration form, the pending review, one's registrations, and
every organizer page) say `noindex` on purpose (tests/test_discovery.py): Lighthouse's SEO
category counts that as a failed audit, "is-crawlable". On those pages that audit must fail
(they stay out of search engines), and every other SEO audit must score as on any page.
"""

from __future__ import annotations

import pytest
from servers import gunicorn

from .lighthouse import FORM_FACTORS
from .lighthouse import ORGANIZER_PAGES
from .lighthouse import PAGES
from .lighthouse import WAITLIST_PAGES
from .lighthouse import Audit
from .lighthouse import LighthouseMissing
from .lighthouse import Page
from .lighthouse import Report
from .lighthouse import run_all
from .lighthouse import visitor_offered_a_seat
from .lighthouse import visitor_with_registrations
from .organizer_setup import organizer_with_an_event
from .visit import Site

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # one batch of audits: two minutes

CATEGORIES = ("accessibility", "best-practices", "seo")
BAR = 0.97
KEPT_OUT_OF_SEARCH = "is-crawlable"
EVERY_PAGE = PAGES + WAITLIST_PAGES + ORGANIZER_PAGES


def pages_tested(session: pytest.Session) -> set[str]:
    """The names of the pages the run's tests audit (`-k` may pick a few)."""
    pages = [item.callspec.params.get("page") for item in session.items
             if isinstance(item, pytest.Function) and hasattr(item, "callspec")]
    return {page.name for page in pages if isinstance(page, Page)}


@pytest.fixture(scope="session")
def reports(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> dict[tuple[str, str], Report]:
    """Lighthouse's report on every page the run tests in every form factor, by (page name,
    form factor), from a server of their own; the pages of one's own are opened as a visitor
    with registrations, or offered a seat from a waitlist, or as an organizer (its Cookie),
    each made only when one of its pages is tested. Made once per process, however the tests
    are scheduled. A missing Lighthouse fails the tests, never skips them."""
    tested = pages_tested(request.session)
    database = tmp_path_factory.mktemp("lighthouse") / "events.sqlite"
    with gunicorn(database, workers=2, threads=4) as (base_url, _):
        site = Site(base_url, database)
        visitors = {PAGES: lambda: visitor_with_registrations(site.base_url, database),
                    WAITLIST_PAGES: lambda: visitor_offered_a_seat(site.base_url, database),
                    ORGANIZER_PAGES: lambda: organizer_with_an_event(site).visit()}
        visits = {pages: visit() for pages, visit in visitors.items()
                  if any(page.name in tested for page in pages)}
        audits = {(page.name, form_factor): Audit(site.url(page.address(visit)), form_factor,
                                                  CATEGORIES,
                                                  visit.headers if page.personal else None)
                  for pages, visit in visits.items() for page in pages if page.name in tested
                  for form_factor in FORM_FACTORS}
        try:
            found = run_all(list(audits.values()), quick=True)
        except LighthouseMissing as missing:
            pytest.fail(str(missing), pytrace=False)
    return dict(zip(audits, found, strict=True))


def seo_score(report: Report, indexed: bool) -> float:
    """The SEO score; for a page kept out of search engines, without the audit that says so."""
    if indexed:
        return report.score("seo")
    return report.score_without("seo", (KEPT_OUT_OF_SEARCH,))


@pytest.mark.parametrize("form_factor", FORM_FACTORS)
@pytest.mark.parametrize("page", EVERY_PAGE, ids=[page.name for page in EVERY_PAGE])
def test_lighthouse_scores_97_or_more(reports: dict[tuple[str, str], Report], page: Page,
                                      form_factor: str):
    report = reports[page.name, form_factor]
    # Leaving nothing out, the recomputation must agree with Lighthouse's own (which it rounds
    # to two decimals).
    assert report.score_without("seo", ()) == pytest.approx(report.score("seo"), abs=0.005)
    if not page.indexed:
        assert report.audit_score(KEPT_OUT_OF_SEARCH) == 0, "a page of one's own is indexable"
    scores = {category: report.score(category) for category in CATEGORIES}
    scores["seo"] = seo_score(report, page.indexed)
    below = {category: report.failing(category)
             for category, score in scores.items() if score < BAR}
    assert not below, f"{page.path} ({form_factor}) scores {scores}; failing audits: {below}"
