"""What the public side of the site shows of organizations: an organization's own page (its
name, what it is, its logo, its upcoming and past events) and, on an event's page, who runs
it (with its logo).

Read-only and the same for everyone: nothing here needs a visitor or an account.
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

from ..storage import Storage
from .actions import ActionContext
from .actions.organization_logos import REMOVE_ORGANIZATION_LOGO
from .actions.organization_logos import SET_ORGANIZATION_LOGO
from .actions.organization_logos import logo_view
from .actions.organizers import organization_view
from .projections import event_listing

# How many of its events an organization's page lists (the latest starts first).
EVENTS_SHOWN = 100
# The organizer actions that change what an organization's public page shows.
PAGE_CHANGES = ("publish_event", "edit_event", "cancel_event", SET_ORGANIZATION_LOGO,
                REMOVE_ORGANIZATION_LOGO)


def listed_organizations(db: Storage, limit: int) -> list[dict[str, Any]]:
    """The organizations whose public page a sitemap lists (those with a published event:
    a page of drafts alone lists nothing), with when each last changed (ISO 8601, UTC)."""
    return [{"id": organization_id, "changedAt": changed_at.astimezone(UTC).isoformat()}
            for organization_id, changed_at in db.listed_organizations(PAGE_CHANGES, limit)]


def public_organization(db: Storage, organization_id: str) -> dict[str, Any] | None:
    """An organization as the public pages show it: `organization_view` and its `logo`
    (`logo_view`, None without one); None when there is no such organization."""
    organization = db.get_organization(organization_id)
    if organization is None:
        return None
    logo = db.organization_logo(organization_id)
    return {**organization_view(organization), "logo": logo_view(logo) if logo else None}


def organizer_of(db: Storage, event_id: str) -> dict[str, Any] | None:
    """The organization that runs an event, as pages name it (`public_organization`; None:
    the site's own event, or no such event)."""
    organization_id = db.event_organization(event_id)
    return public_organization(db, organization_id) if organization_id else None


def organization_page(db: Storage, organization_id: str, ctx: ActionContext
                      ) -> dict[str, Any] | None:
    """An organization's public page: the organization, its events still to come (the
    soonest first) and its past ones (the latest first), each as a search result shows it,
    seats counted now; None when there is no such organization."""
    organization = public_organization(db, organization_id)
    if organization is None:
        return None
    events = db.public_organization_events(organization_id, EVENTS_SHOWN)
    seats = db.availability([event.id for event in events])
    listed = [(event, event_listing(event, seats[event.id], ctx.now, ctx.timezone, ctx.pages))
              for event in events if event.id in seats]
    return {"organization": organization,
            "upcoming": [shown for event, shown in reversed(listed)
                         if event.starts_at > ctx.now],
            "past": [shown for event, shown in listed if event.starts_at <= ctx.now]}
