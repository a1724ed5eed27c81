"""Rendered answers travel gzipped to clients that accept it; small ones stay as they are."""

from __future__ import annotations

import gzip

from helpers import HTMX
from helpers import JSON

GZIP = {"Accept-Encoding": "gzip, deflate"}


def test_pages_partials_and_json_are_gzipped_when_accepted(client):
    for headers in ({}, HTMX, JSON):
        plain = client.get("/en/events", headers=headers)
        packed = client.get("/en/events", headers={**headers, **GZIP})
        assert "Content-Encoding" not in plain.headers
        assert packed.headers["Content-Encoding"] == "gzip"
        assert gzip.decompress(packed.data) == plain.data
        assert len(packed.data) < len(plain.data) / 2
        assert int(packed.headers["Content-Length"]) == len(packed.data)
        assert "Accept-Encoding" in plain.vary and "Accept-Encoding" in packed.vary


def test_gzip_refused_with_quality_zero_is_not_sent(client):
    for refusal in ("gzip;q=0", "deflate, gzip;q=0", "*;q=0"):
        answer = client.get("/en/events", headers={"Accept-Encoding": refusal})
        assert "Content-Encoding" not in answer.headers, refusal


def test_small_answers_are_sent_as_they_are(client):
    health = client.get("/health", headers=GZIP)
    assert "Content-Encoding" not in health.headers
    assert health.get_json() == {"status": "ok"}

