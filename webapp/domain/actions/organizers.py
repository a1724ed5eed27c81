"""The organizer area's actions: steps for signed-in people only, never tools (an agent has no
organizer tool, over WebMCP or MCP).

Every action here is taken by an account, in an organization where its role allows it
(`domain.organizers.may`), and leaves a line in that organization's audit log.
"""

from __future__ import annotations

import secrets
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from flask_webmcp.actions import human_action
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.result import conflict

from ...storage import AuditEntry
from ...storage import Membership
from ...storage import Organization
from ...storage import Storage
from ..activity import logged_as
from ..organizers import AUDIT_WORDS
from ..organizers import READ_AUDIT_LOG
from ..organizers import ROLE_NAMES
from ..organizers import may
from ..projections import local_time
from ..schemas import CreateOrganizationInput
from ..schemas import CreateOrganizationParams
from . import ActionContext

# How many lines of its audit log an organization's page shows.
AUDIT_LINES_SHOWN = 50


@logged_as(_l("Start an organization"), _l("%(who)s started an organization"))
@human_action("create_organization", schema=CreateOrganizationInput,
              answers=(Status.SUCCESS, Status.CONFLICT), creates=True)
def create_organization(db: Storage, params: CreateOrganizationParams, ctx: ActionContext
                        ) -> ToolResult:
    """Start an organization with the signed-in person as its owner."""
    name = "create_organization"
    if ctx.account is None:
        return conflict(name, _("Sign in first: an organization belongs to people who "
                                "signed in."))
    organization = Organization(id=f"org-{secrets.token_urlsafe(9)}", name=params["name"],
                                description=params["description"], created_at=ctx.now)
    db.create_organization(organization, ctx.account.id)
    return ToolResult(
        action=name, status=Status.SUCCESS,
        message=_("“%(name)s” is ready, and you are its owner.", name=organization.name),
        data={"organization": organization_view(organization)},
        next_action=_("Done."), target=organization.id)


def organization_view(organization: Organization) -> dict[str, Any]:
    """An organization as pages show it."""
    return {"id": organization.id, "name": organization.name,
            "description": organization.description}


def membership_view(membership: Membership, ctx: ActionContext) -> dict[str, Any]:
    """A membership as the organizer pages show it: the organization, the role and its name."""
    return {"organization": organization_view(membership.organization),
            "role": membership.role, "roleName": ROLE_NAMES[membership.role],
            "since": local_time(membership.since, ctx.timezone), "email": membership.email}


def dashboard(db: Storage, ctx: ActionContext) -> dict[str, Any]:
    """What the organizer dashboard shows the signed-in person: their organizations."""
    assert ctx.account is not None, "the organizer area is for people who signed in"
    return {"memberships": [membership_view(membership, ctx)
                            for membership in db.account_memberships(ctx.account.id)]}


def organization_overview(db: Storage, membership: Membership, ctx: ActionContext
                          ) -> dict[str, Any]:
    """What an organization's page in the organizer area shows a member: the organization,
    their role, its people, and (to those who may read it) its audit log."""
    organization = membership.organization
    members = db.organization_members(organization.id)
    audit = (db.audit_log(organization.id, AUDIT_LINES_SHOWN)
             if may(membership.role, READ_AUDIT_LOG) else None)
    emails = {member.account_id: member.email for member in members}
    return {"membership": membership_view(membership, ctx),
            "members": [membership_view(member, ctx) for member in members],
            "audit": None if audit is None else [audit_view(entry, emails, ctx)
                                                 for entry in audit]}


def audit_view(entry: AuditEntry, emails: dict[str, str | None], ctx: ActionContext
               ) -> dict[str, Any]:
    """An audit line as the organization's page shows it: who (a member's address; someone
    who left is "a former member"), what, when."""
    who = emails.get(entry.account_id)
    return {"at": local_time(entry.at, ctx.timezone),
            "who": who if who else _("a former member"),
            "sentence": AUDIT_WORDS[entry.action],
            "eventId": entry.event_id, "target": entry.target}
