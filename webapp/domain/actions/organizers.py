"""The organizer area's actions: steps for signed-in people only, never tools (an agent has no
organizer tool, over WebMCP or MCP).

Every action here is taken by an account, in an organization where its role allows it
(`domain.organizers.may`), and leaves a line in that organization's audit log.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from flask_webmcp.actions import human_action
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.result import conflict
from flask_webmcp.result import not_found

from ...mail.kinds import ORGANIZATION_INVITATION
from ...storage import AuditEntry
from ...storage import Invitation
from ...storage import Membership
from ...storage import Organization
from ...storage import OrganizerEvent
from ...storage import Storage
from ..activity import logged_as
from ..organizers import AUDIT_EVENT_WORDS
from ..organizers import AUDIT_WORDS
from ..organizers import CHECK_IN
from ..organizers import INVITE
from ..organizers import MANAGE_EVENTS
from ..organizers import MANAGE_MEMBERS
from ..organizers import READ_AUDIT_LOG
from ..organizers import ROLE_NAMES
from ..organizers import VIEW_ORGANIZATION
from ..organizers import may
from ..projections import local_time
from ..schemas import AcceptInvitationInput
from ..schemas import AcceptInvitationParams
from ..schemas import ChangeRoleInput
from ..schemas import ChangeRoleParams
from ..schemas import CreateOrganizationInput
from ..schemas import CreateOrganizationParams
from ..schemas import InviteMemberInput
from ..schemas import InviteMemberParams
from ..schemas import MemberInput
from ..schemas import MemberParams
from ..schemas import OrganizationInput
from ..schemas import OrganizationParams
from ..schemas import RevokeInvitationInput
from ..schemas import RevokeInvitationParams
from ..tokens import hash_token
from . import ActionContext
from .organizer_events import PAST_EVENTS_SHOWN
from .organizer_events import events_by_time

# How many lines of its audit log an organization's page shows.
AUDIT_LINES_SHOWN = 50
# How long an invitation's link works.
INVITATION_LIFETIME = timedelta(days=7)


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


@logged_as(_l("Invite someone"), _l("%(who)s invited someone into an organization"))
@human_action("invite_member", schema=InviteMemberInput,
              answers=(Status.SUCCESS, Status.CONFLICT))
def invite_member(db: Storage, params: InviteMemberParams, ctx: ActionContext) -> ToolResult:
    """Mail an invitation to join the organization in a role (owners alone invite owners).

    The web layer has checked that the account may invite in this organization."""
    name = "invite_member"
    assert ctx.account is not None, "the organizer area is for people who signed in"
    membership = db.membership(params["organization_id"], ctx.account.id)
    assert membership is not None, "the route admits members only"
    if params["role"] == "owner" and not may(membership.role, MANAGE_MEMBERS):
        return conflict(name, _("Only an owner can invite another owner."))
    # A member is invited again only to own the organization (ownership passes to one who
    # accepts it); an owner, never.
    if any(member.email == params["email"]
           and (params["role"] != "owner" or member.role == "owner")
           for member in db.organization_members(membership.organization.id)):
        return conflict(name, _("%(email)s is already in this organization.",
                                email=params["email"]))
    token = secrets.token_urlsafe(32)
    token_hash = hash_token(token)
    invitation = Invitation(
        id=f"inv-{secrets.token_urlsafe(9)}", organization_id=membership.organization.id,
        email=params["email"], role=params["role"], invited_by=ctx.account.id,
        created_at=ctx.now, expires_at=ctx.now + INVITATION_LIFETIME)
    days = INVITATION_LIFETIME.days
    with db.transaction():
        db.create_invitation(invitation, token_hash)
        db.queue_mail(f"invitation:{token_hash}", invitation.email,
                      ORGANIZATION_INVITATION.name, ctx.language,
                      {"link": ctx.pages.invitation_link(token, ctx.language),
                       "organization": membership.organization.name,
                       "inviter": ctx.account.email, "email": invitation.email,
                       "role": invitation.role, "days": days}, ctx.now)
        db.record_audit(AuditEntry(at=ctx.now, organization_id=invitation.organization_id,
                                   account_id=ctx.account.id, action="invite_member",
                                   target=invitation.id))
    return ToolResult(
        action=name, status=Status.SUCCESS,
        message=_("We have mailed an invitation to %(email)s. It works for %(days)d days.",
                  email=invitation.email, days=days),
        data={"invitation": invitation_view(invitation)}, next_action=_("Done."),
        target=invitation.id)


@logged_as(_l("Revoke an invitation"),
           _l("%(who)s revoked an invitation to an organization"))
@human_action("revoke_invitation", schema=RevokeInvitationInput,
              answers=(Status.SUCCESS, Status.NOT_FOUND))
def revoke_invitation(db: Storage, params: RevokeInvitationParams, ctx: ActionContext
                      ) -> ToolResult:
    """Revoke an invitation still open: its link no longer works."""
    name = "revoke_invitation"
    assert ctx.account is not None, "the organizer area is for people who signed in"
    with db.transaction():
        if not db.revoke_invitation(params["organization_id"], params["invitation_id"],
                                    ctx.now):
            return not_found(name, _("This invitation is not open any more."))
        db.record_audit(AuditEntry(at=ctx.now, organization_id=params["organization_id"],
                                   account_id=ctx.account.id, action="revoke_invitation",
                                   target=params["invitation_id"]))
    return ToolResult(action=name, status=Status.SUCCESS,
                      message=_("The invitation is revoked: its link no longer works."),
                      next_action=_("Done."), target=params["invitation_id"])


@logged_as(_l("Accept an invitation"), _l("%(who)s joined an organization"))
@human_action("accept_invitation", schema=AcceptInvitationInput,
              answers=(Status.SUCCESS, Status.NOT_FOUND, Status.CONFLICT))
def accept_invitation(db: Storage, params: AcceptInvitationParams, ctx: ActionContext
                      ) -> ToolResult:
    """Join the organization of an invitation mailed to the signed-in person's address."""
    name = "accept_invitation"
    assert ctx.account is not None, "the organizer area is for people who signed in"
    token_hash = hash_token(params["token"])
    invitation = db.invitation(token_hash)
    if invitation is None or not invitation.is_open(ctx.now):
        return not_found(name, _("This invitation no longer works: it was used, revoked or "
                                 "is more than %(days)d days old. Ask for a new one.",
                                 days=INVITATION_LIFETIME.days))
    if invitation.email != ctx.account.email:
        return conflict(name, _("This invitation was sent to %(email)s: sign in with that "
                                "address to accept it.", email=invitation.email))
    with db.transaction():
        accepted = db.accept_invitation(token_hash, ctx.account.id, ctx.now)
        if accepted is None:
            return not_found(name, _("This invitation was just used."))
        db.record_audit(AuditEntry(at=ctx.now, organization_id=accepted.organization_id,
                                   account_id=ctx.account.id, action="accept_invitation",
                                   target=accepted.id, detail=accepted.role))
    return ToolResult(
        action=name, status=Status.SUCCESS,
        message=_("Welcome to %(organization)s.", organization=accepted.organization_name),
        data={"invitation": invitation_view(accepted)}, next_action=_("Done."),
        target=accepted.organization_id)


