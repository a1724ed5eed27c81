"""A queued mail as the MIME message people receive.

multipart/alternative: a plain-text part, then an HTML part laid out for a phone's width, both
rendered from the kind's templates in the language the person used. A kind's images go with
the HTML part, in a multipart/related that holds it (each known by its Content-ID, which the
HTML names as `cid:`); its attachments follow the alternative, in a multipart/mixed:

    multipart/mixed
      multipart/alternative
        text/plain
        multipart/related
          text/html
          image/png                (Content-ID, shown where the HTML names it)
      text/calendar; method=PUBLISH  (an attachment)
 The headers a mail client
and a spam filter look for: `From` (MAIL_FROM), `To`, `Date`, a `Message-ID` on the site's
domain, `Content-Language`, and `Auto-Submitted` (RFC 3834: no vacation replies to it).
Subjects and names outside ASCII are RFC 2047 encoded words, as `email.policy.SMTP` writes
them, so any server and client reads them.

The Message-ID is made from the outbox row, not at random: a mail sent again (its sender died
after the server took it, before marking it sent) carries the same one, so a receiver can tell
the copy from a new mail.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime
from email.utils import parseaddr
from typing import Any
from urllib.parse import urlsplit

from babel import Locale
from flask import current_app
from flask_babel import force_locale
from flask_babel import gettext as _

from ..storage import OutboxMail
from .kinds import kind_named

# CRLF line ends and RFC 2047 for non-ASCII headers: what SMTP carries as it is.
MAIL_POLICY = policy.SMTP


class MailNotBuilt(Exception):
    """A queued mail cannot become a message (an unknown kind, a payload its templates
    cannot show): sending it again would fail the same way."""


def message_domain(config: Mapping[str, Any]) -> str:
    """The domain the site's Message-IDs end with: the host of SITE_URL, else the domain of
    MAIL_FROM's address."""
    host = urlsplit(str(config.get("SITE_URL") or "")).hostname
    if host:
        return host
    return parseaddr(str(config["MAIL_FROM"]))[1].rpartition("@")[2] or "localhost"


def message_id(mail: OutboxMail, domain: str) -> str:
    """The mail's Message-ID, the same each time it is sent."""
    key = hashlib.sha256(mail.dedupe_key.encode()).hexdigest()[:16]
    return f"<outbox.{mail.id}.{key}@{domain}>"


def content_id(mail: OutboxMail, name: str, domain: str) -> str:
    """The Content-ID of a mail's image `name` (without its angle brackets): unique to the
    mail, the same each time it is sent."""
    return f"{name.replace('_', '-')}.{mail.id}@{domain}"


def build_message(mail: OutboxMail, now: datetime) -> EmailMessage:
    """The message for `mail`, dated `now`, from the current app's templates and settings;
    MailNotBuilt when it cannot be made."""
    config = current_app.config
    domain = message_domain(config)
    try:
        kind = kind_named(mail.kind)
        locale = Locale.parse(mail.language, sep="-")
        images = {name: (content_id(mail, name, domain), png)
                  for name, png in kind.images(mail.payload).items()}
        attachments = kind.attachments(mail.payload)
        with force_locale(str(locale)):
            subject = kind.subject(mail.payload)
            context = {"payload": mail.payload, "subject": subject, "language": mail.language,
                       "site_name": _("WebMCP Events"),
                       "images": {name: f"cid:{cid}" for name, (cid, _png) in images.items()}}
            text = render(kind.text_template, context)
            html = render(kind.html_template, context)
    except (LookupError, ValueError, TypeError) as error:
        # An unknown kind or language, a payload without a field its templates show.
        raise MailNotBuilt(f"cannot build a {mail.kind!r} mail: {error}") from error
    message = EmailMessage(policy=MAIL_POLICY)
    message["Subject"] = subject
    message["From"] = config["MAIL_FROM"]
    message["To"] = mail.recipient
    message["Date"] = format_datetime(now)
    message["Message-ID"] = message_id(mail, domain)
    message["Auto-Submitted"] = "auto-generated"
    # Quoted-printable: seven bits that any relay passes, and English stays readable raw.
    message.set_content(text, cte="quoted-printable")
    message.add_alternative(html, subtype="html", cte="quoted-printable")
    html_part = message.get_body(("html",))
    assert html_part is not None, "the HTML part was just added"
    for name, (cid, png) in images.items():
        html_part.add_related(png, maintype="image", subtype="png", cid=f"<{cid}>",
                              filename=f"{name}.png", disposition="inline")
    for attachment in attachments:
        message.add_attachment(attachment.content, maintype=attachment.maintype,
                               subtype=attachment.subtype, filename=attachment.filename,
                               params=attachment.params)
    # After the parts: setting the content clears every Content-* header before it.
    message["Content-Language"] = mail.language
    return message


def render(template: str, context: dict[str, Any]) -> str:
    """A mail template rendered on its own: the site's context processors read the request,
    which a delivery loop has not (`.html` is autoescaped, `.txt` is not)."""
    return current_app.jinja_env.get_template(template).render(context)
