"""The pages the domain sends people and agents to, named by what they are for.

A result tells an agent where a person confirms a registration, and every event it lists
carries the address of its page; but which path a page lives at is the web layer's business
(its routes). So actions ask the context's `Pages`, which the web layer builds from those
routes, and the domain holds no path of its own.
"""

from __future__ import annotations

from typing import Protocol


class Pages(Protocol):
    """Where the site's pages are, by what a person does there.

    `tools_only` is true for a caller shown no page (an MCP client): every address it is given
    is a full one, and its next steps are worded as tools to call (`directions`).
    """

    tools_only: bool

    def event(self, event_id: str) -> str:
        """The language-neutral address of an event's page (the same in both languages:
        machine data names it), site-relative for a caller shown pages, else full."""
        ...

    def event_address(self, event_id: str) -> str:
        """The full, language-neutral address of an event's page, for what outlives the
        request (mail, calendar files)."""
        ...

    def registration_form(self, event_id: str) -> str:
        """The address where a person registers for an event (site-relative for a caller
        shown pages, else full)."""
        ...

    def registrations(self) -> str:
        """The address of the visitor's registrations (site-relative for a caller shown
        pages, else full)."""
        ...

    def registrations_address(self, language: str) -> str:
        """The absolute address of the visitor's registrations in `language` (a mail is read
        in it)."""
        ...

    def pending_review(self) -> str:
        """The absolute address where a person confirms what waits for them (registrations
        and cancellations prepared anywhere), in the language their browser chooses."""
        ...

    def sign_in_link(self, token: str, language: str) -> str:
        """The absolute address of a sign-in link, in the language of the request that asked
        for it (a mail is read in that language)."""
        ...

    def manage_registration(self, registration_id: str, signature: str, language: str) -> str:
        """The absolute address of a registration's manage link, in the mail's language."""
        ...

    def invitation_link(self, token: str, language: str) -> str:
        """The absolute address of an invitation's link, in the mail's language."""
        ...
