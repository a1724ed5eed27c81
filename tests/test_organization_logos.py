"""An organization's logo (issue 30): uploaded on the organization's organizer page by an owner
or a manager, checked and drawn anew as an event's cover is (test_event_covers: the same
pipeline, square), shown on the organization's public page and beside its name on its events'
pages at addresses named by its digest, its page's og:image and schema.org `logo`; and the
organizer area reading no byte of a stranger's upload.
"""

from __future__ import annotations

from io import BytesIO

import pytest
from bs4 import BeautifulSoup
from helpers import Visitor
from helpers import one
from helpers import query_database
from helpers import the_jsonld
from PIL import Image
from test_event_covers import GPS_INFO
from test_event_covers import jpeg
from test_event_covers import og
from test_event_covers import picture
from test_event_covers import png_claiming
from test_event_covers import refusal
from test_organizer_events import draft
from test_organizer_events import publish
from test_organizers import account_id_of
from test_organizers import signed_in
from test_organizers import start
from test_oversized_requests import Body

from webapp.domain.images import COVER
from webapp.domain.images import LOGO
from webapp.domain.images import MAX_UPLOAD_BYTES
from webapp.domain.images import renditions
from webapp.storage import OrganizationLogo
from webapp.storage.connection import get_db
from webapp.storage.covers import COVER_WIDTHS
from webapp.storage.covers import LOGO_WIDTHS

pytestmark = pytest.mark.both_backends

NAME = "台北網頁開發者聚會"
ALT = "台北網頁開發者聚會的標誌：藍底白字 TWD"


def organizer_url(organization_id: str, language: str = "en") -> str:
    return f"/{language}/organizer/organizations/{organization_id}"


def upload(person: Visitor, organization_id: str, data: bytes, name: str = "logo.png",
           kind: str = "image/png", alt: str | None = ALT, language: str = "en"):
    """Send the logo form of the organization's organizer page with `data` as its file."""
    form: dict[str, object] = {"picture": (BytesIO(data), name, kind)}
    if alt is not None:
        form["alt"] = alt
    return person.post(f"{organizer_url(organization_id, language)}/logo", form,
                       content_type="multipart/form-data")


def digest_of(app, organization_id: str) -> str:
    ((digest,),) = query_database(app.config["DATABASE"],
                                  "SELECT digest FROM organization_logos "
                                  "WHERE organization_id = ?", (organization_id,))
    return str(digest)


def logo_url(organization_id: str, digest: str, width: int) -> str:
    return f"/organizations/{organization_id}/logo/{digest}/{width}.jpg"


def page_of(person: Visitor, url: str) -> BeautifulSoup:
    answer = person.get(url)
    assert answer.status_code == 200, url
    return BeautifulSoup(answer.data, "html.parser")


@pytest.fixture
def owned(app):
    """An owner and their organization."""
    owner = signed_in(app)
    return owner, start(owner, NAME, "每月一次，聊網頁標準與無障礙。")


def test_the_shapes_are_the_widths_storage_keeps():
    assert tuple(COVER.sizes) == COVER_WIDTHS and tuple(LOGO.sizes) == LOGO_WIDTHS
    assert all(width == height for width, height in LOGO.sizes.values())


