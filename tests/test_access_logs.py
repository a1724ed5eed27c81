"""A visitor's calendar feed token never reaches an access log (issue: "the feed token is
written to gunicorn's and nginx's access logs").

The feed's address is its only key, so gunicorn (webapp/access_log.py) and nginx
(deploy/nginx.conf) both log it with the token cut out. The redaction is checked on its own,
nginx's copy of it against the Python one, and then in the logs real servers write when a
calendar application fetches a feed directly from gunicorn and through nginx.
"""

from __future__ import annotations

import re
import secrets
from datetime import timedelta
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest
from bs4 import BeautifulSoup
from flask import url_for
from gunicorn.config import Config
from helpers import attribute
from helpers import one
from servers import NGINX_CONFIG
from servers import HttpVisitor
from servers import gunicorn
from servers import nginx
from servers import port_of

from webapp.access_log import RedactingLogger
from webapp.access_log import redact
from webapp.domain.actions.calendars import TOKEN_PREFIX

TOKEN = TOKEN_PREFIX + "pMx4Dq0-Y_3kLr9w"  # the shape make_calendar_feed gives a token

# What each text is logged as: the token cut, everything else as it was.
REDACTIONS = {
    f"GET /calendar/feed/{TOKEN}.ics HTTP/1.1": "GET /calendar/feed/[redacted] HTTP/1.1",
    f"HEAD /calendar/feed/{TOKEN}.ics HTTP/1.1": "HEAD /calendar/feed/[redacted] HTTP/1.1",
    f"GET /calendar/feed/{TOKEN}.ics?refresh=1&x=2 HTTP/1.0":
        "GET /calendar/feed/[redacted] HTTP/1.0",
    f"/calendar/feed/{TOKEN}.ics": "/calendar/feed/[redacted]",
    f"https://events.example.tw/calendar/feed/{TOKEN}.ics":
        "https://events.example.tw/calendar/feed/[redacted]",
    f"/calendar/feed/{TOKEN}": "/calendar/feed/[redacted]",
    # The address the site hands out names the language the feed is named in.
    f"GET /zh-TW/calendar/feed/{TOKEN}.ics HTTP/1.1":
        "GET /zh-TW/calendar/feed/[redacted] HTTP/1.1",
    f"/search?next=/calendar/feed/{TOKEN}.ics": "/search?next=/calendar/feed/[redacted]",
    # Other addresses are untouched, the event files and the feed's own forms among them.
    "GET /calendar/evt-webmcp-intro.ics HTTP/1.1": "GET /calendar/evt-webmcp-intro.ics HTTP/1.1",
    "POST /en/registrations/calendar HTTP/1.1": "POST /en/registrations/calendar HTTP/1.1",
    "/registrations/calendar/stop": "/registrations/calendar/stop",
    "/events?query=calendar+feed": "/events?query=calendar+feed",
    "/health": "/health",
    "-": "-",
}


@pytest.mark.parametrize("text", REDACTIONS)
def test_redact_cuts_the_token_and_nothing_else(text):
    assert redact(text) == REDACTIONS[text]


