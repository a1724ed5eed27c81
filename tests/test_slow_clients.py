"""Slow clients (issue 11 §3): without a proxy they starve gunicorn; behind nginx they do not.

A slow client sends its request a byte at a time and never finishes its headers. gunicorn
reads a request in one of its threads, so each such connection holds a thread for as long as
the client likes: before, 8 of them made `/health` time out. Production runs gunicorn behind
Debian's nginx with `deploy/nginx.conf`, which takes whole requests before passing them on.

Both servers here run one gunicorn worker with THREADS threads, so the verdict does not
depend on how the kernel spreads connections over workers (with W workers it takes
W × THREADS slow connections, spread however they land). No timing decides an outcome: the
slow connections never finish, so gunicorn alone can never answer while they are open, and
nginx answers while they are provably open (each is still connected and unanswered).
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
from typing import Any

import pytest
from servers import gunicorn
from servers import nginx
from servers import port_of
from servers import socket_counts
from servers import wait_until_accepted

from webapp.web.security import SECURITY_HEADERS

pytestmark = pytest.mark.slow

SLOW = 32
THREADS = 4
# How long a starved gunicorn is given to answer anyway (it cannot: see the module docstring).
STARVED_FOR = 5
PATIENCE = 60  # seconds an answer that must come may take on a loaded machine


def summarize(counts) -> str:
    return (f"slow clients: {counts['held']} slow connections held open; /health answered "
            f"{counts['answered']} time(s) through nginx meanwhile, {counts['starved']} time(s) "
            "not at all from gunicorn alone")


# How a slow client starts: then it sends the rest one byte at a time, and never all of it.
SLOW_STARTS = {
    # a header line that never ends
    "headers": b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slowly: ",
    # whole headers, then a body that never ends (the app reads it for the CSRF token)
    "body": (b"POST /events/evt-webmcp-intro/save HTTP/1.1\r\nHost: localhost\r\n"
             b"Content-Type: application/x-www-form-urlencoded\r\n"
             b"Content-Length: 60000\r\n\r\ncsrf_token="),
}


class SlowClients:
    """`count` connections to `port` that send the start of a request, then one more byte
    every half second, never finishing it."""

    def __init__(self, port: int, count: int, start: bytes):
        self.sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
        self.start = start
        self.stop = threading.Event()
        self.trickler = threading.Thread(target=self.trickle, daemon=True)

    def __enter__(self) -> SlowClients:
        for sock in self.sockets:
            sock.sendall(self.start)
        self.trickler.start()
        return self

    def trickle(self) -> None:
        while not self.stop.wait(0.5):
            for sock in self.sockets:
                try:
                    sock.send(b"a")
                except OSError:
                    pass  # closed by the server: held() counts it out

    def held(self) -> int:
        """How many are still connected and unanswered (nothing to read, not even an end)."""
        waiting = 0
        for sock in self.sockets:
            try:
                sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
            except BlockingIOError:
                waiting += 1
            except OSError:
                pass
        return waiting

    def __exit__(self, *exc_info: object) -> None:
        self.stop.set()
        self.trickler.join()
        for sock in self.sockets:
            sock.close()


def health(port: int, timeout: float) -> dict[str, Any]:
    """GET /health on a fresh connection; its JSON (TimeoutError if no answer in time)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", "/health")
        answer = connection.getresponse()
        assert answer.status == 200
        body: dict[str, Any] = json.loads(answer.read())
        return body
    finally:
        connection.close()


@pytest.mark.parametrize("slowly", SLOW_STARTS)
def test_without_a_proxy_slow_clients_starve_gunicorn(tmp_path, tally, slowly):
    """The "before": gunicorn faces the clients itself, as `make run` has it."""
    with gunicorn(tmp_path / "events.sqlite", workers=1, threads=THREADS) as (base, _):
        port = port_of(base)
        with SlowClients(port, SLOW, SLOW_STARTS[slowly]) as slow:
            wait_until_accepted(port, SLOW)  # every one in gunicorn's hands, before /health
            with pytest.raises(TimeoutError):
                health(port, timeout=STARVED_FOR)
            tally["starved"] += 1
            assert slow.held() == SLOW
        # The slow clients gone, the threads are free again: it was starvation, not a fault.
        assert health(port, timeout=PATIENCE) == {"status": "ok"}


