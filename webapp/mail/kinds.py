"""The kinds of mail the site sends: a subject and a pair of templates each.

A kind's templates are `templates/mail/<name>.txt` and `templates/mail/<name>.html`, rendered
with the queued payload in the person's language (Flask-Babel's `_` as in the site's pages);
its subject is a function of the payload, translated the same way. A kind may add images its
HTML shows (`images`: name → PNG, referenced as `images.<name>`, a `cid:` address) and files
to attach (`attachments`), both made from the payload (`parts`). A new kind is an entry here
and its two templates.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask_babel import gettext as _

from .parts import Attachment
from .parts import check_in_qr
from .parts import event_calendar


@dataclass(frozen=True)
class MailKind:
    """One kind of mail: its name (stored with each queued mail), its subject, for the
    directory sender's log line the payload field holding a link the person must follow
    (a sign-in link), if any, and the images and attachments it adds (none by default)."""

    name: str
    subject: Callable[[Mapping[str, Any]], str]
    link_field: str | None = None
    images: Callable[[Mapping[str, Any]], dict[str, bytes]] = lambda payload: {}
    attachments: Callable[[Mapping[str, Any]], list[Attachment]] = lambda payload: []

    @property
    def text_template(self) -> str:
        """The plain-text part's template."""
        return f"mail/{self.name}.txt"

    @property
    def html_template(self) -> str:
        """The HTML part's template."""
        return f"mail/{self.name}.html"

    def link(self, payload: Mapping[str, Any]) -> str | None:
        """The link the person must follow, when this kind carries one."""
        return str(payload[self.link_field]) if self.link_field else None


class UnknownKind(LookupError):
    """A queued mail names a kind this version does not have."""


HELLO = MailKind(
    name="hello",
    # Translators: the subject of the test mail `flask mail send-test` sends.
    subject=lambda payload: _("A test mail from %(site)s", site=_("WebMCP Events")),
)

REGISTRATION_CONFIRMED = MailKind(
    name="registration_confirmed",
    # Translators: the subject of the mail a person gets once registered for an event.
    subject=lambda payload: _("You're registered: %(title)s", title=payload["event"]["title"]),
    images=check_in_qr,
    attachments=event_calendar,
)

REGISTRATION_CANCELLED = MailKind(
    name="registration_cancelled",
    # Translators: the subject of the mail a person gets after cancelling a registration.
    subject=lambda payload: _("Registration cancelled: %(title)s",
                              title=payload["event"]["title"]),
)

REGISTRATION_REMINDER = MailKind(
    name="registration_reminder",
    # Translators: the subject of the reminder mailed the day before an event.
    subject=lambda payload: _("Tomorrow: %(title)s", title=payload["event"]["title"]),
    images=check_in_qr,
    attachments=event_calendar,
)

WAITLIST_OFFER = MailKind(
    name="waitlist_offer",
    # Translators: the subject of the mail offering a seat that freed to a person waiting.
    subject=lambda payload: _("A seat is yours if you want it: %(title)s",
                              title=payload["event"]["title"]),
    link_field="acceptUrl",
)

WAITLIST_JOINED = MailKind(
    name="waitlist_joined",
    # Translators: the subject of the mail confirming a person's place on a full event's
    # waitlist (no seat yet).
    subject=lambda payload: _("On the waitlist: %(title)s", title=payload["event"]["title"]),
)

EVENT_CANCELLED = MailKind(
    name="event_cancelled",
    # Translators: the subject of the mail telling an attendee that the organizer cancelled
    # the event.
    subject=lambda payload: _("Cancelled: %(title)s", title=payload["event"]["title"]),
)

SIGN_IN_LINK = MailKind(
    name="sign_in_link",
    # Translators: the subject of the mail carrying a sign-in link.
    subject=lambda payload: _("Your sign-in link for %(site)s", site=_("WebMCP Events")),
    link_field="link",
)

ORGANIZATION_INVITATION = MailKind(
    name="organization_invitation",
    # Translators: the subject of the mail inviting someone into an organization.
    subject=lambda payload: _("Join %(organization)s on %(site)s",
                              organization=payload["organization"], site=_("WebMCP Events")),
    link_field="link",
)

EVENT_CHANGED = MailKind(
    name="event_changed",
    # Translators: the subject of the mail telling an attendee that an event's time or place
    # changed.
    subject=lambda payload: _("Changed: %(title)s", title=payload["event"]["title"]),
)

KINDS = {kind.name: kind for kind in (HELLO, REGISTRATION_CONFIRMED, REGISTRATION_CANCELLED,
                                      REGISTRATION_REMINDER, WAITLIST_JOINED, WAITLIST_OFFER,
                                      EVENT_CANCELLED,
                                      SIGN_IN_LINK, ORGANIZATION_INVITATION, EVENT_CHANGED)}


def kind_named(name: str) -> MailKind:
    """The kind a queued mail names; UnknownKind when there is none."""
    try:
        return KINDS[name]
    except KeyError:
        raise UnknownKind(f"no kind of mail is named {name!r}") from None
