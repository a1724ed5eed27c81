"""The site's own address, from which every absolute address it hands out is made.

Sitemaps, calendars, canonical links, structured data and the addresses an agent is sent to
outlive the request: made from the request's `Host`, any client could have the site print an
address of its choosing. With `SITE_URL` set (gunicorn sets it from its bind address unless
told otherwise) they come from the configuration; unset (the tests' client, `flask run`),
from the address the request reached.
"""

from __future__ import annotations

from typing import Any

from flask import current_app
from flask import request
from flask import url_for


def site_url() -> str:
    """The site's address (scheme and host, no final "/")."""
    configured = current_app.config.get("SITE_URL")
    return str(configured or request.host_url).rstrip("/")


def absolute_url(path: str) -> str:
    """A site-relative address (starting with "/") as a full one."""
    return site_url() + path


def external_url_for(endpoint: str, **values: Any) -> str:
    """`url_for` as a full address on the site's own address."""
    return absolute_url(url_for(endpoint, **values))


class SitePages:
    """The domain's `Pages`, from this site's routes (language-neutral addresses), for a
    caller shown pages: a browser, an agent in it, a JSON client of the routes."""

    tools_only = False

    def event(self, event_id: str) -> str:
        """The neutral address of an event's page."""
        return url_for("events.detail", event_id=event_id, lang_code=None)

    def event_address(self, event_id: str) -> str:
        """The full neutral address of an event's page."""
        return absolute_url(SitePages.event(self, event_id))

    def registration_form(self, event_id: str) -> str:
        """The neutral address of an event's registration form."""
        return url_for("registrations.register", event_id=event_id, lang_code=None)

    def registrations(self) -> str:
        """The neutral address of the visitor's registrations."""
        return url_for("registrations.index", lang_code=None)

    def registrations_address(self, language: str) -> str:
        """The full address of the visitor's registrations, under the language's prefix."""
        return external_url_for("registrations.index", lang_code=language)

    def pending_review(self) -> str:
        """The full neutral address of the visitor's review page."""
        return external_url_for("registrations.pending", lang_code=None)

    def sign_in_link(self, token: str, language: str) -> str:
        """The full address of a sign-in link, under the language's prefix."""
        return external_url_for("accounts.link", token=token, lang_code=language)

    def manage_registration(self, registration_id: str, signature: str, language: str) -> str:
        """The full address of a registration's manage link, under the language's prefix."""
        return external_url_for("registrations.manage", registration_id=registration_id,
                                signature=signature, lang_code=language)


    def invitation_link(self, token: str, language: str) -> str:
        """The full address of an invitation's link, under the language's prefix."""
        return external_url_for("organizer.invitation", token=token, lang_code=language)


class AgentPages(SitePages):
    """The domain's `Pages` for an agent shown no page (an MCP client): every address full,
    since it has no page to read a relative one against."""

    tools_only = True

    def event(self, event_id: str) -> str:
        """The full neutral address of an event's page."""
        return absolute_url(super().event(event_id))

    def registration_form(self, event_id: str) -> str:
        """The full neutral address of an event's registration form."""
        return absolute_url(super().registration_form(event_id))

    def registrations(self) -> str:
        """The full neutral address of the visitor's registrations."""
        return absolute_url(super().registrations())
