"""The site's tool catalog: the only five tools a WebMCP agent may see (DESIGN.md §2).

Confirming a registration or a cancellation is deliberately *not* a tool: only a person
finishes a write that takes or gives up a seat. Names are the same in every language; titles
and descriptions are lazy translations, read in the language of the page that shows the form.
"""

from flask_babel import lazy_gettext as _l

from ..webmcp.catalog import Catalog
from ..webmcp.catalog import Tool
from .schemas import GetEventDetailsInput
from .schemas import PrepareEventRegistrationInput
from .schemas import PrepareRegistrationCancellationInput
from .schemas import SaveEventInput
from .schemas import SearchEventsInput

CATALOG = Catalog([
    Tool(
        name="search_events",
        title=_l("Search events"),
        description=_l(
            "Search this site's upcoming events and show the matches on the page. Use only the "
            "conditions the user gave; a condition set by an earlier search stays until you "
            "give it \"\" (any). If nothing matches, ask the user before changing any. "
            "Results carry opaque event ids for get_event_details."),
        schema=SearchEventsInput,
        autosubmit=True,
    ),
    Tool(
        name="get_event_details",
        title=_l("Event details"),
        description=_l(
            "Show the full, current details of an event on this page: schedule, venue, "
            "remaining seats and whether registration is open. Changes nothing."),
        schema=GetEventDetailsInput,
        autosubmit=True,
    ),
    Tool(
        name="save_event",
        title=_l("Save event"),
        description=_l(
            "Save the event shown here to the visitor's saved list. Saving it again changes "
            "nothing and says it was already saved."),
        schema=SaveEventInput,
        autosubmit=True,
        writes="a saved mark (idempotent)",
    ),
    Tool(
        name="prepare_event_registration",
        title=_l("Prepare registration"),
        description=_l(
            "Prepare a registration for the event on this page and show it to the user for "
            "review. It does not register anyone: only the user can confirm, on the page."),
        schema=PrepareEventRegistrationInput,
        autosubmit=True,
        writes="a pending confirmation only",
    ),
    Tool(
        name="prepare_registration_cancellation",
        title=_l("Prepare cancellation"),
        description=_l(
            "Prepare cancelling one of the visitor's active registrations and open the "
            "confirmation dialog. It does not cancel: only the user can confirm, on the page."),
        schema=PrepareRegistrationCancellationInput,
        autosubmit=True,
        writes="a pending confirmation only",
    ),
])
