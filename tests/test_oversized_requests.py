"""Oversized request attacks: a body over the limit is refused with a 413 envelope, unread.

The bodies here are endless streams that count every byte the server takes from them: a
declared Content-Length over MAX_CONTENT_LENGTH must be refused before one byte is read, a
streamed (chunked) body must be read no further than the limit, and neither may be cut short
and then processed as if it were complete.
"""

from __future__ import annotations

import io
import socket

import pytest
from helpers import RENDERINGS
from helpers import the_jsonld
from routes import POST_ROUTES
from routes import body_limit
from routes import refused_unread_without_sign_in
from servers import HttpVisitor
from servers import gunicorn

LIMIT = 64 * 1024
GIGABYTE = 1024**3
CONTENT_TYPES = {
    "form": ("application/x-www-form-urlencoded", b"attendee_name="),
    "json": ("application/json", b'{"attendee_name": "'),
    "multipart": ("multipart/form-data; boundary=B",
                  b'--B\r\nContent-Disposition: form-data; name="attendee_name"\r\n\r\n'),
}
STREAMED = {"HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input_terminated": True}


def summarize(counts) -> str:
    return (f"oversized requests: {counts['refused']} refused with a 413 envelope; "
            f"{counts['declared'] // GIGABYTE} GiB declared in all, of which "
            f"{counts['declared read']} bytes were read; "
            f"at most {counts['most read']} bytes read of an endless stream (limit {LIMIT})")


class Body(io.RawIOBase):
    """An endless request body that counts the bytes the server reads from it.

    It starts with `prefix` then repeats "x". To whoever seeks to its end (the test client
    does, to set Content-Length) it claims `declared` bytes without producing any.
    """

    def __init__(self, prefix: bytes = b"", declared: int = GIGABYTE, length: int | None = None):
        self.prefix = prefix
        self.declared = declared
        self.length = length  # where the body really ends; None: never
        self.position = 0
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self.position = offset if whence == io.SEEK_SET else self.declared + offset
        return self.position

    def readinto(self, buffer) -> int:
        size = len(buffer)
        if self.length is not None:
            size = max(0, min(size, self.length - self.read_bytes))
        content = (self.prefix + b"x" * size)[:size]
        self.prefix = self.prefix[size:]
        buffer[:size] = content
        self.read_bytes += size
        self.position += size
        return size


def post(visitor, url, body: Body, content_type: str, rendering: str, streamed: bool):
    headers = {**RENDERINGS[rendering], "Content-Type": content_type,
               "X-CSRFToken": visitor.csrf}
    return visitor.client.post(url, input_stream=body, headers=headers,
                               environ_overrides=STREAMED if streamed else {})


def assert_too_large(tally, response, action: str, rendering: str) -> None:
    assert response.status_code == 413
    envelope = response.get_json() if rendering == "json" else the_jsonld(response.data)
    assert envelope["status"] == "invalid_input" and envelope["action"] == action
    assert envelope["errors"] == {"_schema": ["The request is too large."]}
    tally["refused"] += 1


EVERY_SHAPE = [(kind, rendering) for kind in CONTENT_TYPES for rendering in RENDERINGS]


@pytest.mark.parametrize(("url", "action"), [(url, action) for url, _, action in POST_ROUTES])
def test_a_declared_length_over_the_limit_is_refused_unread(tally, visitor, url, action):
    for kind, rendering in EVERY_SHAPE:
        content_type, prefix = CONTENT_TYPES[kind]
        body = Body(prefix, declared=GIGABYTE)
        response = post(visitor, url, body, content_type, rendering, streamed=False)
        assert body.read_bytes == 0, (kind, rendering)
        if refused_unread_without_sign_in(url) and response.status_code == 403:
            continue  # this visitor is not signed in: refused before its length was looked at
        assert_too_large(tally, response, action, rendering)
        tally["declared"] += body.declared
        tally["declared read"] += body.read_bytes


@pytest.mark.parametrize(("url", "action"), [(url, action) for url, _, action in POST_ROUTES])
def test_an_endless_stream_is_read_no_further_than_the_limit(tally, visitor, url, action):
    for kind, rendering in EVERY_SHAPE:
        content_type, prefix = CONTENT_TYPES[kind]
        body = Body(prefix)
        response = post(visitor, url, body, content_type, rendering, streamed=True)
        if refused_unread_without_sign_in(url) and response.status_code == 403:
            # This visitor is not signed in: refused before a byte was read (unless the
            # stream's first chunk already showed it too large, answered as everywhere).
            assert body.read_bytes == 0, (kind, rendering)
            continue
        assert_too_large(tally, response, action, rendering)
        # Up to the limit (the site's, or the route's own for an upload), and one byte past
        # it to see that the body goes on.
        limit = body_limit(url, LIMIT)
        assert body.read_bytes <= limit + 1, (kind, rendering)
        if limit == LIMIT:  # the summary speaks of the site's limit
            tally["most read"] = max(tally["most read"], body.read_bytes)


