"""The catalog's tools for agents that are shown no page: MCP over Streamable HTTP.

    endpoint = MCPEndpoint(catalog, name="my-site", version="1.0", call_tool=run, principal=who)
    bp.add_url_rule("/mcp", view_func=endpoint.respond, methods=endpoint.METHODS)

One POST carries one JSON-RPC message and gets one `application/json` answer (no event
streams: nothing here is long enough to need one); GET and DELETE answer 405, a notification
202 with no body. Nothing is kept between requests, so any worker of any host answers any
request. Both protocol eras that clients speak are served:

- the initialize handshake (2025-03-26, 2025-06-18, 2025-11-25): `initialize`,
  `notifications/initialized`, then `tools/list`, `tools/call` and `ping`, each carrying the
  `MCP-Protocol-Version` header (a request without one is taken as 2025-03-26, which had no
  such header). The server assigns no session id (the specification's MAY), so it has none to
  remember. A JSON-RPC error answers a request with HTTP 200, like any other answer: clients
  of this era read a 4xx as a failure of the transport and never show the error it carries.
- the stateless protocol (2026-07-28): no handshake; every request carries its version and the
  client's capabilities in `_meta`, and its method and tool name in the `Mcp-Method` and
  `Mcp-Name` headers, which must agree with the body; `server/discover` says what the server
  speaks.

`tools/list` is the catalog: names, titles, descriptions (in the request's language), each
tool's input schema for a client that is shown no page (`input_schema.remote_input_schema`),
the result envelope as output schema (its `data` as the tool's `output` declares it) and the
catalog's hints as annotations. `tools/call` hands the call to the site (`call_tool`), which
answers with the envelope: it is the `structuredContent`, with its JSON text as `content` for
older clients. A protocol fault (a body that is not JSON-RPC, an unknown method or tool, a
version the server does not speak, headers that disagree with the body) answers a JSON-RPC
error, with the HTTP status its era gives it (`ProtocolError`); a tool's failure is its
envelope with `isError`, never a protocol error, so the agent reads the same sentences a page
shows.

Browsers may call from the origins `allowed_origins` lists, and only from those (any other
`Origin` is refused 403): a preflight (`OPTIONS`) is answered 204 with what they may send,
and every answer to them says which headers they may read (CORS).

A call the site answers with a page where a person must finish something (`review_url`: a
registration the person confirms, say) is offered to a 2026-07-28 client that can open URLs
as a URL-mode elicitation: the client asks the person to open the page, then retries, and the
retry is answered with the call's own result (carried, signed, in `requestState`). Never a
form-mode elicitation: a client can answer that by itself. Nothing the client sends back
completes what the person must complete.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
from collections.abc import Callable
from collections.abc import Collection
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any
from typing import NamedTuple

from flask import Response
from flask import current_app
from flask import g
from flask import request
from itsdangerous import BadSignature
from itsdangerous import TimestampSigner
from itsdangerous import URLSafeTimedSerializer
from marshmallow import Schema
from werkzeug.exceptions import HTTPException
from werkzeug.exceptions import RequestEntityTooLarge

from .catalog import Catalog
from .catalog import Tool
from .input_schema import remote_input_schema
from .result import Status
from .result import ToolResult
from .text import Text

JSONRPC = "2.0"
HANDSHAKE_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
# The version of a handshake-era request that names none: the last one before the header.
HEADERLESS_VERSION = "2025-03-26"
MODERN_VERSIONS = ("2026-07-28",)
SUPPORTED_VERSIONS = (*HANDSHAKE_VERSIONS, *MODERN_VERSIONS)

VERSION_HEADER = "MCP-Protocol-Version"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"
VERSION_META = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"

# What a browser at an allowed origin may send (beyond the headers CORS always lets through),
# and may read of an answer: the endpoint sends no Mcp-* header (it assigns no session), but
# a client must read why it was refused (WWW-Authenticate) and how long to wait (Retry-After).
CORS_METHODS = ("POST",)
CORS_REQUEST_HEADERS = ("Authorization", "Content-Type", VERSION_HEADER, METHOD_HEADER,
                        NAME_HEADER, "Last-Event-ID")
CORS_EXPOSED_HEADERS = ("WWW-Authenticate", "Retry-After")
# How long a browser may reuse a preflight's answer (Chromium keeps it at most 2 hours); an
# origin taken off the list is refused at once all the same: every request is checked.
CORS_MAX_AGE = 3600

# JSON-RPC's own error codes, and those MCP defines (2026-07-28 renumbered them into the range
# it reserves). RATE_LIMITED is this toolkit's, outside every reserved range.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
UNSUPPORTED_VERSION = -32022
RATE_LIMITED = 429

# How long a client may keep the list of tools and what discovery said (it changes with a
# release); private, because it is written in the language the request asked for.
LIST_TTL_MS = 3_600_000
# What a tool's result says when it is no failure.
NOT_ERRORS = (Status.SUCCESS, Status.NO_RESULTS, Status.CONFIRMATION_REQUIRED)


class ProtocolError(Exception):
    """A request MCP cannot serve: answered as a JSON-RPC error with this HTTP status, or
    with the one the request's era gives a JSON-RPC error when `status` is None (see
    `error_status`)."""

    def __init__(self, code: int, message: str, status: int | None = None,
                 data: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.data = data


@dataclass(frozen=True)
class ToolOutcome:
    """How the site answered a tool call: its envelope, whether that is a failure, and the
    page where a person must finish what the call prepared (None when nothing waits)."""

    envelope: dict[str, Any]
    is_error: bool
    review_url: str | None = None
    review_message: str | None = None
    # `resource_link` content items beside the envelope (the pages of the events it lists).
    links: tuple[dict[str, Any], ...] = ()

    @classmethod
    def of(cls, result: ToolResult, review_url: str | None = None,
           review_message: str | None = None,
           links: tuple[dict[str, Any], ...] = ()) -> ToolOutcome:
        """The outcome of an action's result: a failure unless it did what was asked, found
        nothing, or waits for a person."""
        return cls(result.to_dict(), result.status not in NOT_ERRORS, review_url,
                   review_message, links)


class RequestedCall(NamedTuple):
    """The `tools/call` a request's body carries (read before the endpoint runs, e.g. by
    rate limits): the tool's name, its arguments, and whether it retries an earlier call."""

    name: str
    arguments: dict[str, Any]
    resumed: bool


