"""OAuth 2.1 for MCP clients (`webapp/web/oauth.py`): discovery, the 401 challenge, PKCE S256
only, the resource binding, hashed storage, rotating refresh tokens and their reuse, the
consent page, revocation, Client ID Metadata Documents and dynamic registration.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import re
import secrets
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs
from urllib.parse import urlencode
from urllib.parse import urlsplit

import pytest
from helpers import CSRF_FIELD
from helpers import hidden_value
from helpers import query_database
from mcp_helpers import McpClient

from webapp.web import oauth

RESOURCE = "http://localhost/mcp"
CALLBACK = "http://127.0.0.1:8765/callback"
SAVE = ("save_event", {"event_id": "evt-webmcp-intro"})
REFRESH_LOCATION = re.compile(r'http-equiv="refresh" content="0; url=([^"]+)"')


@pytest.fixture
def app_config() -> dict[str, Any]:
    return {"OAUTH_ALLOW_HTTP_LOOPBACK": True}


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def register(client, **metadata: Any) -> str:
    answer = client.post("/oauth/register", json={"client_name": "Test client",
                                                  "redirect_uris": [CALLBACK], **metadata})
    assert answer.status_code == 201, answer.get_json()
    client_id: str = answer.get_json()["client_id"]
    return client_id


def authorize_query(client_id: str, challenge: str, **extra: str) -> dict[str, str]:
    return {"response_type": "code", "client_id": client_id, "redirect_uri": CALLBACK,
            "state": "xyz", "code_challenge": challenge, "code_challenge_method": "S256",
            **extra}


def decide(visitor, query: dict[str, str], decision: str = "approve", language: str = "en"
           ) -> dict[str, list[str]]:
    """The person opens the consent page and answers; the parameters the client gets back."""
    address = f"/{language}/oauth/authorize?" + urlencode(query)
    page = visitor.get(address)
    assert page.status_code == 200, page.get_data(as_text=True)
    csrf = hidden_value(CSRF_FIELD, page.get_data(as_text=True))
    answer = visitor.post(address, {"csrf_token": csrf, "decision": decision}, csrf=False)
    assert answer.status_code == 200
    found = REFRESH_LOCATION.search(answer.get_data(as_text=True))
    assert found, answer.get_data(as_text=True)
    location = found.group(1).replace("&amp;", "&")
    assert location.startswith(CALLBACK + "?")
    return parse_qs(urlsplit(location).query)


def exchange(client, client_id: str, code: str, verifier: str, **extra: str):
    return client.post("/oauth/token", data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK,
        "client_id": client_id, "code_verifier": verifier, **extra})


def refresh(client, client_id: str, refresh_token: str):
    return client.post("/oauth/token", data={"grant_type": "refresh_token",
                                             "refresh_token": refresh_token,
                                             "client_id": client_id})


def signed_in_agent(app, visitor, language: str = "en") -> tuple[str, dict[str, Any]]:
    """A client registers, the person approves it (on the consent page in `language`), the
    client exchanges the code: its client id and its tokens."""
    client = app.test_client()
    client_id = register(client)
    verifier, challenge = pkce()
    given = decide(visitor, authorize_query(client_id, challenge), language=language)
    assert given["state"] == ["xyz"]
    answer = exchange(client, client_id, given["code"][0], verifier)
    assert answer.status_code == 200, answer.get_json()
    assert "no-store" in answer.headers["Cache-Control"]
    return client_id, answer.get_json()


def test_the_metadata_names_the_resource_and_the_server(client):
    for path in ("/.well-known/oauth-protected-resource",
                 "/.well-known/oauth-protected-resource/mcp"):
        resource = client.get(path).get_json()
        assert resource["resource"] == RESOURCE
        assert resource["authorization_servers"] == ["http://localhost"]
    server = client.get("/.well-known/oauth-authorization-server").get_json()
    assert server["issuer"] == "http://localhost"
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert server["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert server["response_types_supported"] == ["code"]
    assert server["client_id_metadata_document_supported"] is True
    assert server["registration_endpoint"] == "http://localhost/oauth/register"
    assert server["token_endpoint_auth_methods_supported"] == ["none"]


def test_every_answer_sent_back_to_the_client_names_the_server(app, visitor):
    """RFC 9207: approved, denied, or refused before the person was asked, the parameters a
    client gets back carry the issuer its metadata gave, and the metadata says so."""
    server = app.test_client().get("/.well-known/oauth-authorization-server").get_json()
    assert server["authorization_response_iss_parameter_supported"] is True
    client_id = register(app.test_client())
    approved = decide(visitor, authorize_query(client_id, pkce()[1]))
    denied = decide(visitor, authorize_query(client_id, pkce()[1]), decision="deny")
    without_pkce = visitor.get("/en/oauth/authorize?" + urlencode(
        {k: v for k, v in authorize_query(client_id, "x").items()
         if not k.startswith("code_challenge")}))
    assert without_pkce.status_code == 302
    refused = parse_qs(urlsplit(without_pkce.headers["Location"]).query)
    assert "code" in approved and "error" in denied and "error" in refused
    for given in (approved, denied, refused):
        assert given["iss"] == [server["issuer"]] and given["state"] == ["xyz"]


BROWSER_ORIGIN = "http://localhost:6274"  # where the MCP Inspector's page runs


def machine_endpoints(app) -> list[tuple[str, str]]:
    """Every address and method of the OAuth endpoints for machines, from the app's rules."""
    return [(rule.rule, method) for rule in app.url_map.iter_rules()
            if rule.endpoint.startswith("oauth_server.")
            for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"})]


@pytest.mark.parametrize("app_config", [{"OAUTH_ALLOW_HTTP_LOOPBACK": True,
                                         "MCP_ALLOWED_ORIGINS": [BROWSER_ORIGIN]}])
def test_a_browser_client_at_an_allowed_origin_can_discover_register_and_trade(app):
    """A client in a page (the Inspector) fetches these from script: each endpoint passes its
    preflight and its answer is readable there, and only there."""
    client = app.test_client()
    endpoints = machine_endpoints(app)
    assert {method for _, method in endpoints} == {"GET", "POST"} and len(endpoints) >= 5
    for path, method in endpoints:
        preflight = client.options(path, headers={
            "Origin": BROWSER_ORIGIN, "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": "content-type, mcp-protocol-version"})
        assert preflight.status_code == 200, path
        assert preflight.headers["Access-Control-Allow-Origin"] == BROWSER_ORIGIN
        assert method in preflight.headers["Access-Control-Allow-Methods"]
        asked = {h.strip().lower()
                 for h in preflight.headers["Access-Control-Allow-Headers"].split(",")}
        assert {"content-type", "mcp-protocol-version"} <= asked
        assert int(preflight.headers["Access-Control-Max-Age"]) > 0
        answer = client.open(path, method=method, headers={"Origin": BROWSER_ORIGIN},
                             **({"json": {}} if method == "POST" else {}))
        # Its own answer (a refusal, for an empty POST), readable by the page.
        assert answer.headers["Access-Control-Allow-Origin"] == BROWSER_ORIGIN, path
        assert "Origin" in answer.headers["Vary"]
        for other in ({"Origin": "https://elsewhere.example"}, {}):
            elsewhere = client.open(path, method=method, headers=other,
                                    **({"json": {}} if method == "POST" else {}))
            assert "Access-Control-Allow-Origin" not in elsewhere.headers, (path, other)
    # And the whole trade, as the page makes it.
    registered = client.post("/oauth/register", headers={"Origin": BROWSER_ORIGIN},
                             json={"client_name": "Inspector", "redirect_uris": [CALLBACK]})
    assert registered.status_code == 201
    assert registered.headers["Access-Control-Allow-Origin"] == BROWSER_ORIGIN


def test_reads_need_no_token_but_a_write_is_told_401_with_the_challenge(client):
    agent = McpClient(client, era="legacy")
    assert agent.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "t", "version": "1"}}
                     ).status_code == 200
    assert agent.rpc("tools/list").status_code == 200
    assert agent.rpc("tools/call", {"name": "search_events",
                                    "arguments": {"query": "webmcp"}}).status_code == 200
    answer = agent.rpc("tools/call", {"name": SAVE[0], "arguments": SAVE[1]})
    assert answer.status_code == 401
    challenge = answer.headers["WWW-Authenticate"]
    assert challenge.startswith("Bearer ")
    assert ('resource_metadata="http://localhost/.well-known/oauth-protected-resource/mcp"'
            in challenge)
    assert "invalid_token" not in challenge


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_bogus_token_is_told_401_on_every_request(client, era):
    agent = McpClient(client, era=era, token="wmo_" + "x" * 43)
    method = "initialize" if era == "legacy" else "server/discover"
    for answer in (agent.rpc(method, {"protocolVersion": "2025-11-25", "capabilities": {},
                                      "clientInfo": {"name": "t", "version": "1"}}),
                   agent.rpc("tools/list")):
        assert answer.status_code == 401
        assert answer.headers["WWW-Authenticate"].startswith('Bearer error="invalid_token", ')


