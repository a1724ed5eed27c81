"""An uploaded picture made safe to show: read by Pillow as what its bytes are (JPEG, PNG or
WebP only, whatever its name or declared type says), refused before it is decoded when it
claims more pixels than a cover needs (a decompression bomb: a few kilobytes that would
decode into gigabytes), turned upright by its EXIF orientation, then drawn anew at the sizes
pages show. The new JPEGs carry no metadata of the upload (no EXIF, so no GPS position, no
camera serial), and no byte of the upload reaches a visitor.

JPEG because every browser and every link preview (LINE, Facebook, Slack…) shows it as
og:image. Both sizes have the og:image ratio (1200 × 630, 1.91:1): the picture is cut to it
around its middle, so the page, phones and previews show the same framing.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from io import BytesIO

from PIL import Image
from PIL import ImageOps
from PIL import UnidentifiedImageError

# The formats a cover may be uploaded in, by Pillow's name, with their declared types.
UPLOAD_TYPES = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}
# The largest upload taken, in bytes.
MAX_UPLOAD_BYTES = 5 * 1024 * 1024
# The most pixels a cover's upload may have: a 48-megapixel phone photo, and some. A picture
# claiming more is refused from its header, before anything is decoded.
MAX_PIXELS = 50_000_000
# The renditions made, by width; each is cut to the og:image ratio.
RENDITION_SIZES = {1200: (1200, 630), 600: (600, 315)}
LARGEST = max(RENDITION_SIZES)
# The smallest upload taken: the phone rendition, without enlarging it.
MIN_SIZE = RENDITION_SIZES[600]
JPEG_QUALITY = 85


class ImageRefused(Exception):
    """The upload cannot be a cover; `reason` says why: "not_an_image", "too_many_pixels",
    "too_small"."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Renditions:
    """A picture as pages show it: a JPEG per width (RENDITION_SIZES), and a digest of them
    all for their addresses."""

    images: dict[int, bytes]
    digest: str

    def size(self, width: int) -> tuple[int, int]:
        """The width and height of the rendition `width` wide."""
        return RENDITION_SIZES[width]


# What Pillow raises on bytes that only look like an image (truncated, malformed chunks):
# each means the upload is not a picture it can read.
UNREADABLE = (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError)


def renditions(data: bytes) -> Renditions:
    """The renditions of an uploaded picture (its bytes); ImageRefused if it is none."""
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
                upload.draft("RGB", (LARGEST, LARGEST))
                upload.load()
                picture = _flattened(ImageOps.exif_transpose(upload))
    except ImageRefused:
        raise
    except (Image.DecompressionBombWarning, Image.DecompressionBombError):
        raise ImageRefused("too_many_pixels") from None
    except UNREADABLE:
        raise ImageRefused("not_an_image") from None
    if picture.width < MIN_SIZE[0] or picture.height < MIN_SIZE[1]:
        raise ImageRefused("too_small")
    # Halved by whole steps (a box filter, fast) while twice the largest rendition still
    # fits: the resampling that follows then reads a few megapixels, not fifty.
    large_width, large_height = RENDITION_SIZES[LARGEST]
    factor = min(picture.width // (2 * large_width), picture.height // (2 * large_height))
    if factor > 1:
        picture = picture.reduce(factor)
    images = {width: _jpeg(ImageOps.fit(picture, size, Image.Resampling.LANCZOS))
              for width, size in RENDITION_SIZES.items()}
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
