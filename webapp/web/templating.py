"""Jinja helpers for people: readable dates and the labels of the filter vocabularies."""

from __future__ import annotations

from datetime import datetime

from flask import Flask

from ..domain.projections import register_url
from ..domain.schemas import LEVELS
from ..domain.schemas import LOCATIONS
from ..domain.schemas import PRICES


def when(iso: str | None, with_time: bool = True) -> str:
    """An ISO 8601 time as people read it, in the event's own offset: "Sat 14 Dec 2026, 10:00"."""
    if not iso:
        return ""
    moment = datetime.fromisoformat(iso)
    text = f"{moment:%a} {moment.day} {moment:%b %Y}"
    return f"{text}, {moment:%H:%M}" if with_time else text


def pairs(items: list[dict[str, str]], value: str, label: str) -> list[tuple[str, str]]:
    """(value, label) pairs from a list of dicts: the choices of a page-bound radio group."""
    return [(item[value], item[label]) for item in items]


def init_app(app: Flask) -> None:
    """Register the helpers."""
    app.jinja_env.filters["when"] = when
    app.jinja_env.filters["pairs"] = pairs
    app.jinja_env.globals.update(LOCATIONS=LOCATIONS, PRICES=PRICES, LEVELS=LEVELS,
                                 register_url=register_url)
