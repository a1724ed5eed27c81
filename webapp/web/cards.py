"""An event's share card: the picture a link preview shows (`og:image`) when someone pastes
the event's address into LINE, Facebook or a chat — its title, when and where, drawn on the
server in the page's language until organizers upload a cover of their own.

The card is drawn with Pillow in a Traditional Chinese face of Noto Sans CJK (Debian's
fonts-noto-cjk): a Latin-only font would draw Chinese as boxes, so without a CJK font the site
offers no card at all (`card_font` is None) rather than a broken one. A card is drawn once
per worker for the same words (`_drawn`) and cached by browsers and previewers for an hour.
"""

from __future__ import annotations

import functools
import io
from pathlib import Path
from typing import Any

from flask import current_app
from PIL import Image
from PIL import ImageDraw
from PIL import ImageFont

# The size link previews ask for (1.91:1).
WIDTH, HEIGHT = 1200, 630
MARGIN = 72
# Where Debian's fonts-noto-cjk puts its faces; each file holds every CJK region's face.
NOTO_CJK = Path("/usr/share/fonts/opentype/noto")
FACE = "Noto Sans CJK TC"
INK, MUTED, PAPER, ACCENT = "#1b1f24", "#59626e", "#ffffff", "#0b57d0"
TITLE_LINES = 3


def card_font() -> Path | None:
    """The bold CJK font file cards are drawn with (`CARD_FONT`, else Debian's), or None."""
    configured = current_app.config.get("CARD_FONT")
    path = Path(configured) if configured else NOTO_CJK / "NotoSansCJK-Bold.ttc"
    return path if path.is_file() else None


def card_png(event: dict[str, Any], when: str, place: str, site: str) -> bytes:
    """The event's card as a PNG: its title, `when` and `place` as the page writes them, and
    the site's name. Call only when `card_font()` found a font."""
    font = card_font()
    assert font is not None, "no card without a CJK font (card_font)"
    return _drawn(str(font), event["title"], when, place, site)


@functools.lru_cache(maxsize=256)
def _drawn(font_path: str, title: str, when: str, place: str, site: str) -> bytes:
    image = Image.new("RGB", (WIDTH, HEIGHT), PAPER)
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, WIDTH, 16), fill=ACCENT)
    width = WIDTH - 2 * MARGIN
    title_font = _face(font_path, 64)
    detail_font = _face(font_path, 36)
    y = MARGIN
    for line in _wrapped(title, title_font, width, TITLE_LINES):
        draw.text((MARGIN, y), line, font=title_font, fill=INK)
        y += 84
    y += 24
    for line in (when, place):
        for part in _wrapped(line, detail_font, width, 1):
            draw.text((MARGIN, y), part, font=detail_font, fill=MUTED)
            y += 52
    draw.text((MARGIN, HEIGHT - MARGIN - 36), site, font=detail_font, fill=ACCENT)
    out = io.BytesIO()
    image.save(out, "PNG", optimize=True)
    return out.getvalue()


def _face(path: str, size: int) -> ImageFont.FreeTypeFont:
    """The font's Traditional Chinese face (a .ttc holds one per region; Taiwan's glyphs are
    TC's), or its first face when it is a single font."""
    for index in range(8):
        try:
            font = ImageFont.truetype(path, size, index=index)
        except OSError:
            break
        if font.getname()[0] == FACE:
            return font
    return ImageFont.truetype(path, size)


def _wrapped(text: str, font: ImageFont.FreeTypeFont, width: int, most: int) -> list[str]:
    """`text` in at most `most` lines of `width` pixels: broken between words, or between
    any two CJK characters, the last line ending in "…" when the text is longer."""
    pieces = _pieces(text)
    lines: list[str] = []
    line = ""
    for piece in pieces:
        if font.getlength(line + piece) <= width or not line:
            line += piece
            continue
        lines.append(line.rstrip())
        line = piece.lstrip()
    lines.append(line.rstrip())
    if len(lines) <= most:
        return lines
    kept, last = lines[:most - 1], lines[most - 1]
    while last and font.getlength(last + "…") > width:
        last = last[:-1]
    return [*kept, last.rstrip() + "…"]


def _pieces(text: str) -> list[str]:
    """The places a line may break: after each word with its space, and after each CJK
    character (Chinese has no spaces between words)."""
    pieces: list[str] = []
    word = ""
    for character in " ".join(text.split()):
        if character == " " or ord(character) >= 0x2E80:
            pieces.append(word + character)
            word = ""
        else:
            word += character
    return [*pieces, word] if word else pieces
