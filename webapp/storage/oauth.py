"""OAuth 2.1 for MCP clients: the clients the site knows, authorization codes and tokens.

An approved grant is an agent connection (`agent_connections`, with the client's id), so it is
listed, expires and is revoked exactly as a connection made with a pasted token; its tokens are
rows of `oauth_tokens` that go with it (`ON DELETE CASCADE`). A code is spent by the statement
that reads it and a refresh token by the statement that rotates it, so two requests with one
never both succeed; a spent one shown again ends the connection it made (RFC 9700: a stolen
code or refresh token is worth nothing once its owner used it). Codes and tokens are stored
only as hashes. Written once for both backends on the primitives `records.Records` names;
`Records` inherits this class.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from datetime import timedelta
from typing import TYPE_CHECKING
from typing import Any

from . import AgentConnection
from .dialect import Dialect
from .dialect import guarded

Row = Mapping[str, Any]

# How long a code is kept after it expired: shown again meanwhile, it ends what it made.
CODES_KEPT = timedelta(hours=1)


@dataclass(frozen=True)
class OAuthClient:
    """A client the site knows: one that registered (RFC 7591), or one whose Client ID
    Metadata Document was fetched (its client id is the document's URL)."""

    client_id: str
    metadata: dict[str, Any]
    kind: str  # "registered" or "document"
    fetched_at: datetime


@dataclass(frozen=True)
class OAuthCode:
    """An authorization code (by its hash): what a person approved, for whom, and for which
    client, redirect address, resource and PKCE challenge."""

    code_hash: str
    client_id: str
    visitor_id: str
    redirect_uri: str
    resource: str
    scope: str
    code_challenge: str
    label: str
    expires_at: datetime
    language: str = "zh-TW"  # of the consent page: what the connection's answers speak
    used_at: datetime | None = None
    connection_id: str | None = None


@dataclass(frozen=True)
class OAuthTokens:
    """One issue of an access token and its refresh token (by their hashes), for a
    connection."""

    access_hash: str
    refresh_hash: str
    connection_id: str
    client_id: str
    resource: str
    scope: str
    access_expires_at: datetime
    refresh_used_at: datetime | None = field(default=None)


KEEP_CLIENT = (
    "INSERT INTO oauth_clients (client_id, metadata, kind, fetched_at) "
    "VALUES (:client_id, :metadata, :kind, :fetched_at) ON CONFLICT (client_id) DO UPDATE "
    "SET metadata = excluded.metadata, kind = excluded.kind, fetched_at = excluded.fetched_at")
CLIENT = "SELECT * FROM oauth_clients WHERE client_id = :client_id"
PRUNE_CODES = "DELETE FROM oauth_codes WHERE expires_at < :before"
CREATE_CODE = (
    "INSERT INTO oauth_codes (code_hash, client_id, visitor_id, redirect_uri, resource, scope, "
    "code_challenge, label, language, expires_at) VALUES (:code_hash, :client_id, "
    ":visitor_id, :redirect_uri, :resource, :scope, :code_challenge, :label, :language, "
    ":expires_at)")
# Taking a code and checking it is one statement: of two exchanges of one code, one wins.
USE_CODE = ("UPDATE oauth_codes SET used_at = :now WHERE code_hash = :code_hash "
            "AND used_at IS NULL AND expires_at > :now RETURNING *")
SPENT_CODE = "SELECT connection_id FROM oauth_codes WHERE code_hash = :code_hash"
CODE_EXCHANGED = ("UPDATE oauth_codes SET connection_id = :connection_id "
                  "WHERE code_hash = :code_hash")
CREATE_CONNECTION = (
    "INSERT INTO agent_connections (id, token_hash, visitor_id, label, created_at, expires_at, "
    "client_id, language) VALUES (:id, :token_hash, :visitor_id, :label, :created_at, "
    ":expires_at, :client_id, :language)")
ADD_TOKENS = (
    "INSERT INTO oauth_tokens (access_hash, refresh_hash, connection_id, client_id, resource, "
    "scope, access_expires_at) VALUES (:access_hash, :refresh_hash, :connection_id, "
    ":client_id, :resource, :scope, :access_expires_at)")
ACCESS = ("SELECT c.*, t.resource AS token_resource FROM oauth_tokens t "
          "JOIN agent_connections c ON c.id = t.connection_id "
          "WHERE t.access_hash = :access_hash AND t.access_expires_at > :now")
SPEND_REFRESH = ("UPDATE oauth_tokens SET refresh_used_at = :now "
                 "WHERE refresh_hash = :refresh_hash AND refresh_used_at IS NULL RETURNING *")
REFRESH_OWNER = "SELECT connection_id FROM oauth_tokens WHERE refresh_hash = :refresh_hash"
END_CONNECTION = "DELETE FROM agent_connections WHERE id = :id"


def tokens_of(row: Row, dialect: Dialect) -> OAuthTokens:
    """An issue of tokens from its row."""
    moment = dialect.moment_out
    return OAuthTokens(access_hash=row["access_hash"], refresh_hash=row["refresh_hash"],
                       connection_id=row["connection_id"], client_id=row["client_id"],
                       resource=row["resource"], scope=row["scope"],
                       access_expires_at=moment(row["access_expires_at"]),
                       refresh_used_at=(moment(row["refresh_used_at"])
                                        if row["refresh_used_at"] else None))


class OAuthRecords:
    """The OAuth storage methods, on the primitives a backend gives `records.Records`."""

    dialect: Dialect

    if TYPE_CHECKING:  # what the backend provides (`records.Records` says what each does)
        def transaction(self) -> AbstractContextManager[Any]: ...

        def _rows(self, sql: str, params: dict[str, Any]) -> Sequence[Row]: ...

        def _one(self, sql: str, params: dict[str, Any]) -> Row | None: ...

        def _run(self, sql: str, params: dict[str, Any]) -> int: ...

        def _returning(self, sql: str, params: dict[str, Any]) -> Row | None: ...

    @guarded
    def keep_oauth_client(self, client: OAuthClient) -> None:
        """Keep a client (a registration, or a metadata document as fetched just now)."""
        self._run(KEEP_CLIENT, {"client_id": client.client_id,
                                "metadata": self.dialect.json_in(client.metadata),
                                "kind": client.kind,
                                "fetched_at": self.dialect.moment_in(client.fetched_at)})

    @guarded
    def oauth_client(self, client_id: str) -> OAuthClient | None:
        """The client with this id, as last kept; None when the site does not know it."""
        row = self._one(CLIENT, {"client_id": client_id})
        if row is None:
            return None
        return OAuthClient(client_id=row["client_id"], metadata=self.dialect.json_out(
            row["metadata"]), kind=row["kind"], fetched_at=self.dialect.moment_out(
            row["fetched_at"]))

    @guarded
    def create_oauth_code(self, code: OAuthCode, now: datetime) -> None:
        """Keep a new authorization code (and forget those that expired long before `now`)."""
        moment_in = self.dialect.moment_in
        self._run(PRUNE_CODES, {"before": moment_in(now - CODES_KEPT)})
        self._run(CREATE_CODE, {
            "code_hash": code.code_hash, "client_id": code.client_id,
            "visitor_id": code.visitor_id, "redirect_uri": code.redirect_uri,
            "resource": code.resource, "scope": code.scope,
            "code_challenge": code.code_challenge, "label": code.label,
            "language": code.language, "expires_at": moment_in(code.expires_at)})

    @guarded
    def use_oauth_code(self, code_hash: str, now: datetime) -> OAuthCode | None:
        """Spend a code still good at `now`: what it stands for, or None. A code spent before
        ends the connection its first exchange made."""
        row = self._returning(USE_CODE, {"code_hash": code_hash,
                                         "now": self.dialect.moment_in(now)})
        if row is None:
            spent = self._one(SPENT_CODE, {"code_hash": code_hash})
            if spent is not None and spent["connection_id"]:
                self._run(END_CONNECTION, {"id": spent["connection_id"]})
            return None
        moment = self.dialect.moment_out
        return OAuthCode(code_hash=row["code_hash"], client_id=row["client_id"],
                         visitor_id=row["visitor_id"], redirect_uri=row["redirect_uri"],
                         resource=row["resource"], scope=row["scope"],
                         code_challenge=row["code_challenge"], label=row["label"],
                         expires_at=moment(row["expires_at"]), language=row["language"],
                         used_at=now)

    @guarded
    def grant_oauth_connection(self, connection: AgentConnection, unusable_hash: str,
                               code_hash: str, tokens: OAuthTokens) -> None:
        """Make the connection an exchanged code stands for, with its first tokens, at once.
        A granted connection has no pasted token: `unusable_hash` is the hash of a value
        nobody was given."""
        moment_in = self.dialect.moment_in
        with self.transaction():
            self._run(CREATE_CONNECTION, {
                "id": connection.id, "token_hash": unusable_hash,
                "visitor_id": connection.visitor_id, "label": connection.label,
                "created_at": moment_in(connection.created_at),
                "expires_at": moment_in(connection.expires_at),
                "client_id": tokens.client_id, "language": connection.language})
            self._run(CODE_EXCHANGED, {"code_hash": code_hash, "connection_id": connection.id})
            self._add_tokens(tokens)

    @guarded
    def add_oauth_tokens(self, tokens: OAuthTokens) -> None:
        """Keep a new issue of tokens for its connection."""
        self._add_tokens(tokens)

    def _add_tokens(self, tokens: OAuthTokens) -> None:
        self._run(ADD_TOKENS, {
            "access_hash": tokens.access_hash, "refresh_hash": tokens.refresh_hash,
            "connection_id": tokens.connection_id, "client_id": tokens.client_id,
            "resource": tokens.resource, "scope": tokens.scope,
            "access_expires_at": self.dialect.moment_in(tokens.access_expires_at)})

    @guarded
    def oauth_access(self, access_hash: str, now: datetime
                     ) -> tuple[AgentConnection, str] | None:
        """The connection an access token still good at `now` acts for, and the resource the
        token was issued for; None for a token unknown, expired or whose connection ended."""
        row = self._one(ACCESS, {"access_hash": access_hash,
                                 "now": self.dialect.moment_in(now)})
        if row is None:
            return None
        moment = self.dialect.moment_out
        connection = AgentConnection(
            id=row["id"], visitor_id=row["visitor_id"], label=row["label"],
            created_at=moment(row["created_at"]), expires_at=moment(row["expires_at"]),
            last_used_at=moment(row["last_used_at"]) if row["last_used_at"] else None,
            client_id=row["client_id"], language=row["language"])
        return connection, str(row["token_resource"])

    @guarded
    def spend_refresh_token(self, refresh_hash: str, now: datetime) -> OAuthTokens | None:
        """Spend a refresh token: its issue, or None. One spent before ends its connection
        and every token of it (a refresh token used twice was copied)."""
        row = self._returning(SPEND_REFRESH, {"refresh_hash": refresh_hash,
                                              "now": self.dialect.moment_in(now)})
        if row is not None:
            return tokens_of(row, self.dialect)
        spent = self._one(REFRESH_OWNER, {"refresh_hash": refresh_hash})
        if spent is not None:
            self._run(END_CONNECTION, {"id": spent["connection_id"]})
        return None
