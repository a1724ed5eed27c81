"""Uploaded pictures for everyone: a published event's cover and an organization's logo, at
addresses that name the picture's digest, so each address always holds the same bytes and may
be kept a year (a new picture gets new addresses). A draft's cover is served only in the
organizer area (`organizer_covers`): the read here finds published events alone.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint
from flask import Response
from flask import abort

from ..domain.actions.event_covers import cover_view
from ..storage import CoverImage
from ..storage.connection import get_db
from ..storage.covers import COVER_WIDTHS
from ..storage.covers import LOGO_WIDTHS
from .caching import public

bp = Blueprint("covers", __name__)

# A digest names one picture for good: browsers and caches may keep it this long.
A_YEAR = 365 * 24 * 3600


def published_cover(event_id: str) -> dict[str, Any] | None:
    """The published event's cover as its page shows it (`cover_view`), or None."""
    cover = get_db().event_cover(event_id, published_only=True)
    return cover_view(cover) if cover else None


def _jpeg(image: CoverImage | None, digest: str) -> Response:
    """The rendition found, while `digest` is its picture's; else not found."""
    if image is None or image.digest != digest:
        abort(404)
    return Response(image.data, mimetype="image/jpeg")


@public(max_age=A_YEAR)
@bp.get("/events/<event_id>/cover/<digest>/<int:width>.jpg")
def cover_image(event_id: str, digest: str, width: int) -> Response:
    """One rendition of a published event's cover, while `digest` is its picture's."""
    return _jpeg(get_db().cover_image(event_id, width, published_only=True)
                 if width in COVER_WIDTHS else None, digest)


@public(max_age=A_YEAR)
@bp.get("/organizations/<organization_id>/logo/<digest>/<int:width>.jpg")
def logo_image(organization_id: str, digest: str, width: int) -> Response:
    """One rendition of an organization's logo, while `digest` is its picture's."""
    return _jpeg(get_db().logo_image(organization_id, width)
                 if width in LOGO_WIDTHS else None, digest)
