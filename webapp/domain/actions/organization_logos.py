"""An organization's logo, in the organizer area: putting one up (or another in its place) and
taking it away. Steps for signed-in people only (never tools), each audited in the
organization's log; the web layer has checked that the account may change the organization.

The upload is checked and drawn anew, square, while its input loads
(`cover_inputs.OrganizationLogoInput`), as an event's cover is (`event_covers`), so an action
here only keeps what was made of it.
"""

from __future__ import annotations

from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from flask_webmcp.actions import human_action
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.result import not_found

from ...storage import OrganizationLogo
from ...storage import Storage
from ..activity import logged_as
from ..cover_inputs import OrganizationLogoInput
from ..cover_inputs import OrganizationLogoParams
from ..images import LOGO
from ..images import picture_view
from ..schemas import OrganizationInput
from ..schemas import OrganizationParams
from . import ActionContext
from .event_covers import audit_picture

SET_ORGANIZATION_LOGO = "set_organization_logo"
REMOVE_ORGANIZATION_LOGO = "remove_organization_logo"


@logged_as(_l("Put up an organization's logo"), _l("%(who)s put up an organization's logo"))
@human_action(SET_ORGANIZATION_LOGO, schema=OrganizationLogoInput, answers=(Status.SUCCESS,))
def set_organization_logo(db: Storage, params: OrganizationLogoParams, ctx: ActionContext
                          ) -> ToolResult:
    """Make the uploaded picture the organization's logo (in place of any it had), with its
    alt text: its public page shows it at once, and its events' pages beside its name."""
    assert ctx.account is not None, "the organizer area is for people who signed in"
    picture = params["picture"]
    logo = OrganizationLogo(organization_id=params["organization_id"], alt=params["alt"],
                            digest=picture.digest, updated_at=ctx.now)
    with db.transaction():
        db.set_organization_logo(logo, picture.images, ctx.account.id)
        audit_picture(db, ctx, logo.organization_id, SET_ORGANIZATION_LOGO)
    return ToolResult(
        action=SET_ORGANIZATION_LOGO, status=Status.SUCCESS,
        message=_("The logo is saved."), data={"logo": logo_view(logo)},
        next_action=_("Done."), target=logo.organization_id)


@logged_as(_l("Take an organization's logo away"),
           _l("%(who)s took an organization's logo away"))
@human_action(REMOVE_ORGANIZATION_LOGO, schema=OrganizationInput,
              answers=(Status.SUCCESS, Status.NOT_FOUND))
def remove_organization_logo(db: Storage, params: OrganizationParams, ctx: ActionContext
                             ) -> ToolResult:
    """Take the organization's logo away: its pages show its name alone."""
    organization_id = params["organization_id"]
    with db.transaction():
        if not db.remove_organization_logo(organization_id):
            return not_found(REMOVE_ORGANIZATION_LOGO, _("This organization has no logo."))
        audit_picture(db, ctx, organization_id, REMOVE_ORGANIZATION_LOGO)
    return ToolResult(action=REMOVE_ORGANIZATION_LOGO, status=Status.SUCCESS,
                      message=_("The logo is taken away."), next_action=_("Done."),
                      target=organization_id)


def logo_view(logo: OrganizationLogo) -> dict[str, Any]:
    """A logo as pages show it (`images.picture_view`)."""
    return picture_view(logo.alt, logo.digest, LOGO)