LAST_OWNER = _l("An organization needs an owner: invite someone to own it and wait until they "
                "accept, then try again.")


def _changed(db: Storage, ctx: ActionContext, name: str, organization_id: str,
             account_id: str, role: str | None, done: str) -> ToolResult:
    """Give a member another role (None: remove them), audited as `name`, or say why not."""
    assert ctx.account is not None, "the organizer area is for people who signed in"
    with db.transaction():
        outcome = db.change_membership(organization_id, account_id, role)
        if outcome == "not_member":
            return not_found(name, _("This person is not in the organization."))
        if outcome == "last_owner":
            return conflict(name, str(LAST_OWNER))
        db.record_audit(AuditEntry(at=ctx.now, organization_id=organization_id,
                                   account_id=ctx.account.id, action=name,
                                   target=account_id, detail=role))
    return ToolResult(action=name, status=Status.SUCCESS, message=done,
                      next_action=_("Done."), target=account_id)


@logged_as(_l("Change a member's role"), _l("%(who)s changed a role in an organization"))
@human_action("change_role", schema=ChangeRoleInput,
              answers=(Status.SUCCESS, Status.NOT_FOUND, Status.CONFLICT))
def change_role(db: Storage, params: ChangeRoleParams, ctx: ActionContext) -> ToolResult:
    """Give a member another role (never ownership), keeping an owner."""
    return _changed(db, ctx, "change_role", params["organization_id"], params["account_id"],
                    params["role"], _("The role is changed."))


@logged_as(_l("Remove a member"), _l("%(who)s removed someone from an organization"))
@human_action("remove_member", schema=MemberInput,
              answers=(Status.SUCCESS, Status.NOT_FOUND, Status.CONFLICT))
def remove_member(db: Storage, params: MemberParams, ctx: ActionContext) -> ToolResult:
    """Take someone out of the organization, keeping an owner."""
    return _changed(db, ctx, "remove_member", params["organization_id"],
                    params["account_id"], None, _("They are no longer in the organization."))


@logged_as(_l("Leave an organization"), _l("%(who)s left an organization"))
@human_action("leave_organization", schema=OrganizationInput,
              answers=(Status.SUCCESS, Status.NOT_FOUND, Status.CONFLICT))
def leave_organization(db: Storage, params: OrganizationParams, ctx: ActionContext
                       ) -> ToolResult:
    """Leave the organization (the last owner cannot: it always has one)."""
    assert ctx.account is not None, "the organizer area is for people who signed in"
    return _changed(db, ctx, "leave_organization", params["organization_id"], ctx.account.id,
                    None, _("You have left the organization."))


