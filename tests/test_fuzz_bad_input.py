"""Bad input fuzzing: generated requests to every tool route and confirm route.

Query strings, form posts and JSON bodies carry oversized values, wrong types, unknown fields,
FTS5 operators and quotes, unicode edge cases (RTL marks, combining characters, NUL, emoji),
invalid dates, hostile path segments, and valid, missing or forged CSRF tokens; each is asked
for as JSON, as an htmx partial and as a full page (redirects followed). Every answer must be
a well-formed envelope with a status from the closed vocabulary, never a 500 or an
`internal_error`, and must leak no traceback, SQL, file path, token or cookie value.
"""

from __future__ import annotations

import json
import urllib.parse
from collections import Counter
from typing import Any

import pytest
from bs4 import BeautifulSoup
from helpers import HTMX
from helpers import RENDERINGS as THREE_RENDERINGS
from helpers import Visitor
from helpers import assert_no_leak
from hypothesis import HealthCheck
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from flask_webmcp.result import Status
from webapp.domain.catalog import CATALOG
from webapp.domain.schemas import LEVELS
from webapp.domain.schemas import LOCATIONS
from webapp.domain.schemas import PRICES

# Thousands of generated requests, a few seconds a test: `make check` leaves them to `make test`.
pytestmark = pytest.mark.slow

EVENTS = ["evt-webmcp-intro", "evt-agent-testing", "evt-semantic-html", "evt-malicious-copy"]
# The three renderings, and the htmx partial the JS bridge asks for on an agent's behalf.
RENDERINGS = {**THREE_RENDERINGS, "agent": {**HTMX, "WebMCP-Agent-Invoked": "true"}}
STATUSES = {status.word: status for status in Status}
# HTTP codes a status may be sent with besides its own (docs/design.md §4).
# 403: a human-only step (a confirm form) refuses a request marked as an agent's call.
OTHER_CODES = {"success": {201}, "invalid_input": {400, 403, 405, 413}}
ENVELOPE_TYPES = {"action": str, "status": str, "message": str, "retryable": bool,
                  "data": dict, "errors": dict, "nextAction": str, "requiresUserDecision": bool,
                  "appliedFilters": dict, "constraintsRelaxed": bool, "untrustedContent": dict}
REQUIRED_KEYS = {"action", "status", "message", "retryable"}
# Stable in CI: the same examples every run, no example database, no timing deadline. One
# app (and one browser) serves all the examples of a test, as a real site serves a stream.
STABLE = settings(deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.function_scoped_fixture,
                                         HealthCheck.too_slow])


def fuzz(examples: int) -> settings:
    """Settings for one fuzzing run of `examples` generated requests."""
    return settings(STABLE, max_examples=examples)

# -- what is generated ------------------------------------------------------------------------

FTS_AND_SQL = st.sampled_from([
    '"', "'", '""', '"web', 'web"', "'web'", 'a" OR "b', "web OR mcp", "web AND NOT mcp",
    "NEAR(web mcp, 2)", "web*", "*", "^web", "title:web", "{title summary}: web", "(web", ")",
    "-web", "+web", "web NOT", "OR", "AND", "NOT", "'; DROP TABLE events; --",
    "1' OR '1'='1", "\\", "%", "_", "%%", "web\\", "\"\"\"\"", "web\"*\"", "a:b:c",
])
UNICODE_EDGES = st.sampled_from([
    "\u202eweb", "\u200f\u200eweb", "e\u0301\u0301\u0301\u0301", "\x00", "web\x00mcp",
    "\U0001f600", "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\ufeff", "\u2028\u2029",
    "\uffff", "\ufdfa", "\u0130", "\u00df", "\U0001d568\U0001d556\U0001d553", "\u0661",
    "\uff11", "\t\n\r", "\u00a0", "\u3000", "\x7f", "\x1b[31m", "Z\u0351\u0352\u0353\u0354",
])
LONG_TEXT = st.one_of(
    st.integers(min_value=101, max_value=20_000).map(lambda n: "x" * n),
    st.integers(min_value=30, max_value=3_000).map(lambda n: "\U0001f600\u0301" * n),
)
PLAIN_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=60)
TEXT = st.one_of(PLAIN_TEXT, FTS_AND_SQL, UNICODE_EDGES, LONG_TEXT,
                 st.lists(st.one_of(PLAIN_TEXT, FTS_AND_SQL, UNICODE_EDGES), min_size=2,
                          max_size=4).map("".join))
JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-10**40, max_value=10**40),
                         st.floats(allow_nan=False, allow_infinity=False), TEXT)
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6)
DATES = st.one_of(
    st.dates().map(lambda day: day.isoformat()),
    st.sampled_from(["0001-01-01", "9999-12-31", "9999-12-30", "2026-02-30", "2027-02-29",
                     "2026-13-01", "2026-00-10", "0000-00-00", "99999-01-01", "-2026-01-01",
                     "2026-1-1", "2026/01/01", "01/02/2026", "yesterday", "2026-01-01T10:00",
                     "2026-01-01T10:00:00+08:00", "20260101", "1e10",
                     "\uff12\uff10\uff12\uff16-01-01"]),
    TEXT)
PAGES = st.one_of(st.integers(min_value=-10**6, max_value=10**6).map(str),
                  st.sampled_from(["0", "-1", "1001", "1e3", "1.5", "NaN", "Infinity", "\u0661",
                                   "\uff11", "9" * 50, "0x10", " 2 ", "+3"]),
                  TEXT)


def choice_or_text(vocabulary: dict[str, str]):
    return st.one_of(st.sampled_from(["", *vocabulary]), TEXT)


SEARCH_FIELDS = {"query": TEXT, "location": choice_or_text(LOCATIONS),
                 "price": choice_or_text(PRICES), "level": choice_or_text(LEVELS),
                 "date_from": DATES, "date_to": DATES, "page": PAGES}
UNKNOWN_FIELDS = st.dictionaries(
    st.one_of(st.sampled_from(["seats", "event_id", "visitor", "admin", "csrf", "__proto__",
                               "registration_id", "confirmation_token", "query[]"]),
              st.text(min_size=1, max_size=12)),
    TEXT, max_size=2)
SEGMENTS = st.one_of(
    st.sampled_from([*EVENTS, "evt-no-such-event", "reg-aaaaaaaaaaaa", "..", ".",
                     "../../etc/passwd", "..%2f..%2fetc%2fpasswd", "evt-x/../../admin",
                     "<script>alert(1)</script>", "' OR 1=1 --", "evt-" + "a" * 64,
                     "evt-" + "a" * 65, "%00", "evt-%00", "EVT-WEBMCP-INTRO", "evt-webmcp-intro ",
                     "evt-webmcp-intro;drop", "reg-" + "A" * 64, "reg-" + "A" * 65]),
    TEXT.filter(lambda text: text.strip() != ""))
CSRF_MODES = st.sampled_from(["valid", "valid", "valid", "missing", "forged"])
RENDERING = st.sampled_from(list(RENDERINGS))


def fields_strategy(fields: dict[str, st.SearchStrategy[Any]]
                    ) -> st.SearchStrategy[dict[str, Any]]:
    """Some of `fields` (each with its own values), and in a third of the cases unknown ones."""
    chosen = st.fixed_dictionaries({}, optional=fields)
    none: st.SearchStrategy[dict[str, str]] = st.just({})
    unknown = st.one_of(none, none, UNKNOWN_FIELDS)
    return st.tuples(chosen, unknown).map(lambda pair: {**pair[1], **pair[0]})


def path_segment(draw_segment: str, quoted: bool) -> str:
    return urllib.parse.quote(draw_segment, safe="" if quoted else "/")


# -- sending and checking ---------------------------------------------------------------------


