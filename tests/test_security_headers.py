"""Security headers on every response, static files included; asset URLs name their content."""

from __future__ import annotations

import hashlib
import io
from typing import Any
from urllib.parse import parse_qs
from urllib.parse import urlsplit

import pytest
from bs4 import BeautifulSoup
from flask import url_for
from helpers import PROJECT_ROOT
from helpers import attribute
from helpers import page_address
from PIL import Image
from routes import SAMPLE_VALUES

from flask_webmcp import STATIC_URL_PATH
from flask_webmcp.htmx import BRIDGE_SCRIPT
from flask_webmcp.htmx import HTMX_VERSION
from webapp import create_app
from webapp.domain.images import COVER
from webapp.domain.images import LOGO
from webapp.domain.images import renditions
from webapp.storage import EventCover
from webapp.storage import Organization
from webapp.storage import OrganizationLogo
from webapp.storage.connection import get_db
from webapp.web.caching import MAX_AGE


@pytest.mark.parametrize("url", ["/events", "/events?page=0", "/health", "/no-such-page",
                                 "/static/css/site.css", "/static/webmcp/webmcp-bridge.js"])
def test_headers_on_every_response(client, url):
    response = client.get(url)
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"]
    assert "tools=(self)" in response.headers["Permissions-Policy"]


def test_asset_urls_carry_a_content_hash(client):
    soup = BeautifulSoup(client.get("/en/events").data, "html.parser")
    urls = ([attribute(link, "href") for link in soup.find_all("link", rel="stylesheet")]
            + [attribute(script, "src") for script in soup.find_all("script", src=True)])
    paths = [urlsplit(url).path for url in urls]
    assert {f"/static/js/htmx-{HTMX_VERSION}.min.js", f"{STATIC_URL_PATH}/{BRIDGE_SCRIPT}"
            } <= set(paths)
    for url in urls:
        parts = urlsplit(url)
        content = client.get(parts.path).data  # what is served at the address, unversioned
        assert parse_qs(parts.query)["v"] == [hashlib.sha256(content).hexdigest()[:12]], url


HSTS = "Strict-Transport-Security"


def test_https_answers_carry_hsts(client):
    assert client.get("/events", base_url="https://localhost").headers[HSTS] == \
        "max-age=31536000"
    assert HSTS not in client.get("/events").headers  # browsers ignore it over plain HTTP


@pytest.mark.parametrize(("proxies", "expected"), [(1, "max-age=31536000"), (0, None)])
def test_the_scheme_comes_from_trusted_proxies_only(app, proxies, expected):
    """Behind nginx the connection is plain HTTP; its X-Forwarded-Proto says what the client
    used, and only a trusted proxy is believed."""
    behind = create_app({**app.config, "TRUSTED_PROXIES": proxies}).test_client()
    answer = behind.get("/events", headers={"X-Forwarded-Proto": "https",
                                            "X-Forwarded-For": "203.0.113.9"})
    assert answer.headers.get(HSTS) == expected


def test_hsts_can_be_turned_off(app, client):
    app.config["HSTS_MAX_AGE"] = 0
    assert HSTS not in client.get("/events", base_url="https://localhost").headers


# -- what may be cached

PERSONAL = "private, no-store"


def test_personal_pages_and_pages_holding_tokens_are_never_stored(visitor):
    registration = visitor.register("evt-agent-testing")["id"]
    visitor.save()
    # Without JavaScript a prepare lands on the register page showing the review, which holds
    # the confirmation token.
    prepared = visitor.post("/events/evt-webmcp-intro/register",
                            {"attendee_name": "Ann Lee", "email": "ann@example.com"},
                            follow_redirects=True)
    assert 'name="confirmation_token"' in prepared.get_data(as_text=True)
    answers = [visitor.get(page_address(url)) for url in (
        "/registrations", f"/registrations/{registration}", "/saved",
        "/events/evt-webmcp-intro/register",
        "/events/evt-webmcp-intro",  # its save form holds the session's CSRF token
    )] + [prepared, visitor.post_json("/events/evt-semantic-html/save")]
    for answer in answers:
        assert answer.status_code == 200
        assert answer.headers["Cache-Control"] == PERSONAL, answer.request.path


@pytest.mark.parametrize(("url", "cache_control"), [
    ("/en/events", "public, max-age=60"),
    ("/zh-TW/events?query=webmcp&location=taipei", "public, max-age=60"),
    ("/openapi.json", "public, max-age=3600"),
    ("/en/events?page=0", PERSONAL),  # an error: not worth keeping
    ("/en/no-such-page", PERSONAL),
    ("/health", PERSONAL),  # a monitor must reach the app itself
])
def test_public_answers_say_how_long_they_may_be_kept(client, url, cache_control):
    client.get(url)  # a first visit to a language sets its cookie (see the next test)
    for headers in ({}, {"Accept": "application/json"}, {"HX-Request": "true"}):
        assert client.get(url, headers=headers).headers["Cache-Control"] == cache_control