@pytest.mark.both_backends
def test_an_approved_client_acts_for_the_person_and_its_tokens_are_stored_hashed(app, visitor):
    _client_id, tokens = signed_in_agent(app, visitor)
    assert tokens["access_token"].startswith("wmo_")
    assert tokens["refresh_token"].startswith("wmr_")
    assert tokens["expires_in"] == app.config["OAUTH_ACCESS_TOKEN_TTL"]
    agent = McpClient(app.test_client(), token=tokens["access_token"])
    assert agent.envelope(*SAVE)["status"] == "success"
    assert "evt-webmcp-intro" in visitor.get("/en/saved").get_data(as_text=True)
    stored = json.dumps(query_database(app.config["DATABASE"],
                                       "SELECT * FROM oauth_tokens")
                        + query_database(app.config["DATABASE"],
                                         "SELECT * FROM oauth_codes"), default=str)
    assert tokens["access_token"] not in stored and tokens["refresh_token"] not in stored
    assert hashlib.sha256(tokens["access_token"].encode()).hexdigest() in stored
    # The grant is a connection on *Connect an agent*, named as the client named itself.
    page = visitor.get("/en/agents").get_data(as_text=True)
    assert "Test client" in page and "signed in with OAuth" in page


@pytest.mark.parametrize(("language", "says"), [("zh-TW", "收藏"), ("en", "Saved")])
def test_the_connection_speaks_the_language_of_its_consent_page(app, visitor, language, says):
    _client_id, tokens = signed_in_agent(app, visitor, language)
    agent = McpClient(app.test_client(), token=tokens["access_token"], language="*")
    assert says in agent.envelope(*SAVE)["message"]


