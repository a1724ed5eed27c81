"""The registration mails (issue 27): a person confirms a registration or a cancellation on the
site, the mail is queued in that transaction in the language of the request, and one delivery
pass sends it to a real SMTP server on loopback (aiosmtpd, `smtp_server.py`), where it is read
as a mail client reads it: its subject, its two parts, the check-in QR code shown inside the
HTML and the event's calendar file. On SQLite and on PostgreSQL, in Chinese and in English.

Time is the app's clock (the suite's start instant, moved by hand); waits end on what the
server received, never on a pause.
"""

from __future__ import annotations

import struct
import zlib
from datetime import datetime
from datetime import timedelta
from email.message import EmailMessage
from typing import Any

import pytest
import segno
from helpers import JSON
from helpers import query_database
from icalendar import Calendar
from servers import free_port
from smtp_server import Inbox
from smtp_server import SmtpServer

from webapp.domain.tokens import CheckInCodes
from webapp.ics import REMINDERS
from webapp.mail.commands import delivery_of
from webapp.storage import OutboxMail
from webapp.storage import StorageError
from webapp.storage.connection import open_storage
from webapp.storage.outbox import OutboxRecords

pytestmark = pytest.mark.both_backends

EVENT = "evt-webmcp-intro"
SECRET = b"test secret"  # conftest's SECRET_KEY
LANGUAGES = ("zh-TW", "en")
CONFIRMED_SUBJECT = {"zh-TW": "報名成功：WebMCP Intro Workshop",
                     "en": "You're registered: WebMCP Intro Workshop"}
CANCELLED_SUBJECT = {"zh-TW": "已取消報名：WebMCP Intro Workshop",
                     "en": "Registration cancelled: WebMCP Intro Workshop"}
# A sentence of each part, in each language.
CONFIRMED_WORDS = {"zh-TW": "入場時出示", "en": "at the entrance"}
# A mail is read on its own: its times name their zone (pages name it once, in the footer).
TAIPEI_TIME = {"zh-TW": "台灣時間（UTC+8）", "en": "Taiwan Time (UTC+8)"}


@pytest.fixture
def inbox() -> Inbox:
    return Inbox()


@pytest.fixture
def smtp_port() -> int:
    return free_port()


@pytest.fixture
def smtp(inbox, smtp_port):
    """The SMTP server the app sends through, listening from the start of the test."""
    server = SmtpServer(inbox, smtp_port).start()
    yield server
    server.stop()


@pytest.fixture
def app_config(smtp_port) -> dict[str, Any]:
    """Mail to the test's SMTP port, with a site address for the links it carries."""
    return {"MAIL_HOST": "127.0.0.1", "MAIL_PORT": smtp_port, "MAIL_STARTTLS": False,
            "MAIL_TIMEOUT": 10, "MAIL_FROM": "WebMCP 社群活動 <no-reply@events.example.tw>",
            "SITE_URL": "https://events.example.tw"}


def confirm(visitor, language: str, token: str | None):
    """Press "Confirm registration" on a page in `language` (its address's prefix)."""
    return visitor.post(f"/{language}/registrations/confirm", {"confirmation_token": token},
                        headers=JSON)


def register(visitor, language: str) -> dict[str, Any]:
    """Prepare a registration, then confirm it in `language`: the registration."""
    _, token = visitor.prepare_registration(EVENT)
    answer = confirm(visitor, language, token).get_json()
    assert answer["status"] == "success", answer
    registration: dict[str, Any] = answer["data"]["registration"]
    return registration


def cancel(visitor, language: str, registration_id: str):
    """Prepare a cancellation, then confirm it in `language`."""
    _, token = visitor.prepare_cancellation(registration_id)
    return visitor.post(f"/{language}/registrations/{registration_id}/cancel",
                        {"confirmation_token": token}, headers=JSON)


def outbox(app) -> list[OutboxMail]:
    """Every mail of the outbox, oldest first (a test reads them through storage)."""
    rows = query_database(app.config["DATABASE"], "SELECT dedupe_key FROM outbox ORDER BY id")
    with app.app_context():
        storage = open_storage()
        try:
            return [mail for (key,) in rows if (mail := storage.get_mail(key)) is not None]
        finally:
            storage.close()


def deliver(app) -> int:
    """One `mail run --once`, in this process: how many mails were sent."""
    with app.app_context():
        return delivery_of(app).deliver_due().sent


def event_times(visitor) -> tuple[datetime, datetime]:
    """When the event starts and ends, as its details answer."""
    event = visitor.get(f"/events/{EVENT}", headers=JSON).get_json()["data"]["event"]
    return datetime.fromisoformat(event["startsAt"]), datetime.fromisoformat(event["endsAt"])


