"""An uploaded picture made safe to show: read by Pillow as what its bytes are (JPEG, PNG or
WebP only, whatever its name or declared type says), refused before it is decoded when it
claims more pixels than a picture here needs (a decompression bomb: a few kilobytes that would
decode into gigabytes), turned upright by its EXIF orientation, then drawn anew at the sizes
pages show. The new JPEGs carry no metadata of the upload (no EXIF, so no GPS position, no
camera serial), and no byte of the upload reaches a visitor.

What it is drawn as is its `Shape`: an event's cover (COVER) or an organization's logo (LOGO),
each a few renditions of one ratio, the picture cut to it around its middle.

JPEG because every browser and every link preview (LINE, Facebook, Slack…) shows it as
og:image. A cover's sizes have the og:image ratio (1200 × 630, 1.91:1), so the page, phones
and previews show the same framing; a logo is square, the shape previews and schema.org's
`logo` expect of one.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from io import BytesIO
from typing import Any

from PIL import Image
from PIL import ImageOps
from PIL import UnidentifiedImageError

# The formats a picture may be uploaded in, by Pillow's name, with their declared types.
UPLOAD_TYPES = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}
# The largest upload taken, in bytes.
MAX_UPLOAD_BYTES = 5 * 1024 * 1024
# The most pixels an upload may have: a 48-megapixel phone photo, and some. A picture
# claiming more is refused from its header, before anything is decoded.
MAX_PIXELS = 50_000_000
JPEG_QUALITY = 85


@dataclass(frozen=True)
class Shape:
    """What a kind of picture is drawn as: its renditions by width, each (width, height) of
    one ratio."""

    sizes: Mapping[int, tuple[int, int]]

    @property
    def largest(self) -> int:
        """The width of the largest rendition."""
        return max(self.sizes)

    @property
    def min_size(self) -> tuple[int, int]:
        """The smallest upload taken: the smallest rendition, without enlarging it."""
        return self.sizes[min(self.sizes)]


# An event's cover: wide screens and link previews, and phones.
COVER = Shape({1200: (1200, 630), 600: (600, 315)})
# An organization's logo: its page and link previews, and beside its name on an event's page.
LOGO = Shape({256: (256, 256), 96: (96, 96)})


class ImageRefused(Exception):
    """The upload cannot be the picture asked for; `reason` says why: "not_an_image",
    "too_many_pixels", "too_small"."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Renditions:
    """A picture as pages show it: a JPEG per width of its shape, and a digest of them all
    for their addresses."""

    images: dict[int, bytes]
    digest: str


def picture_view(alt: str, digest: str, shape: Shape) -> dict[str, Any]:
    """A kept picture as pages show it: what it shows, the digest its addresses carry, and
    the width and height of each rendition of its shape (by width)."""
    return {"alt": alt, "digest": digest,
            "sizes": {width: {"width": size[0], "height": size[1]}
                      for width, size in shape.sizes.items()}}


# What Pillow raises on bytes that only look like an image (truncated, malformed chunks):
# each means the upload is not a picture it can read.
UNREADABLE = (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError)


def renditions(data: bytes, shape: Shape) -> Renditions:
    """The renditions of an uploaded picture (its bytes) in `shape`; ImageRefused if it is
    none (or one too small for it)."""
    try:
        with warnings.catch_warnings():
            # Pillow only warns between MAX_IMAGE_PIXELS and twice that: refuse it too.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(BytesIO(data), formats=list(UPLOAD_TYPES)) as upload:
                # The header's size, read before a pixel is decoded.
                if upload.width * upload.height > MAX_PIXELS:
                    raise ImageRefused("too_many_pixels")
                # A JPEG is decoded at the smallest scale (1/2, 1/4, 1/8) that keeps both
                # sides at least the largest rendition's width, whichever way it turns: a
                # phone's photo then takes a fraction of the time and memory.
                upload.draft("RGB", (shape.largest, shape.largest))
                upload.load()
                picture = _flattened(ImageOps.exif_transpose(upload))
    except ImageRefused:
        raise
    except (Image.DecompressionBombWarning, Image.DecompressionBombError):
        raise ImageRefused("too_many_pixels") from None
    except UNREADABLE:
        raise ImageRefused("not_an_image") from None
    smallest_width, smallest_height = shape.min_size
    if picture.width < smallest_width or picture.height < smallest_height:
        raise ImageRefused("too_small")
    # Halved by whole steps (a box filter, fast) while twice the largest rendition still
    # fits: the resampling that follows then reads a few megapixels, not fifty.
    large_width, large_height = shape.sizes[shape.largest]
    factor = min(picture.width // (2 * large_width), picture.height // (2 * large_height))
    if factor > 1:
        picture = picture.reduce(factor)
    images = {width: _jpeg(ImageOps.fit(picture, size, Image.Resampling.LANCZOS))
              for width, size in shape.sizes.items()}
    digest = hashlib.sha256(b"".join(images[width] for width in sorted(images)))
    return Renditions(images=images, digest=digest.hexdigest()[:16])


def _flattened(picture: Image.Image) -> Image.Image:
    """The picture in RGB, any transparency laid on white (JPEG has none)."""
    if picture.mode in ("RGBA", "LA") or (picture.mode == "P"
                                          and "transparency" in picture.info):
        rgba = picture.convert("RGBA")
        flat = Image.new("RGB", rgba.size, "white")
        flat.paste(rgba, mask=rgba.getchannel("A"))
        return flat
    return picture.convert("RGB")


def _jpeg(picture: Image.Image) -> bytes:
    """The picture as a progressive JPEG, without metadata (nothing is passed on to it)."""
    out = BytesIO()
    picture.save(out, "JPEG", quality=JPEG_QUALITY, optimize=True, progressive=True)
    return out.getvalue()