def test_pkce_is_required_and_only_s256(app, visitor):
    client = app.test_client()
    client_id = register(client)
    verifier, challenge = pkce()
    for query in (authorize_query(client_id, challenge, code_challenge_method="plain"),
                  {k: v for k, v in authorize_query(client_id, challenge).items()
                   if not k.startswith("code_challenge")}):
        answer = visitor.get("/en/oauth/authorize?" + urlencode(query))
        assert answer.status_code == 302
        given = parse_qs(urlsplit(answer.headers["Location"]).query)
        assert given["error"] == ["invalid_request"] and given["state"] == ["xyz"]
    # A wrong verifier gets no token.
    given = decide(visitor, authorize_query(client_id, challenge))
    wrong = exchange(client, client_id, given["code"][0], pkce()[0])
    assert wrong.status_code == 400 and wrong.get_json()["error"] == "invalid_grant"


def test_the_implicit_and_password_grants_do_not_exist(app, visitor):
    client = app.test_client()
    client_id = register(client)
    implicit = visitor.get("/en/oauth/authorize?" + urlencode(
        {**authorize_query(client_id, pkce()[1]), "response_type": "token"}))
    assert implicit.status_code == 302
    assert "unsupported_response_type" in implicit.headers["Location"]
    password = client.post("/oauth/token", data={"grant_type": "password", "username": "a",
                                                  "password": "b", "client_id": client_id})
    assert password.get_json()["error"] == "unsupported_grant_type"


def test_tokens_are_bound_to_the_mcp_endpoint(app, visitor):
    client = app.test_client()
    client_id = register(client)
    verifier, challenge = pkce()
    elsewhere = visitor.get("/en/oauth/authorize?" + urlencode(
        authorize_query(client_id, challenge, resource="https://other.example/mcp")))
    assert elsewhere.status_code == 302 and "error=invalid_target" in elsewhere.headers["Location"]
    given = decide(visitor, authorize_query(client_id, challenge, resource=RESOURCE))
    answer = exchange(client, client_id, given["code"][0], verifier,
                      resource="https://other.example/mcp")
    assert answer.status_code == 400 and answer.get_json()["error"] == "invalid_target"


