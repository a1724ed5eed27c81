"""The input contracts of uploaded pictures, an event's cover and an organization's logo: the
upload (a file of a multipart form, made into renditions of its shape while it is validated,
so every refusal is a field error under it) and its alt text; and the event whose cover is
taken away (an organization's logo is taken away with `schemas.OrganizationInput`).
"""

from __future__ import annotations

from typing import Any
from typing import Protocol
from typing import TypedDict

from marshmallow import ValidationError
from marshmallow import fields

from .images import COVER
from .images import LOGO
from .images import MAX_UPLOAD_BYTES
from .images import UPLOAD_TYPES
from .images import ImageRefused
from .images import Renditions
from .images import Shape
from .images import renditions
from .schemas import EVENT_ID
from .schemas import ToolInput
from .schemas import VisibleText
from .schemas import _l
from .schemas import length

# The largest upload taken, in the megabytes people read.
MEGABYTES = MAX_UPLOAD_BYTES // (1024 * 1024)
# Why an upload cannot be the picture asked for, as people read it under the field (one too
# small for its shape: `too_small`).
REFUSALS = {
    "type": _l("Choose a JPEG, PNG or WebP picture."),
    "not_an_image": _l("This file is not a JPEG, PNG or WebP picture, whatever its name says. "
                       "Choose another."),
    "too_large": _l("This picture is larger than %(megabytes)d MB. Choose a smaller one.",
                    megabytes=MEGABYTES),
    "too_many_pixels": _l("This picture has too many pixels to be read safely. Save it "
                          "smaller, then choose it again."),
}


def too_small(shape: Shape) -> str:
    """Why an upload too small for `shape` is refused, as people read it."""
    width, height = shape.min_size
    return _l("This picture is too small: give one at least %(width)d × %(height)d pixels.",
              width=width, height=height)


class Upload(Protocol):
    """A file of a form as the web gives it (Werkzeug's FileStorage): what it says it is, and
    its bytes."""

    mimetype: str

    def read(self, size: int = -1, /) -> bytes: ...


class UploadedPicture(fields.Field):  # type: ignore[type-arg]
    """An uploaded picture, loaded as its renditions in `shape` (`images.renditions`): refused,
    with a sentence saying why, unless it declares itself a JPEG, PNG or WebP, is one, is at
    most MAX_UPLOAD_BYTES long, and has neither too many pixels nor too few for the shape."""

    default_error_messages = {"invalid": REFUSALS["type"]}

    def __init__(self, shape: Shape, **kwargs: Any):
        super().__init__(**kwargs)
        self.shape = shape

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
            return renditions(data_read, self.shape)
        except ImageRefused as refused:
            reason = (too_small(self.shape) if refused.reason == "too_small"
                      else REFUSALS[refused.reason])
            raise ValidationError(str(reason)) from None


def picture_file(shape: Shape, label: str) -> UploadedPicture:
    """The file control of a picture of `shape`, which names the types it takes."""
    return UploadedPicture(shape, required=True,
                           metadata={"label": label, "input_type": "file",
                                     "accept": ",".join(UPLOAD_TYPES.values())})


def alt_text(label: str) -> fields.String:
    """The words that say what an uploaded picture shows, for people who cannot see it."""
    return fields.String(required=True, validate=[length(min=1, max=200), VisibleText()],
                         metadata={"label": label, "autocomplete": "off"})


class EventCoverInput(ToolInput):
    """An event's cover picture, uploaded by a member who manages the organization's events,
    with the words that say what it shows."""

    organization_id = fields.String(required=True, validate=length(min=1, max=40))
    event_id = fields.String(required=True, validate=EVENT_ID)
    picture = picture_file(COVER, _l("Cover picture (JPEG, PNG or WebP, at most "
                                     "%(megabytes)d MB)", megabytes=MEGABYTES))
    alt = alt_text(_l("What the picture shows (for people who cannot see it)"))


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


class OrganizationLogoInput(ToolInput):
    """An organization's logo, uploaded by a member who may change the organization, with the
    words that say what it shows (its name, most often)."""

    organization_id = fields.String(required=True, validate=length(min=1, max=40))
    picture = picture_file(LOGO, _l("Logo (JPEG, PNG or WebP, at most %(megabytes)d MB)",
                                    megabytes=MEGABYTES))
    alt = alt_text(_l("What the logo shows (for people who cannot see it)"))


class OrganizationLogoParams(TypedDict):
    """What `OrganizationLogoInput` loads."""

    organization_id: str
    picture: Renditions
    alt: str
