"""The organizer area (`/organizer/…`): people who run events, in the organizations they
belong to. Steps for people only: no page here carries a WebMCP tool or loads the agent bridge,
and nothing of it is reachable over MCP.

Deny by default: before any view here runs, `admit` checks the request against what the view
declares with `@needs(right)`: a view that declares nothing is not found; without a signed-in
account a page sends the browser to sign in and anything else is refused unread
(`session_expired`); in an organization (the `organization_id` of the address) the account's
role must hold the right (`domain.organizers.may`), or the organization is not found, which
tells a non-member nothing.
Every answer is `no-store` (`caching`), `noindex` and sends no referrer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any
from typing import TypeVar

from flask import Blueprint
from flask import Response
from flask import abort
from flask import current_app
from flask import g
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for
from flask_babel import gettext as _

from flask_webmcp.forms import controls_for
from flask_webmcp.negotiation import page_result
from flask_webmcp.negotiation import render_post_result
from flask_webmcp.negotiation import with_vary
from flask_webmcp.result import session_expired
from flask_webmcp.routes import current_action
from flask_webmcp.routes import human_route
from flask_webmcp.routes import page_route

from ..domain.actions import organizers as actions
from ..domain.organizers import VIEW_ORGANIZATION
from ..domain.organizers import may
from ..domain.schemas import CreateOrganizationInput
from ..storage import Membership
from ..storage.connection import get_db
from .calls import action_context
from .calls import run_tool
from .errors import render_error
from .visitors import signed_in_account

bp = Blueprint("organizer", __name__, url_prefix="/organizer")

View = TypeVar("View", bound=Callable[..., Any])
# The attribute holding what a view needs: a right in the organization of its address, or
# None for the pages about the person's own organizations (a signed-in account is enough).
NEEDS = "organizer_needs"


def needs(right: str | None) -> Callable[[View], View]:
    """Declare what the decorated view needs (see `admit`)."""
    def declare(view: View) -> View:
        setattr(view, NEEDS, right)
        return view

    return declare


@bp.before_request
def admit() -> Response | None:
    """Let a request through only as its view declares (the module's docstring says how)."""
    view = current_app.view_functions.get(request.endpoint or "")
    if view is None or not hasattr(view, NEEDS):
        abort(404)
    account = signed_in_account(get_db())
    if account is None:
        if request.method == "GET":
            return with_vary(redirect(url_for("accounts.sign_in_page"), code=303))
        # Refused before its body is read: whatever it sends, nothing of it is looked at.
        return render_error(replace(session_expired(current_action()), message=_(
            "Sign in to use the organizer area, then try again.")))
    right = getattr(view, NEEDS)
    if right is not None:
        organization_id = (request.view_args or {}).get("organization_id", "")
        membership = get_db().membership(organization_id, account.id)
        if membership is None or not may(membership.role, right):
            abort(404)
        g.membership = membership
    return None


@bp.after_request
def keep_private(response: Response) -> Response:
    """Ask search engines to leave the page out and browsers to send no referrer from it."""
    response.headers["X-Robots-Tag"] = "noindex"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def _context() -> Any:
    return action_context(g.account.visitor_id)


@needs(None)
@page_route(bp, "/", "create_organization")
def dashboard() -> Response:
    """The signed-in person's organizations, and where to start one."""
    return with_vary(render_template("organizer/dashboard.html", result=page_result(),
                                     **actions.dashboard(get_db(), _context())))


def _new_context(values: dict[str, Any] | None = None,
                 errors: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"controls": controls_for(CreateOrganizationInput, values, errors)}


@needs(None)
@page_route(bp, "/organizations/new", "create_organization")
def new_organization() -> Response:
    """The form that starts an organization."""
    return with_vary(render_template("organizer/new_organization.html", result=None,
                                     **_new_context()))


@needs(None)
@human_route(bp, "/organizations", actions.create_organization, methods=("POST",))
def create_organization() -> Response:
    """Start an organization, then show it (its owner is the person who started it)."""
    result, submitted = run_tool()
    landing = (url_for(".organization", organization_id=result.target) if result.target
               else url_for(".dashboard"))
    return render_post_result(result, "organizer/new_organization.html",
                              "organizer/new_organization.html", redirect_to=landing,
                              page_context=lambda: _new_context(submitted, result.errors),
                              values=submitted, errors=result.errors or {})


@needs(VIEW_ORGANIZATION)
@page_route(bp, "/organizations/<organization_id>", "view_organization")
def organization(organization_id: str) -> Response:
    """An organization as its members see it: its people and, for owners, its audit log."""
    membership: Membership = g.membership
    return with_vary(render_template(
        "organizer/organization.html", result=page_result(),
        **actions.organization_overview(get_db(), membership, _context())))
