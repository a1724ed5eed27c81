"""Organizations as everyone sees them: an organization's public page, with its events (the
organizer area, `organizer`, is where its members run them). Indexable, and the same for
every visitor."""

from __future__ import annotations

from flask import Blueprint
from flask import Response
from flask import abort
from flask import render_template

from flask_webmcp.negotiation import with_vary
from flask_webmcp.routes import page_route

from ..domain.organization_pages import organization_page
from ..storage.connection import get_db
from .caching import public
from .calls import action_context

bp = Blueprint("organizations", __name__)


@public(max_age=60)
@page_route(bp, "/organizations/<organization_id>", "view_organization_page")
def page(organization_id: str) -> Response:
    """An organization's page: its name, what it is, and its upcoming and past events."""
    shown = organization_page(get_db(), organization_id, action_context(None))
    if shown is None:
        abort(404)
    return with_vary(render_template("organizations/page.html", **shown))