@dataclass(frozen=True)
class Message:
    """One JSON-RPC request or notification, as this endpoint understood it."""

    id: str | int | None  # None: a notification (no answer but 202)
    method: str
    params: dict[str, Any]
    version: str
    modern: bool
    capabilities: dict[str, Any] = field(default_factory=dict)

    @property
    def is_notification(self) -> bool:
        return self.id is None


def real_clock() -> datetime:
    """The current time."""
    return datetime.now(UTC)


@dataclass(frozen=True)
class MCPEndpoint:
    """The MCP endpoint of one catalog of tools (see the module's docstring).

    `call_tool(tool, arguments)` runs a tool for the current request; `principal()` names
    whom the request acts for (a retry of a call is accepted only from the same one);
    `allowed_origins()` lists the browser origins that may call (any other `Origin` is
    refused: DNS-rebinding protection; non-browser clients send none); `instructions()` is
    what a client tells its model about the server.
    """

    catalog: Catalog
    name: str
    version: str
    call_tool: Callable[[Tool, dict[str, Any]], ToolOutcome]
    principal: Callable[[], str]
    title: Text | None = None
    instructions: Callable[[], str] | None = None
    allowed_origins: Callable[[], Collection[str]] = lambda: ()
    clock: Callable[[], datetime] = real_clock
    state_lifetime: timedelta = timedelta(minutes=5)

    # The methods the endpoint's route takes: POST, and those it answers itself (405 for GET
    # and DELETE, which serve no stream and end no session; OPTIONS for browsers' preflights).
    METHODS = ("GET", "POST", "DELETE", "OPTIONS")

    # -- HTTP

    def respond(self) -> Response:
        """Answer the current request (the view of the endpoint's route)."""
        try:
            if request.method == "OPTIONS":
                return self._preflight()
            if request.method != "POST":
                raise ProtocolError(INVALID_REQUEST, "The MCP endpoint takes POST requests "
                                    "only; it offers no event stream.", 405)
            self._check_transport()
            message = self._read_message()
            if message.is_notification:
                accepted = Response(status=202)
                del accepted.headers["Content-Type"]  # no body, so no type
                return self.cors(accepted)
            return self._answer(message.id, self._dispatch(message))
        except ProtocolError as error:
            response = self.error_answer(error)
            if error.status == 405:
                response.headers["Allow"] = "POST"
            return response

    def error_answer(self, error: ProtocolError) -> Response:
        """A JSON-RPC error for the current request (with its id when the body has one)."""
        body: dict[str, Any] = {"code": error.code, "message": error.message}
        if error.data is not None:
            body["data"] = error.data
        message = _raw_message()
        request_id = message.get("id") if message and _valid_id(message.get("id")) else None
        return self.cors(_json({"jsonrpc": JSONRPC, "id": request_id, "error": body},
                               error_status(error, message)))

    def http_error_answer(self, error: HTTPException) -> Response:
        """An HTTP error met before the endpoint ran (a body over the limit, say), as a
        JSON-RPC error."""
        if isinstance(error, RequestEntityTooLarge):
            return self.error_answer(ProtocolError(INVALID_REQUEST, "The request is too large.",
                                                   413))
        code = error.code or 500
        return self.error_answer(ProtocolError(INTERNAL_ERROR if code >= 500 else
                                               INVALID_REQUEST, error.name, code))

    def tool_answer(self, outcome: ToolOutcome) -> Response:
        """The current request's `tools/call`, answered with `outcome` (e.g. the envelope of a
        limit it met before it ran)."""
        message = _raw_message() or {}
        request_id = message.get("id") if _valid_id(message.get("id")) else None
        return self._answer(request_id, self._tool_result(outcome, _is_modern(message)))

    def cors(self, response: Response) -> Response:
        """`response` with what a browser at an allowed origin needs to read it (nothing for
        any other origin, or for a client that sends none)."""
        origin = request.headers.get("Origin")
        response.vary.add("Origin")
        if origin is not None and origin in self.allowed_origins():
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Access-Control-Expose-Headers"] = ", ".join(CORS_EXPOSED_HEADERS)
        return response

    def _answer(self, request_id: str | int | None, result: dict[str, Any]) -> Response:
        return self.cors(_json({"jsonrpc": JSONRPC, "id": request_id, "result": result}, 200))

    def _preflight(self) -> Response:
        """A browser asks what it may send: from an allowed origin, a POST with MCP's headers;
        from any other, nothing (403, as for its requests)."""
        self._check_origin()
        response = Response(status=204)
        del response.headers["Content-Type"]
        if request.headers.get("Origin") is not None:
            response.headers["Access-Control-Allow-Methods"] = ", ".join(CORS_METHODS)
            response.headers["Access-Control-Allow-Headers"] = ", ".join(CORS_REQUEST_HEADERS)
            response.headers["Access-Control-Max-Age"] = str(CORS_MAX_AGE)
        return self.cors(response)

    def _check_origin(self) -> None:
        origin = request.headers.get("Origin")
        if origin is not None and origin not in self.allowed_origins():
            raise ProtocolError(INVALID_REQUEST, "Requests from this origin are not allowed.",
                                403)

    def _check_transport(self) -> None:
        self._check_origin()
        if request.headers.get("Accept") and not request.accept_mimetypes["application/json"]:
            raise ProtocolError(INVALID_REQUEST, "This endpoint answers application/json.", 406)
        if request.mimetype != "application/json":
            raise ProtocolError(INVALID_REQUEST, "Send one JSON-RPC message as "
                                "application/json.", 415)

    # -- JSON-RPC

    def _read_message(self) -> Message:
        """The request's JSON-RPC message, checked against the transport's rules."""
        try:
            raw = json.loads(request.get_data(cache=True))
        except RequestEntityTooLarge:
            raise ProtocolError(INVALID_REQUEST, "The request is too large.", 413) from None
        except (ValueError, RecursionError):
            raise ProtocolError(PARSE_ERROR, "The body is not JSON.", 400) from None
        # A body that is no request is input the transport refuses with an HTTP error, in
        # every era: there is no request to answer.
        if not isinstance(raw, dict):
            raise ProtocolError(INVALID_REQUEST, "Send one JSON-RPC message: an object (MCP "
                                "has no batches).", 400)
        if "method" not in raw and ("result" in raw or "error" in raw):
            raise ProtocolError(INVALID_REQUEST, "This server sends no requests, so it takes "
                                "no responses.", 400)
        method, params = raw.get("method"), raw.get("params", {})
        if raw.get("jsonrpc") != JSONRPC or not isinstance(method, str):
            raise ProtocolError(INVALID_REQUEST, "Not a JSON-RPC 2.0 request.", 400)
        if "id" in raw and not _valid_id(raw["id"]):
            raise ProtocolError(INVALID_REQUEST, "A request id is a string or an integer.", 400)
        if not isinstance(params, dict):
            raise ProtocolError(INVALID_PARAMS, "params must be an object.")
        request_id = raw.get("id")
        if VERSION_META in _meta_of(params):
            return self._modern(request_id, method, params)
        return self._legacy(request_id, method, params)

    def _modern(self, request_id: str | int | None, method: str, params: dict[str, Any]
                ) -> Message:
        """A 2026-07-28 request: its version and capabilities in `_meta`, mirrored in headers."""
        meta = _meta_of(params)
        version = meta[VERSION_META]
        if request.headers.get(VERSION_HEADER) != version:
            raise ProtocolError(HEADER_MISMATCH, f"The {VERSION_HEADER} header does not match "
                                "the protocol version in _meta.")
        if version not in MODERN_VERSIONS:
            raise ProtocolError(UNSUPPORTED_VERSION, "Unsupported protocol version.", data={
                "supported": list(SUPPORTED_VERSIONS), "requested": version})
        if request.headers.get(METHOD_HEADER) != method:
            raise ProtocolError(HEADER_MISMATCH, f"The {METHOD_HEADER} header does not match "
                                "the method.")
        if method == "tools/call" and _header_value(NAME_HEADER) != params.get("name"):
            raise ProtocolError(HEADER_MISMATCH, f"The {NAME_HEADER} header does not match "
                                "the tool's name.")
        capabilities = meta.get(CAPABILITIES_META)
        if not isinstance(capabilities, dict):
            raise ProtocolError(INVALID_PARAMS, f"_meta needs {CAPABILITIES_META}.")
        return Message(request_id, method, params, version, True, capabilities)

    def _legacy(self, request_id: str | int | None, method: str, params: dict[str, Any]
                ) -> Message:
        """A request of the handshake era: after `initialize`, its version in a header."""
        if method == "initialize":
            return Message(request_id, method, params, "", False)
        version = request.headers.get(VERSION_HEADER)
        if version is None:
            version = HEADERLESS_VERSION  # a client from before the header (the spec's SHOULD)
        if version in MODERN_VERSIONS:
            raise ProtocolError(INVALID_PARAMS, f"A {version} request needs {VERSION_META} "
                                f"and {CAPABILITIES_META} in _meta.", 400)
        if version not in HANDSHAKE_VERSIONS:
            raise ProtocolError(INVALID_REQUEST, f"Unsupported {VERSION_HEADER} header.", 400,
                                data={"supported": list(SUPPORTED_VERSIONS)})
        return Message(request_id, method, params, version, False)

    def _dispatch(self, message: Message) -> dict[str, Any]:
        methods: dict[str, Callable[[Message], dict[str, Any]]] = (
            {"server/discover": self._discover, "tools/list": self._list_tools,
             "tools/call": self._call_tool} if message.modern else
            {"initialize": self._initialize, "ping": lambda _: {},
             "tools/list": self._list_tools, "tools/call": self._call_tool})
        if message.method not in methods:
            raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {message.method}")
        return methods[message.method](message)

    # -- the methods

    def _initialize(self, message: Message) -> dict[str, Any]:
        requested = message.params.get("protocolVersion")
        if not isinstance(requested, str):
            raise ProtocolError(INVALID_PARAMS, "initialize needs a protocolVersion.")
        # The client's version if the server speaks it, else the newest the server speaks.
        version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
        return self._described({"protocolVersion": version,
                                "capabilities": {"tools": {"listChanged": False}},
                                "serverInfo": self._server_info()})

    def _discover(self, message: Message) -> dict[str, Any]:
        return self._modern_result(self._described({
            "supportedVersions": list(SUPPORTED_VERSIONS),
            "capabilities": {"tools": {"listChanged": False}},
            "ttlMs": LIST_TTL_MS, "cacheScope": "private"}))

    def _list_tools(self, message: Message) -> dict[str, Any]:
        result: dict[str, Any] = {"tools": [self.definition(tool) for tool in self.catalog]}
        if message.modern:
            result.update(ttlMs=LIST_TTL_MS, cacheScope="private")
            return self._modern_result(result)
        return result

    def _call_tool(self, message: Message) -> dict[str, Any]:
        name, arguments = message.params.get("name"), message.params.get("arguments")
        if not isinstance(name, str) or name not in self.catalog:
            raise ProtocolError(INVALID_PARAMS, f"Unknown tool: {name}")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise ProtocolError(INVALID_PARAMS, "arguments must be an object.")
        tool = self.catalog[name]
        state = message.params.get("requestState")
        if state is not None:
            return self._tool_result(self._resume(state, tool, arguments), message.modern)
        outcome = self.call_tool(tool, arguments)
        if outcome.review_url and message.modern and _opens_urls(message.capabilities):
            return self._ask_person(outcome, tool, arguments)
        return self._tool_result(outcome, message.modern)

    def definition(self, tool: Tool) -> dict[str, Any]:
        """A catalog tool as `tools/list` describes it to a client that is shown no page."""
        hints = tool.hints
        return {
            "name": tool.name,
            "title": str(tool.title),
            "description": str(tool.description),
            "inputSchema": remote_input_schema(tool),
            "outputSchema": output_schema(tool.output),
            "annotations": {"readOnlyHint": hints.read_only,
                            "destructiveHint": hints.destructive,
                            "idempotentHint": hints.idempotent,
                            "openWorldHint": hints.open_world},
        }

    def _tool_result(self, outcome: ToolOutcome, modern: bool) -> dict[str, Any]:
        result = {
            "content": [{"type": "text",
                         "text": json.dumps(outcome.envelope, ensure_ascii=False)},
                        *outcome.links],
            "structuredContent": outcome.envelope,
            "isError": outcome.is_error,
        }
        return self._modern_result(result) if modern else result

    # -- a person finishes what a call prepared (URL-mode elicitation, 2026-07-28)

    def _ask_person(self, outcome: ToolOutcome, tool: Tool, arguments: dict[str, Any]
                    ) -> dict[str, Any]:
        """Ask the client to open the page where the person finishes what the call prepared;
        its retry gets the call's own result back from the signed `requestState`."""
        state = self._states().dumps({
            "principal": self.principal(), "tool": tool.name, "arguments": _digest(arguments),
            "envelope": outcome.envelope, "isError": outcome.is_error})
        return {"resultType": "input_required", "requestState": state, "inputRequests": {
            "review": {"method": "elicitation/create", "params": {
                "mode": "url", "url": outcome.review_url,
                "message": outcome.review_message or str(outcome.envelope.get("message"))}}}}

    def _resume(self, state: Any, tool: Tool, arguments: dict[str, Any]) -> ToolOutcome:
        """The outcome carried by a retry's `requestState`, if this server signed it lately,
        for this call and the same principal; whatever the client answered the elicitation,
        the call's result is what it was (only the person, on the page, finishes it)."""
        try:
            carried = self._states().loads(state, max_age=int(self.state_lifetime.total_seconds()))
        except (BadSignature, TypeError, ValueError):
            carried = None
        if (not isinstance(carried, dict) or carried.get("principal") != self.principal()
                or carried.get("tool") != tool.name
                or carried.get("arguments") != _digest(arguments)):
            raise ProtocolError(INVALID_PARAMS, "requestState is not valid for this call (it "
                                "was altered, has expired or belongs to another call).")
        return ToolOutcome(carried["envelope"], bool(carried["isError"]))

    def _states(self) -> URLSafeTimedSerializer:
        return URLSafeTimedSerializer(current_app.secret_key or "", salt="webmcp.mcp.state",
                                      signer=_ClockSigner, signer_kwargs={"clock": self.clock})

    # -- what every answer says about the server

    def _server_info(self) -> dict[str, Any]:
        info = {"name": self.name, "version": self.version}
        return {**info, "title": str(self.title)} if self.title is not None else info

    def _described(self, result: dict[str, Any]) -> dict[str, Any]:
        return {**result, "instructions": self.instructions()} if self.instructions else result

    def _modern_result(self, result: dict[str, Any]) -> dict[str, Any]:
        return {"resultType": "complete", **result,
                "_meta": {SERVER_INFO_META: self._server_info()}}


