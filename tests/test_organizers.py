"""The organizer area, first part: organizations, their people's roles, and the rule that the
area refuses everything that is not let in (issue 30).

The matrices come from the declarations: every rule of the app under the organizer prefix,
every role of the role table, every right a route declares.
"""

from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup
from flask import Flask
from helpers import Visitor
from helpers import one
from helpers import query_database
from helpers import the_jsonld
from routes import SAMPLE_VALUES
from test_accounts import Inbox
from test_accounts import sign_in

from webapp.domain.organizers import ROLE_RIGHTS
from webapp.domain.organizers import ROLES
from webapp.domain.organizers import may
from webapp.storage.connection import get_db
from webapp.web.organizer import NEEDS

pytestmark = pytest.mark.both_backends

PREFIX = re.compile(r"^(/<language:lang_code>)?/organizer/")


def organizer_rules(app: Flask) -> list[tuple[str, str, str]]:
    """Every (address, method, endpoint) the app answers under the organizer prefix, in every
    language, with a sample value for each argument."""
    addresses = app.url_map.bind("localhost")
    found = []
    for rule in app.url_map.iter_rules():
        if not PREFIX.match(rule.rule):
            continue
        values = {name: ("zh-TW" if name == "lang_code" else SAMPLE_VALUES[name])
                  for name in rule.arguments}
        url = addresses.build(rule.endpoint, values, append_unknown=False)
        if "lang_code" in rule.arguments and not url.startswith("/zh-TW/"):
            url = "/zh-TW" + url
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            found.append((url, method, rule.endpoint))
    return found


def ask(person: Visitor, method: str, url: str):
    """`person`'s answer to `method` at `url`, after the one redirect a neutral address makes
    to its language's (which says nothing of the area: every address gets it)."""
    answer = person.post(url, {}) if method == "POST" else person.get(url)
    if method == "GET" and answer.status_code == 302:
        assert re.fullmatch(r"/(en|zh-TW)" + re.escape(url), answer.headers["Location"])
        answer = person.get(answer.headers["Location"])
    return answer


def signed_in(app) -> Visitor:
    """A new browser, signed in with an address of its own (from the link mailed to it)."""
    person = Visitor(app)
    sign_in(app, Inbox(), person, person.email)
    return person


def start(person: Visitor, name: str = "台北網頁開發者聚會", description: str = "") -> str:
    """Start an organization as `person`: its id."""
    answer = person.post("/organizer/organizations", {"name": name, "description": description})
    assert answer.status_code == 303, answer.get_data(as_text=True)[:300]
    found = re.search(r"/organizer/organizations/(org-[\w-]+)$", answer.headers["Location"])
    assert found, answer.headers["Location"]
    return found.group(1)


def account_id_of(app, person: Visitor) -> str:
    """The id of the account `person` signed in to."""
    ((found,),) = query_database(app.config["DATABASE"],
                                 "SELECT id FROM accounts WHERE email = ?", (person.email,))
    return str(found)


def test_the_role_table():
    """Owners hold every right; managers all but the organization's people and audit log;
    door staff only the check-in."""
    assert ROLES == ("owner", "manager", "check_in")
    everything = set().union(*ROLE_RIGHTS.values())
    assert ROLE_RIGHTS["owner"] == everything
    assert everything - ROLE_RIGHTS["manager"] == {"read_audit_log", "manage_members"}
    assert ROLE_RIGHTS["check_in"] == {"check_in"}
    assert not may(None, "check_in") and not may("visitor", "check_in")


def test_the_area_has_rules_to_walk(app):
    endpoints = {endpoint for _url, _method, endpoint in organizer_rules(app)}
    assert {"organizer.dashboard", "organizer.organization",
            "organizer.create_organization"} <= endpoints
    assert all(hasattr(app.view_functions[endpoint], NEEDS) for endpoint in endpoints)


def test_without_a_session_every_rule_is_refused(app, visitor):
    """Deny by default: a page sends the browser to sign in, anything else is refused, and
    nothing of the area is shown."""
    for url, method, _endpoint in organizer_rules(app):
        answer = ask(visitor, method, url)
        if method == "GET":
            assert answer.status_code == 303, url
            assert answer.headers["Location"].endswith("/sign-in"), url
        else:
            assert answer.status_code == 401, (url, method)
            assert the_jsonld(answer.data)["status"] == "session_expired"
        assert answer.headers["Cache-Control"] == "private, no-store"


