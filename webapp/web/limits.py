"""Rate limits at several scopes, each set in configuration: one client cannot take every seat,
nor every thread.

`BUDGETS` lists them: writes per client; writes, and the writes that start a new visitor, per
address; reads per address; registrations prepared for one event per address and per
e-mail address; and sign-in links asked for per e-mail address and per address. A client is
the visitor of the session, else the browser session (before its first write there is no
visitor yet), else the address: so people behind one address (an
office, a conference Wi-Fi) each have their own budget, under the address's ceiling.
A new session costs one GET, so the address, not the session, bounds what one machine can do;
and every registration is prepared first, so counting those per event bounds the seats one
address or one e-mail address takes. The address is the connection's, or behind trusted
proxies the one they saw (`proxies.py`); never a header the client sets.

An agent calling `/mcp` sends every message as a POST, so what it spends is read from the
message (`spends`): a call of a tool that is not read-only writes; everything else (the
handshake, `ping`, notifications, `tools/list`, `server/discover`, searches, details) reads,
so a spent write budget never keeps an agent from connecting or listing its tools. Its client
is its live connection, else its address; a connected agent spends no budget of its address
(hosted clients call from a few addresses for all their users: each connection was made by a
person, on a page that spent their address's budget).

Each budget is a Flask-Limiter application limit with its own key function and scope;
`spends` and `exempt_when` say which requests it counts. Flask-Limiter reads its own
`RATELIMIT_*` settings too (`RATELIMIT_ENABLED`, `RATELIMIT_STORAGE_URI`), and keeps its
counters in that storage: by default in a file every gunicorn worker of the host shares
(`host://`, `limit_counters.py`), so the budgets hold however many workers serve;
`redis://host:6379` gives every host one budget. Keys are made only from what the schema
loaded (an id the schema refused counts in no event's budget), so none is longer than its
pattern allows. The
429 is answered as an envelope by `errors.handle_http_error`, with the sentence of the budget
it met and the seconds to wait (`errors.retry_after`), which the Retry-After header repeats.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Flask
from flask import Response
from flask import current_app
from flask import g
from flask import has_request_context
from flask import request
from flask import session
from flask_babel import lazy_gettext as _l
from flask_limiter import ApplicationLimit
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

from flask_webmcp.actions import Action
from flask_webmcp.inputs import InputError
from flask_webmcp.inputs import input_fields
from flask_webmcp.inputs import load_input
from flask_webmcp.inputs import read_input
from flask_webmcp.inputs import schema_instance
from flask_webmcp.mcp import requested_tool_call
from flask_webmcp.routes import current_role
from flask_webmcp.text import Text

from ..domain.actions.accounts import request_sign_in
from ..domain.actions.registrations import prepare_event_registration
from ..domain.catalog import CATALOG
from . import limit_counters  # noqa: F401 - registers `host://` and `local://`
from .mcp import is_mcp_request
from .mcp import live_connection
from .visitors import cookie_visitor

WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
READ_METHODS = ("GET", "HEAD")
# What a request spends: the budgets of writes, or those of reads.
WRITE = "write"
READ = "read"


def spends() -> str | None:
    """Which budgets the current request spends: WRITE, READ, or None (OPTIONS)."""
    if is_mcp_request():
        return WRITE if agent_writes() else READ
    if request.method in WRITE_METHODS:
        return WRITE
    return READ if request.method in READ_METHODS else None


def agent_writes() -> bool:
    """The MCP message calls a tool that is not read-only (a retry that only fetches an
    earlier call's answer writes nothing; an unknown tool is refused unrun)."""
    call = requested_tool_call()
    return (call is not None and not call.resumed and call.name in CATALOG
            and not CATALOG[call.name].hints.read_only)


def client_key() -> str:
    """Whose budget a request spends: the visitor, else the browser session, else the address;
    over MCP, the agent's connection, else the address (a made-up or revoked token is no
    client: each would otherwise be a fresh budget).

    The session's CSRF secret identifies a browser before its first write created a visitor;
    only its digest is used, so the secret never reaches the limiter's storage.
    """
    if is_mcp_request():
        connection = live_connection()
        return f"agent:{connection.id}" if connection else address_key()
    visitor_id = cookie_visitor()
    if visitor_id:
        return f"visitor:{visitor_id}"
    csrf_secret = session.get(current_app.config["WTF_CSRF_FIELD_NAME"])
    if isinstance(csrf_secret, str):
        return "session:" + digest(csrf_secret)
    return address_key()


def address_key() -> str:
    """The client's address (see `proxies.py` for where it comes from behind proxies)."""
    return f"address:{get_remote_address()}"


def reader_key() -> str:
    """Whose read budget a request spends: an agent's live connection, else the address."""
    return client_key() if is_mcp_request() else address_key()


def connected_agent() -> bool:
    """The request is an agent's over MCP with a live connection: its own budget, not its
    address's."""
    return is_mcp_request() and live_connection() is not None


def event_address_key() -> str:
    """The event a registration is prepared for, and the client's address."""
    prepared = registration_input()
    return f"event:{prepared['event_id'] if prepared else ''}:{address_key()}"


def event_email_key() -> str:
    """The event a registration is prepared for, and the e-mail address it gives, from a form,
    a JSON body or an MCP call alike (as a digest: no e-mail address reaches the limiter's
    storage). The schema has made one form of each address (case, full-width letters)."""
    prepared = registration_input()
    if not prepared:
        return "event::email:"
    return f"event:{prepared['event_id']}:email:{digest(prepared['email'])}"


def digest(text: str) -> str:
    """A short SHA-256 of `text`, to key counters without storing what they count."""
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def registration_input() -> dict[str, Any] | None:
    """The registration this request prepares (`loaded_input`), or None."""
    return loaded_input(prepare_event_registration)


def sign_in_email_key() -> str:
    """The address a sign-in link is asked for (as a digest), from the loaded form."""
    asked = loaded_input(request_sign_in)
    return f"sign-in:email:{digest(asked['email']) if asked else ''}"


def loaded_input(action: Action[Any]) -> dict[str, Any] | None:
    """The input this request gives `action`, as the action's schema loads it, or None when
    it runs another action or its input is refused (a refused input does nothing: the write
    budgets count it, no budget of the action does).

    Keys are made only from loaded values: raw input would let one event be counted under
    endless spellings (" evt-x", "evt-x\u3000") and let a megabyte of id become a key.
    """
    loaded: dict[str, dict[str, Any] | None] = g.setdefault("loaded_inputs", {})
    if action.name not in loaded:
        loaded[action.name] = _load_input(action)
    return loaded[action.name]


def _load_input(action: Action[Any]) -> dict[str, Any] | None:
    schema = action.schema
    try:
        if is_mcp_request():
            call = requested_tool_call()
            if call is None or call.name != action.name or call.resumed:
                return None
            return load_input(schema, input_fields(call.arguments))
        role = current_role()
        if role is None or role.action is not action or request.method != "POST":
            return None
        # The values the page address binds, as the route passes them (not its language).
        fields = schema_instance(schema).fields
        bound = {name: value for name, value in (request.view_args or {}).items()
                 if name in fields}
        return load_input(schema, read_input(), bound)
    except InputError:
        return None


def starts_no_visitor() -> bool:
    """This write does not start a visitor: the session names one already, or it is an
    agent's call over MCP (it acts for the visitor who connected it, or for nobody)."""
    return cookie_visitor() is not None or is_mcp_request()


def not_asking_for_a_sign_in_link() -> bool:
    """The request asks for no sign-in link (or its address was refused: nothing is mailed)."""
    return loaded_input(request_sign_in) is None


def not_preparing_a_registration() -> bool:
    """The request prepares no registration: neither the route of
    `prepare_event_registration` nor an MCP call of it with valid input (a retry that only
    fetches an earlier call's answer prepares nothing)."""
    return registration_input() is None


@dataclass(frozen=True)
class Budget:
    """One limit: the setting that sizes it, whose budget a request spends, which requests
    count (`spent`: WRITE or READ, see `spends`), and what the 429 tells the client (in the
    language of the request)."""

    setting: str
    key: Callable[[], str]
    spent: str
    message: Text
    exempt_when: Callable[[], bool] | None = None

    def size(self) -> str:
        """The budget as Flask-Limiter reads it for this request: the app's setting, or no
        limit at all ("") for a request that spends the other kind of budget (outside a
        request, e.g. listing the limits, the setting).

        Flask-Limiter parses and compares every application limit of every request before it
        looks at whether one counts it: a read would otherwise build and discard the seven
        write budgets, about 70 µs of CPU in a search's 0.8 ms.
        """
        if has_request_context() and spends() != self.spent:
            return ""
        return str(current_app.config[self.setting])

    def limit(self) -> ApplicationLimit:
        """The Flask-Limiter limit, sized by the app's configuration at each request."""
        return ApplicationLimit(
            limit_provider=self.size,
            key_function=self.key, scope=self.setting.removeprefix("RATELIMIT_").lower(),
            exempt_when=self.exempt_when, error_message=lambda: str(self.message))


BUDGETS = (
    Budget("RATELIMIT_WRITES", client_key, WRITE,
           _l("Too many requests in a short time. Wait a minute and try again.")),
    Budget("RATELIMIT_WRITES_PER_ADDRESS", address_key, WRITE,
           _l("Too many requests from your network in a short time. Wait a minute and try "
              "again."),
           exempt_when=connected_agent),
    Budget("RATELIMIT_NEW_VISITORS_PER_ADDRESS", address_key, WRITE,
           _l("Too many new sessions from your network in a short time. Try again later."),
           exempt_when=starts_no_visitor),
    Budget("RATELIMIT_READS_PER_ADDRESS", reader_key, READ,
           _l("Too many requests from your network in a short time. Wait a minute and try "
              "again.")),
    Budget("RATELIMIT_REGISTRATIONS_PER_EVENT_ADDRESS", event_address_key, WRITE,
           _l("Too many registrations for this event from your network. Try again later."),
           exempt_when=not_preparing_a_registration),
    Budget("RATELIMIT_REGISTRATIONS_PER_EVENT_EMAIL", event_email_key, WRITE,
           _l("Too many registrations for this event with this e-mail address. Try again "
              "later."),
           exempt_when=not_preparing_a_registration),
    Budget("RATELIMIT_SIGN_IN_PER_EMAIL", sign_in_email_key, WRITE,
           _l("Too many sign-in links for this e-mail address. Use the last one we sent, or "
              "try again later."),
           exempt_when=not_asking_for_a_sign_in_link),
    Budget("RATELIMIT_SIGN_IN_PER_ADDRESS", address_key, WRITE,
           _l("Too many sign-in links asked for from your network. Try again later."),
           exempt_when=not_asking_for_a_sign_in_link),
)


def same_retry_after(response: Response) -> Response:
    """An answer over a budget says in its Retry-After header the seconds its envelope says
    (`retryAfterSeconds`), both from `errors.retry_after`: Flask-Limiter's own header rounds
    down, to 0 in the last second of a window."""
    seconds = g.get("retry_after_seconds")
    if seconds is not None:
        response.headers["Retry-After"] = str(seconds)
    return response


def init_app(app: Flask) -> Limiter:
    """Limit every request at each scope (a limiter of its own for each app); returns it."""
    # Registered first, so it runs after Flask-Limiter has written its headers.
    app.after_request(same_retry_after)
    return Limiter(client_key, app=app, application_limits=[b.limit() for b in BUDGETS])
