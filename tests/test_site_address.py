"""Every absolute address the site hands out is made from SITE_URL, never from the request's
Host: a client that sends another Host cannot have the site print an address of its choosing
(sitemap, robots, calendars, canonical and Open Graph links, the addresses an agent is sent to).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import JSON
from helpers import PROJECT_ROOT
from mcp_helpers import McpClient

SITE = "https://events.example.tw"
FORGED = "forged.example"
# What a route's address needs filled in, by argument name (a sample event, English).
ARGUMENTS = {"lang_code": "en", "event_id": "evt-webmcp-intro", "filename": "css/site.css"}


@pytest.fixture
def app_config():
    return {"SITE_URL": SITE}


def reachable_addresses(app) -> list[str]:
    """Every GET route of the app whose address the sample data fills in."""
    addresses = []
    with app.test_request_context():
        for rule in app.url_map.iter_rules():
            if "GET" in (rule.methods or ()) and set(rule.arguments) <= set(ARGUMENTS):
                values = {name: ARGUMENTS[name] for name in rule.arguments}
                addresses.append(app.url_map.bind("localhost").build(rule.endpoint, values))
    return sorted(set(addresses))


def test_a_forged_host_appears_in_no_answer(app, visitor):
    addresses = reachable_addresses(app)
    assert {"/robots.txt", "/sitemap.xml", "/calendar/evt-webmcp-intro.ics"} <= set(addresses)
    seen_site = 0
    for address in addresses:
        for headers in ({}, JSON):
            answer = visitor.client.get(address, headers={"Host": FORGED, **headers})
            # (a share card is a picture: read as text, its bytes can only miss the name)
            text = (answer.get_data().decode("utf-8", "replace")
                    + answer.headers.get("Location", ""))
            assert answer.status_code < 500, address
            assert FORGED not in text, f"{address} printed the request's Host"
            seen_site += SITE in text
    assert seen_site > 0, "no answer held an absolute address at all"


def test_the_sitemap_and_calendar_name_the_configured_site(client):
    sitemap = client.get("/sitemap.xml", headers={"Host": FORGED}).get_data(as_text=True)
    assert f"<loc>{SITE}/en/events/evt-webmcp-intro</loc>" in sitemap
    robots = client.get("/robots.txt", headers={"Host": FORGED}).get_data(as_text=True)
    assert f"Sitemap: {SITE}/sitemap.xml" in robots
    ics = client.get("/calendar/evt-webmcp-intro.ics", headers={"Host": FORGED})
    assert f"URL:{SITE}/events/evt-webmcp-intro" in ics.get_data(as_text=True).replace("\r\n ", "")


def test_an_agent_is_sent_to_the_configured_site(app):
    agent = McpClient(app.test_client(), "modern")
    agent.client.environ_base["HTTP_HOST"] = FORGED
    answer = agent.rpc("tools/call", {"name": "save_event",
                                      "arguments": {"event_id": "evt-webmcp-intro"}})
    # No connection: told 401, where to sign in (OAuth) and where a person connects it.
    assert answer.status_code == 401
    assert f'resource_metadata="{SITE}/.well-known/oauth-protected-resource' in (
        answer.headers["WWW-Authenticate"])
    said = answer.get_json()["error"]["message"]
    assert f"{SITE}/agents" in said
    assert FORGED not in said + str(answer.headers)


def test_gunicorn_names_the_site_by_its_bind_address_unless_told():
    """Served by gunicorn, SITE_URL is always set: from BIND, or as the environment says."""
    read = ("import os, runpy; runpy.run_path('gunicorn.conf.py'); "
            "print(os.environ['FLASK_SITE_URL'])")
    environment = {name: value for name, value in os.environ.items()
                   if name != "FLASK_SITE_URL"}
    for extra, expected in (({"BIND": "127.0.0.1:8123"}, "http://127.0.0.1:8123"),
                            ({"FLASK_SITE_URL": SITE}, SITE)):
        printed = subprocess.run([sys.executable, "-c", read], cwd=PROJECT_ROOT, check=True,
                                 env={**environment, **extra}, capture_output=True, text=True)
        assert printed.stdout.strip() == expected
