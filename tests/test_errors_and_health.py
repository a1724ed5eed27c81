"""Errors answer as envelopes (never Flask's default pages); health checks answer plainly."""

from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup
from helpers import JSON
from helpers import one
from helpers import the_jsonld

from webapp.web.errors import reload_url


def test_unknown_page_is_not_found_in_json_and_html(client):
    as_json = client.get("/no-such-page", headers=JSON)
    assert as_json.status_code == 404
    assert as_json.get_json()["status"] == "not_found"
    page = client.get("/no-such-page")
    assert page.status_code == 404
    assert the_jsonld(page.data) == as_json.get_json()


def test_wrong_method_is_invalid_input_405(client):
    response = client.delete("/events", headers=JSON)
    assert response.status_code == 405
    body = response.get_json()
    assert body["status"] == "invalid_input" and body["action"] == "search_events"
    assert "GET" in response.headers["Allow"]


def test_health(client):
    assert client.get("/health").get_json() == {"status": "ok"}


def test_version_names_the_release(client, app, monkeypatch):
    body = client.get("/health/version").get_json()
    assert re.fullmatch(r"\d+\.\d+\.\d+", body["version"])
    assert body["commit"] == "unknown" or re.fullmatch(r"[0-9a-f]{40}", body["commit"])
    app.config["COMMIT"] = "abc123"
    assert client.get("/health/version").get_json()["commit"] == "abc123"


@pytest.mark.parametrize(("referrer", "link"), [
    ("http://localhost/events?query=webmcp", "/events?query=webmcp"),
    ("http://localhost//evil.example/login", "/evil.example/login"),
    ("http://localhost/\\evil.example/login", "/evil.example/login"),
    ("http://localhost/\\/evil.example/", "/evil.example/"),
    ("http://localhost/\t/evil.example/", "/evil.example/"),  # browsers drop the tab
    ("http://evil.example/events", "/en/events"),  # another site's page: our home page
    (None, "/en/events"),
])
def test_the_reload_link_stays_on_this_site(visitor, referrer, link):
    """A refused form (a stale token here) offers "Reload the page": the page it came from,
    never a link to another host however the Referer is written."""
    headers = {"Referer": referrer} if referrer else {}
    answer = visitor.post("/events/evt-webmcp-intro/save", {"csrf_token": "stale"},
                          headers=headers)
    assert answer.status_code == 401
    reload = one(BeautifulSoup(answer.data, "html.parser"), "main a[href]")
    assert reload.get_text() == "Reload the page"
    assert reload["href"] == link


@pytest.mark.parametrize("path", ["//evil.example/x", "/\\evil.example/x"])
def test_the_reload_link_of_a_get_is_this_sites_path(app, path):
    with app.test_request_context(environ_overrides={"PATH_INFO": path}):
        assert reload_url() == "/evil.example/x"


@pytest.mark.parametrize(("url", "action"), [
    ("/registrations/confirm", "confirm_registration"),
    ("/registrations/cancellation", "prepare_registration_cancellation"),
])
def test_a_get_to_a_post_only_address_is_405(client, url, action):
    """Not the page of a registration called "confirm" (registration ids have a shape)."""
    as_json = client.get(url, headers=JSON)
    assert as_json.status_code == 405 and "POST" in as_json.headers["Allow"]
    assert as_json.get_json()["status"] == "invalid_input"
    assert as_json.get_json()["action"] == action
    page = client.get(url)
    assert page.status_code == 405 and the_jsonld(page.data) == as_json.get_json()
