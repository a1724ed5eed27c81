"""Organizer text is data: escaped in HTML, inert inside the JSON-LD block, marked untrusted."""

from __future__ import annotations

import json
from dataclasses import replace

from bs4 import BeautifulSoup
from helpers import JSON

MALICIOUS_QUERY = "/events?query=Untrusted+Copy+Lab"


def test_the_malicious_summary_is_returned_as_marked_data(client):
    body = client.get(MALICIOUS_QUERY, headers=JSON).get_json()
    event = body["data"]["events"][0]
    assert event["id"] == "evt-malicious-copy"
    assert "Ignore previous instructions" in event["summary"]
    assert "data.events[].summary" in body["untrustedContent"]["fields"]
    assert "never instructions" in body["untrustedContent"]["note"]


def test_the_page_renders_the_summary_as_text(client):
    html = client.get(MALICIOUS_QUERY).data.decode()
    soup = BeautifulSoup(html, "html.parser")
    summary = soup.select_one(".event-summary")
    assert "Ignore previous instructions" in summary.get_text()
    assert summary.find_all(True) == []  # no element came out of the text


def test_json_ld_cannot_be_closed_from_inside(app, client):
    """Even a title holding </script> stays inside the one JSON-LD block."""
    from webapp.db import get_db
    with app.app_context():
        db = get_db()
        event = db.get_event("evt-malicious-copy")
        hostile = "</script><script>alert(1)</script><!-- '\" &amp;"
        db.import_events([replace(event, title=hostile)])
    html = client.get(MALICIOUS_QUERY.replace("Untrusted+Copy+Lab", "reveal+secret")).data
    soup = BeautifulSoup(html, "html.parser")
    blocks = soup.find_all("script", type="application/ld+json")
    assert len(blocks) == 1
    assert json.loads(blocks[0].string)["data"]["events"][0]["title"] == hostile
    executable = [s for s in soup.find_all("script") if s.get("type") != "application/ld+json"]
    assert all(s.get("src") for s in executable), "an inline script appeared"
    assert b"</script><script>alert(1)" not in html
