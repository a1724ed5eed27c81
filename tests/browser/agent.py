"""A WebMCP agent for tests: the tools Chromium registers on a tab, called through DevTools.

Chromium's DevTools `WebMCP` domain gives a test exactly what an agent gets: `toolsAdded` and
`toolsRemoved` with each tool's JSON Schema, `invokeTool`, and `toolResponded` with the answer.
The answer is what the page passed to `SubmitEvent.respondWith()` (our JS bridge: the result
object), or, after a submit that navigated, the list of JSON-LD blocks of the page it landed on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from playwright.sync_api import Error
from playwright.sync_api import Page

# What Chromium turns into a tool: a form with both attributes (flask-webmcp/docs/chromium.md §2).
TOOL_FORMS = "form[toolname][tooldescription]"
POLL_MS = 20


@dataclass(frozen=True)
class Tool:
    """One tool as Chromium describes it to an agent."""

    name: str
    description: str
    input_schema: dict[str, Any]
    autosubmit: bool


@dataclass(frozen=True)
class Answer:
    """Chromium's report of one call: Completed with an output, or Error/Canceled with a text;
    and the tools the page had when the report arrived (what the agent could call next)."""

    status: str
    output: Any = None
    error_text: str | None = None
    page_tools: dict[str, Tool] = field(default_factory=dict, repr=False, compare=False)


class ToolNotFound(Exception):
    """Chromium has no tool of that name on the page (its protocol error "Tool not found")."""


class Agent:
    """The agent of one tab: lists the page's tools and calls them as Chromium lets it."""

    def __init__(self, page: Page, timeout_s: float = 15):
        self.page = page
        self.timeout_s = timeout_s
        self._tools: dict[str, Tool] = {}
        self._answers: dict[str, Answer] = {}
        self._cdp = page.context.new_cdp_session(page)
        self._cdp.on("Page.frameNavigated", self._on_navigated)
        self._cdp.on("WebMCP.toolsAdded", self._on_tools_added)
        self._cdp.on("WebMCP.toolsRemoved", self._on_tools_removed)
        self._cdp.on("WebMCP.toolResponded", self._on_tool_responded)
        self._cdp.send("Page.enable")
        self._cdp.send("WebMCP.enable")

    def tools(self) -> dict[str, Tool]:
        """The page's tools by name, once Chromium has registered every tool form on it.

        Chromium registers a form a moment after it enters the document, so this waits until
        the registered names match the tool forms in the DOM. If they never do (a form Chromium
        refuses), it returns what is registered after the timeout, for the test to compare.
        """
        deadline = time.monotonic() + self.timeout_s
        while self._tool_form_names() != set(self._tools) and time.monotonic() < deadline:
            self.page.wait_for_timeout(POLL_MS)
        return dict(self._tools)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Answer:
        """Invoke a tool the way an agent does and wait for Chromium's report of it.

        Raises ToolNotFound when the page has no such tool.
        """
        return self.answer(self.start(name, arguments))

    def start(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        """Invoke a tool without waiting for its answer (`answer` waits); its invocation id.

        Raises ToolNotFound when the page has no such tool.
        """
        self.tools()  # an agent calls the tools it sees: let registration finish first
        frame = self._cdp.send("Page.getFrameTree")["frameTree"]["frame"]["id"]
        try:
            invocation: str = self._cdp.send("WebMCP.invokeTool", {
                "frameId": frame, "toolName": name, "input": arguments or {},
            })["invocationId"]
        except Error as error:
            if "Tool not found" in error.message:
                raise ToolNotFound(name) from error
            raise
        return invocation

    def answer(self, invocation: str) -> Answer:
        """Chromium's report of a call `start` made, once it arrives."""
        deadline = time.monotonic() + self.timeout_s
        while invocation not in self._answers:
            if time.monotonic() > deadline:
                raise AssertionError(f"{invocation}: Chromium reported no answer in "
                                     f"{self.timeout_s} s")
            self.page.wait_for_timeout(POLL_MS)
        return self._answers.pop(invocation)

    def _tool_form_names(self) -> set[str]:
        return set(self.page.locator(TOOL_FORMS).evaluate_all(
            "forms => forms.map(form => form.getAttribute('toolname'))"))

    def _on_navigated(self, event: dict[str, Any]) -> None:
        # Chromium sends no toolsRemoved when a document is left: the new one starts with none.
        if "parentId" not in event["frame"]:
            self._tools.clear()

    def _on_tools_added(self, event: dict[str, Any]) -> None:
        for tool in event["tools"]:
            self._tools[tool["name"]] = Tool(
                name=tool["name"], description=tool["description"],
                input_schema=tool.get("inputSchema", {}),
                autosubmit=bool(tool.get("annotations", {}).get("autosubmit")))

    def _on_tools_removed(self, event: dict[str, Any]) -> None:
        for tool in event["tools"]:
            self._tools.pop(tool["name"], None)

    def _on_tool_responded(self, event: dict[str, Any]) -> None:
        # DevTools events arrive in order: the tools known now are those the page had then.
        self._answers[event["invocationId"]] = Answer(
            status=event["status"], output=event.get("output"),
            error_text=event.get("errorText"), page_tools=dict(self._tools))