@pytest.fixture(scope="module")
def behind_nginx(tmp_path_factory):
    """gunicorn as above, behind nginx with deploy/nginx.conf: (nginx's port, gunicorn's)."""
    directory = tmp_path_factory.mktemp("production")
    with gunicorn(directory / "events.sqlite", workers=1, threads=THREADS,
                  env={"FLASK_TRUSTED_PROXIES": "1"}) as (base, _), \
            nginx(directory / "nginx", upstream=port_of(base)) as front:
        yield port_of(front), port_of(base)


@pytest.mark.parametrize("slowly", SLOW_STARTS)
def test_behind_nginx_health_answers_while_slow_clients_hold_connections(behind_nginx, tally,
                                                                          slowly):
    port, upstream = behind_nginx
    kept_alive = socket_counts(upstream)[1]  # nginx's idle connections to gunicorn, if any
    with SlowClients(port, SLOW, SLOW_STARTS[slowly]) as slow:
        wait_until_accepted(port, SLOW)  # every one in nginx's hands, before /health
        assert health(port, timeout=PATIENCE) == {"status": "ok"}
        tally["answered"] += 1
        held = slow.held()
        tally["held"] += held
        assert held == SLOW
        # nginx passed none of them on: at most one more connection, the one /health took.
        assert socket_counts(upstream)[1] <= kept_alive + 1


def fetch(port: int, method: str, path: str, body: bytes | None = None,
          headers: dict[str, str] | None = None) -> tuple[http.client.HTTPResponse, bytes]:
    """One request on its own connection: the answer and its body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=PATIENCE)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        answer = connection.getresponse()
        return answer, answer.read()
    finally:
        connection.close()


def test_nginx_serves_static_files_as_the_app_would(behind_nginx, client):
    port, _ = behind_nginx
    served, _ = fetch(port, "GET", "/static/css/site.css", headers={"Accept-Encoding": "gzip"})
    from_app = client.get("/static/css/site.css", headers={"Accept-Encoding": "gzip"})
    assert served.status == from_app.status_code == 200
    assert served.headers["Content-Encoding"] == from_app.headers["Content-Encoding"] == "gzip"
    assert served.headers["Cache-Control"] == from_app.headers["Cache-Control"]
    assert "Accept-Encoding" in served.headers["Vary"]
    for name, value in SECURITY_HEADERS.items():
        assert served.headers[name] == value, name


def test_nginx_refuses_a_body_past_the_limit_with_an_envelope(behind_nginx, app):
    port, _ = behind_nginx
    body = b"x" * (app.config["MAX_CONTENT_LENGTH"] + 1)
    answer, envelope = fetch(port, "POST", "/events/evt-webmcp-intro/save", body,
                             {"Content-Type": "application/x-www-form-urlencoded"})
    assert answer.status == 413
    assert answer.headers["Content-Type"] == "application/json"
    assert json.loads(envelope) == {
        "action": "request", "status": "invalid_input", "message": "The request is too large.",
        "retryable": False, "errors": {"_schema": ["The request is too large."]}}


def test_nginx_closes_a_request_for_another_host(behind_nginx):
    """Only the site's own name is served: a forged Host gets no answer at all (444)."""
    port, _ = behind_nginx
    answered, _ = fetch(port, "GET", "/health")  # Host: the name the test config serves
    assert answered.status == 200
    with pytest.raises(ConnectionError):  # closed unanswered: a reset or an empty reply
        fetch(port, "GET", "/health", headers={"Host": "forged.example"})


def test_the_limit_in_nginx_is_the_apps(app):
    from servers import NGINX_CONFIG
    kib = app.config["MAX_CONTENT_LENGTH"] // 1024
    assert f"client_max_body_size {kib}k;" in NGINX_CONFIG.read_text()
