"""Security headers on every response, static files included."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from helpers import JSON


@pytest.mark.parametrize("url", ["/events", "/events?page=0", "/health", "/no-such-page",
                                 "/static/css/site.css", "/static/js/webmcp-bridge.js"])
def test_headers_on_every_response(client, url):
    response = client.get(url)
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"]
    assert "tools=(self)" in response.headers["Permissions-Policy"]


def test_pages_load_scripts_only_from_files(client):
    soup = BeautifulSoup(client.get("/events").data, "html.parser")
    for script in soup.find_all("script"):
        assert script.get("type") == "application/ld+json" or script.get("src")


def test_static_files_are_served_compressed_and_cached(client):
    response = client.get("/static/css/site.css", headers={"Accept-Encoding": "gzip"})
    assert response.status_code == 200
    assert response.headers["Content-Encoding"] == "gzip"
    assert "max-age=31536000" in response.headers["Cache-Control"]
    assert "Accept-Encoding" in response.headers["Vary"]


def test_asset_urls_carry_a_content_hash(client):
    soup = BeautifulSoup(client.get("/events", headers={"Accept": "text/html"}).data,
                         "html.parser")
    sources = [s["src"] for s in soup.find_all("script", src=True)]
    assert any(src.startswith("/static/js/htmx-4.0.1.min.js?v=") for src in sources)
    assert client.get("/events", headers=JSON).headers["Content-Type"] == "application/json"
