"""What each role in an organization may do: the one table every organizer route and action
asks (`may`), so a role's rights are read in one place and tested from it.

- **owner**: everything, the organization itself, its people and its audit log included;
- **manager**: events from draft to cancelled, their attendees (and export), invitations, the
  organization's logo;
- **check_in**: the door page only.

Anyone may leave, but the last owner: an organization always has one.
"""

from __future__ import annotations

from flask_babel import lazy_gettext as _l
from flask_babel.speaklater import LazyString

# What people may do in the organizer area, by name. A route or an action names the one it
# needs; a role holds a set of them.
VIEW_ORGANIZATION = "view_organization"
READ_AUDIT_LOG = "read_audit_log"
MANAGE_MEMBERS = "manage_members"
INVITE = "invite"
MANAGE_EVENTS = "manage_events"
VIEW_ATTENDEES = "view_attendees"
EXPORT_ATTENDEES = "export_attendees"
CHECK_IN = "check_in"
EDIT_ORGANIZATION = "edit_organization"
LEAVE = "leave_organization"

MANAGER_RIGHTS = frozenset({VIEW_ORGANIZATION, INVITE, MANAGE_EVENTS, VIEW_ATTENDEES,
                            EXPORT_ATTENDEES, CHECK_IN, EDIT_ORGANIZATION, LEAVE})
ROLE_RIGHTS: dict[str, frozenset[str]] = {
    "owner": MANAGER_RIGHTS | {READ_AUDIT_LOG, MANAGE_MEMBERS},
    "manager": MANAGER_RIGHTS,
    "check_in": frozenset({CHECK_IN, LEAVE}),
}
ROLES = tuple(ROLE_RIGHTS)
# The roles an owner can give a member outright; ownership passes only by an accepted
# invitation.
GIVEN_ROLES = tuple(role for role in ROLES if role != "owner")

# What people read for each role.
ROLE_NAMES: dict[str, LazyString] = {
    "owner": _l("Owner"),
    "manager": _l("Manager"),
    "check_in": _l("Check-in"),
}


def may(role: str | None, right: str) -> bool:
    """Whether a member with `role` (None: not a member) may do `right`."""
    return role is not None and right in ROLE_RIGHTS.get(role, frozenset())


# How an organization's audit log speaks of each organizer action (`%(who)s`: the member), and
# of one about an event it no longer runs (a line about an event names it: AUDIT_EVENT_WORDS).
AUDIT_WORDS: dict[str, LazyString] = {
    "create_organization": _l("%(who)s started the organization"),
    "invite_member": _l("%(who)s invited someone"),
    "revoke_invitation": _l("%(who)s revoked an invitation"),
    "accept_invitation": _l("%(who)s joined as %(role)s"),
    "change_role": _l("%(who)s made a member %(role)s"),
    "remove_member": _l("%(who)s removed a member"),
    "leave_organization": _l("%(who)s left"),
    "create_event_draft": _l("%(who)s drafted an event"),
    "edit_event": _l("%(who)s edited an event"),
    "publish_event": _l("%(who)s published an event"),
    "cancel_event": _l("%(who)s cancelled an event"),
    "check_in": _l("%(who)s checked an attendee in"),
    "view_attendees": _l("%(who)s looked at an event's attendee list"),
    "export_attendees": _l("%(who)s exported an event's attendee list"),
    "set_event_cover": _l("%(who)s put up an event's cover picture"),
    "remove_event_cover": _l("%(who)s took an event's cover picture away"),
    "set_organization_logo": _l("%(who)s put up the organization's logo"),
    "remove_organization_logo": _l("%(who)s took the organization's logo away"),
}

# How a line about an event names it (`%(event)s`: its title as it is now, read from the event
# when the log is shown, never written into it).
AUDIT_EVENT_WORDS: dict[str, LazyString] = {
    "create_event_draft": _l("%(who)s drafted “%(event)s”"),
    "edit_event": _l("%(who)s edited “%(event)s”"),
    "publish_event": _l("%(who)s published “%(event)s”"),
    "cancel_event": _l("%(who)s cancelled “%(event)s”"),
    "check_in": _l("%(who)s checked an attendee in at “%(event)s”"),
    "view_attendees": _l("%(who)s looked at the attendee list of “%(event)s”"),
    "export_attendees": _l("%(who)s exported the attendee list of “%(event)s”"),
    "set_event_cover": _l("%(who)s put up the cover picture of “%(event)s”"),
    "remove_event_cover": _l("%(who)s took the cover picture of “%(event)s” away"),
}