def test_a_logo_is_shown_on_the_organizations_pages_and_beside_its_name(app, owned):
    owner, organization_id = owned
    form_page = page_of(owner, organizer_url(organization_id))
    form = one(form_page, "form[enctype='multipart/form-data']")
    assert str(form["action"]).endswith(f"/organizer/organizations/{organization_id}/logo")
    assert one(form, "input[name=picture]")["type"] == "file"
    # What most logos show is offered as their alt text: the organization's name.
    assert one(form, "input[name=alt]")["value"] == NAME
    assert not form_page.select("[toolname]")

    answer = upload(owner, organization_id, picture((800, 500)))
    assert answer.status_code == 303, answer.get_data(as_text=True)[:500]
    digest = digest_of(app, organization_id)
    large, small = logo_url(organization_id, digest, 256), logo_url(organization_id, digest, 96)
    shown = page_of(owner, organizer_url(organization_id))
    assert one(shown, "[role=status]").get_text(strip=True) == "The logo is saved."
    preview = one(shown, ".organization-logo-preview img")
    assert (preview["src"], preview["alt"]) == (large, ALT)

    visitor = Visitor(app)
    public = page_of(visitor, f"/en/organizations/{organization_id}")
    logo = one(public, ".organization-heading img")
    assert logo["alt"] == ALT and logo["itemprop"] == "logo"
    assert (logo["width"], logo["height"]) == ("256", "256")
    assert logo["src"] == large and logo["srcset"] == f"{small} 96w, {large} 256w"
    assert logo.find_parent(itemtype="https://schema.org/Organization") is not None
    assert og(public, "og:image") == f"http://localhost{large}"
    assert (og(public, "og:image:width"), og(public, "og:image:height")) == ("256", "256")
    assert og(public, "og:image:type") == "image/jpeg"
    assert og(public, "og:image:alt") == ALT
    for width, size in LOGO.sizes.items():
        served = visitor.get(logo_url(organization_id, digest, width))
        assert served.status_code == 200 and served.mimetype == "image/jpeg"
        assert served.headers["Cache-Control"] == "public, max-age=31536000"
        assert served.headers["X-Content-Type-Options"] == "nosniff"
        assert jpeg(served.data).size == size
    assert visitor.get(logo_url(organization_id, "0" * 16, 256)).status_code == 404
    assert visitor.get(logo_url(organization_id, digest, 600)).status_code == 404
    assert visitor.get(logo_url("org-nobody", digest, 256)).status_code == 404

    # Beside the organizer's name on its events' pages, small, inside its schema.org organizer.
    event_id = draft(app, owner, organization_id)
    assert publish(owner, organization_id, event_id).status_code == 303
    event_page = page_of(visitor, f"/zh-TW/events/{event_id}")
    beside = one(event_page, ".event-organizer img")
    assert beside["alt"] == ALT and beside["itemprop"] == "logo"
    assert (beside["width"], beside["height"]) == ("96", "96") and beside["src"] == small
    assert one(event_page, ".event-organizer")["itemprop"] == "organizer"

    # Another picture gets other addresses: the old ones are gone, never stale.
    assert upload(owner, organization_id, picture((300, 300))).status_code == 303
    assert digest_of(app, organization_id) != digest
    assert visitor.get(large).status_code == 404

    # Taken away, the pages show the name alone, and previews no picture of it.
    removed = owner.post(f"{organizer_url(organization_id)}/logo/remove")
    assert removed.status_code == 303
    public = page_of(visitor, f"/en/organizations/{organization_id}")
    assert not public.select("img.organization-logo, meta[property='og:image']")
    assert one(public, "h1").get_text() == NAME
    assert not page_of(visitor, f"/en/events/{event_id}").select(".event-organizer img")
    again = owner.post(f"{organizer_url(organization_id)}/logo/remove", headers={
        "Accept": "application/json"})
    assert again.status_code == 404 and again.get_json()["status"] == "not_found"
    audit = one(page_of(owner, organizer_url(organization_id)), ".activity-list").get_text()
    assert "put up the organization's logo" in audit
    assert "took the organization's logo away" in audit


@pytest.mark.parametrize(("language", "too_small", "type_words"), [
    ("en", "at least 96 × 96 pixels", "not a JPEG, PNG or WebP"),
    ("zh-TW", "96 × 96", "JPEG、PNG 或 WebP"),
])
def test_what_cannot_be_a_logo_is_refused_under_its_field(app, owned, language, too_small,
                                                          type_words):
    owner, organization_id = owned

    def refused(data: bytes, **changes) -> str:
        return refusal(upload(owner, organization_id, data, language=language, **changes))

    not_a_picture = upload(owner, organization_id, b"%PDF-1.7 not a picture", language=language)
    assert type_words in refusal(not_a_picture)
    # The page names the refused form's field, and keeps the alt text typed.
    page = BeautifulSoup(not_a_picture.data, "html.parser")
    assert one(page, "a[href='#set_organization_logo-picture']")
    assert one(page, "#set_organization_logo-alt")["value"] == ALT
    assert one(page, "#set_organization_logo-picture-error").get_text(strip=True)
    assert too_small in refused(picture((95, 400)))
    assert refused(picture(), name="logo.txt", kind="text/plain")
    assert refused(png_claiming(100_000, 100_000))  # a bomb: refused from its header
    assert refused(picture() + b"\0" * MAX_UPLOAD_BYTES)
    assert refusal(upload(owner, organization_id, picture(), alt="  ", language=language),
                   "alt")
    assert query_database(app.config["DATABASE"],
                          "SELECT count(*) FROM organization_logos") == [(0,)]


