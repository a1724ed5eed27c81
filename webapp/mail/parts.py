"""What a mail carries beside its text: images shown inside the HTML part (a check-in QR
code) and files attached to it (the event's `.ics`), each made from the queued payload alone
as the message is built.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import segno

from ..ics import calendar_bytes
from ..ics import calendar_event
from ..ics import with_reminders

# Pixels per QR module, and the quiet zone's width in modules (4: what the standard asks,
# which phone cameras need to find the code on a screen).
QR_SCALE = 8
QR_BORDER = 4


@dataclass(frozen=True)
class Attachment:
    """A file attached to a mail: its name, its MIME type and the bytes it holds."""

    filename: str
    maintype: str
    subtype: str
    content: bytes
    params: dict[str, str] = field(default_factory=dict)


def qr_png(data: str) -> bytes:
    """`data` as a QR code in a PNG image. Always a full QR code (`segno.make_qr`), never a
    Micro QR, which most phone cameras and check-in scanners do not read."""
    buffer = io.BytesIO()
    segno.make_qr(data, error="m").save(buffer, kind="png", scale=QR_SCALE, border=QR_BORDER)
    return buffer.getvalue()


def check_in_qr(payload: Mapping[str, Any]) -> dict[str, bytes]:
    """The registration mail's inline image: its check-in code as a QR code."""
    return {"check_in_qr": qr_png(payload["checkInCode"])}


def event_calendar(payload: Mapping[str, Any]) -> list[Attachment]:
    """The registration mail's attachment: the event as a calendar file to add (the same
    VEVENT, UID and reminders as the event page's `.ics`), published, not an invitation to
    answer."""
    event = payload["event"]
    content = calendar_bytes([with_reminders(calendar_event(event, event["url"]))],
                             event["title"],
                             method="PUBLISH")
    return [Attachment(f"{event['id']}.ics", "text", "calendar", content,
                       {"method": "PUBLISH"})]