def test_the_apps_own_feed_address_is_redacted(app):
    """The pattern follows the route: the address the site hands out loses its token."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with app.test_request_context():
        address = url_for("calendars.feed", token=token)
    assert token in address
    assert token not in redact(address)


def test_gunicorns_access_log_line_holds_no_token():
    """Every atom an access_log_format may name is redacted, not only the request line."""
    logger = RedactingLogger(Config())
    address = f"https://events.example.tw/calendar/feed/{TOKEN}.ics"
    environ = {"REQUEST_METHOD": "GET", "RAW_URI": f"/calendar/feed/{TOKEN}.ics?x=1",
               "PATH_INFO": f"/calendar/feed/{TOKEN}.ics", "QUERY_STRING": "x=1",
               "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1",
               "HTTP_REFERER": address, "HTTP_USER_AGENT": "Calendar/1.0"}
    request = SimpleNamespace(headers=[("REFERER", address), ("USER-AGENT", "Calendar/1.0")])
    response = SimpleNamespace(status="200 OK", sent=512,
                               headers=[("Content-Type", "text/calendar")])
    atoms = logger.atoms(response, request, environ, timedelta(milliseconds=3))
    assert atoms["r"] == "GET /calendar/feed/[redacted] HTTP/1.1"
    assert atoms["U"] == atoms["{raw_uri}e"] == atoms["{path_info}e"] == "/calendar/feed/[redacted]"
    assert atoms["f"] == atoms["{referer}i"] == "https://events.example.tw/calendar/feed/[redacted]"
    assert [name for name, value in atoms.items() if TOKEN in str(value)] == []
    assert (atoms["s"], atoms["b"], atoms["a"]) == ("200", "512", "Calendar/1.0")


# nginx.conf's map from the request's address to the one logged: its regex, and what a match
# is logged as.
NGINX_MAP = re.compile(r'map \$request_uri \$redacted_request_uri \{\s*default \$request_uri;'
                       r'\s*"~(?P<pattern>[^"]+)"\s+"(?P<value>[^"]+)";\s*\}')


def nginx_redaction(uri: str) -> str:
    """What deploy/nginx.conf logs for a request to `uri`, read as nginx reads its map (a
    PCRE search; its named captures, written `${name}`, filled into the value)."""
    found = NGINX_MAP.search(NGINX_CONFIG.read_text())
    assert found, "deploy/nginx.conf has no map redacting $request_uri"
    matched = re.search(found["pattern"], uri)
    if matched is None:
        return uri
    return re.sub(r"\$\{(\w+)\}", lambda name: matched[name[1]], found["value"])


@pytest.mark.parametrize("uri", [text for text in REDACTIONS if text.startswith("/")])
def test_nginx_redacts_as_gunicorn_does(uri):
    assert nginx_redaction(uri) == redact(uri)


def make_feed(visitor: HttpVisitor) -> str:
    """The visitor makes their calendar address on their page: its path, token and all."""
    visitor.open_page("/en/registrations")
    page = visitor.post("/en/registrations/calendar")  # 303, followed to the page showing it
    assert page.status == 200
    address = attribute(one(BeautifulSoup(page.text, "html.parser"), "#calendar-address"),
                        "value")
    return urlsplit(address).path


# How a calendar application might fetch the feed: a plain GET, a HEAD to see whether it
# changed, a GET with a query of its own.
FETCHES = (("GET", ""), ("HEAD", ""), ("GET", "?refresh=1"))


@pytest.mark.slow
def test_no_log_the_servers_write_holds_the_feed_token(tmp_path):
    """The feed fetched from gunicorn directly and through nginx with deploy/nginx.conf: the
    token is in none of their logs, while the redacted request lines are in both access
    logs (they were written)."""
    with gunicorn(tmp_path / "events.sqlite", workers=1, env={"FLASK_TRUSTED_PROXIES": "1"},
                  access_log=tmp_path / "gunicorn-access.log") as (base, _), \
            nginx(tmp_path / "nginx", upstream=port_of(base)) as front:
        address = make_feed(HttpVisitor(base))
        assert address.startswith("/en/calendar/feed/")  # the language of the page
        token = address.rsplit("/", 1)[-1].removesuffix(".ics")
        assert token.startswith(TOKEN_PREFIX)
        for server in (base, front):
            for method, query in FETCHES:
                answer = HttpVisitor(server).request(method, address + query)
                assert answer.status == 200
                assert answer.headers["Content-Type"].startswith("text/calendar")
    # Both servers have stopped: everything they logged is on disk.
    logs = {str(path.relative_to(tmp_path)): path.read_text(errors="replace")
            for path in sorted(tmp_path.rglob("*.log"))}
    assert {"gunicorn-access.log", "nginx/access.log"} <= set(logs)
    assert [name for name, text in logs.items() if token in text] == []
    for access_log in ("gunicorn-access.log", "nginx/access.log"):
        for method in ("GET", "HEAD"):
            assert f'"{method} /en/calendar/feed/[redacted] HTTP/1.1" 200' in logs[access_log]
    # gunicorn saw every fetch: its own three and the three nginx passed on.
    assert logs["gunicorn-access.log"].count("/calendar/feed/[redacted]") == 2 * len(FETCHES)
