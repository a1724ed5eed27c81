"""An event's cover picture (issue 30): uploaded by a member who manages the organization's
events, checked (its declared type, what its bytes are, its length, its pixels), drawn anew
without the upload's metadata, served at the sizes pages need, and the event's og:image once
it is published. A draft's cover is seen in the organizer area alone.

The pictures are made with Pillow here, so each test knows what the site was given.
"""

from __future__ import annotations

import resource
import struct
import zlib
from io import BytesIO

import pytest
from bs4 import BeautifulSoup
from helpers import Visitor
from helpers import one
from helpers import query_database
from helpers import the_jsonld
from PIL import Image
from test_organizer_events import draft
from test_organizer_events import events_url
from test_organizer_events import publish
from test_organizers import signed_in
from test_organizers import start

from webapp.domain.images import COVER
from webapp.domain.images import MAX_UPLOAD_BYTES

pytestmark = pytest.mark.both_backends

ALT = "講者在台上示範螢幕閱讀器，台下約三十位聽眾"
RED, BLUE = (220, 30, 30), (30, 30, 220)
GPS_INFO = 0x8825
ORIENTATION = 0x0112


def picture(size=(1600, 900), kind="PNG", exif: Image.Exif | None = None) -> bytes:
    """A picture of `size`: its left half red, its right half blue."""
    image = Image.new("RGB", size, BLUE)
    image.paste(RED, (0, 0, size[0] // 2, size[1]))
    out = BytesIO()
    image.save(out, kind, **({"exif": exif} if exif is not None else {}))
    return out.getvalue()


def png_claiming(width: int, height: int) -> bytes:
    """A valid PNG of a few hundred bytes whose header claims `width` × `height` pixels: a
    decompression bomb, if anything decoded it."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"\0" * 4096)) + chunk(b"IEND", b""))


def cover_url(organization_id: str, event_id: str) -> str:
    return f"{events_url(organization_id)}/{event_id}/cover"


def upload(person: Visitor, organization_id: str, event_id: str, data: bytes,
           name: str = "cover.png", kind: str = "image/png", alt: str | None = ALT):
    """Send the cover form with `data` as the picture's file."""
    form: dict[str, object] = {"picture": (BytesIO(data), name, kind)}
    if alt is not None:
        form["alt"] = alt
    return person.post(cover_url(organization_id, event_id), form,
                       content_type="multipart/form-data")


def digest_of(app, event_id: str) -> str:
    ((digest,),) = query_database(app.config["DATABASE"],
                                  "SELECT digest FROM event_covers WHERE event_id = ?",
                                  (event_id,))
    return str(digest)


def public_url(event_id: str, digest: str, width: int) -> str:
    return f"/events/{event_id}/cover/{digest}/{width}.jpg"


def jpeg(data: bytes) -> Image.Image:
    image = Image.open(BytesIO(data))
    assert image.format == "JPEG"
    return image


def og(page: BeautifulSoup, name: str) -> str:
    return str(one(page, f"meta[property='{name}']")["content"])


@pytest.fixture
def drafted(app):
    """A manager, their organization and a draft of it."""
    manager = signed_in(app)
    organization_id = start(manager)
    return manager, organization_id, draft(app, manager, organization_id)


def test_a_cover_is_shown_at_its_sizes_and_becomes_the_og_image_once_published(app, drafted):
    manager, organization_id, event_id = drafted
    form = BeautifulSoup(manager.get(cover_url(organization_id, event_id)).data, "html.parser")
    assert one(form, "form[enctype='multipart/form-data']")
    assert one(form, "input[name=picture]")["type"] == "file"
    assert not form.select("[toolname]")

    answer = upload(manager, organization_id, event_id, picture())
    assert answer.status_code == 303, answer.get_data(as_text=True)[:500]
    shown = BeautifulSoup(manager.get(cover_url(organization_id, event_id)).data,
                          "html.parser")
    assert one(shown, ".event-cover img")["alt"] == ALT
    for width, size in COVER.sizes.items():
        image = manager.get(f"{cover_url(organization_id, event_id)}/{width}.jpg")
        assert image.status_code == 200 and image.mimetype == "image/jpeg"
        assert image.headers["Cache-Control"] == "private, no-store"
        assert jpeg(image.data).size == size
    # The draft's preview shows it as its page will, from the organizer area's address.
    preview = BeautifulSoup(manager.get(f"{events_url(organization_id)}/{event_id}").data,
                            "html.parser")
    previewed = one(preview, ".event-cover img")
    assert previewed["alt"] == ALT
    assert previewed["src"] == f"{cover_url(organization_id, event_id)}/600.jpg"
    # A draft's cover is nobody else's: not at its public address either.
    digest = digest_of(app, event_id)
    visitor = Visitor(app)
    assert visitor.get(public_url(event_id, digest, 1200)).status_code == 404

    assert publish(manager, organization_id, event_id).status_code == 303
    page = BeautifulSoup(visitor.get(f"/en/events/{event_id}").data, "html.parser")
    large = public_url(event_id, digest, 1200)
    assert og(page, "og:image") == f"http://localhost{large}"
    assert og(page, "og:image:alt") == ALT
    assert og(page, "og:image:type") == "image/jpeg"
    assert (og(page, "og:image:width"), og(page, "og:image:height")) == ("1200", "630")
    cover = one(page, ".event-cover img")
    assert cover["alt"] == ALT and cover["loading"] == "lazy"
    assert (cover["width"], cover["height"]) == ("600", "315")
    assert cover["srcset"] == f"{public_url(event_id, digest, 600)} 600w, {large} 1200w"
    assert cover["sizes"]
    for width, size in COVER.sizes.items():
        served = visitor.get(public_url(event_id, digest, width))
        assert served.status_code == 200 and served.mimetype == "image/jpeg"
        assert served.headers["Cache-Control"] == "public, max-age=31536000"
        assert served.headers["X-Content-Type-Options"] == "nosniff"
        assert jpeg(served.data).size == size
    assert visitor.get(public_url(event_id, "0" * 16, 1200)).status_code == 404
    assert visitor.get(public_url(event_id, digest, 800)).status_code == 404

    # Another picture gets other addresses: the old ones are gone, never stale.
    assert upload(manager, organization_id, event_id, picture((1200, 700))).status_code == 303
    assert digest_of(app, event_id) != digest
    assert visitor.get(large).status_code == 404

    # Taken away, the page shows none and its previews show the site's card again.
    assert manager.post(f"{cover_url(organization_id, event_id)}/remove").status_code == 303
    page = BeautifulSoup(visitor.get(f"/en/events/{event_id}").data, "html.parser")
    assert not page.select(".event-cover")
    assert page.select("meta[property='og:image']") == [] or \
        og(page, "og:image").endswith(f"/events/{event_id}/card.png")
    audit = BeautifulSoup(manager.get(f"/en/organizer/organizations/{organization_id}").data,
                          "html.parser").select_one(".activity-list")
    assert audit is not None
    title = one(page, "h1").get_text(strip=True)
    assert f"put up the cover picture of “{title}”" in audit.get_text()
    assert f"took the cover picture of “{title}” away" in audit.get_text()


def refusal(answer, field: str = "picture") -> str:
    """The one sentence the cover form was refused with, under `field`."""
    assert answer.status_code in (400, 422), answer.status_code
    result = the_jsonld(answer.data)
    assert result["status"] == "invalid_input"
    return " ".join(result["errors"][field])


def test_what_is_not_a_picture_is_refused_under_its_field(app, drafted):
    manager, organization_id, event_id = drafted
    not_a_picture = upload(manager, organization_id, event_id, b"%PDF-1.7 not a picture at all",
                           name="cover.png", kind="image/png")
    assert "not a JPEG, PNG or WebP" in refusal(not_a_picture)
    # What was typed stays in the form.
    kept = BeautifulSoup(not_a_picture.data, "html.parser")
    assert one(kept, "input[name=alt]")["value"] == ALT
    declared_as_text = upload(manager, organization_id, event_id, picture(), name="cover.txt",
                              kind="text/plain")
    assert "Choose a JPEG, PNG or WebP" in refusal(declared_as_text)
    gif = BytesIO()
    Image.new("RGB", (800, 600)).save(gif, "GIF")
    assert "not a JPEG, PNG or WebP" in refusal(
        upload(manager, organization_id, event_id, gif.getvalue(), name="cover.png"))
    assert "too small" in refusal(upload(manager, organization_id, event_id,
                                         picture((400, 300))))
    assert refusal(upload(manager, organization_id, event_id, picture(), alt=None), "alt")
    assert "200" in refusal(upload(manager, organization_id, event_id, picture(),
                                           alt="字" * 201), "alt")
    assert refusal(manager.post(cover_url(organization_id, event_id), {"alt": ALT},
                                content_type="multipart/form-data"))
    assert query_database(app.config["DATABASE"], "SELECT count(*) FROM event_covers") == [(0,)]


def test_a_picture_too_large_is_refused_with_a_sentence_then_unread(app, drafted):
    manager, organization_id, event_id = drafted
    too_long = picture() + b"\0" * MAX_UPLOAD_BYTES
    assert "larger than 5 MB" in refusal(upload(manager, organization_id, event_id, too_long))
    # Past twice the limit the body is not read at all, as any too large body.
    far_too_long = b"\0" * (2 * MAX_UPLOAD_BYTES + 1)
    answer = upload(manager, organization_id, event_id, far_too_long)
    assert answer.status_code == 413
    assert the_jsonld(answer.data)["errors"] == {"_schema": ["The request is too large."]}


def test_a_decompression_bomb_is_refused_from_its_header(app, drafted):
    manager, organization_id, event_id = drafted
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # 100 000 × 100 000 pixels: 30 GB decoded, from a file of a few hundred bytes.
    answer = upload(manager, organization_id, event_id, png_claiming(100_000, 100_000))
    assert "too many pixels" in refusal(answer)
    # Between Pillow's own limit and ours: refused as well, still undecoded.
    assert "too many pixels" in refusal(upload(manager, organization_id, event_id,
                                               png_claiming(10_000, 6_000)))
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 100 * 1024


def test_the_upload_is_turned_upright_and_loses_its_metadata(app, drafted):
    manager, organization_id, event_id = drafted
    exif = Image.Exif()
    exif[ORIENTATION] = 6  # shown turned a quarter clockwise: the red half on top
    exif.get_ifd(GPS_INFO).update({1: "N", 2: (25.0, 2.0, 3.0), 3: "E", 4: (121.0, 33.0, 4.0)})
    taken = picture(kind="JPEG", exif=exif)
    assert Image.open(BytesIO(taken)).getexif().get_ifd(GPS_INFO)  # the camera's position
    upload(manager, organization_id, event_id, taken, name="IMG_0001.jpg", kind="image/jpeg")
    for width in COVER.sizes:
        served = manager.get(f"{cover_url(organization_id, event_id)}/{width}.jpg").data
        image = jpeg(served)
        assert "exif" not in image.info and not image.getexif()
        assert not image.getexif().get_ifd(GPS_INFO)
        assert b"Exif" not in served
        top, bottom = (image.convert("RGB").getpixel((width // 2, y))
                       for y in (5, image.height - 5))
        assert isinstance(top, tuple) and isinstance(bottom, tuple)
        assert top[0] > 150 > top[2] and bottom[2] > 150 > bottom[0], (top, bottom)
