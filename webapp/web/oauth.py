"""OAuth 2.1 for MCP clients: the site is both the MCP endpoint's protected resource and its
authorization server (the MCP authorization specification, 2025-11-25 and 2026-07-28).

- Discovery: RFC 9728 metadata of the resource at `/.well-known/oauth-protected-resource`
  (and its form for the path, `…/mcp`), RFC 8414 metadata of the server at
  `/.well-known/oauth-authorization-server`. `/mcp` answers 401 with `WWW-Authenticate:
  Bearer resource_metadata="…"` (`mcp.must_authenticate`) where a connection is needed.
- Clients: a Client ID Metadata Document (the client id is an https address, whose JSON the
  server fetches with a short timeout and a size limit), else one registered here (RFC 7591,
  `/oauth/register`). Public clients only: no secret is issued or accepted. Redirect
  addresses match exactly, except that a loopback one may come back on any port (RFC 8252).
- Grants: the authorization code with PKCE (S256 only) and the refresh token, each refresh
  spending its token (`domain.oauth`, `storage.oauth`); no implicit grant, no password. Every
  answer sent back to a client's redirect address names the server (RFC 9207 `iss`), so a
  client talking to several servers cannot be fooled into taking one's code to another.
- Browsers: a client that runs in a page (an inspector, a web connector) fetches the metadata,
  registers and trades its code from script, so those endpoints answer the origins the MCP
  endpoint lets call (`MCP_ALLOWED_ORIGINS`) as it does, preflights included (CORS).
  Tokens are for one resource, the MCP endpoint (RFC 8707 `resource`: omitted, it is that).
- The consent page (`/<lang>/oauth/authorize`) is for people: it shows what the client may do
  and asks to approve or deny; approving makes an agent connection of the visitor's (signed
  in: the account's), listed and revoked on *Connect an agent*.

The protocol is Authlib's (its Flask authorization server and resource protector); this module
gives it the site's clients, codes and tokens, and the page.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Collection
from datetime import timedelta
from typing import Any
from typing import cast
from urllib.parse import urlsplit

from authlib.common.urls import add_params_to_uri
from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.integrations.flask_oauth2 import ResourceProtector
from authlib.integrations.flask_oauth2.requests import FlaskJsonRequest
from authlib.oauth2 import OAuth2Error
from authlib.oauth2.rfc6749 import ClientMixin
from authlib.oauth2.rfc6749 import InvalidRequestError
from authlib.oauth2.rfc6749 import MissingAuthorizationError
from authlib.oauth2.rfc6749 import TokenMixin
from authlib.oauth2.rfc6749 import UnsupportedTokenTypeError
from authlib.oauth2.rfc6749 import grants
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc6750 import BearerTokenValidator
from authlib.oauth2.rfc7591 import ClientMetadataClaims
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from flask import Blueprint
from flask import Flask
from flask import Response
from flask import abort
from flask import current_app
from flask import jsonify
from flask import render_template
from flask import request

from flask_webmcp.calls import AGENT_HEADER
from flask_webmcp.routes import page_route

from ..clock import site_now
from ..domain import oauth as grants_of
from ..domain.actions.agents import connection_for
from ..domain.tokens import hash_token
from ..storage import AgentConnection
from ..storage.connection import get_db
from ..storage.oauth import OAuthClient
from ..storage.oauth import OAuthCode
from ..storage.oauth import OAuthTokens
from .addresses import site_url
from .languages import current_language
from .visitors import visitor_for_write

# The consent page (a page: it gets its language prefixes) and the endpoints for machines
# (metadata, token, registration: no language, no CSRF token, no cookie read).
bp = Blueprint("oauth", __name__)
server_bp = Blueprint("oauth_server", __name__)

AUTHORIZE_PATH = "/oauth/authorize"
TOKEN_PATH = "/oauth/token"  # noqa: S105 - an address, not a secret
REGISTER_PATH = "/oauth/register"
RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource"
SERVER_METADATA_PATH = "/.well-known/oauth-authorization-server"
MCP_PATH = "/mcp"
# Hosts a native client listens on for its redirect (RFC 8252 §7.3: any port).
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
# Schemes no redirect may use: they run or read something in the person's browser.
REFUSED_SCHEMES = ("javascript", "data", "file", "vbscript", "blob", "about")
GRANT_TYPES = ("authorization_code", "refresh_token")
# What a browser client may send the machine endpoints: the protocol version MCP clients add
# to discovery, and JSON (registration); how long it may keep a preflight's answer.
CORS_REQUEST_HEADERS = ("Content-Type", "MCP-Protocol-Version")
CORS_MAX_AGE = 3600


class InvalidTarget(OAuth2Error):
    """RFC 8707: the `resource` asked for is not this server's MCP endpoint."""

    error = "invalid_target"


