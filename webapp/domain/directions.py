"""Where an answer sends its caller next, worded for how the caller reaches the site.

A person's browser, and an agent in it (WebMCP), is shown pages: a next step is a page of
this site, by its address, and the tools that page offers. An MCP client is shown no page
(`Pages.tools_only`): a next step is a tool it has, named with the argument to give, and a
page it must hand to its user is a full address. Each sentence that differs between the two
is written here, both ways, once; actions ask for the step, never for the caller.
"""

from __future__ import annotations

from flask_babel import gettext as _

from .pages import Pages


def to_register(pages: Pages, event_id: str) -> str:
    """What to do about an event that takes registrations."""
    if pages.tools_only:
        return _("If the user wants it, call save_event to keep it; to register, call "
                 "prepare_event_registration with event_id %(event_id)s and the attendee's "
                 "name and e-mail address, then the user confirms on this site.",
                 event_id=event_id)
    return _("If the user wants it, call save_event to keep it; to register, the user opens "
             "%(address)s, where a person confirms.", address=pages.registration_form(event_id))


def already_registered(pages: Pages) -> str:
    """What to do when the visitor already holds a seat at the event."""
    if pages.tools_only:
        return _("Tell the user they are already registered; get_my_plans lists their "
                 "registrations with their ids.")
    return _("Tell the user they are already registered; see %(address)s.",
             address=pages.registrations())


def saved(pages: Pages) -> str:
    """What to do once an event is saved."""
    if pages.tools_only:
        return _("Done. Saving again is not needed; get_my_plans lists the saved events.")
    return _("Done. Saving again is not needed; the user sees it under Saved.")


def unknown_registration(pages: Pages) -> str:
    """What to do about a registration id the visitor has none of."""
    if pages.tools_only:
        return _("Use a registration id exactly as get_my_plans lists it; never guess ids.")
    return _("Use an id from the list on this page; never guess ids.")


def ask_the_person(pages: Pages, button: object) -> str:
    """What an agent is told after a prepare: let the person confirm, on the page that shows
    it or on their review page."""
    if pages.tools_only:
        return _("Ask the user to open %(address)s in the browser they use this site with, "
                 "review it and press “%(button)s” themselves: only the user may confirm. "
                 "Then call get_my_plans to see whether they did.",
                 button=str(button), address=pages.pending_review())
    return _("Ask the user to review it and press “%(button)s” themselves, on the page that "
             "shows it or at %(address)s in the browser they use this site with. Do not submit "
             "that form: it is not a tool, and only the user may confirm.",
             button=str(button), address=pages.pending_review())