@pytest.mark.parametrize("kind", ["form", "json"])
def test_a_stream_just_over_the_limit_is_refused_not_cut(tally, visitor, kind):
    """Werkzeug alone stops at the limit and hands on the first 64 KiB as the whole body."""
    content_type, prefix = CONTENT_TYPES[kind]
    at_limit = post(visitor, "/events/evt-webmcp-intro/register", Body(prefix, length=LIMIT),
                    content_type, "json", streamed=True)
    assert at_limit.status_code == 422  # read whole: a 64 KiB name is just too long
    over = post(visitor, "/events/evt-webmcp-intro/register", Body(prefix, length=LIMIT + 1),
                content_type, "json", streamed=True)
    assert_too_large(tally, over, "prepare_event_registration", "json")


def test_a_streamed_body_within_the_limit_is_read_whole(visitor):
    form = b"attendee_name=Ann+Lee&email=ann%40example.com"
    body = Body(form, length=len(form))
    response = post(visitor, "/events/evt-webmcp-intro/register", body,
                    CONTENT_TYPES["form"][0], "json", streamed=True)
    assert response.status_code == 200
    assert response.get_json()["status"] == "confirmation_required"
    assert body.read_bytes == len(form)


def test_a_form_field_over_the_memory_limit_is_refused(tally, app, visitor):
    """MAX_FORM_MEMORY_SIZE stops a multipart field even when the body limit would not."""
    assert app.config["MAX_FORM_MEMORY_SIZE"] == LIMIT
    app.config["MAX_CONTENT_LENGTH"] = 16 * 1024 * 1024
    content_type, prefix = CONTENT_TYPES["multipart"]
    body = Body(prefix, length=4 * 1024 * 1024)
    response = post(visitor, "/events/evt-webmcp-intro/register", body, content_type, "json",
                    streamed=True)
    assert_too_large(tally, response, "prepare_event_registration", "json")
    assert body.read_bytes < 4 * LIMIT


# -- against a real server --------------------------------------------------------------------


def raw_post(base: str, visitor: HttpVisitor, headers: str, body: bytes) -> bytes:
    """POST through a bare socket (to send what no client library would); the whole answer.

    The server may answer and close before the body is all sent: sending then fails (a broken
    pipe or a reset), and its answer is still there to read.
    """
    host, port = base.removeprefix("http://").split(":")
    cookie = "; ".join(f"{c.name}={c.value}" for c in visitor.cookies)
    head = (f"POST /events/evt-webmcp-intro/register HTTP/1.1\r\nHost: {host}\r\n"
            f"Accept: application/json\r\nX-CSRFToken: {visitor.csrf}\r\n"
            f"Cookie: {cookie}\r\nConnection: close\r\n{headers}\r\n").encode()
    answer = b""
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        try:
            sock.sendall(head + body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the end of the body: read the answer
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass  # the reset of the unread body may follow the answer
    return answer


@pytest.mark.slow  # a server of its own: about 7 s
def test_a_real_server_answers_413_without_waiting_for_the_body(tally, tmp_path):
    """gunicorn: 1 GiB announced, 1 KiB sent: the 413 comes back at once (nothing more read).

    A streamed body over the limit is refused too, not cut at the limit and validated.
    """
    with gunicorn(tmp_path / "events.sqlite", workers=1) as (base, _):
        visitor = HttpVisitor(base)
        visitor.open_page("/events/evt-webmcp-intro/register")
        declared = raw_post(base, visitor, "Content-Type: application/x-www-form-urlencoded\r\n"
                            f"Content-Length: {GIGABYTE}\r\n", b"attendee_name=" + b"x" * 1024)
        chunk = b"%x\r\n%s\r\n" % (4096, b"x" * 4096)
        streamed = raw_post(base, visitor, "Content-Type: application/x-www-form-urlencoded\r\n"
                            "Transfer-Encoding: chunked\r\n",
                            b"e\r\nattendee_name=\r\n" + chunk * 20 + b"0\r\n\r\n")
    for answer in (declared, streamed):
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 413"), answer[:300]
        assert b'"status":"invalid_input"' in body and b"The request is too large." in body
        tally["refused"] += 1
    tally["declared"] += GIGABYTE