class InvalidToken(Exception):
    """The request's bearer token stands for nothing (unknown, expired, revoked, or for
    another resource)."""


def resource_url() -> str:
    """The resource the site's tokens are for: the MCP endpoint's full address."""
    return site_url() + MCP_PATH


def resource_metadata_url() -> str:
    """Where the MCP endpoint's RFC 9728 metadata is (the form for its path)."""
    return site_url() + RESOURCE_METADATA_PATH + MCP_PATH


def _config(name: str) -> Any:
    return current_app.config[name]


# -- clients ------------------------------------------------------------------------------


def is_loopback(host: str | None) -> bool:
    """Whether `host` names this machine's loopback interface."""
    if host is None:
        return False
    if host in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def redirect_allowed(registered: list[str], uri: str) -> bool:
    """Whether `uri` is one of the client's redirect addresses: the same string, or the same
    loopback address on another port (a native client listens on whatever port is free)."""
    if uri in registered:
        return True
    asked = urlsplit(uri)
    if asked.scheme != "http" or not is_loopback(asked.hostname):
        return False
    for known in map(urlsplit, registered):
        if (known.scheme, known.hostname, known.path, known.query) == (
                asked.scheme, asked.hostname, asked.path, asked.query):
            return True
    return False


def acceptable_redirect(uri: str) -> bool:
    """Whether a client may name `uri` as a redirect: https, http on loopback only, or a
    native app's own scheme; never one that runs something in the browser, never a fragment."""
    parts = urlsplit(uri)
    if not parts.scheme or parts.fragment or parts.scheme.lower() in REFUSED_SCHEMES:
        return False
    if parts.scheme == "http":
        return is_loopback(parts.hostname)
    return parts.scheme != "https" or bool(parts.hostname)


def is_document_id(client_id: str) -> bool:
    """Whether a client id is the address of a Client ID Metadata Document: https with a
    path (and, where testing allows it, http on loopback)."""
    parts = urlsplit(client_id)
    if parts.path in ("", "/") or parts.fragment or parts.username or parts.password:
        return False
    if parts.scheme == "https":
        return bool(parts.hostname)
    return (parts.scheme == "http" and bool(_config("OAUTH_ALLOW_HTTP_LOOPBACK"))
            and is_loopback(parts.hostname))


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A metadata document is read where its client id says, never where it redirects."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def public_host(host: str | None) -> bool:
    """Whether every address `host` resolves to is on the public internet: a client id must
    not make the server fetch from its own network (loopback, private, link-local)."""
    if host is None:
        return False
    try:
        found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    addresses = {ipaddress.ip_address(str(entry[4][0]).split("%")[0]) for entry in found}
    return bool(addresses) and all(address.is_global for address in addresses)