def test_the_logo_is_square_upright_and_loses_its_metadata(app, owned):
    owner, organization_id = owned
    exif = Image.Exif()
    exif[0x0112] = 6  # shown turned a quarter clockwise: the red half on top
    exif.get_ifd(GPS_INFO).update({1: "N", 2: (25.0, 2.0, 3.0), 3: "E", 4: (121.0, 33.0, 4.0)})
    taken = picture((1000, 1000), kind="JPEG", exif=exif)
    assert upload(owner, organization_id, taken, name="IMG_0001.jpg",
                  kind="image/jpeg").status_code == 303
    digest = digest_of(app, organization_id)
    for width in LOGO.sizes:
        served = Visitor(app).get(logo_url(organization_id, digest, width)).data
        image = jpeg(served)
        assert image.size == (width, width)
        assert b"Exif" not in served and not image.getexif()
        top, bottom = (image.convert("RGB").getpixel((width // 2, y))
                       for y in (3, image.height - 3))
        assert isinstance(top, tuple) and isinstance(bottom, tuple)
        assert top[0] > 150 > top[2] and bottom[2] > 150 > bottom[0], (top, bottom)


def test_managers_change_the_logo_and_the_door_staff_do_not(app, owned):
    owner, organization_id = owned
    manager, door = signed_in(app), signed_in(app)
    with app.app_context():
        for person, role in ((manager, "manager"), (door, "check_in")):
            get_db().add_member(organization_id, account_id_of(app, person), role,
                                app.config["CLOCK"]())
    assert upload(manager, organization_id, picture()).status_code == 303
    assert one(page_of(manager, organizer_url(organization_id)), "#logo-title")
    refused = upload(door, organization_id, picture())
    assert refused.status_code == 404
    assert door.post(f"{organizer_url(organization_id)}/logo/remove").status_code == 404
    stranger = signed_in(app)
    assert upload(stranger, organization_id, picture()).status_code == 404
    assert len(query_database(app.config["DATABASE"],
                              "SELECT digest FROM organization_logos")) == 1


def upload_path(organization_id: str, event_id: str) -> list[str]:
    """The organizer area's two upload routes: the logo's and an event's cover's."""
    home = organizer_url(organization_id)
    return [f"{home}/logo", f"{home}/events/{event_id}/cover"]


def test_a_strangers_upload_is_refused_before_a_byte_of_it_is_read(app, owned):
    """Without a member's session (signed out, or of no member), the organizer area refuses an
    upload before its body is read: its CSRF token is in the body, and is checked after."""
    owner, organization_id = owned
    event_id = draft(app, owner, organization_id)
    length = 3 * 1024 * 1024  # a picture's worth: under the routes' own limit
    prefix = b'--B\r\nContent-Disposition: form-data; name="alt"\r\n\r\n'
    for person, status in ((Visitor(app), 403), (signed_in(app), 404)):
        for url in upload_path(organization_id, event_id):
            body = Body(prefix, declared=length, length=length)
            answer = person.client.post(url, input_stream=body, headers={
                "Content-Type": "multipart/form-data; boundary=B"})
            assert answer.status_code == status, (url, answer.status_code)
            assert body.read_bytes == 0, url
    # A member's request is let in, then its token checked: a wrong one is refused.
    for url in upload_path(organization_id, event_id):
        answer = owner.post(url, {"alt": ALT, "csrf_token": "forged"}, csrf=False,
                            content_type="multipart/form-data")
        assert answer.status_code == 401, url
        assert the_jsonld(answer.data)["status"] == "session_expired"
    assert query_database(app.config["DATABASE"],
                          "SELECT count(*) FROM organization_logos") == [(0,)]


def test_storage_keeps_replaces_and_removes_a_logo(app, owned):
    """Both backends keep the renditions as given, and read one by width."""
    owner, organization_id = owned
    made = renditions(picture((400, 400)), LOGO)
    with app.app_context():
        db, now = get_db(), app.config["CLOCK"]()
        account_id = account_id_of(app, owner)
        assert db.organization_logo(organization_id) is None
        assert db.logo_image(organization_id, 256) is None
        logo = OrganizationLogo(organization_id=organization_id, alt=ALT, digest=made.digest,
                                updated_at=now)
        with db.transaction():
            db.set_organization_logo(logo, made.images, account_id)
        assert db.organization_logo(organization_id) == logo
        for width in LOGO_WIDTHS:
            image = db.logo_image(organization_id, width)
            assert image is not None
            assert (image.digest, image.data) == (made.digest, made.images[width])
        with pytest.raises(ValueError):
            db.logo_image(organization_id, 1200)
        other = renditions(picture((300, 300), kind="JPEG"), LOGO)
        with db.transaction():
            db.set_organization_logo(OrganizationLogo(organization_id, "另一個", other.digest,
                                                      now), other.images, account_id)
        replaced = db.organization_logo(organization_id)
        assert replaced is not None and (replaced.alt, replaced.digest) == ("另一個",
                                                                            other.digest)
        assert db.remove_organization_logo(organization_id)
        assert not db.remove_organization_logo(organization_id)
        assert db.organization_logo(organization_id) is None
