"""The organizer area (`/organizer/…`): people who run events, in the organizations they
belong to. Steps for people only: no page here carries a WebMCP tool or loads the agent bridge,
and nothing of it is reachable over MCP.

Deny by default: before any view here runs, `admit` checks the request against what the view
declares with `@needs(right)`. A view that declares nothing is not found; what an agent sends
is refused (`people_only`, as every step for people refuses it); without a signed-in account,
a page sends the browser to sign in (and back here after) and anything else is refused unread
(403); in an organization (the `organization_id` of the address) the account's
role must hold the right (`domain.organizers.may`), or the organization is not found, which
tells a non-member nothing; an `event_id` in the address must be an event the organization
runs, or it is not found either. Only a request let in has its body read, its CSRF token
checked first: a stranger's upload is refused unread. Every answer is `no-store` (`caching`),
`noindex` and sends no referrer.
"""

from __future__ import annotations

from collections.abc import Callable
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

from flask_webmcp.calls import request_source
from flask_webmcp.forms import controls_for
from flask_webmcp.negotiation import page_result
from flask_webmcp.negotiation import render_post_result
from flask_webmcp.negotiation import with_vary
from flask_webmcp.result import ToolResult
from flask_webmcp.result import invalid_input
from flask_webmcp.result import people_only
from flask_webmcp.routes import current_action
from flask_webmcp.routes import human_route
from flask_webmcp.routes import page_route

from ..domain.actions import organizer_events as event_actions
from ..domain.actions import organizers as actions
from ..domain.actions.organization_logos import logo_view
from ..domain.cover_inputs import OrganizationLogoInput
from ..domain.organizers import EDIT_ORGANIZATION
from ..domain.organizers import INVITE
from ..domain.organizers import LEAVE
from ..domain.organizers import MANAGE_EVENTS
from ..domain.organizers import MANAGE_MEMBERS
from ..domain.organizers import VIEW_ORGANIZATION
from ..domain.organizers import may
from ..domain.schemas import CreateOrganizationInput
from ..domain.schemas import InviteMemberInput
from ..storage import Membership
from ..storage.connection import get_db
from .calls import action_context
from .calls import run_tool
from .errors import render_error
from .security import csrf
from .visitors import return_after_sign_in
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
    if request_source() == "agent":
        # The bridge marks what an agent sends: nothing here is for agents.
        return render_error(people_only(current_action()))
    account = signed_in_account(get_db())
    if account is None:
        if request.method == "GET":
            return_after_sign_in(request.full_path.rstrip("?"))
            return with_vary(redirect(url_for("accounts.sign_in_page"), code=303))
        # Refused before its body is read: whatever it sends, nothing of it is looked at.
        sign_in_first = _("Sign in to use the organizer area, then try again.")
        return render_error(invalid_input(current_action(), {"_schema": [sign_in_first]},
                                          message=sign_in_first, http_status=403))
    right = getattr(view, NEEDS)
    if right is not None:
        arguments = request.view_args or {}
        organization_id = arguments.get("organization_id", "")
        membership = get_db().membership(organization_id, account.id)
        if membership is None or not may(membership.role, right):
            abort(404)
        # An event in the address is one this organization runs, or it is not found here.
        if "event_id" in arguments and \
                get_db().event_organization(arguments["event_id"]) != organization_id:
            abort(404)
        g.membership = membership
    # Only now, let in, is the body read (a form's CSRF token is in it): the app's own CSRF
    # check, which runs before any blueprint's and would read up to an upload's limit of a
    # stranger's body, leaves this blueprint to here (`webapp.create_app`).
    if current_app.config["WTF_CSRF_ENABLED"]:
        csrf.protect()
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
    """An organization as its members see it: its logo and its events (to those who may
    change them), its people and, for owners, its audit log."""
    return with_vary(render_template("organizer/organization.html", result=page_result(),
                                     **_organization_context()))


def shown_back(values: dict[str, Any] | None) -> dict[str, Any]:
    """What a refused form shows again of what was sent: everything but its files (a file
    control never shows a value)."""
    return {name: value for name, value in (values or {}).items() if name != "picture"}


def _organization_context(values: dict[str, Any] | None = None,
                          errors: dict[str, Any] | None = None) -> dict[str, Any]:
    """The organization page's context; `values` and `errors` are those of its form that was
    just refused (the invitation's or the logo's: their fields' names differ)."""
    membership: Membership = g.membership
    organization = membership.organization
    events = (event_actions.organization_events(get_db(), organization.id, _context())
              if may(membership.role, MANAGE_EVENTS) else None)
    logo = get_db().organization_logo(organization.id)
    # The logo's alt text offers what it was, else the organization's name (what most logos
    # show), unless another was just typed.
    logo_controls = (controls_for(OrganizationLogoInput,
                                  {"alt": logo.alt if logo else organization.name,
                                   **shown_back(values)}, errors, bound=["organization_id"])
                     if may(membership.role, EDIT_ORGANIZATION) else None)
    return {**actions.organization_overview(get_db(), membership, _context()), "events": events,
            "logo": logo_view(logo) if logo else None, "logo_controls": logo_controls,
            "invite_controls": controls_for(InviteMemberInput, values, errors,
                                            bound=["organization_id"])}