def fetch_client_document(client_id: str) -> dict[str, Any] | None:
    """The client's metadata document as fetched from its id, if it is one this server takes:
    JSON naming the same client id, with redirect addresses, for a public client. None when
    it cannot be fetched in time, is too large, or says otherwise."""
    host = urlsplit(client_id).hostname
    if not (public_host(host) or (_config("OAUTH_ALLOW_HTTP_LOOPBACK") and is_loopback(host))):
        return None
    limit = int(_config("OAUTH_FETCH_LIMIT"))
    opener = urllib.request.build_opener(_NoRedirects)
    # Only http(s) addresses get here (`is_document_id`), never a file or another scheme.
    fetch = urllib.request.Request(client_id,  # noqa: S310
                                   headers={"Accept": "application/json"})
    try:
        with opener.open(fetch, timeout=float(_config("OAUTH_FETCH_TIMEOUT"))) as answer:
            if answer.status != 200:
                return None
            body = answer.read(limit + 1)
        document = json.loads(body) if len(body) <= limit else None
    except (OSError, ValueError, urllib.error.URLError):
        current_app.logger.info("could not fetch the client metadata document %s", client_id)
        return None
    if not isinstance(document, dict) or document.get("client_id") != client_id:
        return None
    uris = document.get("redirect_uris")
    if (not isinstance(uris, list) or not uris
            or not all(isinstance(uri, str) and acceptable_redirect(uri) for uri in uris)):
        return None
    if document.get("token_endpoint_auth_method", "none") != "none":
        return None  # public clients only: this server keeps no keys or secrets of clients
    return document


class Client(ClientMixin):
    """A client as Authlib asks about it: public, code and refresh grants, one scope."""

    def __init__(self, kept: OAuthClient):
        self.kept = kept
        self.metadata = kept.metadata

    @property
    def name(self) -> str:
        """The name the client gives itself (untrusted), else its id."""
        name = self.metadata.get("client_name")
        return name if isinstance(name, str) and name.strip() else self.kept.client_id

    def get_client_id(self) -> str:
        """The client's id."""
        return self.kept.client_id

    def get_default_redirect_uri(self) -> str:
        """No default: each request names its redirect address."""
        return ""  # none: OAuth 2.1 requests name their redirect address

    def get_allowed_scope(self, scope: Collection[str] | str) -> str:
        """The one scope, whatever was asked."""
        return grants_of.SCOPE

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        """Whether the client may be sent back there (`redirect_allowed`)."""
        return redirect_allowed(list(self.metadata.get("redirect_uris", [])), redirect_uri)

    def check_client_secret(self, client_secret: str) -> bool:
        """Never: public clients have no secret."""
        return False

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        """Only `none`: public clients."""
        return method == "none"

    def check_response_type(self, response_type: str) -> bool:
        """Only `code` (no implicit grant)."""
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        """The code and refresh grants only."""
        return grant_type in GRANT_TYPES


def query_client(client_id: str) -> Client | None:
    """The client with this id: a document fetched not long ago, fetched now, or one that
    registered; None for a client the site does not know."""
    db, now = get_db(), site_now()
    kept = db.oauth_client(client_id)
    if is_document_id(client_id):
        fresh = timedelta(seconds=int(_config("OAUTH_CLIENT_DOCUMENT_TTL")))
        if kept is None or kept.kind != "document" or now - kept.fetched_at >= fresh:
            document = fetch_client_document(client_id)
            if document is None:
                return None
            kept = OAuthClient(client_id, document, "document", now)
            db.keep_oauth_client(kept)
        return Client(kept)
    return Client(kept) if kept is not None and kept.kind == "registered" else None


# -- grants -------------------------------------------------------------------------------