def invitation_page(db: Storage, token: str, ctx: ActionContext) -> dict[str, Any] | None:
    """What an invitation's link shows before it is accepted (None when it no longer
    works): the organization, the role, and whether the signed-in address is the one
    invited. Showing it changes nothing (mail scanners open links)."""
    invitation = db.invitation(hash_token(token))
    if invitation is None or not invitation.is_open(ctx.now):
        return None
    return {"invitation": invitation_view(invitation),
            "addressed_to_me": ctx.account is not None and ctx.account.email == invitation.email}


def invitation_view(invitation: Invitation) -> dict[str, Any]:
    """An invitation as the organizer pages show it."""
    return {"id": invitation.id, "organizationId": invitation.organization_id,
            "organization": invitation.organization_name, "email": invitation.email,
            "role": invitation.role, "roleName": str(ROLE_NAMES[invitation.role]),
            "expiresAt": invitation.expires_at.isoformat()}


def organization_view(organization: Organization) -> dict[str, Any]:
    """An organization as pages show it."""
    return {"id": organization.id, "name": organization.name,
            "description": organization.description}


def membership_view(membership: Membership, ctx: ActionContext) -> dict[str, Any]:
    """A membership as the organizer pages show it: the organization, the role and its name."""
    return {"organization": organization_view(membership.organization),
            "accountId": membership.account_id,
            "role": membership.role, "roleName": ROLE_NAMES[membership.role],
            "since": local_time(membership.since, ctx.timezone), "email": membership.email}


def dashboard(db: Storage, ctx: ActionContext) -> dict[str, Any]:
    """What the organizer dashboard shows the signed-in person: each of their organizations
    with its events, as much of them as their role there allows (`dashboard_entry`), of its
    past ones the latest PAST_EVENTS_SHOWN. Two reads, however many organizations."""
    assert ctx.account is not None, "the organizer area is for people who signed in"
    events: dict[str, list[OrganizerEvent]] = {}
    found, past = db.account_organization_events(ctx.account.id, ctx.now, PAST_EVENTS_SHOWN)
    for one in found:
        events.setdefault(one.organization_id, []).append(one)
    return {"memberships": [dashboard_entry(membership,
                                            events.get(membership.organization.id, []),
                                            past.get(membership.organization.id, 0), ctx)
                            for membership in db.account_memberships(ctx.account.id)]}


def dashboard_entry(membership: Membership, events: list[OrganizerEvent], past: int,
                    ctx: ActionContext) -> dict[str, Any]:
    """One organization on the dashboard, by the member's rights (`ROLE_RIGHTS`): to those
    who manage its events, its drafts, upcoming and (the latest of its `past`) past events
    with their seats; to those who only check people in, the doors of its upcoming events
    that still take place; a link to its page to those who may see it."""
    role = membership.role
    listed = events_by_time(events, ctx)
    manages = may(role, MANAGE_EVENTS)
    return {**membership_view(membership, ctx),
            "seesOrganization": may(role, VIEW_ORGANIZATION),
            "managesEvents": manages,
            "events": listed if manages else None,
            "pastEvents": past if manages else None,
            "doors": [event for event in listed["upcoming"] if not event["cancelled"]]
            if may(role, CHECK_IN) and not manages else None}


def organization_overview(db: Storage, membership: Membership, ctx: ActionContext
                          ) -> dict[str, Any]:
    """What an organization's page in the organizer area shows a member: the organization,
    their role, its people, and (to those who may read it) its audit log."""
    organization = membership.organization
    members = db.organization_members(organization.id)
    audit = (db.audit_log(organization.id, AUDIT_LINES_SHOWN)
             if may(membership.role, READ_AUDIT_LOG) else None)
    emails = {member.account_id: member.email for member in members}
    invitations = (db.open_invitations(organization.id, ctx.now)
                   if may(membership.role, INVITE) else None)
    return {"membership": membership_view(membership, ctx),
            "members": [membership_view(member, ctx) for member in members],
            "manages_members": may(membership.role, MANAGE_MEMBERS),
            "invitations": None if invitations is None else [
                {**invitation_view(invitation),
                 "expiresAt": local_time(invitation.expires_at, ctx.timezone)}
                for invitation in invitations],
            "audit": None if audit is None else [audit_view(entry, emails, ctx)
                                                 for entry in audit]}


def audit_view(entry: AuditEntry, emails: dict[str, str | None], ctx: ActionContext
               ) -> dict[str, Any]:
    """An audit line as the organization's page shows it: who (a member's address; someone
    who left is "a former member"), what (to which event, by its title now), when."""
    who = emails.get(entry.account_id)
    names_event = entry.event_title is not None and entry.action in AUDIT_EVENT_WORDS
    return {"at": local_time(entry.at, ctx.timezone),
            "who": who if who else _("a former member"),
            "role": ROLE_NAMES[entry.detail] if entry.detail in ROLE_NAMES else "",
            "sentence": (AUDIT_EVENT_WORDS if names_event else AUDIT_WORDS)[entry.action],
            "eventId": entry.event_id, "eventTitle": entry.event_title if names_event else None,
            "target": entry.target}
