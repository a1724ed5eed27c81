"""The site's routes as its declarations state them, for the matrices of the tests ("every POST
route"): a route added to the site is in every matrix the day it is declared, never in a list
someone must remember to extend.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from flask import Flask

from flask_webmcp.actions import Action
from flask_webmcp.routes import route_roles
from webapp import create_app


def serves_static_files(endpoint: str) -> bool:
    """Whether `endpoint` serves static files (the app's, or a blueprint's such as the
    extension's bridge): the same bytes whatever anyone did, no page."""
    return endpoint == "static" or endpoint.endswith(".static")


# A value of the right shape for each field a route's address or input may need (ids that
# need not exist). A route needing a field without one here stops the collection of the tests
# (a KeyError naming it), so no route is left out quietly.
SAMPLE_VALUES: dict[str, str] = {
    "event_id": "evt-agent-testing",
    "registration_id": "reg-aaaaaaaaaaaa",
    "connection_id": "agt-aaaaaaaaaaaa",
    "entry_id": "wait-aaaaaaaaaaaa",
    "attendee_name": "Ann",
    "email": "a@example.com",
    "confirmation_token": "whatever",
    "label": "Ann's laptop",
    "token": "cal_unknown",
    "signature": "x" * 43,
    "organization_id": "org-aaaaaaaaaaaa",
    "name": "Taipei Web Meetup",
    "role": "manager",
    "invitation_id": "inv-aaaaaaaaaaaa",
    "account_id": "acc-aaaaaaaaaaaa",
    "code": "K7QM-2XPA-64TD",
    "version": "1",
    "title": "網頁無障礙工作坊",
    "summary": "一個晚上，把一份表單改到螢幕閱讀器也好用。",
    "description": "我們從一份真實的報名表單開始。",
    "starts_at": "2030-01-10T19:00",
    "ends_at": "2030-01-10T21:00",
    "registration_deadline": "2030-01-09T19:00",
    "location": "taipei",
    "venue": "台北市大安區",
    "level": "beginner",
    "capacity": "30",
    "waitlist": "False",
    "price_amount": "0",
    "price_currency": "TWD",
    "width": "600",
    "digest": "0123456789abcdef",
    "alt": "講者在台上示範螢幕閱讀器",
    # A form sends a file where a page would upload one; a string stands for it here.
    "picture": "cover.png",
    "language": "zh-Hant-TW",
}


def declared_app() -> Flask:
    """The site's app, made only to read its declarations (no database is opened)."""
    return create_app({"TESTING": True, "SECRET_KEY": "routes",
                       "DATABASE": str(Path(tempfile.gettempdir()) / "routes-never-opened")})


def declared_actions() -> dict[str, Action[Any]]:
    """Every action a route runs (tools and human-only steps), by name."""
    return {role.action.name: role.action for _rule, role in route_roles(declared_app())
            if role.action is not None}


def post_routes(human_only: bool | None = None) -> list[tuple[str, dict[str, Any], str]]:
    """Every declared POST route (or only those for people, or only tools): its address,
    input of the right shape, and its action."""
    app = declared_app()
    addresses = app.url_map.bind("localhost")
    routes = []
    for rule, role in route_roles(app):
        if "POST" not in (rule.methods or ()) or human_only not in (None, role.human_only):
            continue
        assert role.action is not None, f"{rule} takes a POST but runs no action"
        fields = role.action.schema().fields
        url = addresses.build(rule.endpoint, {name: SAMPLE_VALUES[name]
                                              for name in rule.arguments})
        data = {name: SAMPLE_VALUES[name] for name, field in fields.items()
                if field.required and name not in rule.arguments}
        routes.append((url, data, role.action.name))
    return routes


def page_addresses(values: dict[str, str] | None = None) -> list[str]:
    """An address of every GET route that answers something of its own (not static files,
    health checks, the bare root, nor a page's language-prefixed copy), with a value for each
    argument of its address and for each input its action requires (`values`, else
    SAMPLE_VALUES)."""
    chosen = {**SAMPLE_VALUES, **(values or {})}
    app = declared_app()
    actions = {rule.endpoint: role.action for rule, role in route_roles(app)}
    addresses = app.url_map.bind("localhost")
    pages = []
    for rule in app.url_map.iter_rules():
        if ("GET" not in (rule.methods or ()) or serves_static_files(rule.endpoint)
                or rule.endpoint in ("index", "health.health", "health.version")
                or "lang_code" in rule.arguments):
            continue
        action = actions.get(rule.endpoint)
        query = {name: chosen[name] for name, field in action.schema().fields.items()
                 if field.required and name not in rule.arguments} if action else {}
        pages.append(addresses.build(rule.endpoint, {
            **{name: chosen[name] for name in rule.arguments}, **query}))
    return pages


POST_ROUTES = post_routes()
HUMAN_ONLY_POST_ROUTES = post_routes(human_only=True)


def refused_unread_without_sign_in(url: str) -> bool:
    """Whether the POST route at `url` refuses a browser that is not signed in before it
    reads any of the body (a view of the organizer area: `web.organizer.needs`)."""
    from webapp.web.organizer import NEEDS

    app = declared_app()
    endpoint, _ = app.url_map.bind("localhost").match(url, method="POST")
    return hasattr(app.view_functions[endpoint], NEEDS)


def body_limit(url: str, default: int) -> int:
    """The most the POST route at `url` reads of a body: the limit it declares
    (`web.bodies.accepts_body`, a route that uploads files), else `default`."""
    from webapp.web.bodies import BODY_LIMIT

    app = declared_app()
    endpoint, _ = app.url_map.bind("localhost").match(url, method="POST")
    return int(getattr(app.view_functions[endpoint], BODY_LIMIT, default))
