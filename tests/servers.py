"""A real server for tests that need one: gunicorn (several workers) on a free loopback port,
with a fresh database, and a small HTTP client that keeps its own cookies.
"""

from __future__ import annotations

import functools
import getpass
import http.client
import http.cookiejar
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from helpers import CSRF_FIELD
from helpers import HTMX
from helpers import JSON
from helpers import PROJECT_ROOT
from helpers import TOKEN_FIELD
from suite_clock import suite_start

from webapp.web.limits import BUDGETS

GUNICORN = str(Path(sys.executable).with_name("gunicorn"))
# Every client of a test (or of a benchmark's load) comes from one address: limits high enough
# that the many people it plays are not one client. Tests of the limits set their own (None:
# the defaults).
ONE_ADDRESS_CROWD = {budget.setting: "10000000 per minute" for budget in BUDGETS}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def gunicorn(database: Path | str, workers: int = 4, threads: int = 4,
             env: Mapping[str, str | None] | None = None, log: Path | None = None,
             wrapper: tuple[str, ...] = (), access_log: Path | None = None
             ) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Serve the app with gunicorn until the block ends; yields (base URL, process).

    `database` is a SQLite file or a postgresql:// URL (then give `log`); `env` sets
    variables of the server's environment (None unsets one), and `wrapper` is a command
    gunicorn runs under (e.g. one that drops privileges). The access log is written to
    `access_log` if given, else nowhere. The server's clock starts where the tests' does
    (`FLASK_CLOCK_START`; unset it in `env` for the real time).
    """
    port = free_port()
    wanted: dict[str, str | None] = {
        **os.environ, "FLASK_DATABASE": str(database), "FLASK_SECRET_KEY": "server test secret",
        "BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": str(workers),
        "GUNICORN_THREADS": str(threads), "FLASK_CLOCK_START": suite_start().isoformat(),
        **{f"FLASK_{setting}": limit for setting, limit in ONE_ADDRESS_CROWD.items()},
        **(env or {})}
    environment = {name: value for name, value in wanted.items() if value is not None}
    if log is None:
        assert isinstance(database, Path), "say where the log of a PostgreSQL server goes"
        log = database.with_suffix(".log")
    output = open(log, "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen([*wrapper, GUNICORN, "--access-logfile",
                                str(access_log or "/dev/null")],
                               cwd=PROJECT_ROOT,
                               env=environment, stdout=output, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(base, process)
        wait_until_ready(log, workers, process)
        yield base, process
    finally:
        stop(process)
        output.close()


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (gunicorn finishes what it is doing; nginx shuts down at once, slow connections
    or not), then SIGKILL if it is still there after 30 s."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


NGINX_CONFIG = PROJECT_ROOT / "deploy" / "nginx.conf"


def nginx_config(directory: Path, port: int, upstream: int) -> str:
    """deploy/nginx.conf with its host lines pointed at `directory` and loopback ports.

    Every other line is the production file's, except the client timeouts, lengthened so that
    a test's slow connections stay open however slowly this machine runs.
    """
    config = NGINX_CONFIG.read_text()
    for line, replacement in {
        "user www-data;": f"user {getpass.getuser()};",  # ignored unless started as root
        "error_log /var/log/nginx/error.log;": f"error_log {directory}/error.log;",
        "access_log /var/log/nginx/access.log redacted;":
            f"access_log {directory}/access.log redacted;",
        "server 127.0.0.1:8000;": f"server 127.0.0.1:{upstream};",
        "listen 80;": f"listen 127.0.0.1:{port};",
        "listen 80 default_server;": f"listen 127.0.0.1:{port} default_server;",
        "server_name events.example.tw;": "server_name 127.0.0.1 localhost;",
        "alias /srv/webmcp-events/static/;": f"alias {PROJECT_ROOT}/static/;",
        "client_header_timeout 10s;": "client_header_timeout 300s;",
        "client_body_timeout 10s;": "client_body_timeout 300s;",
    }.items():
        assert config.count(line) == 1, f"deploy/nginx.conf no longer says {line!r} once"
        config = config.replace(line, replacement)
    return config


@contextmanager
def nginx(directory: Path, upstream: int) -> Iterator[str]:
    """Debian's nginx with deploy/nginx.conf, in front of the server on port `upstream`, until
    the block ends; yields its base URL."""
    port = free_port()
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "nginx.conf"
    config.write_text(nginx_config(directory, port, upstream))
    log = open(directory / "nginx.log", "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        ["nginx", "-p", str(directory), "-c", str(config), "-e", str(directory / "error.log"),
         "-g", f"daemon off; pid {directory}/nginx.pid;"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until_listening(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)
        log.close()


# How long a server may take to start before the test gives up: generous, since a loaded
# machine (a CI box running other suites) can take many seconds to import the app; a server
# that exits is noticed at once.
STARTUP_TIMEOUT = 120.0


def wait_until_listening(port: int, process: subprocess.Popen[bytes],
                         timeout: float = STARTUP_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port}")


def wait_until_up(base: str, process: subprocess.Popen[bytes],
                  timeout: float = STARTUP_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {process.returncode}")
        try:
            with urllib.request.urlopen(base + "/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("gunicorn did not answer /health in time")


READY = "Worker ready"


def ready_workers(log: Path) -> int:
    """How many workers have prepared the database and taken requests, so far."""
    return log.read_text(errors="replace").count(READY)


def wait_until_ready(log: Path, workers: int, process: subprocess.Popen[bytes],
                     timeout: float = 60) -> None:
    """Wait for every worker, not only the first to answer: a busy machine boots them slowly,
    and a test that breaks the database under a worker still booting breaks its boot.
    """
    deadline = time.monotonic() + timeout
    while ready_workers(log) < workers:
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"only {ready_workers(log)} of {workers} workers became ready")
        time.sleep(0.1)


def wait_until_logged(log: Path, text: str, process: subprocess.Popen[bytes],
                      timeout: float = 60) -> None:
    """Wait until the server log holds `text` (a line gunicorn writes when something began)."""
    deadline = time.monotonic() + timeout
    while text not in log.read_text(errors="replace"):
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited ({process.returncode}) before logging {text!r}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{text!r} did not appear in the server log in {timeout} s")
        time.sleep(0.05)


def socket_counts(port: int) -> tuple[int, int]:
    """(connections waiting in the accept queue, connections established) at the server port."""
    listening = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True,
                               text=True, check=True).stdout.split()
    established = subprocess.run(["ss", "-Htn", "state", "established", f"( sport = :{port} )"],
                                 capture_output=True, text=True, check=True).stdout
    return int(listening[1]), len(established.splitlines())


def wait_until_accepted(port: int, connections: int, timeout: float = 30) -> None:
    """Until the server has accepted `connections` connections and has none waiting."""
    deadline = time.monotonic() + timeout
    while socket_counts(port) != (0, connections):
        assert time.monotonic() < deadline, f"not accepted: {socket_counts(port)}"
        time.sleep(0.05)


def port_of(base: str) -> int:
    return int(base.rsplit(":", 1)[1])


class Answer:
    """An HTTP answer: status, headers, text, and the JSON body or JSON-LD when there is one."""

    def __init__(self, status: int, headers, body: bytes):
        self.status = status
        self.headers = headers
        self.text = body.decode("utf-8", "replace")

    def json(self):
        return json.loads(self.text)


class FromAddress(urllib.request.HTTPHandler):
    """Connects from a chosen local address: on Linux any of 127.0.0.0/8 reaches a server on
    127.0.0.1, so one machine can play clients at many addresses."""

    def __init__(self, address: str):
        super().__init__()
        self.address = address

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(http.client.HTTPConnection,
                                              source_address=(self.address, 0)), req)


class HttpVisitor:
    """One visitor of a real server: its own cookie jar and CSRF token, and the loopback
    address it connects from (`source`; by default the system's choice, 127.0.0.1)."""

    def __init__(self, base: str, source: str | None = None):
        self.base = base
        self.cookies = http.cookiejar.CookieJar()
        handlers: list[urllib.request.BaseHandler] = [
            urllib.request.HTTPCookieProcessor(self.cookies)]
        if source is not None:
            handlers.append(FromAddress(source))
        self.opener = urllib.request.build_opener(*handlers)
        self.csrf: str | None = None

    def request(self, method: str, path: str, data: dict[str, str] | None = None,
                headers: dict[str, str] | None = None, timeout: float = 30) -> Answer:
        body = None
        if data is not None:
            body = urllib.parse.urlencode(data).encode()
        # This visitor reads English (see helpers.READS_ENGLISH).
        req = urllib.request.Request(self.base + path, data=body, method=method,
                                     headers={"Accept-Language": "en", **(headers or {})})
        try:
            with self.opener.open(req, timeout=timeout) as response:
                return Answer(response.status, response.headers, response.read())
        except urllib.error.HTTPError as error:
            return Answer(error.code, error.headers, error.read())

    def open_page(self, path: str) -> Answer:
        answer = self.request("GET", path)
        found = CSRF_FIELD.search(answer.text)
        if found:
            self.csrf = found.group(1)
        return answer

    def post(self, path: str, data: dict[str, str] | None = None,
             headers: dict[str, str] | None = None) -> Answer:
        return self.request("POST", path, {"csrf_token": self.csrf or "", **(data or {})},
                            headers)

    def prepare_registration(self, event_id: str, name: str, email: str) -> str:
        """Prepare as htmx would; returns the token of the human-only confirm form."""
        self.open_page(f"/events/{event_id}/register")
        answer = self.post(f"/events/{event_id}/register",
                           {"attendee_name": name, "email": email}, HTMX)
        found = TOKEN_FIELD.search(answer.text)
        if not found:
            raise AssertionError(f"no confirm form in the answer ({answer.status})")
        return found.group(1)

    def confirm_registration(self, token: str) -> Answer:
        return self.post("/registrations/confirm", {"confirmation_token": token}, JSON)


def confirm_at_once(visitors: list[HttpVisitor], tokens: list[str]) -> list[Answer]:
    """Each visitor confirms its token, all at the same moment (a thread each, a barrier)."""
    start = threading.Barrier(len(visitors))

    def confirm(pair: tuple[HttpVisitor, str]) -> Answer:
        visitor, token = pair
        start.wait()
        return visitor.confirm_registration(token)

    with ThreadPoolExecutor(max_workers=len(visitors)) as pool:
        return list(pool.map(confirm, zip(visitors, tokens, strict=True)))
