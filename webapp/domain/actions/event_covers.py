"""An event's cover picture, in the organizer area: putting one up (or another in its place)
and taking it away. Steps for signed-in people only (never tools), each audited in the
organization's log; the web layer has checked that the account may manage the organization's
events and that the event is one the organization runs or holds as a draft.

The upload is checked and drawn anew while its input loads (`cover_inputs.UploadedPicture`), so
an action here only keeps what was made of it.
"""

from __future__ import annotations

from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from flask_webmcp.actions import human_action
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.result import not_found

from ...storage import AuditEntry
from ...storage import EventCover
from ...storage import Storage
from ..activity import logged_as
from ..cover_inputs import EventCoverInput
from ..cover_inputs import EventCoverParams
from ..cover_inputs import EventOfOrganizationInput
from ..cover_inputs import EventOfOrganizationParams
from ..images import COVER
from ..images import picture_view
from . import ActionContext

SET_EVENT_COVER = "set_event_cover"
REMOVE_EVENT_COVER = "remove_event_cover"


def audit_picture(db: Storage, ctx: ActionContext, organization_id: str, action: str,
                  event_id: str | None = None) -> None:
    """Write a change of a picture to the organization's log: an event's (`event_id`), else
    the organization's own."""
    assert ctx.account is not None, "the organizer area is for people who signed in"
    db.record_audit(AuditEntry(at=ctx.now, organization_id=organization_id,
                               account_id=ctx.account.id, action=action, event_id=event_id,
                               target=event_id or organization_id))


@logged_as(_l("Put up an event's cover picture"), _l("%(who)s put up an event's cover picture"))
@human_action(SET_EVENT_COVER, schema=EventCoverInput, answers=(Status.SUCCESS,))
def set_event_cover(db: Storage, params: EventCoverParams, ctx: ActionContext) -> ToolResult:
    """Make the uploaded picture the event's cover (in place of any it had), with its alt
    text: the draft's preview shows it, and once published its page and link previews."""
    assert ctx.account is not None, "the organizer area is for people who signed in"
    picture = params["picture"]
    cover = EventCover(event_id=params["event_id"], alt=params["alt"], digest=picture.digest,
                       updated_at=ctx.now)
    with db.transaction():
        db.set_event_cover(cover, picture.images, ctx.account.id)
        audit_picture(db, ctx, params["organization_id"], SET_EVENT_COVER, cover.event_id)
    return ToolResult(
        action=SET_EVENT_COVER, status=Status.SUCCESS,
        message=_("The cover picture is saved."),
        data={"cover": cover_view(cover)}, next_action=_("Done."), target=cover.event_id)


@logged_as(_l("Take an event's cover picture away"),
           _l("%(who)s took an event's cover picture away"))
@human_action(REMOVE_EVENT_COVER, schema=EventOfOrganizationInput,
              answers=(Status.SUCCESS, Status.NOT_FOUND))
def remove_event_cover(db: Storage, params: EventOfOrganizationParams, ctx: ActionContext
                       ) -> ToolResult:
    """Take the event's cover picture away: its page shows none, its link previews the card
    the site draws."""
    event_id = params["event_id"]
    with db.transaction():
        if not db.remove_event_cover(event_id):
            return not_found(REMOVE_EVENT_COVER, _("This event has no cover picture."))
        audit_picture(db, ctx, params["organization_id"], REMOVE_EVENT_COVER, event_id)
    return ToolResult(action=REMOVE_EVENT_COVER, status=Status.SUCCESS,
                      message=_("The cover picture is taken away."), next_action=_("Done."),
                      target=event_id)


def cover_view(cover: EventCover) -> dict[str, Any]:
    """A cover as pages show it (`images.picture_view`)."""
    return picture_view(cover.alt, cover.digest, COVER)