def test_a_view_that_declares_nothing_is_not_found(app):
    """A view added to the area without saying what it needs is refused, signed in or not."""
    app.add_url_rule("/<language:lang_code>/organizer/forgotten",
                     endpoint="organizer.forgotten", view_func=lambda: "secret")
    person = signed_in(app)
    answer = person.get("/en/organizer/forgotten")
    assert answer.status_code == 404 and b"secret" not in answer.data


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_a_person_starts_an_organization_and_owns_it(app, language):
    person = signed_in(app)
    empty = BeautifulSoup(person.get(f"/{language}/organizer/").data, "html.parser")
    assert empty.select_one(".empty-state") is not None
    form_page = BeautifulSoup(person.get(f"/{language}/organizer/organizations/new").data,
                              "html.parser")
    form = one(form_page, "form.stacked-form")
    assert not form.has_attr("toolname")
    organization_id = start(person, "台北網頁開發者聚會", "每月一次的網頁技術聚會")
    page = BeautifulSoup(person.get(f"/{language}/organizer/organizations/{organization_id}")
                         .data, "html.parser")
    heading = one(page, "h1")
    assert heading.get_text() == "台北網頁開發者聚會"
    # Chinese text on the English page is marked as Chinese; on the Chinese page it is not.
    assert (heading.get("lang") == "zh-Hant-TW") == (language == "en")
    rows = [row.get_text(" ", strip=True) for row in page.select(".member-list li")]
    assert len(rows) == 1 and person.email in rows[0]
    assert ("Owner" if language == "en" else "擁有者") in rows[0]
    audit = one(page, ".activity-list").get_text()
    assert person.email in audit
    assert ("started the organization" if language == "en" else "建立了這個組織") in audit
    dashboard = BeautifulSoup(person.get(f"/{language}/organizer/").data, "html.parser")
    link = one(dashboard, ".organization-list a")
    assert str(link["href"]).endswith(f"/organizer/organizations/{organization_id}")


def test_bad_input_keeps_what_was_typed_with_a_field_error(app):
    person = signed_in(app)
    answer = person.post("/en/organizer/organizations", {"name": "", "description": "Hello"})
    assert answer.status_code == 422
    page = BeautifulSoup(answer.data, "html.parser")
    assert one(page, "#create_organization-name-error").get_text().strip()
    assert one(page, "input[name=description]")["value"] == "Hello"


def test_organizer_pages_are_private_and_offer_agents_nothing(app):
    person = signed_in(app)
    organization_id = start(person)
    for url in ("/en/organizer/", "/en/organizer/organizations/new",
                f"/en/organizer/organizations/{organization_id}"):
        answer = person.get(url)
        assert answer.status_code == 200, url
        assert answer.headers["Cache-Control"] == "private, no-store"
        assert answer.headers["X-Robots-Tag"] == "noindex"
        assert answer.headers["Referrer-Policy"] == "no-referrer"
        page = BeautifulSoup(answer.data, "html.parser")
        assert one(page, "meta[name=robots]")["content"] == "noindex"
        assert page.select("[toolname]") == []
        assert not any("webmcp-bridge" in str(script.get("src", ""))
                       for script in page.select("script"))
    # Public pages keep their bridge and their stricter-than-nothing referrer policy.
    public = person.get("/en/events")
    assert public.headers["Referrer-Policy"] == "same-origin"
    assert b"webmcp-bridge" in public.data


def test_every_right_of_every_role_in_own_and_other_organizations(app):
    """Each organizer route that names an organization answers a member whose role holds its
    right, and is not found for a role without it and for members of another organization."""
    owner, other_owner = signed_in(app), signed_in(app)
    own, other = start(owner), start(other_owner, "Kaohsiung AI")
    people = {"owner": owner}
    people.update((role, signed_in(app)) for role in ROLES if role != "owner")
    with app.app_context():
        for role, person in people.items():
            if role != "owner":
                get_db().add_member(own, account_id_of(app, person), role, app.config["CLOCK"]())
    routes = [(url, method, endpoint) for url, method, endpoint in organizer_rules(app)
              if "organization_id" in url or SAMPLE_VALUES["organization_id"] in url]
    assert routes
    for url, method, endpoint in routes:
        right = getattr(app.view_functions[endpoint], NEEDS)
        for role, person in people.items():
            for organization_id, member in ((own, True), (other, False)):
                address = url.replace(SAMPLE_VALUES["organization_id"], organization_id)
                answer = ask(person, method, address)
                allowed = member and may(role, right)
                assert (answer.status_code != 404) == allowed, (address, method, role)


def test_deleting_an_account_ends_its_memberships_and_keeps_the_audit_log(app):
    """The audit log names people by account id only, so it outlives them; their places in
    organizations go with the account."""
    person = signed_in(app)
    organization_id = start(person)
    account_id = account_id_of(app, person)
    deleted = person.post("/en/account/delete", {"email": person.email})
    assert deleted.status_code == 303
    database = app.config["DATABASE"]
    assert query_database(database, "SELECT count(*) FROM memberships WHERE account_id = ?",
                          (account_id,)) == [(0,)]
    assert query_database(database, "SELECT account_id, action FROM audit_log "
                          "WHERE organization_id = ?", (organization_id,)) == [
        (account_id, "create_organization")]
