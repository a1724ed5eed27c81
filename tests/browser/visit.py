"""A visitor's browser tab on the site under test: the agent using its tools, the person at it,
and the same visitor asking as a JSON client (to compare answers).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from babel.support import NullTranslations
from babel.support import Translations
from helpers import JSON
from helpers import PROJECT_ROOT
from helpers import unique_email
from playwright.sync_api import Page
from playwright.sync_api import Request
from playwright.sync_api import Route

from .agent import Agent
from .agent import Answer
from .agent import Tool

REGISTRATION_ID = re.compile(r"reg-[A-Za-z0-9_-]{8,64}")
LOCALES = {"zh-TW": "zh_Hant_TW", "en": "en"}


@functools.cache
def catalog(language: str) -> NullTranslations:
    """The site's compiled message catalog for `language` (English is the source itself)."""
    return Translations.load(str(PROJECT_ROOT / "webapp" / "translations"), [LOCALES[language]])


@dataclass(frozen=True)
class Site:
    """The app served by gunicorn for one test module, with its own database."""

    base_url: str
    database: Path

    def url(self, path: str) -> str:
        return self.base_url + path


class Held:
    """The page's requests to `path` (in any language), held unanswered (a slow network)
    until `release()`."""

    def __init__(self, page: Page, path: str):
        self.page = page
        self.routes: list[Route] = []
        self.matches = lambda url: urlsplit(url).path.endswith(path)
        page.route(self.matches, lambda route: self.routes.append(route))

    def release(self) -> None:
        for route in self.routes:
            route.continue_()
        self.page.unroute(self.matches)


class Tab:
    """One tab of a visitor's browser, with JavaScript on (the bridge answers) or off."""

    def __init__(self, page: Page, site: Site, javascript: bool, language: str = "en"):
        self.page = page
        self.site = site
        self.javascript = javascript
        self.language = language
        self.agent = Agent(page)
        self.tool_request: Request | None = None
        self._sent: list[Request] = []
        page.on("request", self._remember)

    # The agent.

    def open(self, path: str) -> dict[str, Tool]:
        """Go to a page of the site; its tools once Chromium has registered them."""
        self.page.goto(self.site.url(path))
        return self.agent.tools()

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> Answer:
        """The agent calls a tool; `tool_request` is then the HTTP request the call sent."""
        already_sent = len(self._sent)
        answer = self.agent.call(tool, arguments)
        self.tool_request = next(
            (r for r in self._sent[already_sent:] if self._carries_the_call(r)), None)
        return answer

    def result(self, answer: Answer) -> dict[str, Any]:
        """The result an answer carries: the bridge's object, or the next page's one JSON-LD
        block when there is no JavaScript."""
        assert answer.status == "Completed", answer.error_text
        blocks = [answer.output] if self.javascript else answer.output
        assert isinstance(blocks, list) and len(blocks) == 1, answer.output
        result: dict[str, Any] = blocks[0]
        return result

    def delivered(self, envelope: dict[str, Any]) -> Any:
        """What this tab's agent receives for a result: the object the bridge answers with,
        or without JavaScript the JSON-LD blocks of the next page, which hold it once."""
        return envelope if self.javascript else [envelope]

    def _remember(self, request: Request) -> None:
        self._sent.append(request)

    def _carries_the_call(self, request: Request) -> bool:
        if self.javascript:
            return request.headers.get("webmcp-agent-invoked") == "true"
        return request.is_navigation_request()

    # The same visitor as a JSON client.

    def json_answer_to(self, request: Request | None) -> dict[str, Any]:
        """The JSON answer to the same request sent again with this visitor's cookies."""
        assert request is not None, "the call sent no request to the site"
        headers = dict(JSON)
        if request.post_data is not None:
            headers["Content-Type"] = request.headers["content-type"]
        response = self.page.context.request.fetch(request.url, method=request.method,
                                                   headers=headers, data=request.post_data)
        answer: dict[str, Any] = response.json()
        return answer

    def ask(self, path: str, form: dict[str, str] | None = None) -> dict[str, Any]:
        """GET `path` as a JSON client of this visitor; POST `form` (with this page's CSRF
        token) when given."""
        api = self.page.context.request
        if form is None:
            response = api.get(self.site.url(path), headers=JSON)
        else:
            token = self.page.locator("input[name=csrf_token]").first.get_attribute("value")
            response = api.post(self.site.url(path), headers=JSON,
                                form={"csrf_token": token or "", **form})
        answer: dict[str, Any] = response.json()
        return answer

    def seats(self, event_id: str) -> int:
        """Seats left at an event, as a JSON client reads them."""
        seats: int = self.ask(f"/events/{event_id}")["data"]["event"]["remainingSeats"]
        return seats

    # The person.

    def text(self, message: str) -> str:
        """What the site's pages in this tab's language say for `message` (its English)."""
        return catalog(self.language).gettext(message)

    def plural(self, singular: str, plural: str, num: int) -> str:
        """What the site's pages in this tab's language say for `num` of a thing, filled."""
        return catalog(self.language).ngettext(singular, plural, num) % {"num": num}

    def press(self, button: str, then_shows: str) -> None:
        """The person presses a button and waits for the text its answer shows."""
        self.page.get_by_role("button", name=button).click()
        self.page.get_by_text(then_shows).first.wait_for()

    def register_as_person(self, event_id: str, name: str = "Ann Lee",
                           email: str | None = None) -> str:
        """A person registers through the pages (fill, review, confirm); the registration id
        the confirmation shows."""
        self.open(f"/events/{event_id}/register")
        self.page.get_by_label(self.text("Attendee name")).fill(name)
        self.page.get_by_label(self.text("E-mail")).fill(email or unique_email())
        self.press(self.text("Next: check your details"),
                   then_shows=self.text("Check and confirm"))
        self.press(self.text("Confirm registration"),
                   then_shows=self.text("You are registered: one seat is yours."))
        # Its address names it: the page it landed on, or the link to it.
        shown = REGISTRATION_ID.search(self.page.url + self.page.locator("main").inner_html())
        assert shown, "the confirmation links to no registration"
        return shown.group()

    def new_tab(self) -> Tab:
        """Another tab of the same browser: the same visitor."""
        return Tab(self.page.context.new_page(), self.site, self.javascript, self.language)