class Fuzzer:
    """One browser sending generated requests and checking every answer."""

    def __init__(self, app, tally: Counter[str]):
        self.app = app
        self.tally = tally
        self.visitor = Visitor(app)
        self.client = self.visitor.client
        self.csrf = self.visitor.csrf
        self.registration = self.visitor.register("evt-agent-testing")["id"]
        tokens = [self.visitor.prepare_registration(event)[1] for event in EVENTS[:2]]
        tokens.append(self.visitor.prepare_cancellation(self.registration)[1])
        self.tokens = [token for token in tokens if token]

    def secrets(self) -> list[str]:
        """What no answer may carry outside the hidden inputs made for it."""
        cookie = self.client.get_cookie("webmcp_events")
        if cookie is None:
            return []
        session = self.app.session_interface.get_signing_serializer(self.app).loads(cookie.value)
        return [value for value in (cookie.value, session.get("csrf_token"),
                                    session.get("visitor")) if value]

    def get(self, path: str, params: list[tuple[str, str]], rendering: str) -> dict[str, Any]:
        query = urllib.parse.urlencode(params)
        url = f"{path}?{query}" if query else path
        # Field names are echoed too (an unknown field is named in its error).
        return self.send("get", url, rendering, sent=[path, *(f"{k} {v}" for k, v in params)])

    def post(self, path: str, body: dict[str, Any], rendering: str, as_json: bool, csrf: str
             ) -> dict[str, Any]:
        headers = dict(RENDERINGS[rendering])
        data: dict[str, str] | str
        if as_json:
            headers["Content-Type"] = "application/json"
            if csrf != "missing":
                headers["X-CSRFToken"] = self.csrf if csrf == "valid" else "forged-token"
            data = json.dumps(body)
        else:
            data = {key: value if isinstance(value, str) else json.dumps(value)
                    for key, value in body.items()}
            if csrf != "missing":
                data["csrf_token"] = self.csrf if csrf == "valid" else "forged-token"
        envelope = self.send("post", path, rendering, sent=[path, json.dumps(body)], data=data,
                             headers=headers)
        if csrf != "valid":
            # Refused: as session_expired, or as too large to read for its token, unless the
            # address is no route at all (an encoded "/" in the segment).
            too_large = envelope["message"] == "The request is too large."
            assert (envelope["status"] == "session_expired" or too_large
                    or envelope["action"] == "request"), f"{path} accepted a {csrf} CSRF token"
        return envelope

    def send(self, method: str, url: str, rendering: str, sent: list[str], **kwargs: Any
             ) -> dict[str, Any]:
        """Send one request (following redirects) and check the answer; returns its envelope."""
        kwargs.setdefault("headers", dict(RENDERINGS[rendering]))
        before = self.secrets()
        response = getattr(self.client, method)(url, follow_redirects=True, **kwargs)
        self.tally["requests"] += 1 + len(response.history)
        self.tally["redirects followed"] += len(response.history)
        secrets = before + self.secrets() + self.tokens
        envelope = check_answer(response, rendering, sent, secrets)
        self.tally["well-formed"] += 1
        self.tally["secrets checked"] += len(secrets)
        self.tally[f"status {envelope['status']}"] += 1
        return envelope


def check_answer(response, rendering: str, sent: list[str], secrets: list[str]
                 ) -> dict[str, Any]:
    """A well-formed envelope, consistent with its HTTP status, that leaks nothing."""
    text = response.get_data(as_text=True)
    envelope: dict[str, Any]
    assert response.status_code < 500, f"{response.status_code}: {text[:300]}"
    if rendering == "json":
        assert response.mimetype == "application/json"
        envelope = response.get_json()
        envelope_text = text
    else:
        assert response.mimetype == "text/html"
        soup = BeautifulSoup(text, "html.parser")
        blocks = soup.find_all("script", type="application/ld+json")
        assert len(blocks) == 1, f"{len(blocks)} JSON-LD blocks"
        envelope_text = blocks[0].get_text()
        envelope = json.loads(envelope_text)
        # A token is random text: a signed CSRF token (payload.time.signature) holds ".py"
        # once in a couple of thousand pages. Only the rest of the page can leak.
        text = check_page_is_inert(soup, secrets)
    check_envelope(envelope, response.status_code)
    assert envelope["status"] != "internal_error", f"bad input broke the server: {envelope}"
    for secret in secrets:
        assert secret not in envelope_text, "a token or cookie value reached the envelope"
    assert_no_leak(text, given=" ".join(sent))
    return envelope


def check_envelope(envelope, http_status: int) -> None:
    assert isinstance(envelope, dict)
    assert REQUIRED_KEYS <= set(envelope) <= set(ENVELOPE_TYPES), sorted(envelope)
    for key, value in envelope.items():
        assert isinstance(value, ENVELOPE_TYPES[key]), f"{key} is {type(value).__name__}"
    status = STATUSES[envelope["status"]]
    assert envelope["retryable"] is status.retryable
    assert envelope["message"].strip()
    assert http_status in {status.http_status, *OTHER_CODES.get(status.word, ())}
    for field, messages in envelope.get("errors", {}).items():
        assert isinstance(field, str) and messages
        assert all(isinstance(message, str) for message in messages)
    if "untrustedContent" in envelope:
        assert envelope["untrustedContent"]["fields"] and envelope["untrustedContent"]["note"]


