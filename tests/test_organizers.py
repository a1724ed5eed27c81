"""The organizer area, first part: organizations, their people's roles, and the rule that the
area refuses everything that is not let in (issue 30).

The matrices come from the declarations: every rule of the app under the organizer prefix,
every role of the role table, every right a route declares.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from bs4 import BeautifulSoup
from flask import Flask
from flask_babel import force_locale
from flask_babel import gettext
from helpers import Visitor
from helpers import one
from helpers import query_database
from helpers import the_jsonld
from routes import SAMPLE_VALUES
from suite_clock import suite_start
from test_accounts import Inbox
from test_accounts import ask_for_link
from test_accounts import deliver
from test_accounts import press_sign_in
from test_accounts import sign_in
from test_accounts import text_of

from webapp.domain.organizers import ROLE_RIGHTS
from webapp.domain.organizers import ROLES
from webapp.domain.organizers import may
from webapp.storage import Account
from webapp.storage.connection import get_db
from webapp.web.languages import LANGUAGES
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


def account_of(app, person: Visitor) -> Account:
    """The account `person` signed in to, as storage gives it."""
    ((account_id, visitor_id),) = query_database(
        app.config["DATABASE"], "SELECT id, visitor_id FROM accounts WHERE email = ?",
        (person.email,))
    return Account(id=str(account_id), email=person.email, visitor_id=str(visitor_id),
                   created_at=suite_start())


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
    assert ROLE_RIGHTS["check_in"] == {"check_in", "leave_organization"}
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
            assert answer.status_code == 403, (url, method)
            assert the_jsonld(answer.data)["status"] == "invalid_input"
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


def no_such_page(app) -> set[str]:
    """What the area answers, in each language, where it lets nobody in (a route's own
    not_found, say of an invitation that is not open, is another answer: it was let in)."""
    found = set()
    with app.test_request_context():
        for language in LANGUAGES.values():
            with force_locale(language.locale):
                found.add(gettext("There is no such page."))
    return found


def test_every_right_of_every_role_in_own_and_other_organizations(app):
    """Each organizer route that names an organization answers a member whose role holds its
    right, and is not found for a role without it and for members of another organization."""
    owner, other_owner = signed_in(app), signed_in(app)
    own, other = start(owner), start(other_owner, "Kaohsiung AI")
    people = {"owner": owner}
    people.update((role, signed_in(app)) for role in ROLES if role != "owner")
    accounts = {role: account_id_of(app, person) for role, person in people.items()}

    def as_before() -> None:
        """Everyone in their role again (a route may have let one leave), and the sample
        event of an address run by the own organization (its pages are the organization's)."""
        with app.app_context():
            db = get_db()
            for role, account_id in accounts.items():
                if db.membership(own, account_id) is None:
                    db.add_member(own, account_id, role, app.config["CLOCK"]())
            db.set_event_organization(SAMPLE_VALUES["event_id"], own)

    as_before()
    # The sample event of the addresses is one the organization runs: a route naming an
    # event is then walked as far as its right lets each role.
    with app.app_context():
        assert get_db().set_event_organization(SAMPLE_VALUES["event_id"], own)
    not_here = no_such_page(app)
    routes = [(url, method, endpoint) for url, method, endpoint in organizer_rules(app)
              if "organization_id" in url or SAMPLE_VALUES["organization_id"] in url]
    assert routes
    # Event routes are walked too (each organizer route of an event is one of these).
    assert any(SAMPLE_VALUES["event_id"] in url for url, _method, _endpoint in routes)
    for url, method, endpoint in routes:
        right = getattr(app.view_functions[endpoint], NEEDS)
        for role, person in people.items():
            for organization_id, member in ((own, True), (other, False)):
                address = url.replace(SAMPLE_VALUES["organization_id"], organization_id)
                answer = ask(person, method, address)
                as_before()
                allowed = member and may(role, right)
                refused = (answer.status_code == 404
                           and the_jsonld(answer.data)["message"] in not_here)
                assert refused != allowed, (address, method, role)


def test_deleting_an_account_ends_its_memberships_and_keeps_the_audit_log(app):
    """The audit log names people by account id only, so it outlives them; their places in
    organizations go with the account."""
    owner, person = signed_in(app), signed_in(app)
    organization_id = start(owner)
    accept(person, invite_and_wait(app, owner, organization_id, person.email))
    account_id = account_id_of(app, person)
    deleted = person.post("/en/account/delete", {"email": person.email})
    assert deleted.status_code == 303
    database = app.config["DATABASE"]
    assert query_database(database, "SELECT count(*) FROM memberships WHERE account_id = ?",
                          (account_id,)) == [(0,)]
    assert (account_id, "accept_invitation") in query_database(
        database, "SELECT account_id, action FROM audit_log WHERE organization_id = ?",
        (organization_id,))


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_the_only_owner_keeps_the_account_until_another_owner_accepts(app, language):
    """Deleting one's account never leaves an organization with nobody to run it: the page
    names it and says what to do, and nothing is deleted."""
    owner, heir = signed_in(app), signed_in(app)
    names = ["台北網頁開發者聚會", "Kaohsiung Rust"]
    organization_ids = [start(owner, name) for name in names]
    refused = owner.post(f"/{language}/account/delete", {"email": owner.email})
    assert refused.status_code == 422
    page = BeautifulSoup(refused.data, "html.parser")
    alert = one(page, "[role=alert]").get_text()
    assert all(name in alert for name in names)
    assert {"zh-TW": "唯一的擁有者", "en": "the only owner of"}[language] in alert
    assert owner.get(f"/{language}/organizer/organizations/{organization_ids[0]}") \
        .status_code == 200  # still signed in, still the owner
    for organization_id in organization_ids:
        link = invite_and_wait(app, owner, organization_id, heir.email, role="owner")
        assert accept(heir, link).status_code == 303
    assert owner.post(f"/{language}/account/delete", {"email": owner.email}).status_code == 303
    assert members_of(heir, organization_ids[0]) == {heir.email: "Owner"}


def test_two_only_owners_deleting_their_accounts_at_once_leave_one_owner(app):
    """Each of two owners deleting their account at once sees the other as an owner; the
    organization's row is locked first, so one of them is refused."""
    first, second = signed_in(app), signed_in(app)
    organization_id = start(first)
    accept(second, invite_and_wait(app, first, organization_id, second.email, role="owner"))
    accounts = [account_of(app, person) for person in (first, second)]

    def delete(account: Account) -> list[str]:
        with app.app_context():  # a storage (a connection) of its own
            return get_db().forget_account(account, suite_start())

    with ThreadPoolExecutor(max_workers=2) as pool:
        refused = list(pool.map(delete, accounts))
    assert sorted(map(bool, refused)) == [False, True]
    assert query_database(app.config["DATABASE"], "SELECT count(*) FROM memberships "
                          "WHERE organization_id = ? AND role = 'owner'",
                          (organization_id,)) == [(1,)]


def invite_and_wait(app, owner: Visitor, organization_id: str, email: str,
                    role: str = "manager") -> str:
    """Invite `email` as `owner` does, and the link the invitation mail brings."""
    assert invite(owner, organization_id, email, role).status_code == 303
    return invitation_link(app, email)


INVITATION_LINK = re.compile(r"https?://\S+/organizer/invitations/[\w-]+")


def invite(owner: Visitor, organization_id: str, email: str, role: str = "manager"):
    return owner.post(f"/en/organizer/organizations/{organization_id}/invitations",
                      {"email": email, "role": role})


def invitation_link(app, email: str) -> str:
    """The path of the last invitation mailed to `email`."""
    inbox = Inbox()
    deliver(app, inbox)
    links = [INVITATION_LINK.search(text_of(m)) for m in inbox.messages if m["To"] == email]
    found = [link.group(0) for link in links if link]
    assert found, f"no invitation reached {email}"
    return "/" + found[-1].split("/", 3)[3]


def accept(person: Visitor, link: str):
    """Open the invitation's link and press its button, as a person does."""
    page = BeautifulSoup(person.get(link).data, "html.parser")
    form = one(page, "main form")
    assert not form.has_attr("toolname")
    return person.post(form["action"], {})


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_an_invited_person_signs_in_and_joins_in_the_role_given(app, language):
    owner, guest = signed_in(app), Visitor(app)
    organization_id = start(owner)
    answer = owner.post(f"/{language}/organizer/organizations/{organization_id}/invitations",
                        {"email": guest.email, "role": "check_in"})
    assert answer.status_code == 303
    listed = BeautifulSoup(owner.get(f"/{language}/organizer/organizations/{organization_id}")
                           .data, "html.parser")
    assert guest.email in one(listed, "section:has(#invite-title)").get_text()
    link = invitation_link(app, guest.email)
    # Not signed in: the link sends the browser to sign in, and back to the invitation after.
    sent = guest.get(link)
    assert sent.status_code == 303 and sent.headers["Location"].endswith("/sign-in")
    sign_in_link = ask_for_link(app, Inbox(), guest, guest.email)
    signed = press_sign_in(guest, sign_in_link)
    assert signed.status_code == 303 and signed.headers["Location"] == link
    joined = accept(guest, link)
    assert joined.status_code == 303
    # Check-in staff have no right to the organization's page: they land on the dashboard,
    # which lists their doors, never on a 404.
    assert joined.headers["Location"].endswith("/organizer/")
    assert guest.get(joined.headers["Location"]).status_code == 200
    assert guest.get(f"/en/organizer/organizations/{organization_id}").status_code == 404
    members = BeautifulSoup(owner.get(f"/en/organizer/organizations/{organization_id}").data,
                            "html.parser")
    rows = [row.get_text(" ", strip=True) for row in members.select("#members-title ~ ul li")]
    assert any(guest.email in row and "Check-in" in row for row in rows)
    audit = one(members, "section:has(#audit-title)").get_text()
    assert f"{guest.email} joined" in audit and f"{owner.email} invited someone" in audit
    # The link worked once.
    assert guest.get(link).status_code == 410


def test_an_invitation_is_for_its_address_only(app):
    owner, other = signed_in(app), signed_in(app)
    organization_id = start(owner)
    invite(owner, organization_id, "someone.else@example.com")
    link = invitation_link(app, "someone.else@example.com")
    page = BeautifulSoup(other.get(link).data, "html.parser")
    assert page.select("main form") == []
    assert "someone.else@example.com" in one(page, "main").get_text()
    refused = other.post(link, {})
    assert refused.status_code == 409
    assert ask(other, "GET", f"/organizer/organizations/{organization_id}").status_code == 404


def test_a_revoked_or_expired_invitation_no_longer_works(app, clock):
    owner, guest = signed_in(app), signed_in(app)
    organization_id = start(owner)
    invite(owner, organization_id, guest.email)
    revoked_link = invitation_link(app, guest.email)
    page = BeautifulSoup(owner.get(f"/en/organizer/organizations/{organization_id}").data,
                         "html.parser")
    revoke = one(page, "form[action$='/revoke']")
    assert owner.post(revoke["action"], {}).status_code == 303
    assert guest.get(revoked_link).status_code == 410
    assert guest.post(revoked_link, {}).status_code == 404
    invite(owner, organization_id, guest.email)
    late_link = invitation_link(app, guest.email)
    assert late_link != revoked_link
    clock.advance(days=7, seconds=1)
    sign_in(app, Inbox(), guest, guest.email)  # a week later, signed out meanwhile
    assert guest.get(late_link).status_code == 410
    assert ask(guest, "GET", f"/organizer/organizations/{organization_id}").status_code == 404


def test_only_owners_invite_owners_and_members_are_not_invited_twice(app):
    owner, manager = signed_in(app), signed_in(app)
    organization_id = start(owner)
    invite(owner, organization_id, manager.email, "manager")
    accept(manager, invitation_link(app, manager.email))
    refused = invite(manager, organization_id, "new.owner@example.com", "owner")
    assert refused.status_code == 409
    assert invite(manager, organization_id, "door@example.com", "check_in").status_code == 303
    # A member is invited again only to own the organization; an owner, never.
    assert invite(owner, organization_id, manager.email, "check_in").status_code == 409
    assert invite(manager, organization_id, owner.email, "manager").status_code == 409
    bad = invite(owner, organization_id, "not-an-address", "boss")
    assert bad.status_code == 422
    errors = the_jsonld(bad.data)["errors"]
    assert set(errors) == {"email", "role"}


def members_of(owner: Visitor, organization_id: str) -> dict[str, str]:
    """Each member's address and role, as the organization's page lists them (in English)."""
    page = BeautifulSoup(owner.get(f"/en/organizer/organizations/{organization_id}").data,
                         "html.parser")
    return {one(row, ".member-email").get_text(): one(row, ".muted").get_text().split(",")[0]
            for row in page.select("section:has(#members-title) li")}


def test_an_owner_changes_roles_and_removes_members_but_never_the_last_owner(app):
    owner, manager = signed_in(app), signed_in(app)
    organization_id = start(owner)
    invite(owner, organization_id, manager.email)
    accept(manager, invitation_link(app, manager.email))
    manager_id, owner_id = account_id_of(app, manager), account_id_of(app, owner)
    members = f"/en/organizer/organizations/{organization_id}/members"
    assert owner.post(f"{members}/{manager_id}/role", {"role": "check_in"}).status_code == 303
    assert members_of(owner, organization_id)[manager.email] == "Check-in"
    # Ownership is not given outright: it is invited, and passes once accepted.
    assert owner.post(f"{members}/{manager_id}/role", {"role": "owner"}).status_code == 422
    # The last owner can neither leave, nor be demoted or removed.
    leaving = owner.post(f"/en/organizer/organizations/{organization_id}/leave", {})
    assert leaving.status_code == 409
    assert "needs an owner" in the_jsonld(leaving.data)["message"]
    assert owner.post(f"{members}/{owner_id}/role", {"role": "manager"}).status_code == 409
    assert owner.post(f"{members}/{owner_id}/remove", {}).status_code == 409
    assert invite(owner, organization_id, manager.email, "owner").status_code == 303
    accept(manager, invitation_link(app, manager.email))
    assert members_of(owner, organization_id)[manager.email] == "Owner"
    assert owner.post(f"/en/organizer/organizations/{organization_id}/leave",
                      {}).status_code == 303
    assert ask(owner, "GET", f"/organizer/organizations/{organization_id}").status_code == 404
    assert members_of(manager, organization_id) == {manager.email: "Owner"}
    audit = one(BeautifulSoup(manager.get(f"/en/organizer/organizations/{organization_id}")
                              .data, "html.parser"), "section:has(#audit-title)").get_text()
    # Who left is named no more (the log keeps account ids only).
    assert owner.email not in audit
    assert "a former member made a member Check-in" in audit
    assert f"{manager.email} joined as Owner" in audit and "a former member left" in audit


def test_two_owners_leaving_at_once_leave_one_owner(app):
    """The organization is locked while the owners are counted: of two owners who each leave
    at the same moment, one stays."""
    first, second = signed_in(app), signed_in(app)
    organization_id = start(first)
    invite(first, organization_id, second.email, "owner")
    accept(second, invitation_link(app, second.email))
    with app.app_context():
        db = get_db()
        outcomes = []
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = [pool.submit(leave_in_new_storage, app, organization_id,
                                   account_id_of(app, person)) for person in (first, second)]
            outcomes = sorted(future.result() for future in futures)
        assert outcomes == ["changed", "last_owner"]
        assert [member.role for member in db.organization_members(organization_id)] == [
            "owner"]


def leave_in_new_storage(app, organization_id: str, account_id: str) -> str:
    """One owner leaving, on a storage (a connection) of its own."""
    with app.app_context():
        return get_db().change_membership(organization_id, account_id, None)
