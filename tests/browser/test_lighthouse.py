"""Lighthouse scores accessibility, best practices and SEO at 0.97 or more on the pages people
land on, as a phone and as a desktop: the events list (in Chinese and English), its second
page, a free and a paid event, the registration form, the review of a pending registration
and the visitor's registrations.

Lighthouse runs once at a time (`tests/browser/lighthouse.py`), with Debian's Chromium, and
its JSON report is read here; a page below the bar names the audits that failed. Performance
is timing, never asserted: `python -m bench --only lighthouse` prints it.

The pages of one's own (the registration form, the pending review, one's registrations) say
`noindex` on purpose (tests/test_discovery.py): Lighthouse's SEO category counts that as a
failed audit, "is-crawlable". On those pages that audit must fail (they stay out of search
engines), and every other SEO audit must score as on any page.
"""

from __future__ import annotations

import pytest

from .lighthouse import FORM_FACTORS
from .lighthouse import PAGES
from .lighthouse import LighthouseMissing
from .lighthouse import Page
from .lighthouse import Report
from .lighthouse import run
from .lighthouse import visitor_with_registrations
from .visit import Site

pytestmark = pytest.mark.browser

CATEGORIES = ("accessibility", "best-practices", "seo")
BAR = 0.97
KEPT_OUT_OF_SEARCH = "is-crawlable"


@pytest.fixture(scope="module")
def visitor_headers(site: Site) -> dict[str, str]:
    """The Cookie of a visitor with a confirmed registration and one waiting for review."""
    return visitor_with_registrations(site.base_url)


def lighthouse(site: Site, page: Page, form_factor: str, headers: dict[str, str]) -> Report:
    """Lighthouse's report on `page`; a missing Lighthouse fails the test, never skips it."""
    try:
        return run(site.url(page.path), form_factor, CATEGORIES,
                   headers if page.personal else None)
    except LighthouseMissing as missing:
        pytest.fail(str(missing), pytrace=False)


def seo_score(report: Report, indexed: bool) -> float:
    """The SEO score; for a page kept out of search engines, without the audit that says so."""
    if indexed:
        return report.score("seo")
    return report.score_without("seo", (KEPT_OUT_OF_SEARCH,))


@pytest.mark.parametrize("form_factor", FORM_FACTORS)
@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_lighthouse_scores_97_or_more(site: Site, page: Page, form_factor: str,
                                      visitor_headers: dict[str, str]):
    report = lighthouse(site, page, form_factor, visitor_headers)
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