def check_page_is_inert(soup: BeautifulSoup, secrets: list[str]) -> str:
    """Reflected input made no script, handler or tool, and secrets sit only in their inputs;
    the page without those inputs."""
    for script in soup.find_all("script"):
        assert script.get("src") or script.get("type") == "application/ld+json"
    for element in soup.find_all(True):
        assert not any(name.lower().startswith("on") for name in element.attrs), element.name
        if element.has_attr("toolname"):
            assert element["toolname"] in CATALOG
    for hidden in soup.find_all("input", attrs={"name": ["csrf_token", "confirmation_token"]}):
        hidden.decompose()
    rest = str(soup)
    for secret in secrets:
        assert secret not in rest, "a token or cookie value appeared outside its hidden input"
    return rest


# -- the fuzzing runs -------------------------------------------------------------------------


@pytest.fixture
def app_config():
    # Thousands of writes from one browser: far above any real budget, but still limited.
    return {"RATELIMIT_WRITES": "1000000 per hour"}


def summarize(counts) -> str:
    statuses = ", ".join(f"{k.removeprefix('status ')}: {v}" for k, v in sorted(counts.items())
                         if k.startswith("status "))
    return (f"bad input fuzzing: {counts['requests']} requests sent ({counts['redirects followed']}"
            f" of them redirects followed), {counts['well-formed']} answers passed every check "
            f"({counts['secrets checked']} token/cookie checks; statuses: {statuses})")


@pytest.fixture
def fuzzer(app, tally):
    return Fuzzer(app, tally)


def as_params(fields: dict[str, Any], repeat: str | None) -> list[tuple[str, str]]:
    """Query parameters from generated values (a wrong type arrives as its JSON text)."""
    params = [(key, value if isinstance(value, str) else json.dumps(value))
              for key, value in fields.items()]
    if repeat and params:
        params.append((params[0][0], repeat))
    return params


@fuzz(450)
@given(fields=fields_strategy(SEARCH_FIELDS), repeat=st.one_of(st.none(), TEXT),
       rendering=RENDERING)
# The edges of the calendar, always tried: date arithmetic must not leave it.
@example(fields={"date_from": "0001-01-01"}, repeat=None, rendering="json")
@example(fields={"date_to": "9999-12-31"}, repeat=None, rendering="page")
@example(fields={"query": '"NEAR(web* "', "date_from": "9999-12-31", "date_to": "9999-12-31"},
         repeat=None, rendering="partial")
def test_search_events_query_strings(fuzzer, fields, repeat, rendering):
    fuzzer.get("/en/events", as_params(fields, repeat), rendering)


@fuzz(250)
@given(segment=SEGMENTS, quoted=st.booleans(), fields=UNKNOWN_FIELDS, rendering=RENDERING)
def test_event_pages_with_hostile_path_segments(fuzzer, segment, quoted, fields, rendering):
    path = f"/events/{path_segment(segment, quoted)}"
    fuzzer.send("get", path + "?" + urllib.parse.urlencode(as_params(fields, None)),
                rendering, sent=[segment, *(f"{k} {v}" for k, v in fields.items())])


@fuzz(200)
@given(fields=fields_strategy({"event_id": st.one_of(st.sampled_from(EVENTS), SEGMENTS)}),
       repeat=st.one_of(st.none(), TEXT), rendering=RENDERING)
def test_event_details_over_listed_results(fuzzer, fields, repeat, rendering):
    fuzzer.get("/en/events/details", as_params(fields, repeat), rendering)


@fuzz(250)
@given(segment=SEGMENTS, quoted=st.booleans(), body=UNKNOWN_FIELDS, as_json=st.booleans(),
       csrf=CSRF_MODES, rendering=RENDERING)
def test_save_event_posts(fuzzer, segment, quoted, body, as_json, csrf, rendering):
    path = f"/events/{path_segment(segment, quoted)}/save"
    fuzzer.post(path, body, rendering, as_json, csrf)


REGISTRATION_FIELDS = {
    "attendee_name": st.one_of(TEXT, JSON_VALUES),
    "email": st.one_of(st.emails().map(str), TEXT, JSON_VALUES,
                       st.sampled_from(["a@b", "a@example.com" + "m" * 300, "@example.com",
                                        "a@@example.com", "\"a b\"@example.com",
                                        "a@example.com\r\nBcc: x@example.com"])),
}


