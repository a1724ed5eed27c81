"""A first visit to /events costs four requests: the page, its stylesheet and two scripts."""

from __future__ import annotations

from bs4 import BeautifulSoup
from helpers import attribute
from helpers import one

GZIP = {"Accept-Encoding": "gzip"}


def test_the_page_loads_four_hashed_cacheable_files_and_no_icon(client):
    """The stylesheet, htmx, the agents' bridge and what people need of an answer in place."""
    soup = BeautifulSoup(client.get("/en/events").data, "html.parser")
    files = ([link["href"] for link in soup.find_all("link", rel="stylesheet")]
             + [script["src"] for script in soup.find_all("script", src=True)])
    assert len(files) == 4
    for url in files:
        assert "?v=" in url
        answer = client.get(url, headers=GZIP)
        assert answer.status_code == 200
        assert answer.headers["Content-Encoding"] == "gzip"
        assert "max-age=31536000" in answer.headers["Cache-Control"]
        assert "Accept-Encoding" in answer.headers["Vary"]
    # The icon is inside the page: browsers would otherwise ask for /favicon.ico, a 404.
    icon = one(soup, "link[rel~=icon]")
    assert attribute(icon, "href").startswith("data:image/svg+xml,%3Csvg")
    assert client.get("/favicon.ico").status_code == 404
