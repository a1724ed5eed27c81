"""The input contracts of an event's cover picture: the upload (a file of a multipart form,
made into renditions while it is validated, so every refusal is a field error under it) and
its alt text; and the event whose cover is taken away.
"""

from __future__ import annotations

from typing import Any
from typing import Protocol
from typing import TypedDict

from marshmallow import ValidationError
from marshmallow import fields

from .images import MAX_UPLOAD_BYTES
from .images import MIN_SIZE
from .images import UPLOAD_TYPES
from .images import ImageRefused
from .images import Renditions
from .images import renditions
from .schemas import EVENT_ID
from .schemas import ToolInput
from .schemas import VisibleText
from .schemas import _l
from .schemas import length

# Why an upload cannot be a cover, as people read it under the field.
REFUSALS = {
    "type": _l("Choose a JPEG, PNG or WebP picture."),
    "not_an_image": _l("This file is not a JPEG, PNG or WebP picture, whatever its name says. "
                       "Choose another."),
    "too_large": _l("This picture is larger than %(megabytes)d MB. Choose a smaller one.",
                    megabytes=MAX_UPLOAD_BYTES // (1024 * 1024)),
    "too_many_pixels": _l("This picture has too many pixels to be read safely. Save it "
                          "smaller, then choose it again."),
    "too_small": _l("This picture is too small: give one at least %(width)d × %(height)d "
                    "pixels.", width=MIN_SIZE[0], height=MIN_SIZE[1]),
}


class Upload(Protocol):
    """A file of a form as the web gives it (Werkzeug's FileStorage): what it says it is, and
    its bytes."""

    mimetype: str

    def read(self, size: int = -1, /) -> bytes: ...


class CoverPicture(fields.Field):  # type: ignore[type-arg]
    """An uploaded picture, loaded as its renditions (`images.renditions`): refused, with a
    sentence saying why, unless it declares itself a JPEG, PNG or WebP, is one, is at most
    MAX_UPLOAD_BYTES long, and has neither too many pixels nor too few."""

    default_error_messages = {"invalid": REFUSALS["type"]}

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any
                     ) -> Renditions:
        if not hasattr(value, "read") or not hasattr(value, "mimetype"):
            raise self.make_error("invalid")
        upload: Upload = value
        if upload.mimetype not in UPLOAD_TYPES.values():
            raise ValidationError(str(REFUSALS["type"]))
        # One byte past the limit tells a picture too large without reading all of it.
        data_read = upload.read(MAX_UPLOAD_BYTES + 1)
        if len(data_read) > MAX_UPLOAD_BYTES:
            raise ValidationError(str(REFUSALS["too_large"]))
        try:
            return renditions(data_read)
        except ImageRefused as refused:
            raise ValidationError(str(REFUSALS[refused.reason])) from None


class EventCoverInput(ToolInput):
    """An event's cover picture, uploaded by a member who manages the organization's events,
    with the words that say what it shows."""

    organization_id = fields.String(required=True, validate=length(min=1, max=40))
    event_id = fields.String(required=True, validate=EVENT_ID)
    picture = CoverPicture(
        required=True,
        metadata={"label": _l("Cover picture (JPEG, PNG or WebP, at most %(megabytes)d MB)",
                              megabytes=MAX_UPLOAD_BYTES // (1024 * 1024)),
                  "input_type": "file", "accept": ",".join(UPLOAD_TYPES.values())})
    alt = fields.String(
        required=True, validate=[length(min=1, max=200), VisibleText()],
        metadata={"label": _l("What the picture shows (for people who cannot see it)"),
                  "autocomplete": "off"})


class EventCoverParams(TypedDict):
    """What `EventCoverInput` loads."""

    organization_id: str
    event_id: str
    picture: Renditions
    alt: str


class EventOfOrganizationInput(ToolInput):
    """An event of an organization's (taking its cover away: a person's action)."""

    organization_id = fields.String(required=True, validate=length(min=1, max=40))
    event_id = fields.String(required=True, validate=EVENT_ID)


class EventOfOrganizationParams(TypedDict):
    """What `EventOfOrganizationInput` loads."""

    organization_id: str
    event_id: str
