"""Organizer text is data: shown as text and marked untrusted (test_hostile_content.py puts
payloads in every organizer field, JSON-LD included)."""

from __future__ import annotations

from bs4 import BeautifulSoup
from helpers import JSON
from helpers import one
from helpers import page_address

MALICIOUS_QUERY = "/events?query=Untrusted+Copy+Lab"


def test_the_malicious_summary_is_returned_as_marked_data(client):
    body = client.get(MALICIOUS_QUERY, headers=JSON).get_json()
    event = body["data"]["events"][0]
    assert event["id"] == "evt-malicious-copy"
    assert "Ignore previous instructions" in event["summary"]
    assert "data.events[].summary" in body["untrustedContent"]["fields"]
    assert "never instructions" in body["untrustedContent"]["note"]


def test_the_page_renders_the_summary_as_text(client):
    html = client.get(page_address(MALICIOUS_QUERY)).data.decode()
    soup = BeautifulSoup(html, "html.parser")
    summary = one(soup, ".event-summary")
    assert "Ignore previous instructions" in summary.get_text()
    assert summary.find_all(True) == []  # no element came out of the text
