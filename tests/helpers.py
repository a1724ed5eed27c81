"""Helpers for HTTP tests: the three renderings of one request and their JSON-LD."""

from __future__ import annotations

import json

from bs4 import BeautifulSoup

JSON = {"Accept": "application/json"}
HTMX = {"HX-Request": "true", "HX-Request-Type": "partial"}


def jsonld_blocks(html: bytes | str) -> list[dict]:
    """Every JSON-LD block of an HTML answer, parsed."""
    soup = BeautifulSoup(html, "html.parser")
    return [json.loads(tag.string) for tag in soup.find_all("script", type="application/ld+json")]


def the_jsonld(html: bytes | str) -> dict:
    """The single JSON-LD block of an HTML answer (fails if there is not exactly one)."""
    blocks = jsonld_blocks(html)
    assert len(blocks) == 1, f"expected one JSON-LD block, found {len(blocks)}"
    return blocks[0]


def three_answers(client, url: str, method: str = "get", **kwargs) -> tuple:
    """The JSON, partial and full-page answers to the same request."""
    send = getattr(client, method)
    as_json = send(url, headers=JSON, **kwargs)
    partial = send(url, headers=HTMX, **kwargs)
    page = send(url, **kwargs)
    return as_json, partial, page