@pytest.mark.both_backends
def test_a_code_works_once_and_its_reuse_ends_the_connection(app, visitor):
    client = app.test_client()
    client_id = register(client)
    verifier, challenge = pkce()
    code = decide(visitor, authorize_query(client_id, challenge))["code"][0]
    first = exchange(client, client_id, code, verifier)
    assert first.status_code == 200
    again = exchange(client, client_id, code, verifier)
    assert again.status_code == 400 and again.get_json()["error"] == "invalid_grant"
    agent = McpClient(app.test_client(), token=first.get_json()["access_token"])
    assert agent.rpc("tools/list").status_code == 401


@pytest.mark.both_backends
def test_a_refresh_rotates_and_a_reused_refresh_token_revokes_the_family(app, visitor):
    client_id, tokens = signed_in_agent(app, visitor)
    client = app.test_client()
    renewed = refresh(client, client_id, tokens["refresh_token"])
    assert renewed.status_code == 200
    fresh = renewed.get_json()
    assert fresh["refresh_token"] != tokens["refresh_token"]
    assert McpClient(app.test_client(), token=fresh["access_token"]).envelope(
        *SAVE)["status"] == "success"
    # The spent refresh token shown again (it was copied): the whole connection ends.
    reused = refresh(client, client_id, tokens["refresh_token"])
    assert reused.status_code == 400 and reused.get_json()["error"] == "invalid_grant"
    for token in (tokens["access_token"], fresh["access_token"]):
        assert McpClient(app.test_client(), token=token).rpc("tools/list").status_code == 401
    assert refresh(client, client_id, fresh["refresh_token"]).status_code == 400
    assert "Test client" not in visitor.get("/en/agents").get_data(as_text=True)


def test_an_expired_access_token_is_told_401_and_a_refresh_continues(app, visitor, clock):
    client_id, tokens = signed_in_agent(app, visitor)
    clock.advance(seconds=app.config["OAUTH_ACCESS_TOKEN_TTL"])
    expired = McpClient(app.test_client(), token=tokens["access_token"]).rpc("tools/list")
    assert expired.status_code == 401
    assert 'error="invalid_token"' in expired.headers["WWW-Authenticate"]
    fresh = refresh(app.test_client(), client_id, tokens["refresh_token"]).get_json()
    assert McpClient(app.test_client(), token=fresh["access_token"]).envelope(
        *SAVE)["status"] == "success"


@pytest.mark.both_backends
def test_disconnecting_on_the_page_revokes_the_tokens(app, visitor):
    client_id, tokens = signed_in_agent(app, visitor)
    ((connection_id,),) = query_database(app.config["DATABASE"],
                                         "SELECT id FROM agent_connections")
    gone = visitor.post(f"/en/agents/{connection_id}/disconnect")
    assert gone.status_code in (200, 303)
    assert McpClient(app.test_client(), token=tokens["access_token"]).rpc(
        "tools/list").status_code == 401
    assert refresh(app.test_client(), client_id, tokens["refresh_token"]).status_code == 400


def test_the_consent_page_shows_the_client_as_untrusted_text_and_deny_gives_nothing(
        app, visitor):
    client = app.test_client()
    client_id = register(client, client_name="<script>alert(1)</script> Claude")
    query = authorize_query(client_id, pkce()[1])
    for language, approve in (("en", "Approve"), ("zh-TW", "同意")):
        page = visitor.get(f"/{language}/oauth/authorize?" + urlencode(query))
        html = page.get_data(as_text=True)
        assert "<script>alert(1)</script>" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt; Claude" in html
        assert "127.0.0.1:8765" in html and approve in html
    given = decide(visitor, query, decision="deny")
    assert given["error"] == ["access_denied"] and "code" not in given
    assert query_database(app.config["DATABASE"], "SELECT id FROM agent_connections") == []