def error_status(error: ProtocolError, message: dict[str, Any] | None) -> int:
    """The HTTP status of a JSON-RPC error answering `message` (the request's body).

    The error's own status if it has one (a refusal of the transport: an origin, a media
    type, a size, a version header). Else the request's era decides: a 2026-07-28 request is
    refused 404 for a method the server lacks and 400 for anything else, as that revision
    says; a handshake-era request gets its error with 200, like any answer to a request (the
    TypeScript SDK reports any other status as a transport failure, not the error). Input
    that is no request (a notification) is refused 400.
    """
    if error.status is not None:
        return error.status
    if message is None or not _valid_id(message.get("id")):
        return 400
    if _is_modern(message):
        return 404 if error.code == METHOD_NOT_FOUND else 400
    return 200


def requested_tool_call() -> RequestedCall | None:
    """The `tools/call` the current request's body carries, or None (read leniently: the
    endpoint checks the message when it runs)."""
    message = _raw_message()
    params = message.get("params") if message else None
    if not message or message.get("method") != "tools/call" or not isinstance(params, dict):
        return None
    name, arguments = params.get("name"), params.get("arguments") or {}
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return None
    return RequestedCall(name, arguments, params.get("requestState") is not None)


@functools.cache
def output_schema(data: type[Schema] | None = None) -> dict[str, Any]:
    """A tool's output schema: the result envelope, its `data` as the tool's `output` says
    (from `apidoc`, imported on first use: apispec is needed by nothing else while the site
    runs)."""
    from .apidoc import envelope_json_schema

    return envelope_json_schema(data)


