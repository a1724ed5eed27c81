"""A phone's camera at the door, as Chromium fakes it: a still video of a QR code (a Y4M file)
played to a Chromium launched to use it, which grants the camera without asking.

Chromium reads the video's file when it starts, so a test launches this browser once it knows
the code to show, beside the session's `chromium`.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from PIL import Image
from playwright.sync_api import Browser

from .chromium import CHROMIUM
from .chromium import CHROMIUM_ARGS

WIDTH, HEIGHT = 640, 480


def y4m_of(png: bytes, path: Path, frames: int = 5) -> Path:
    """A still video of the image, centred on white, in the Y4M format Chromium's fake camera
    plays (4:2:0, grey: only the luma plane carries the picture)."""
    picture = Image.open(io.BytesIO(png)).convert("L")
    picture.thumbnail((HEIGHT - 40, HEIGHT - 40))
    frame = Image.new("L", (WIDTH, HEIGHT), 255)
    frame.paste(picture, ((WIDTH - picture.width) // 2, (HEIGHT - picture.height) // 2))
    chroma = bytes([128]) * (WIDTH // 2 * HEIGHT // 2 * 2)
    with path.open("wb") as video:
        video.write(f"YUV4MPEG2 W{WIDTH} H{HEIGHT} F10:1 Ip A1:1 C420jpeg\n".encode())
        for _ in range(frames):
            video.write(b"FRAME\n" + frame.tobytes() + chroma)
    return path


@contextmanager
def camera_showing(chromium: Browser, video: Path) -> Iterator[Browser]:
    """Another Chromium, like `chromium`, whose camera films `video` (`y4m_of`); a context
    of it must still be granted the "camera" permission."""
    camera = chromium.browser_type.launch(
        executable_path=str(CHROMIUM), headless=True,
        args=[*CHROMIUM_ARGS, "--use-fake-device-for-media-stream",
              "--use-fake-ui-for-media-stream", f"--use-file-for-fake-video-capture={video}"])
    try:
        yield camera
    finally:
        camera.close()
