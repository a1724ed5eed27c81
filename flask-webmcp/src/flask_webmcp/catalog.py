"""Tools as declared data: the single list a site may expose to WebMCP agents."""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass

from marshmallow import Schema

from .actions import Action
from .actions import Run
from .actions import declare_action
from .result import Status
from .text import Text
from .text import _

# Chromium registers a declarative tool only when its name matches this (docs/chromium.md §2).
TOOL_NAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,128}")


@dataclass(frozen=True)
class Hints:
    """How a tool behaves, as MCP's tool annotations say it: hints for clients, never rules.

    The defaults are MCP's (a tool may change anything, anywhere, each time it is called).
    """

    read_only: bool = False  # changes nothing
    destructive: bool = True  # may change or remove what is there (else: only adds)
    idempotent: bool = False  # calling it again with the same input changes nothing more
    open_world: bool = True  # reaches beyond this site


@dataclass(frozen=True)
class Tool:
    """One agent tool: a name, what it does, the schema of its inputs (the routes that run it
    and the pages that offer it say so where they are declared).

    `description` says what the tool does wherever it is called; `on_page` adds what it does
    on the page that offers its form (a WebMCP form's tooldescription is both: see
    `form_description`), so an agent that is shown no page (MCP) reads no word about one.
    The name is the same in every language; the title and descriptions are read in the
    language of the request (see `text.Text`). `output` is the marshmallow schema of the
    `data` its answers carry (None: any object): MCP's outputSchema narrows the envelope's
    `data` to it, so a client knows what a result holds without calling the tool.
    """

    name: str
    title: Text
    description: Text
    schema: type[Schema]
    autosubmit: bool
    writes: str = "nothing"
    on_page: Text | None = None
    hints: Hints = Hints()
    # What it reads belongs to whom the call acts for (their own orders, say): like a tool
    # that writes, it answers only for someone, never for an anonymous caller.
    personal: bool = False
    output: type[Schema] | None = None

    def __post_init__(self) -> None:
        if not TOOL_NAME_RE.fullmatch(self.name):
            raise ValueError(f"invalid tool name {self.name!r}")
        if not str(self.description).strip():
            raise ValueError(f"tool {self.name!r} needs a description")

    @property
    def needs_principal(self) -> bool:
        """Whether a call must act for someone: a tool that writes, or one that is personal."""
        return self.personal or not self.hints.read_only

    @property
    def form_description(self) -> str:
        """The tooldescription of the tool's form: what it does, then what it does on the page."""
        if self.on_page is None:
            return str(self.description)
        return _("%(description)s %(on_page)s") % {"description": str(self.description),
                                                    "on_page": str(self.on_page)}


class Catalog:
    """The frozen set of tools; templates may only expose tools listed here."""

    def __init__(self, tools: Iterable[Tool]):
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"tool {tool.name!r} is declared twice")
            self._tools[tool.name] = tool

    def __getitem__(self, name: str) -> Tool:
        return self._tools[name]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        """Tool names in declaration order."""
        return list(self._tools)

    def action(self, name: str, *, answers: Iterable[Status], creates: bool = False
               ) -> Callable[[Run], Action[Run]]:
        """Declare the decorated function as the action of tool `name`, whose input is the
        tool's schema; `answers` are the statuses it can answer."""
        return declare_action(name, self[name].schema, answers, creates=creates)

__all__ = ["Catalog", "Hints", "TOOL_NAME_RE", "Tool"]
