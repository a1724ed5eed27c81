"""For search engines: /robots.txt (what to crawl, where the sitemap is) and /sitemap.xml
(the events list, every upcoming event and the organizations that run published events, in
each language). Neither has a language of its
own."""

from __future__ import annotations

from typing import Any

from flask import Blueprint
from flask import Response
from flask import render_template

from ..domain.actions import events as actions
from ..domain.organization_pages import listed_organizations
from ..storage.connection import get_db
from .addresses import external_url_for
from .caching import public
from .calls import action_context
from .languages import LANGUAGES

bp = Blueprint("discovery", __name__)

# A sitemap lists at most 50 000 addresses: two languages of this many events, soonest first,
# and of this many organizations, the latest changed first (with the two lists, 48 004).
SITEMAP_EVENTS = 20_000
SITEMAP_ORGANIZATIONS = 4_000
# One visitor's own pages, and the agents' endpoint: nothing a search engine should list.
PRIVATE_PATHS = ("/registrations", "/saved", "/agents", "/events/*/register")


@public(max_age=3600)
@bp.get("/robots.txt")
def robots() -> Response:
    """Crawl the events, not anyone's own pages; the sitemap is here."""
    lines = ["User-agent: *"]
    lines += [f"Disallow: /{code}{path}" for code in LANGUAGES for path in PRIVATE_PATHS]
    lines += ["Disallow: /mcp", "", f"Sitemap: {external_url_for('.sitemap')}", ""]
    return Response("\n".join(lines), mimetype="text/plain")


@public(max_age=3600)
@bp.get("/sitemap.xml")
def sitemap() -> Response:
    """The events list, the About page, every upcoming event (up to SITEMAP_EVENTS) and
    every organization with a published event (up to SITEMAP_ORGANIZATIONS, each with when
    its page last changed), in each language."""
    events = actions.upcoming_events(get_db(), action_context(None), SITEMAP_EVENTS)
    pages = [_in_every_language("events.search"), _in_every_language("about.index")]
    pages += [_in_every_language("events.detail", event_id=event["id"]) for event in events]
    pages += [{**_in_every_language("organizations.page", organization_id=organization["id"]),
               "lastmod": organization["changedAt"]}
              for organization in listed_organizations(get_db(), SITEMAP_ORGANIZATIONS)]
    return Response(render_template("discovery/sitemap.xml", pages=pages),
                    mimetype="application/xml")


def _in_every_language(endpoint: str, **values: Any) -> dict[str, Any]:
    return {"urls": {code: external_url_for(endpoint, lang_code=code, **values)
                     for code in LANGUAGES}}