class S256Only(CodeChallenge):
    """PKCE is required, with S256: a request without a challenge, or with `plain`, is
    refused (OAuth 2.1)."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]
    DEFAULT_CODE_CHALLENGE_METHOD = "S256"

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        """Refuse a request without a challenge, or with any method but S256."""
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("Missing 'code_challenge': PKCE is required.")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("'code_challenge_method' must be S256.")
        super().validate_code_challenge(grant, redirect_uri)


class Code:
    """A spent authorization code, as Authlib asks about it."""

    code_challenge_method = "S256"

    def __init__(self, kept: OAuthCode):
        self.kept = kept
        self.code_challenge = kept.code_challenge

    def get_redirect_uri(self) -> str:
        """Where the code was sent."""
        return self.kept.redirect_uri

    def get_scope(self) -> str:
        """The scope granted."""
        return self.kept.scope


def asked_resource(given: str | None) -> str:
    """The resource a request is for: the MCP endpoint, named or left out; raises
    InvalidTarget for any other."""
    if given is None or given.rstrip("/") == resource_url():
        return resource_url()
    raise InvalidTarget(description="This server's tokens are for its MCP endpoint only.")


class CodeGrant(grants.AuthorizationCodeGrant):
    """The authorization code grant, for public clients; the code is spent as it is read."""

    TOKEN_ENDPOINT_AUTH_METHODS = ["none"]

    def save_authorization_code(self, code: str, oauth_request: Any) -> None:
        """Keep the hash of a code the person's approval gave, with what it stands for."""
        now = site_now()
        data = oauth_request.payload.data
        get_db().create_oauth_code(OAuthCode(
            code_hash=hash_token(code), client_id=oauth_request.client.get_client_id(),
            visitor_id=oauth_request.user, redirect_uri=oauth_request.payload.redirect_uri,
            resource=asked_resource(data.get("resource")), scope=oauth_request.scope,
            code_challenge=data["code_challenge"], label=oauth_request.client.name[:80],
            expires_at=now + timedelta(seconds=int(_config("OAUTH_CODE_TTL"))),
            language=current_language().code), now)

    def generate_authorization_code(self) -> str:
        """A new code, marked as this site's."""
        return grants_of.new_code()[0]

    def query_authorization_code(self, code: str, client: ClientMixin) -> Code | None:
        """Spend the code: what it stands for, if it is still good and this client's."""
        kept = get_db().use_oauth_code(hash_token(code), site_now())
        if kept is None or kept.client_id != client.get_client_id():
            return None
        return Code(kept)

    def validate_token_request(self) -> None:
        """Authlib's checks, and the resource (if named) is the code's."""
        super().validate_token_request()
        given = self.request.form.get("resource")
        code = self.request.authorization_code
        assert isinstance(code, Code)
        if given is not None and asked_resource(given) != code.kept.resource:
            raise InvalidTarget()

    def delete_authorization_code(self, authorization_code: Code) -> None:
        """Nothing left to do: reading the code spent it."""

    def authenticate_user(self, authorization_code: Code) -> str:
        """The visitor who approved."""
        return authorization_code.kept.visitor_id


class Refresh(TokenMixin):
    """A spent refresh token's issue, as Authlib asks about it."""

    def __init__(self, kept: OAuthTokens):
        self.kept = kept

    def check_client(self, client: ClientMixin) -> bool:
        """Whether the refresh token was issued to this client."""
        return self.kept.client_id == client.get_client_id()

    def get_scope(self) -> str:
        """The scope granted."""
        return self.kept.scope


class RefreshGrant(grants.RefreshTokenGrant):
    """The refresh token grant: each refresh spends its token and gives a new pair; a spent
    token shown again ends the connection."""

    TOKEN_ENDPOINT_AUTH_METHODS = ["none"]
    INCLUDE_NEW_REFRESH_TOKEN = True

    # Authlib's stubs say a token is always found; the grant refuses None (invalid_grant).
    def authenticate_refresh_token(self, refresh_token: str  # type: ignore[override]
                                   ) -> Refresh | None:
        kept = get_db().spend_refresh_token(hash_token(refresh_token), site_now())
        if kept is None:
            return None
        given = self.request.form.get("resource")
        if given is not None and asked_resource(given) != kept.resource:
            raise InvalidTarget()
        return Refresh(kept)

    def authenticate_user(self, refresh_token: TokenMixin) -> str:
        """The connection the refresh continues."""
        assert isinstance(refresh_token, Refresh)
        return refresh_token.kept.connection_id

    def revoke_old_credential(self, refresh_token: TokenMixin) -> None:
        """Nothing left to do: reading the refresh token spent it."""


