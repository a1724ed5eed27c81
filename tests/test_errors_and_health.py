"""Errors answer as envelopes (never Flask's default pages); health checks answer plainly."""

from __future__ import annotations

import re

from helpers import JSON
from helpers import the_jsonld


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