def test_an_answer_that_sets_a_cookie_is_never_public(client):
    """A shared cache would hand the cookie to everyone (here: the visitor's language)."""
    first = client.get("/zh-TW/events")
    assert "language=zh-TW" in first.headers["Set-Cookie"]
    assert first.headers["Cache-Control"] == PERSONAL
    assert client.get("/zh-TW/events").headers["Cache-Control"] == "public, max-age=60"


def public_addresses(app, pictures: dict[str, dict[str, Any]] | None = None) -> list[str]:
    """An address of every GET route declared public (`@public`), in English; `pictures`:
    by endpoint, the values of a picture's own address (its digest and a width it has)."""
    values: dict[str, Any] = {**SAMPLE_VALUES, "event_id": "evt-webmcp-intro", "lang_code": "en"}
    addresses = []
    with app.test_request_context():
        for rule in app.url_map.iter_rules():
            view = app.view_functions[rule.endpoint]
            if getattr(view, MAX_AGE, None) is not None and "GET" in (rule.methods or ()):
                chosen = {**values, **(pictures or {}).get(rule.endpoint, {})}
                addresses.append(url_for(rule.endpoint, **{name: chosen[name]
                                                           for name in rule.arguments}))
    return addresses


def public_organization(app) -> None:
    """Keep an organization under the id of the sample addresses, so its public page is
    there."""
    with app.app_context():
        db, now = get_db(), app.config["CLOCK"]()
        with db.transaction():
            owner = db.account_for("owner@example.com", "acc-owner", "visitor-owner", now)
        db.create_organization(Organization(id=SAMPLE_VALUES["organization_id"],
                                            name="台北網頁開發者聚會", description="",
                                            created_at=now), owner.id)


def public_pictures(app) -> dict[str, dict[str, Any]]:
    """Give the sample event a cover picture and the sample organization (which must be
    there) a logo, so their public renditions answer: the values of their addresses, by
    endpoint."""
    picture = io.BytesIO()
    Image.new("RGB", (1200, 630), (40, 90, 160)).save(picture, "PNG")
    cover, logo = renditions(picture.getvalue(), COVER), renditions(picture.getvalue(), LOGO)
    with app.app_context():
        db, now = get_db(), app.config["CLOCK"]()
        with db.transaction():
            owner = db.account_for("cover@example.com", "acc-cover", "visitor-cover", now)
        db.set_event_cover(EventCover(event_id="evt-webmcp-intro", alt="講者在台上示範",
                                      digest=cover.digest, updated_at=now), cover.images,
                           owner.id)
        db.set_organization_logo(OrganizationLogo(organization_id=SAMPLE_VALUES[
            "organization_id"], alt="台北網頁開發者聚會", digest=logo.digest, updated_at=now),
            logo.images, owner.id)
    return {"covers.cover_image": {"digest": cover.digest, "width": min(COVER.sizes)},
            "covers.logo_image": {"digest": logo.digest, "width": min(LOGO.sizes)}}


def test_a_visitors_answers_are_never_public(app, visitor):
    """Once a visitor has a session, every answer renews its cookie: a shared cache would hand
    their session to everyone (the cookie is set after the answer is made, so looking for
    it in the answer's headers is not enough)."""
    visitor.save()  # the first write makes the visitor, and their session permanent
    public_organization(app)  # the public page of the sample organization answers
    # and the sample event's cover and the organization's logo
    addresses = public_addresses(app, public_pictures(app))
    assert {"/openapi.json", "/robots.txt", "/sitemap.xml", "/en/events",
            "/calendar/evt-webmcp-intro.ics"} <= set(addresses)
    for address in addresses:
        answer = visitor.get(address)
        assert answer.status_code == 200, address
        assert any(cookie.startswith("webmcp_events=")
                   for cookie in answer.headers.getlist("Set-Cookie")), address
        assert answer.headers["Cache-Control"] == PERSONAL, address


def test_a_neutral_address_is_public_where_it_answers_and_never_where_it_redirects(client):
    """JSON and partials are answered at the language-neutral address (they vary by the
    language asked for); a page asked for there is only a redirect to the visitor's language."""
    for headers in ({"Accept": "application/json"}, {"HX-Request": "true"}):
        answer = client.get("/events", headers=headers)
        assert answer.status_code == 200
        assert answer.headers["Cache-Control"] == "public, max-age=60"
        assert "Accept-Language" in answer.headers["Vary"]
    redirect = client.get("/events")
    assert redirect.status_code == 302 and redirect.headers["Cache-Control"] == PERSONAL


def test_static_files_are_kept_for_a_year(client):
    answer = client.get("/static/css/site.css")
    assert answer.headers["Cache-Control"] == "max-age=31536000, public"


def test_the_vendored_htmx_is_the_one_flask_webmcp_is_written_for():
    """The file's name comes from the extension's declaration; its content must agree."""
    vendored = PROJECT_ROOT / "static" / "js" / f"htmx-{HTMX_VERSION}.min.js"
    assert f'this.version="{HTMX_VERSION}"' in vendored.read_text(encoding="utf-8")