class _ClockSigner(TimestampSigner):
    """A timestamp signer that reads the endpoint's clock (so tests that move it move this)."""

    def __init__(self, *args: Any, clock: Callable[[], datetime], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.clock = clock

    def get_timestamp(self) -> int:
        return int(self.clock().timestamp())


def _raw_message() -> dict[str, Any] | None:
    """The current request's body as a JSON object, or None (read once per request)."""
    if "webmcp_mcp_message" not in g:
        try:
            body = request.get_json(silent=True)
        except (RecursionError, HTTPException):  # nested too deep; a body over the limit
            body = None
        g.webmcp_mcp_message = body if isinstance(body, dict) else None
    message: dict[str, Any] | None = g.webmcp_mcp_message
    return message


def _is_modern(message: dict[str, Any]) -> bool:
    """Whether a request's body is of the 2026-07-28 era (its version in `_meta`)."""
    params = message.get("params")
    return isinstance(params, dict) and VERSION_META in _meta_of(params)


def _meta_of(params: dict[str, Any]) -> dict[str, Any]:
    meta = params.get("_meta")
    return meta if isinstance(meta, dict) else {}


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _header_value(name: str) -> str | None:
    """A header that may carry its value Base64-encoded (`=?base64?…?=`), decoded."""
    value = request.headers.get(name)
    if value is None or not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    try:
        return base64.b64decode(value[len("=?base64?"):-2], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def _opens_urls(capabilities: dict[str, Any]) -> bool:
    """Whether the client declared URL-mode elicitation (an empty `elicitation` means form
    mode only)."""
    elicitation = capabilities.get("elicitation")
    return isinstance(elicitation, dict) and isinstance(elicitation.get("url"), dict)


def _digest(arguments: dict[str, Any]) -> str:
    canonical = json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _json(body: dict[str, Any], status: int) -> Response:
    return Response(json.dumps(body, ensure_ascii=False), status=status,
                    mimetype="application/json")

__all__ = ["INTERNAL_ERROR", "INVALID_PARAMS", "MCPEndpoint", "METHOD_NOT_FOUND", "ProtocolError",
           "RATE_LIMITED", "SUPPORTED_VERSIONS", "ToolOutcome", "error_status", "output_schema",
           "requested_tool_call"]