def test_an_agent_cannot_approve_itself(app, visitor):
    client_id = register(app.test_client())
    address = "/en/oauth/authorize?" + urlencode(authorize_query(client_id, pkce()[1]))
    assert visitor.get(address, headers={"WebMCP-Agent-Invoked": "true"}).status_code == 403
    answer = visitor.post(address, {"decision": "approve"},
                          headers={"WebMCP-Agent-Invoked": "true"})
    assert answer.status_code == 403


def test_the_consent_form_needs_its_csrf_token(app, visitor):
    client_id = register(app.test_client())
    address = "/en/oauth/authorize?" + urlencode(authorize_query(client_id, pkce()[1]))
    visitor.get(address)
    answer = visitor.post(address, {"decision": "approve"}, csrf=False)
    assert answer.status_code == 401  # the site's answer to a missing form token
    assert query_database(app.config["DATABASE"], "SELECT code_hash FROM oauth_codes") == []


def test_redirects_match_exactly_but_loopback_on_any_port(app, visitor):
    client = app.test_client()
    client_id = register(client)
    challenge = pkce()[1]
    other_port = visitor.get("/en/oauth/authorize?" + urlencode(
        authorize_query(client_id, challenge, redirect_uri="http://127.0.0.1:4000/callback")))
    assert other_port.status_code == 200
    for stranger in ("http://127.0.0.1:8765/elsewhere", "https://evil.example/callback"):
        refused = visitor.get("/en/oauth/authorize?" + urlencode(
            authorize_query(client_id, challenge, redirect_uri=stranger)))
        assert refused.status_code == 400  # never sent to an address the client did not name
    bad = client.post("/oauth/register", json={"redirect_uris": ["http://evil.example/cb"]})
    assert bad.status_code == 400 and bad.get_json()["error"] == "invalid_redirect_uri"


class _Documents(http.server.BaseHTTPRequestHandler):
    """Serves client metadata documents on loopback: `/<name>` answers DOCUMENTS[name]."""

    documents: dict[str, Any] = {}

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        body = json.dumps(self.documents.get(self.path.strip("/"), {})).encode()
        self.send_response(200 if self.path.strip("/") in self.documents else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def documents() -> Iterator[tuple[str, dict[str, Any]]]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Documents)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    served: dict[str, Any] = {}
    _Documents.documents = served
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", served
    finally:
        server.shutdown()
        server.server_close()


def test_a_client_id_metadata_document_is_fetched_and_checked(app, visitor, documents):
    base, served = documents
    client_id = f"{base}/client.json"
    served["client.json"] = {"client_id": client_id, "client_name": "Document client",
                             "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none"}
    verifier, challenge = pkce()
    page = visitor.get("/en/oauth/authorize?" + urlencode(authorize_query(client_id, challenge)))
    assert page.status_code == 200 and "Document client" in page.get_data(as_text=True)
    code = decide(visitor, authorize_query(client_id, challenge))["code"][0]
    assert exchange(app.test_client(), client_id, code, verifier).status_code == 200
    # A document naming another client id, or none at all, is no client.
    served["liar.json"] = {**served["client.json"], "client_id": f"{base}/client.json"}
    for name in ("liar.json", "missing.json"):
        answer = visitor.get("/en/oauth/authorize?" + urlencode(
            authorize_query(f"{base}/{name}", challenge)))
        assert answer.status_code == 400


def test_http_client_ids_are_refused_unless_testing_allows_loopback(app, visitor, documents):
    base, served = documents
    client_id = f"{base}/client.json"
    served["client.json"] = {"client_id": client_id, "redirect_uris": [CALLBACK]}
    app.config["OAUTH_ALLOW_HTTP_LOOPBACK"] = False
    answer = visitor.get("/en/oauth/authorize?" + urlencode(authorize_query(client_id,
                                                                            pkce()[1])))
    assert answer.status_code == 400
    with app.test_request_context():
        assert oauth.is_document_id("https://app.example/oauth/client.json")
        assert not oauth.is_document_id("https://app.example/")
        assert not oauth.is_document_id(client_id)
        # An https client id on the server's own network is never fetched (no request made).
        assert oauth.public_host("8.8.8.8")
        for inside in ("127.0.0.1", "10.1.2.3", "169.254.169.254", "::1"):
            assert not oauth.public_host(inside)
        assert oauth.fetch_client_document("https://169.254.169.254/client.json") is None
