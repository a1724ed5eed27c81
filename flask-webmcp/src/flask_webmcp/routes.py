"""Tool routes, declared once: what an address runs and which tool forms its answers show.

    @tool_route(bp, "/events", search_events, offers=("search_events", "get_event_details"))
    def search(): ...

The declaration is the one place that ties a route to its action. Error answers at the
address are named after it (`current_action`), an OpenAPI document can be derived from it,
and the manifest, the linter and the sample pages learn from it which pages offer which tools
(`route_roles`, `offering_routes`). Nothing is stored but on the view functions themselves,
so every app (and every worker) that registers the blueprint sees the same declarations.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from typing import TypeVar

from flask import Blueprint
from flask import Flask
from flask import current_app
from flask import request
from werkzeug.exceptions import HTTPException
from werkzeug.routing import Rule

from .actions import Action

# Where a view keeps its declaration.
ROLE = "webmcp_route_role"

View = TypeVar("View", bound=Callable[..., Any])


@dataclass(frozen=True)
class RouteRole:
    """What one route does: the action it runs (None for a page that only shows forms), the
    name its answers go by, and the tools whose forms its page or partial shows."""

    name: str
    action: Action[Any] | None
    offers: tuple[str, ...]

    @property
    def human_only(self) -> bool:
        """Whether its action is for people only (a step no agent is offered, such as a
        confirm form)."""
        return self.action is not None and self.action.human_only


def tool_route(bp: Blueprint | Flask, rule: str, action: Action[Any], *,
               methods: Iterable[str] = ("GET",), offers: Iterable[str] = ()
               ) -> Callable[[View], View]:
    """Route `rule` to the decorated view, which runs `action`, a tool of the catalog."""
    if action.human_only:
        raise TypeError(f"{action.name} is for people only: declare its route with "
                        "human_route()")
    return _route(bp, rule, RouteRole(action.name, action, tuple(offers)), methods)


def human_route(bp: Blueprint | Flask, rule: str, action: Action[Any], *,
                methods: Iterable[str] = ("POST",), offers: Iterable[str] = ()
                ) -> Callable[[View], View]:
    """Route `rule` to the decorated view, which runs `action`, a step for people only (no
    tool of the catalog: its form carries no `toolname`, and an agent's call is refused)."""
    if not action.human_only:
        raise TypeError(f"{action.name} is a tool: declare its route with tool_route(), or "
                        "declare the action with human_action()")
    return _route(bp, rule, RouteRole(action.name, action, tuple(offers)), methods)


def page_route(bp: Blueprint | Flask, rule: str, name: str, *, offers: Iterable[str] = ()
               ) -> Callable[[View], View]:
    """Route `rule` to a page that runs no action; its error answers go by `name`."""
    return _route(bp, rule, RouteRole(name, None, tuple(offers)), ("GET",))


def _route(bp: Blueprint | Flask, rule: str, role: RouteRole, methods: Iterable[str]
           ) -> Callable[[View], View]:
    def register(view: View) -> View:
        setattr(view, ROLE, role)
        bp.add_url_rule(rule, view_func=view, methods=list(methods))
        return view

    return register


def route_roles(app: Flask) -> Iterator[tuple[Rule, RouteRole]]:
    """Every declared route of `app`, with its role.

    A route is named by the rule of its endpoint with the fewest arguments: further rules of
    the same endpoint (the same view under a language prefix, say) are other addresses of it.
    """
    seen: set[str] = set()
    for rule in app.url_map.iter_rules():
        role = getattr(app.view_functions[rule.endpoint], ROLE, None)
        if role is not None and rule.endpoint not in seen:
            seen.add(rule.endpoint)
            named = route_rule(app, rule.endpoint)
            if named is not None:
                yield named, role


def route_rule(app: Flask, endpoint: str | None) -> Rule | None:
    """The rule that names the route of `endpoint` (see `route_roles`)."""
    if endpoint is None:
        return None
    return min(app.url_map.iter_rules(endpoint), key=lambda rule: len(rule.arguments),
               default=None)


def offering_routes(app: Flask) -> dict[str, list[str]]:
    """tool name -> the routes whose answers show its form, in the order they were declared."""
    offered: dict[str, list[str]] = {}
    for rule, role in route_roles(app):
        for tool in role.offers:
            if rule.rule not in offered.setdefault(tool, []):
                offered[tool].append(rule.rule)
    return offered


def tool_actions(app: Flask) -> dict[str, Action[Any]]:
    """tool name -> its action, as the routes declare it (`tool_route`): the one thing a call
    of the tool runs, from a page or over MCP."""
    return {role.action.name: role.action for _rule, role in route_roles(app)
            if role.action is not None and not role.action.human_only}


def current_role() -> RouteRole | None:
    """The role of the route handling this request.

    For a request routing refused (a wrong method), the role of the route at that address.
    """
    endpoint = request.endpoint
    if endpoint is None:
        adapter = current_app.url_map.bind_to_environ(request.environ)
        for method in ("GET", "POST"):
            try:
                endpoint, _ = adapter.match(method=method)
                break
            except HTTPException:
                continue
    return getattr(current_app.view_functions.get(endpoint or ""), ROLE, None)


def current_action(default: str = "request") -> str:
    """The name the answers of this request go by (see `tool_route`)."""
    role = current_role()
    return role.name if role else default

__all__ = ["ROLE", "RouteRole", "current_action", "current_role", "human_route",
           "offering_routes", "page_route", "route_roles", "tool_actions", "tool_route"]
