"""Events' cover pictures: what the organizer area keeps and what pages show.

A cover is one row of `event_covers`, keyed by the event's id, which a draft keeps when it is
published: the same row serves the draft's preview and, once published, its public page. Its
renditions are stored as the bytes the site made of the upload (`domain.images`); a page
reads only the alt text and the digest, and the picture's address reads one rendition. Only a
published event's cover is served publicly: the public read joins `events`, where no draft is.
Written once for both backends on the primitives `records.Records` names; `Records` inherits
this class.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any

from . import CoverImage
from . import EventCover
from .dialect import Dialect
from .dialect import guarded

Row = Mapping[str, Any]

# The widths a cover is kept at, each a column of its own (`image_<width>`).
COVER_WIDTHS = (1200, 600)

SET_COVER = (
    "INSERT INTO event_covers (event_id, alt, digest, image_1200, image_600, updated_by, "
    "updated_at) VALUES (:event_id, :alt, :digest, :image_1200, :image_600, :account_id, :now) "
    "ON CONFLICT (event_id) DO UPDATE SET alt = excluded.alt, digest = excluded.digest, "
    "image_1200 = excluded.image_1200, image_600 = excluded.image_600, "
    "updated_by = excluded.updated_by, updated_at = excluded.updated_at")
COVER = "SELECT event_id, alt, digest, updated_at FROM event_covers WHERE event_id = :event_id"
PUBLISHED_COVER = (
    "SELECT c.event_id, c.alt, c.digest, c.updated_at FROM event_covers c "
    "JOIN events e ON e.id = c.event_id WHERE c.event_id = :event_id")
# `{width}` is one of COVER_WIDTHS, never a request's text.
COVER_IMAGE = "SELECT digest, image_{width} AS image FROM event_covers WHERE event_id = :event_id"
PUBLISHED_COVER_IMAGE = (
    "SELECT c.digest, c.image_{width} AS image FROM event_covers c "
    "JOIN events e ON e.id = c.event_id WHERE c.event_id = :event_id")
REMOVE_COVER = "DELETE FROM event_covers WHERE event_id = :event_id"


class CoverRecords:
    """The storage methods of events' covers, on the primitives a backend gives
    `records.Records`."""

    dialect: Dialect

    if TYPE_CHECKING:  # what the backend provides (`records.Records` says what each does)
        def _one(self, sql: str, params: dict[str, Any]) -> Row | None: ...

        def _rows(self, sql: str, params: dict[str, Any]) -> Sequence[Row]: ...

        def _run(self, sql: str, params: dict[str, Any]) -> int: ...

    @guarded
    def set_event_cover(self, cover: EventCover, images: Mapping[int, bytes],
                        account_id: str) -> None:
        """Keep `cover` as the event's cover picture, with its renditions by width (one of
        each of COVER_WIDTHS), in place of any it had."""
        self._run(SET_COVER, {
            "event_id": cover.event_id, "alt": cover.alt, "digest": cover.digest,
            **{f"image_{width}": images[width] for width in COVER_WIDTHS},
            "account_id": account_id, "now": self.dialect.moment_in(cover.updated_at)})

    @guarded
    def event_cover(self, event_id: str, published_only: bool = False) -> EventCover | None:
        """The event's cover as pages name it (alt text, digest), without its pictures;
        None without one (or, `published_only`, while the event is a draft)."""
        row = self._one(PUBLISHED_COVER if published_only else COVER, {"event_id": event_id})
        return None if row is None else self._cover(row)

    @guarded
    def cover_image(self, event_id: str, width: int, published_only: bool = False
                    ) -> CoverImage | None:
        """One rendition of the event's cover (`width`: one of COVER_WIDTHS) and its digest;
        None without a cover (or, `published_only`, while the event is a draft)."""
        if width not in COVER_WIDTHS:
            raise ValueError(f"no cover is kept {width} wide")
        sql = PUBLISHED_COVER_IMAGE if published_only else COVER_IMAGE
        row = self._one(sql.format(width=width), {"event_id": event_id})
        # psycopg may hand a bytea over as a memoryview; pages want bytes.
        return None if row is None else CoverImage(digest=row["digest"],
                                                   data=bytes(row["image"]))

    @guarded
    def remove_event_cover(self, event_id: str) -> bool:
        """Take the event's cover away; False when it had none."""
        return self._run(REMOVE_COVER, {"event_id": event_id}) > 0

    def _cover(self, row: Row) -> EventCover:
        return EventCover(event_id=row["event_id"], alt=row["alt"], digest=row["digest"],
                          updated_at=self.dialect.moment_out(row["updated_at"]))