@fuzz(350)
@given(segment=st.one_of(st.sampled_from(EVENTS), SEGMENTS),
       body=fields_strategy(REGISTRATION_FIELDS), as_json=st.booleans(), csrf=CSRF_MODES,
       rendering=RENDERING)
def test_prepare_event_registration_posts(fuzzer, segment, body, as_json, csrf, rendering):
    path = f"/events/{path_segment(segment, True)}/register"
    fuzzer.post(path, body, rendering, as_json, csrf)


@fuzz(250)
@given(data=st.data(), as_json=st.booleans(), csrf=CSRF_MODES, rendering=RENDERING)
def test_prepare_registration_cancellation_posts(fuzzer, data, as_json, csrf, rendering):
    ids = st.one_of(st.just(fuzzer.registration), SEGMENTS, JSON_VALUES)
    body = data.draw(fields_strategy({"registration_id": ids}))
    fuzzer.post("/registrations/cancellation", body, rendering, as_json, csrf)


@fuzz(250)
@given(data=st.data(), as_json=st.booleans(), csrf=CSRF_MODES, rendering=RENDERING)
def test_confirm_registration_posts(fuzzer, data, as_json, csrf, rendering):
    tokens = st.one_of(st.sampled_from(fuzzer.tokens), TEXT, JSON_VALUES)
    body = data.draw(fields_strategy({"confirmation_token": tokens}))
    fuzzer.post("/registrations/confirm", body, rendering, as_json, csrf)


@fuzz(250)
@given(data=st.data(), quoted=st.booleans(), as_json=st.booleans(), csrf=CSRF_MODES,
       rendering=RENDERING)
def test_confirm_cancellation_posts(fuzzer, data, quoted, as_json, csrf, rendering):
    segment = data.draw(st.one_of(st.just(fuzzer.registration), SEGMENTS))
    tokens = st.one_of(st.sampled_from(fuzzer.tokens), TEXT, JSON_VALUES)
    body = data.draw(fields_strategy({"confirmation_token": tokens}))
    path = f"/registrations/{path_segment(segment, quoted)}/cancel"
    fuzzer.post(path, body, rendering, as_json, csrf)


POST_PATHS = ["/events/evt-webmcp-intro/save", "/events/evt-webmcp-intro/register",
              "/registrations/cancellation", "/registrations/confirm",
              "/registrations/reg-aaaaaaaaaaaa/cancel"]
RAW_BODIES = st.one_of(
    st.sampled_from([b"", b"{", b"[]", b"null", b'"text"', b"1", b"{\"a\":", b"\xff\xfe\x00",
                     b"[" * 30_000 + b"]" * 30_000, b"{\"a\":" * 10_000 + b"1" + b"}" * 10_000,
                     b'{"confirmation_token": NaN}', b'{"x": 1e999999}', b"\xef\xbb\xbf{}",
                     b'{"attendee_name": "a", "attendee_name": "b"}', b"a=1&a=2&a=3",
                     b"%zz=%zz", b"csrf_token=&csrf_token=x"]),
    st.binary(max_size=300))
CONTENT_TYPES = st.sampled_from(["application/json", "application/x-www-form-urlencoded",
                                 "multipart/form-data; boundary=xyz", "text/plain",
                                 "application/json; charset=utf-16", "application/xml",
                                 "application/json; charset=latin-1"])


@fuzz(250)
@given(path=st.sampled_from(POST_PATHS), body=RAW_BODIES, content_type=CONTENT_TYPES,
       rendering=RENDERING)
# JSON nested deeper than the parser's recursion limit, always tried.
@example(path=POST_PATHS[3], body=b"[" * 30_000 + b"]" * 30_000,
         content_type="application/json", rendering="json")
@example(path=POST_PATHS[1], body=b'{"a":' * 10_000 + b"1" + b"}" * 10_000,
         content_type="application/json", rendering="page")
def test_raw_bodies_of_every_kind(fuzzer, path, body, content_type, rendering):
    """Bytes that are no valid form or JSON, sent with a valid token in the header."""
    headers = {**RENDERINGS[rendering], "Content-Type": content_type, "X-CSRFToken": fuzzer.csrf}
    fuzzer.send("post", path, rendering, sent=[path, body.decode("latin-1")], data=body,
                headers=headers)

