"""One action, three answers: JSON, an htmx partial, or the full page.

Every HTML answer embeds the result once as JSON-LD (see the `jsonld` macro), so a WebMCP
browser that navigated gets the same object a JSON client gets; templates that are included
in a page never render it themselves. After a POST without
JavaScript the result is carried once across the 303 redirect, so the page the browser lands
on embeds the result of that POST instead of the page's default one. It waits on the server
(`carry`): the session cookie holds only its random key, never the result or its secrets.

Failures that only the site's error handlers know how to show (a refused form token, a limit,
a fault, an unknown address) are answered by `render_error_result`: their partial goes into the
error slot beside the form that asked (`error_slot_id`), never into that form's target, which
may hold the form itself; a form removed while an agent's call on it is pending cancels the
call. Every other partial answer of the action empties that slot again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from typing import overload

from flask import Response
from flask import g
from flask import jsonify
from flask import make_response
from flask import redirect
from flask import render_template
from flask import request
from flask import session
from werkzeug.wrappers import Response as BaseResponse

from . import htmx
from .carry import carried_results
from .result import Status
from .result import ToolResult

# Answers that branch on these request headers must say so, or caches mix them up.
VARY_HEADERS = ("Accept", *htmx.NEGOTIATED_BY)
CARRY_KEY = "webmcp_carried_result"  # in the session: the key of the carried result
# Results that lead to another page; any other result is answered in place.
PROGRESS = (Status.SUCCESS, Status.CONFIRMATION_REQUIRED)


def wants_json() -> bool:
    """True when the client strictly prefers JSON to HTML (so `*/*` still gets HTML)."""
    # Asked twice per request (language negotiation, then rendering); weighing the Accept
    # header costs more than the rest of this function, so each request answers it once.
    if "wants_json" not in g:
        accept = request.accept_mimetypes
        g.wants_json = accept["application/json"] > accept["text/html"]
    return bool(g.wants_json)


def is_partial() -> bool:
    """True for an htmx request that swaps part of a page (not a history restore or a boost)."""
    headers = request.headers
    return (
        headers.get(htmx.REQUEST) == "true"
        and headers.get(htmx.BOOSTED) != "true"
        and headers.get(htmx.HISTORY_RESTORE) != "true"
        and headers.get(htmx.REQUEST_TYPE, "partial") != "full"
    )


def with_vary(answer: BaseResponse | str) -> Response:
    """Mark a response (a redirect, or a rendered page) as depending on the negotiation
    headers."""
    response = make_response(answer)
    response.vary.update(VARY_HEADERS)
    return response


def error_slot_id(action: str) -> str:
    """The id of the element beside `action`'s form that shows the failures of its calls
    (the `error_slot` macro renders it; `tool_form` puts one after every tool form)."""
    return f"{action}-error"


def render_result(result: ToolResult, page: str, partial: str, **context: Any) -> Response:
    """Answer with JSON, the partial or the full page, all carrying the same envelope.

    The envelope is embedded once as JSON-LD: before the partial's content, or in the page's
    <head> (the page's base template renders `result` with the `jsonld` macro). A partial also
    empties the error slot of the action's form: this answer replaces the failure shown there.
    """
    return _render(result, page, partial, error_slot_cleared=True, **context)


def render_error_result(result: ToolResult, page: str, partial: str, **context: Any
                        ) -> Response:
    """Answer a failure as `render_result` does, except that the partial goes into the error
    slot of the action's form (`HX-Retarget`, which htmx and the JS bridge both obey).

    The form's own target is no place for it: that target may hold the form (a morph keeps the
    form only because the partial renders it again), and replacing the form while an agent's
    call on it is pending cancels the call, leaving the page without that tool.
    """
    response = _render(result, page, partial, error_slot_cleared=False, **context)
    if is_partial() and not wants_json():
        response.headers[htmx.RETARGET] = "#" + error_slot_id(result.action)
        response.headers[htmx.RESWAP] = "innerHTML"
    return response


def _render(result: ToolResult, page: str, partial: str, error_slot_cleared: bool,
            **context: Any) -> Response:
    if wants_json():
        response = jsonify(result.to_dict())
    elif is_partial():
        cleared = error_slot_id(result.action) if error_slot_cleared else None
        response = make_response(render_template(
            "webmcp/partial.html", partial_template=partial, result=result,
            cleared_error_slot=cleared, **context))
    else:
        response = make_response(render_template(page, result=result, **context))
    response.status_code = result.status_code
    return with_vary(response)


def render_post_result(result: ToolResult, page: str, partial: str, redirect_to: str,
                       page_context: Callable[[], dict[str, Any]] | None = None,
                       **context: Any) -> Response:
    """Answer a POST: JSON, the partial, or without JavaScript the classic pattern.

    A result that moved things forward (success, confirmation_required) answers 303 to the page
    that shows it and carries the envelope there once (with its `page_only` values, such as
    the token of a human-only confirm form), kept in the app's `CarriedResults` store under a
    key the session holds; a failure re-renders `page` with its status,
    keeping what was typed. `page_context` supplies what only that page needs, and is called
    only when the page is rendered.
    """
    if wants_json() or is_partial():
        return render_result(result, page, partial, **context)
    if result.status not in PROGRESS:
        return render_result(result, page, partial, **context,
                             **(page_context() if page_context else {}))
    store = carried_results()
    superseded = session.get(CARRY_KEY)
    if isinstance(superseded, str):
        # Its page was never reached, and no page will show it now: it goes at once rather
        # than waiting on the server until it expires.
        store.take(superseded)
    session[CARRY_KEY] = store.keep({"path": redirect_to.split("?")[0],
                                     "result": result.to_dict(), "page_only": result.page_only})
    return with_vary(redirect(redirect_to, code=303))


# Given a default, there is always a result to show; without one, maybe none.
@overload
def page_result(default: ToolResult) -> ToolResult: ...


@overload
def page_result(default: None = None) -> ToolResult | None: ...


def page_result(default: ToolResult | None = None) -> ToolResult | None:
    """The result a full page shows: the one a POST carried here, else `default`.

    Only a full-page request consumes a carried result (JSON and partials never see one),
    and only once: the store forgets it as it is read, so a copy of the cookie sent again
    finds nothing.
    """
    if wants_json() or is_partial():
        return default
    key = session.pop(CARRY_KEY, None)
    # Only a key is kept there now; a cookie from before may hold a whole result: unread.
    if not isinstance(key, str):
        return default
    carried = carried_results().take(key)
    if not carried or carried.get("path") != request.path:
        return default
    return result_from_dict(carried["result"], carried.get("page_only"))


def result_from_dict(envelope: dict[str, Any], page_only: dict[str, Any] | None = None
                     ) -> ToolResult:
    """Rebuild a ToolResult from its envelope (the inverse of ToolResult.to_dict)."""
    untrusted = envelope.get("untrustedContent") or {}
    return ToolResult(
        action=envelope["action"],
        status=Status.from_word(envelope["status"]),
        message=envelope["message"],
        data=envelope.get("data"),
        errors=envelope.get("errors"),
        next_action=envelope.get("nextAction"),
        requires_user_decision=envelope.get("requiresUserDecision"),
        applied_filters=envelope.get("appliedFilters"),
        constraints_relaxed=envelope.get("constraintsRelaxed"),
        untrusted_fields=tuple(untrusted.get("fields", ())),
        page_only=page_only or {},
    )

__all__ = ["CARRY_KEY", "error_slot_id", "is_partial", "page_result", "render_error_result",
           "render_post_result", "render_result", "wants_json", "with_vary"]