def save_token(token: dict[str, Any], oauth_request: Any) -> None:
    """Keep a new pair of tokens (their hashes): for an exchanged code, with the connection it
    makes; for a refresh, beside the connection it continues."""
    db, now = get_db(), site_now()
    access_ttl = timedelta(seconds=int(token["expires_in"]))
    client_id = oauth_request.client.get_client_id()
    if oauth_request.payload.grant_type == "authorization_code":
        code: OAuthCode = oauth_request.authorization_code.kept
        connection = AgentConnection(
            id=grants_of.new_connection_id(), visitor_id=code.visitor_id, label=code.label,
            created_at=now, language=code.language,
            expires_at=now + timedelta(seconds=int(_config("AGENT_CONNECTION_TTL"))))
        db.grant_oauth_connection(connection, grants_of.unusable_token_hash(), code.code_hash,
                                  grants_of.stored_tokens(
                                      token["access_token"], token["refresh_token"],
                                      connection.id, client_id, code.resource, code.scope,
                                      now + access_ttl))
        return
    spent: OAuthTokens = oauth_request.refresh_token.kept
    db.add_oauth_tokens(grants_of.stored_tokens(
        token["access_token"], token["refresh_token"], spent.connection_id, client_id,
        spent.resource, spent.scope, now + access_ttl))


class Registration(ClientRegistrationEndpoint):
    """RFC 7591: any client may register (a public client: no secret), for the code and
    refresh grants, with redirect addresses this server accepts."""

    def authenticate_token(self, registering: Any) -> bool:
        """Anyone may register (open registration)."""
        return True  # open registration: what a client may do is still the person's to approve

    def extract_client_metadata(self, registering: Any) -> dict[str, Any]:
        """The metadata Authlib checks, defaulted to a public client, with acceptable redirects."""
        data = registering.payload.data
        if isinstance(data, dict):
            # RFC 7591's default is a secret; this server issues none, so none is the default.
            data.setdefault("token_endpoint_auth_method", "none")
            data.setdefault("grant_types", ["authorization_code", "refresh_token"])
        metadata: dict[str, Any] = super().extract_client_metadata(registering)
        uris = metadata.get("redirect_uris")
        if (not isinstance(uris, list) or not uris
                or not all(isinstance(uri, str) and acceptable_redirect(uri) for uri in uris)):
            raise InvalidRedirect()
        return metadata

    def generate_client_info(self, registering: Any) -> dict[str, Any]:
        """A new client id (no secret)."""
        return {"client_id": f"cli-{grants_of.new_code()[0][4:28]}",
                "client_id_issued_at": int(site_now().timestamp())}

    def get_server_metadata(self) -> dict[str, Any]:
        """What the server supports, which registrations must fit."""
        return server_metadata()

    def save_client(self, client_info: dict[str, Any], client_metadata: dict[str, Any],
                    registering: Any) -> OAuthClient:
        """Keep the registered client."""
        kept = OAuthClient(client_info["client_id"], client_metadata, "registered", site_now())
        get_db().keep_oauth_client(kept)
        return kept


class InvalidRedirect(OAuth2Error):
    """RFC 7591: a redirect address this server does not accept."""

    error = "invalid_redirect_uri"
    description = "Redirect addresses are https, http on loopback, or an app's own scheme."


def _access_token(**kwargs: Any) -> str:
    return grants_of.new_access_token()


def _refresh_token(**kwargs: Any) -> str:
    return grants_of.new_refresh_token()


def _expires_in(client: ClientMixin, grant_type: str) -> int:
    return int(_config("OAUTH_ACCESS_TOKEN_TTL"))


# Authlib's server, with the site's clients, codes and tokens, and the only grants it allows.
SERVER = AuthorizationServer(query_client=query_client, save_token=save_token)
SERVER.register_grant(CodeGrant, [S256Only(required=True)])
SERVER.register_grant(RefreshGrant)
# (The stubs predate registration endpoints being `Endpoint`s; Authlib takes them as such.)
SERVER.register_endpoint(Registration(  # type: ignore[arg-type]
    claims_classes=[ClientMetadataClaims]))


# -- the resource: bearer tokens on /mcp -----------------------------------------------


