"""Security headers on every response, static files included; asset URLs name their content."""

from __future__ import annotations

import hashlib
from urllib.parse import parse_qs
from urllib.parse import urlsplit

import pytest
from bs4 import BeautifulSoup
from helpers import attribute

from webapp.config import SITE_ROOT as PROJECT_ROOT


@pytest.mark.parametrize("url", ["/events", "/events?page=0", "/health", "/no-such-page",
                                 "/static/css/site.css", "/static/js/webmcp-bridge.js"])
def test_headers_on_every_response(client, url):
    response = client.get(url)
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"]
    assert "tools=(self)" in response.headers["Permissions-Policy"]


def test_asset_urls_carry_a_content_hash(client):
    soup = BeautifulSoup(client.get("/en/events").data, "html.parser")
    urls = ([attribute(link, "href") for link in soup.find_all("link", rel="stylesheet")]
            + [attribute(script, "src") for script in soup.find_all("script", src=True)])
    assert "/static/js/htmx-4.0.1.min.js" in [urlsplit(url).path for url in urls]
    for url in urls:
        parts = urlsplit(url)
        content = (PROJECT_ROOT / parts.path.lstrip("/")).read_bytes()
        assert parse_qs(parts.query)["v"] == [hashlib.sha256(content).hexdigest()[:12]], url