def back_to_organization(result: ToolResult, organization_id: str,
                         submitted: dict[str, Any] | None = None) -> Response:
    """Answer a change to the organization with its page, which shows it; after a refusal of
    one of its forms (`submitted`: what that form sent), with what was typed and its field
    errors."""
    errors = result.errors if submitted is not None else None
    return render_post_result(
        result, "organizer/organization.html", "organizer/organization.html",
        redirect_to=url_for(".organization", organization_id=organization_id),
        page_context=lambda: _organization_context(submitted, errors),
        values=shown_back(submitted), errors=errors or {})


@needs(INVITE)
@human_route(bp, "/organizations/<organization_id>/invitations", actions.invite_member,
             methods=("POST",))
def invite(organization_id: str) -> Response:
    """Mail an invitation to join the organization; back on its page, which lists it."""
    result, submitted = run_tool(bound={"organization_id": organization_id})
    return back_to_organization(result, organization_id, submitted)


@needs(INVITE)
@human_route(bp, "/organizations/<organization_id>/invitations/<invitation_id>/revoke",
             actions.revoke_invitation, methods=("POST",))
def revoke(organization_id: str, invitation_id: str) -> Response:
    """Revoke an invitation still open; back on the organization's page."""
    result = run_tool(bound={"organization_id": organization_id,
                             "invitation_id": invitation_id}).result
    return back_to_organization(result, organization_id)


@needs(None)
@page_route(bp, "/invitations/<token>", "accept_invitation")
def invitation(token: str) -> Response | tuple[str, int]:
    """An invitation's link: who invites the signed-in person into what, and a button to
    accept; opening it changes nothing."""
    shown = actions.invitation_page(get_db(), token, _context())
    if shown is None:
        return render_template("organizer/invitation_gone.html", result=None), 410
    return with_vary(render_template("organizer/invitation.html", result=page_result(),
                                     token=token, **shown))


@needs(None)
@human_route(bp, "/invitations/<token>", actions.accept_invitation, methods=("POST",))
def accept(token: str) -> Response:
    """Accept the invitation: the organization's page, now as a member (the dashboard, with
    the doors, for check-in staff, who may not open that page)."""
    result = run_tool(bound={"token": token}).result
    joined = (result.data or {}).get("invitation") if result.status.word == "success" else None
    landing = (url_for(".organization", organization_id=result.target)
               if joined and result.target and may(joined["role"], VIEW_ORGANIZATION)
               else url_for(".dashboard"))
    return render_post_result(result, "organizer/invitation_gone.html",
                              "organizer/invitation_gone.html", redirect_to=landing,
                              values={}, errors={})


@needs(MANAGE_MEMBERS)
@human_route(bp, "/organizations/<organization_id>/members/<account_id>/role",
             actions.change_role, methods=("POST",))
def change_role(organization_id: str, account_id: str) -> Response:
    """Give a member another role; back on the organization's page."""
    result = run_tool(bound={"organization_id": organization_id,
                             "account_id": account_id}).result
    return back_to_organization(result, organization_id)


@needs(MANAGE_MEMBERS)
@human_route(bp, "/organizations/<organization_id>/members/<account_id>/remove",
             actions.remove_member, methods=("POST",))
def remove_member(organization_id: str, account_id: str) -> Response:
    """Take someone out of the organization; back on its page."""
    result = run_tool(bound={"organization_id": organization_id,
                             "account_id": account_id}).result
    return back_to_organization(result, organization_id)


@needs(LEAVE)
@human_route(bp, "/organizations/<organization_id>/leave", actions.leave_organization,
             methods=("POST",))
def leave(organization_id: str) -> Response:
    """Leave the organization; the dashboard then, which says so (or, for the last owner,
    why not)."""
    result = run_tool(bound={"organization_id": organization_id}).result
    return render_post_result(result, "organizer/dashboard.html", "organizer/dashboard.html",
                              redirect_to=url_for(".dashboard"),
                              page_context=lambda: actions.dashboard(get_db(), _context()),
                              values={}, errors={})


# The area's further steps, each in a module of its own, add their routes to `bp` (and are
# let in by `admit`) once imported here.
from . import event_cancellation  # noqa: E402, F401