class HeldToken(TokenMixin):
    """A bearer token that stands for a live connection (checked as it was found)."""

    def __init__(self, connection: AgentConnection):
        self.connection = connection

    def is_expired(self) -> bool:
        """Never: an expired token was not found."""
        return False

    def is_revoked(self) -> bool:
        """Never: a revoked token was not found."""
        return False

    def get_scope(self) -> str:
        """The scope granted."""
        return grants_of.SCOPE


class ConnectionTokens(BearerTokenValidator):
    """A bearer token on /mcp: an OAuth access token for this resource, or a pasted one."""

    def authenticate_token(self, token_string: str) -> HeldToken | None:
        """The live connection the token stands for, if any."""
        db, now = get_db(), site_now()
        if grants_of.is_access_token(token_string):
            connection = grants_of.access_connection(db, token_string, resource_url(), now)
        else:
            connection = connection_for(db, token_string, now)
        return HeldToken(connection) if connection else None


PROTECTOR = ResourceProtector()
PROTECTOR.register_token_validator(ConnectionTokens())


def bearer_connection() -> AgentConnection | None:
    """The live connection the request's bearer token stands for; None when it carries no
    bearer token; raises InvalidToken for one that stands for nothing (and StorageError when
    the storage cannot say)."""
    try:
        held: HeldToken = PROTECTOR.validate_request(scopes=None,
                                                     request=FlaskJsonRequest(request))
    except (MissingAuthorizationError, UnsupportedTokenTypeError):
        return None
    except OAuth2Error:
        raise InvalidToken from None
    return held.connection


def challenge(invalid: bool) -> str:
    """The `WWW-Authenticate` value of a 401 from /mcp: where the resource's metadata is, and
    (when a token was sent) that it is not valid."""
    parts = [f'resource_metadata="{resource_metadata_url()}"', f'scope="{grants_of.SCOPE}"']
    if invalid:
        parts.insert(0, 'error="invalid_token"')
    return "Bearer " + ", ".join(parts)


# -- metadata -----------------------------------------------------------------------------


def server_metadata() -> dict[str, Any]:
    """RFC 8414 metadata of the authorization server (the site)."""
    issuer = site_url()
    return {
        "issuer": issuer,
        "authorization_endpoint": issuer + AUTHORIZE_PATH,
        "token_endpoint": issuer + TOKEN_PATH,
        "registration_endpoint": issuer + REGISTER_PATH,
        "scopes_supported": [grants_of.SCOPE],
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": list(GRANT_TYPES),
        "token_endpoint_auth_methods_supported": ["none"],
        "code_challenge_methods_supported": ["S256"],
        "client_id_metadata_document_supported": True,
        "authorization_response_iss_parameter_supported": True,
        "service_documentation": issuer + "/openapi.json",
    }


def resource_metadata() -> dict[str, Any]:
    """RFC 9728 metadata of the MCP endpoint."""
    return {
        "resource": resource_url(),
        "authorization_servers": [site_url()],
        "scopes_supported": [grants_of.SCOPE],
        "bearer_methods_supported": ["header"],
        "resource_name": "WebMCP Events",
    }


@server_bp.get(RESOURCE_METADATA_PATH)
@server_bp.get(RESOURCE_METADATA_PATH + MCP_PATH)
def protected_resource() -> Response:
    """The MCP endpoint's metadata (RFC 9728), at the root form and the form for its path."""
    return _machine(resource_metadata())


@server_bp.get(SERVER_METADATA_PATH)
def authorization_server() -> Response:
    """The authorization server's metadata (RFC 8414)."""
    return _machine(server_metadata())


@server_bp.post(TOKEN_PATH)
def token() -> Response:
    """The token endpoint: a code (with its PKCE verifier) or a refresh token for tokens."""
    return cast(Response, SERVER.create_token_response())


@server_bp.post(REGISTER_PATH)
def register() -> Response:
    """RFC 7591 dynamic registration of a public client."""
    return cast(Response, SERVER.create_endpoint_response(Registration.ENDPOINT_NAME))


