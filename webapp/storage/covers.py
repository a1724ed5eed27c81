"""Pictures people upload, as the site keeps them: events' cover pictures and organizations'
logos, one table each (`PictureTable`) and the same statements on both.

A cover is one row of `event_covers`, keyed by the event's id, which a draft keeps when it is
published: the same row serves the draft's preview and, once published, its public page. A
logo is one row of `organization_logos`, keyed by the organization's id; an organization's
page is public from its start, and so is its logo. Each row's renditions are stored as the
bytes the site made of the upload (`domain.images`); a page reads only the alt text and the
digest, and the picture's address reads one rendition. Only a published event's cover is
served publicly: the public read joins `events`, where no draft is.
Written once for both backends on the primitives `records.Records` names; `Records` inherits
this class.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING
from typing import Any

from . import CoverImage
from . import EventCover
from . import OrganizationLogo
from .dialect import Dialect
from .dialect import guarded

Row = Mapping[str, Any]

# The widths a cover is kept at, each a column of its own (`image_<width>`).
COVER_WIDTHS = (1200, 600)
# The widths (and heights: it is square) a logo is kept at.
LOGO_WIDTHS = (256, 96)


@dataclass(frozen=True)
class PictureTable:
    """Where one kind of picture is kept: its table, the column naming what it belongs to
    (its key), the widths of its renditions (a column `image_<width>` each), and what a
    public read joins so that only what is public is found ("": everything is)."""

    table: str
    key: str
    widths: tuple[int, ...]
    public_join: str = ""

    def keep(self) -> str:
        """The statement that keeps a picture in place of any its owner had."""
        images = [f"image_{width}" for width in self.widths]
        return (f"INSERT INTO {self.table} ({self.key}, alt, digest, {', '.join(images)}, "
                f"updated_by, updated_at) VALUES (:key, :alt, :digest, "
                f"{', '.join(':' + image for image in images)}, :account_id, :now) "
                f"ON CONFLICT ({self.key}) DO UPDATE SET alt = excluded.alt, "
                f"digest = excluded.digest, "
                + "".join(f"{image} = excluded.{image}, " for image in images)
                + "updated_by = excluded.updated_by, updated_at = excluded.updated_at")

    def read(self, columns: str, public_only: bool) -> str:
        """The statement reading `columns` (of the table, as `p`) of one owner's picture."""
        join = self.public_join if public_only else ""
        return f"SELECT {columns} FROM {self.table} p {join} WHERE p.{self.key} = :key"

    def remove(self) -> str:
        """The statement that takes an owner's picture away."""
        return f"DELETE FROM {self.table} WHERE {self.key} = :key"


COVERS = PictureTable("event_covers", "event_id", COVER_WIDTHS,
                      public_join="JOIN events e ON e.id = p.event_id")
LOGOS = PictureTable("organization_logos", "organization_id", LOGO_WIDTHS)


class CoverRecords:
    """The storage methods of events' covers and organizations' logos, on the primitives a
    backend gives `records.Records`."""

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
        self._keep(COVERS, cover.event_id, cover.alt, cover.digest, cover.updated_at, images,
                   account_id)

    @guarded
    def event_cover(self, event_id: str, published_only: bool = False) -> EventCover | None:
        """The event's cover as pages name it (alt text, digest), without its pictures;
        None without one (or, `published_only`, while the event is a draft)."""
        row = self._described(COVERS, event_id, published_only)
        return None if row is None else EventCover(event_id=event_id, **row)

    @guarded
    def cover_image(self, event_id: str, width: int, published_only: bool = False
                    ) -> CoverImage | None:
        """One rendition of the event's cover (`width`: one of COVER_WIDTHS) and its digest;
        None without a cover (or, `published_only`, while the event is a draft)."""
        return self._image(COVERS, event_id, width, published_only)

    @guarded
    def remove_event_cover(self, event_id: str) -> bool:
        """Take the event's cover away; False when it had none."""
        return self._run(COVERS.remove(), {"key": event_id}) > 0

    @guarded
    def set_organization_logo(self, logo: OrganizationLogo, images: Mapping[int, bytes],
                              account_id: str) -> None:
        """Keep `logo` as the organization's logo, with its renditions by width (one of each
        of LOGO_WIDTHS), in place of any it had."""
        self._keep(LOGOS, logo.organization_id, logo.alt, logo.digest, logo.updated_at,
                   images, account_id)

    @guarded
    def organization_logo(self, organization_id: str) -> OrganizationLogo | None:
        """The organization's logo as pages name it (alt text, digest), without its
        pictures; None without one."""
        row = self._described(LOGOS, organization_id, public_only=False)
        return None if row is None else OrganizationLogo(organization_id=organization_id, **row)

    @guarded
    def logo_image(self, organization_id: str, width: int) -> CoverImage | None:
        """One rendition of the organization's logo (`width`: one of LOGO_WIDTHS) and its
        digest; None without a logo."""
        return self._image(LOGOS, organization_id, width, public_only=False)

    @guarded
    def remove_organization_logo(self, organization_id: str) -> bool:
        """Take the organization's logo away; False when it had none."""
        return self._run(LOGOS.remove(), {"key": organization_id}) > 0

    def _keep(self, table: PictureTable, key: str, alt: str, digest: str, at: datetime,
              images: Mapping[int, bytes], account_id: str) -> None:
        self._run(table.keep(), {
            "key": key, "alt": alt, "digest": digest,
            **{f"image_{width}": images[width] for width in table.widths},
            "account_id": account_id, "now": self.dialect.moment_in(at)})

    def _described(self, table: PictureTable, key: str, public_only: bool
                   ) -> dict[str, Any] | None:
        """A picture's alt text, digest and when it was put up (what its dataclass holds
        besides its key), or None."""
        row = self._one(table.read("p.alt, p.digest, p.updated_at", public_only), {"key": key})
        return None if row is None else {
            "alt": row["alt"], "digest": row["digest"],
            "updated_at": self.dialect.moment_out(row["updated_at"])}

    def _image(self, table: PictureTable, key: str, width: int, public_only: bool
               ) -> CoverImage | None:
        if width not in table.widths:
            raise ValueError(f"no picture of {table.table} is kept {width} wide")
        # `width` is one of the table's widths, never a request's text.
        row = self._one(table.read(f"p.digest, p.image_{width} AS image", public_only),
                        {"key": key})
        # psycopg may hand a bytea over as a memoryview; pages want bytes.
        return None if row is None else CoverImage(digest=row["digest"],
                                                   data=bytes(row["image"]))