def png_modules(png: bytes, size: int) -> list[list[bool]]:
    """The dark (True) and light squares of a QR code drawn `size` squares wide (quiet zone
    included) in a 1-bit greyscale PNG, sampled at each square's centre: the image read back
    as a scanner reads it, with nothing but zlib."""
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    chunks: dict[bytes, bytes] = {}
    at = 8
    while at < len(png):
        (length,) = struct.unpack(">I", png[at:at + 4])
        kind = png[at + 4:at + 8]
        chunks[kind] = chunks.get(kind, b"") + png[at + 8:at + 8 + length]
        at += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    assert (depth, colour, interlace) == (1, 0, 0), "segno writes 1-bit greyscale"
    stride = (width + 7) // 8
    raw = zlib.decompress(chunks[b"IDAT"])
    rows: list[bytes] = []
    previous = bytes(stride)
    for y in range(height):
        start = y * (stride + 1)  # each row: its filter's byte, then its pixels
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for x in range(stride):  # PNG's filters, with one byte per pixel group
            left = line[x - 1] if x else 0
            up, corner = previous[x], previous[x - 1] if x else 0
            predicted = {0: 0, 1: left, 2: up, 3: (left + up) // 2,
                         4: paeth(left, up, corner)}[kind]
            line[x] = (line[x] + predicted) & 0xFF
        rows.append(bytes(line))
        previous = bytes(line)
    scale = width // size
    assert scale * size == width == height

    def dark(x: int, y: int) -> bool:
        return not rows[y][x // 8] >> (7 - x % 8) & 1  # 0 is black in greyscale

    middle = scale // 2
    return [[dark(column * scale + middle, row * scale + middle) for column in range(size)]
            for row in range(size)]


def paeth(left: int, up: int, corner: int) -> int:
    estimate = left + up - corner
    distances = [abs(estimate - left), abs(estimate - up), abs(estimate - corner)]
    return (left, up, corner)[distances.index(min(distances))]


def qr_modules(code: str) -> list[list[bool]]:
    """The squares of `code` as a full QR code, with its quiet zone of four."""
    qr = segno.make_qr(code, error="m")
    assert not qr.is_micro and not qr.designator.startswith("M")
    return [[bool(square) for square in row] for row in qr.matrix_iter(border=4)]


def parts_of(message: EmailMessage) -> list[str]:
    """The content types of a message's parts, depth first."""
    return [part.get_content_type() for part in message.walk()]


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_confirmed_registration_is_mailed_in_the_language_it_was_confirmed_in(
        app, smtp, inbox, visitor, language):
    registration = register(visitor, language)
    (queued,) = outbox(app)
    assert queued.dedupe_key == f"registration-confirmed:{registration['id']}"
    assert (queued.kind, queued.language, queued.recipient, queued.state) == (
        "registration_confirmed", language, visitor.email, "queued")
    code = queued.payload["checkInCode"]
    assert code == CheckInCodes(SECRET).code_for(registration["id"])
    assert registration["id"] not in code

    assert deliver(app) == 1
    (message,) = inbox.wait_for(1)
    assert message["Subject"] == CONFIRMED_SUBJECT[language]
    raw = message.as_bytes()
    assert raw.isascii()  # seven bits on the wire: RFC 2047 subjects, encoded parts
    assert (b"Subject: =?utf-8?" in raw) == (language == "zh-TW")
    assert message["To"] == visitor.email and message["Content-Language"] == language
    assert message["Date"] and message["Message-ID"].endswith("@events.example.tw>")
    assert parts_of(message) == ["multipart/mixed", "multipart/alternative", "text/plain",
                                 "multipart/related", "text/html", "image/png", "text/calendar"]

    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    for part in (text, html):
        assert CONFIRMED_WORDS[language] in part and TAIPEI_TIME[language] in part
        assert "Ann Lee" in part and registration["id"] in part and code in part
        assert f"https://events.example.tw/events/{EVENT}" in part
    assert "UTC+8" in text

    (image,) = (part for part in message.walk() if part.get_content_type() == "image/png")
    content_id = image["Content-ID"].strip("<>")
    assert f'src="cid:{content_id}"' in html
    assert image.get_content_disposition() == "inline"
    expected = qr_modules(code)
    assert png_modules(image.get_content(), len(expected)) == expected

    (attached,) = (part for part in message.iter_attachments())
    assert attached.get_content_type() == "text/calendar"
    assert attached.get_param("method") == "PUBLISH"
    assert attached.get_filename() == f"{EVENT}.ics"
    calendar = Calendar.from_ical(attached.get_content())
    assert calendar["METHOD"] == "PUBLISH"
    (entry,) = calendar.walk("VEVENT")
    starts, ends = event_times(visitor)
    assert entry.decoded("DTSTART") == starts and entry.decoded("DTEND") == ends
    assert entry.decoded("DTSTART").tzinfo.key == "Asia/Taipei"
    assert str(entry["UID"]) == f"{EVENT}@events.example.tw"  # the event page's .ics UID
    site_file = Calendar.from_ical(visitor.get(f"/calendar/{EVENT}.ics").data)
    assert str(site_file.walk("VEVENT")[0]["UID"]) == str(entry["UID"])
    assert sorted(-alarm.decoded("TRIGGER") for alarm in entry.walk("VALARM")) == sorted(
        REMINDERS)


@pytest.mark.parametrize("language", LANGUAGES)
def test_cancelling_mails_the_cancellation_in_its_language(app, smtp, inbox, visitor,
                                                           language):
    registration = register(visitor, "en")
    assert cancel(visitor, language, registration["id"]).get_json()["status"] == "success"
    kinds = [(mail.kind, mail.language) for mail in outbox(app)]
    assert kinds == [("registration_confirmed", "en"), ("registration_cancelled", language)]
    assert cancel(visitor, language, registration["id"]).get_json()["status"] != "success"
    assert len(outbox(app)) == 2  # a cancellation tried again sends nothing more

    assert deliver(app) == 2
    cancelled = inbox.wait_for(2)[1]
    assert cancelled["Subject"] == CANCELLED_SUBJECT[language]
    assert cancelled.get_content_type() == "multipart/alternative"
    assert parts_of(cancelled)[1:] == ["text/plain", "text/html"]
    for part in (cancelled.get_body(("plain",)), cancelled.get_body(("html",))):
        assert registration["id"] in part.get_content()


def test_a_replayed_confirmation_queues_no_second_mail(app, visitor):
    _, token = visitor.prepare_registration(EVENT)
    assert confirm(visitor, "en", token).get_json()["status"] == "success"
    replayed = confirm(visitor, "zh-TW", token).get_json()
    assert replayed["status"] == "conflict"
    assert [mail.language for mail in outbox(app)] == ["en"]


def test_an_outbox_that_fails_leaves_the_registration_undone(app, visitor, monkeypatch):
    """The outbox insert raises after the seat was taken in the same transaction: the seat,
    the spent confirmation and the mail all roll back; once the outbox works, the same
    confirmation goes through, with one mail."""
    seats = visitor.seats()
    _, token = visitor.prepare_registration(EVENT)

    def failing_outbox(*args: Any, **kwargs: Any) -> bool:
        raise StorageError("the outbox insert failed")

    with monkeypatch.context() as patched:
        patched.setattr(OutboxRecords, "queue_mail", failing_outbox)
        failed = confirm(visitor, "en", token)
    assert failed.status_code >= 500 and failed.get_json()["status"] == "internal_error"
    assert visitor.seats() == seats
    assert query_database(app.config["DATABASE"], "SELECT count(*) FROM registrations") == [(0,)]
    assert outbox(app) == []

    assert confirm(visitor, "en", token).get_json()["status"] == "success"
    assert visitor.seats() == seats - 1
    assert [mail.kind for mail in outbox(app)] == ["registration_confirmed"]


def test_prune_deletes_sent_mail_after_the_days_kept_and_keeps_failed_mail(app, runner):
    """Sent mail goes MAIL_KEEP_SENT_DAYS after it was sent; failed mail stays for `flask
    mail failed`, and mail still waiting stays, however old."""
    clock = app.config["CLOCK"]
    keep = timedelta(days=app.config["MAIL_KEEP_SENT_DAYS"])
    start = clock()
    with app.app_context():
        storage = open_storage()
        try:
            for key in ("sent-long-ago", "sent-lately", "failed", "waiting"):
                storage.queue_mail(key, "a@example.com", "hello", "en", {}, start)
            claimed = {mail.dedupe_key: mail
                       for mail in storage.claim_mail(start, timedelta(minutes=5), 10)}
            storage.mail_sent(claimed["sent-long-ago"], start)
            storage.mail_sent(claimed["sent-lately"], start + timedelta(days=2))
            storage.mail_failed(claimed["failed"], "550 no such mailbox", None)
            storage.release_mail(claimed["waiting"])
        finally:
            storage.close()
    clock.advance(days=keep.days + 1)  # the first sent `keep` + 1 days ago, the other keep - 1

    result = runner.invoke(args=["prune"])
    assert result.exit_code == 0, result.output
    assert f"Removed 1 sent mail(s) older than {keep.days} day(s)" in result.output
    assert sorted(mail.dedupe_key for mail in outbox(app)) == ["failed", "sent-lately",
                                                               "waiting"]