def _machine(body: dict[str, Any]) -> Response:
    answer = jsonify(body)
    answer.cache_control.public = True
    answer.cache_control.max_age = 3600
    return answer


@server_bp.after_request
def cross_origin(response: Response) -> Response:
    """A machine endpoint's answer, readable by a browser client at an origin the MCP
    endpoint allows (nothing said to any other, or to a client that sends no Origin); a
    preflight (Flask answers OPTIONS) is told what that client may send."""
    response.vary.add("Origin")
    origin = request.headers.get("Origin")
    if origin is None or origin not in current_app.config["MCP_ALLOWED_ORIGINS"]:
        return response
    response.headers["Access-Control-Allow-Origin"] = origin
    if request.method == "OPTIONS":
        response.headers["Access-Control-Allow-Methods"] = response.headers.get("Allow", "")
        response.headers["Access-Control-Allow-Headers"] = ", ".join(CORS_REQUEST_HEADERS)
        response.headers["Access-Control-Max-Age"] = str(CORS_MAX_AGE)
    return response


def with_issuer(answer: Response) -> Response:
    """An answer that sends the browser back to a client, naming this server (RFC 9207)."""
    if answer.location:
        answer.location = add_params_to_uri(answer.location, {"iss": site_url()})
    return answer


# -- the consent page ---------------------------------------------------------------------


@page_route(bp, AUTHORIZE_PATH, "authorize_agent")
def authorize() -> Response:
    """The consent page: which client asks, where it will be sent back, what it may do."""
    _people_only()
    grant = _consent_grant()
    if isinstance(grant, Response):
        return grant
    redirect_to = urlsplit(grant.redirect_uri)
    return Response(render_template(
        "oauth/authorize.html", client_name=grant.client.name,
        client_id=grant.client.get_client_id(), redirect_host=redirect_to.netloc or
        redirect_to.scheme))


@bp.post(AUTHORIZE_PATH)
def decide() -> Response:
    """The person approves (a connection of their visitor's) or denies; either way the
    client is sent back to its redirect address."""
    _people_only()
    grant = _consent_grant()
    if isinstance(grant, Response):
        return grant
    approved = request.form.get("decision") == "approve"
    user = visitor_for_write(get_db()) if approved else None
    answer = with_issuer(cast(Response, SERVER.create_authorization_response(
        grant=grant, grant_user=user)))
    location = answer.headers.get("Location")
    if answer.status_code != 302 or location is None:
        return answer
    # The page's form may post only to this site (CSP form-action), which browsers apply to
    # the redirect after the post too: the person's browser is sent on by the page instead.
    return Response(render_template("oauth/redirect.html", location=location,
                                    approved=approved, client_name=grant.client.name),
                    headers={"Cache-Control": "no-store"})


def _people_only() -> None:
    if request.headers.get(AGENT_HEADER) == "true":
        abort(403)  # an agent never approves itself


def _consent_grant() -> Any:
    """The grant the request asks for, checked (client, redirect, PKCE, resource); an answer
    instead when it cannot be asked for: back to the client with the error when its redirect
    address is known, else a page saying what is wrong."""
    try:
        grant = SERVER.get_consent_grant(end_user=None)
        try:
            asked_resource(request.values.get("resource"))
        except InvalidTarget as error:
            error.redirect_uri = grant.redirect_uri
            raise
    except OAuth2Error as error:
        if getattr(error, "redirect_uri", None):
            error.state = request.values.get("state")
            return with_issuer(cast(Response, SERVER.handle_error_response(
                SERVER.create_oauth2_request(None), error)))
        return Response(render_template("oauth/refused.html",
                                        reason=error.description or error.error), status=400)
    return grant


def init_app(app: Flask) -> None:
    """Read the app's configuration; the tokens are this site's own, each kind marked."""
    SERVER.init_app(app)
    SERVER.register_token_generator("default", BearerTokenGenerator(
        _access_token, _refresh_token, _expires_in))
