"""Signing in with a mailed link, and the account page: steps for people only.

`/sign-in` asks for a link; the link (`/sign-in/<token>`) shows a button and changes nothing
when opened (mail scanners open links), its POST signs in; a link that cannot sign in any more
answers 410 with the form for a new one. `/account` shows who is signed in and signs out, here
or on every device. None of these forms carries a `toolname`: an agent never signs in.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint
from flask import Response
from flask import jsonify
from flask import redirect
from flask import render_template
from flask import session
from flask import url_for

from flask_webmcp.forms import controls_for
from flask_webmcp.negotiation import is_partial
from flask_webmcp.negotiation import page_result
from flask_webmcp.negotiation import render_post_result
from flask_webmcp.negotiation import wants_json
from flask_webmcp.negotiation import with_vary
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.routes import human_route
from flask_webmcp.routes import page_route

from ..clock import site_now
from ..clock import site_timezone
from ..domain.actions import accounts as actions
from ..domain.projections import local_time
from ..domain.schemas import DeleteAccountInput
from ..domain.schemas import RequestSignInInput
from ..domain.tokens import hash_token
from ..storage import Account
from ..storage.connection import get_db
from .calls import action_context
from .calls import run_tool
from .visitors import check_account_session
from .visitors import page_to_return_to
from .visitors import signed_in_account
from .visitors import start_account_session

bp = Blueprint("accounts", __name__)
bp.before_app_request(check_account_session)


def _sign_in_context(values: dict[str, Any] | None = None,
                     errors: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the sign-in page shows besides a result: its form."""
    return {"controls": controls_for(RequestSignInInput, values, errors),
            "account": signed_in_account(get_db())}


@page_route(bp, "/sign-in", "request_sign_in")
def sign_in_page() -> Response:
    """The form asking for a sign-in link (and, after it, what was sent where)."""
    return with_vary(render_template("accounts/sign_in.html", result=page_result(),
                                     **_sign_in_context()))


@human_route(bp, "/sign-in", actions.request_sign_in, methods=("POST",))
def request_link() -> Response:
    """Mail a sign-in link to the address given."""
    result, submitted = run_tool(needs_visitor=False)
    return render_post_result(result, "accounts/sign_in.html", "accounts/_result.html",
                              redirect_to=url_for(".sign_in_page"),
                              page_context=lambda: _sign_in_context(submitted, result.errors))


@page_route(bp, "/sign-in/<token>", "sign_in")
def link(token: str) -> str | tuple[str, int]:
    """A sign-in link, opened: a button that signs in, or (410) the form for a new link."""
    email = get_db().sign_in_link_email(hash_token(token), site_now())
    if email is None:
        return _link_gone()
    return render_template("accounts/link.html", email=email, token=token)


def _link_gone(result: ToolResult | None = None) -> tuple[str, int]:
    """The page of a link that cannot sign in any more: 410, with the form for a new one."""
    return render_template("accounts/link_gone.html", result=result,
                           message=actions.link_gone_message(), **_sign_in_context()), 410


@human_route(bp, "/sign-in/<token>", actions.sign_in, methods=("POST",))
def sign_in(token: str) -> Response | tuple[str, int]:
    """Sign in with the link's token: this browser becomes the account's, and lands on the
    page that sent it to sign in, or on its registrations."""
    back = page_to_return_to()
    result = run_tool(bound={"token": token}, needs_visitor=False).result
    if result.status is Status.SUCCESS:
        start_account_session(result.page_only["session_id"], result.page_only["visitor_id"])
    elif result.status is Status.NOT_FOUND and not (wants_json() or is_partial()):
        return _link_gone(result)
    # Back to the page that asked for signing in; else where what signing in brought shows:
    # every registration made with the address.
    return render_post_result(result, "accounts/link_gone.html", "accounts/_result.html",
                              redirect_to=back or url_for("registrations.index"),
                              page_context=lambda: {"message": result.message,
                                                    **_sign_in_context()})


@page_route(bp, "/account", "sign_out")
def account() -> Response:
    """Who is signed in here, and the buttons that sign out; the sign-in form otherwise."""
    found = signed_in_account(get_db())
    if found is None:
        return with_vary(redirect(url_for(".sign_in_page"), code=303))
    return with_vary(render_template("accounts/index.html", result=page_result(),
                                     **_account_context(found)))


def _account_context(account: Account, values: dict[str, Any] | None = None,
                     errors: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the account page shows: the account, since when, and the deletion form."""
    assert account.signed_in_at is not None
    return {"account": account, "since": local_time(account.signed_in_at, site_timezone()),
            "delete_controls": controls_for(DeleteAccountInput, values, errors)}


@page_route(bp, "/account/data", "delete_account")
def download_data() -> Response:
    """Everything the site holds of the signed-in person, as a JSON file to keep."""
    db = get_db()
    found = signed_in_account(db)
    if found is None:
        return with_vary(redirect(url_for(".sign_in_page"), code=303))
    answer = jsonify(actions.account_data(db, found, action_context(found.visitor_id)))
    answer.headers["Content-Disposition"] = 'attachment; filename="webmcp-events-data.json"'
    answer.headers["Cache-Control"] = "no-store"
    return answer


@human_route(bp, "/account/delete", actions.delete_account, methods=("POST",))
def delete_account() -> Response:
    """Delete the account and its owner's data; the browser is signed out."""
    result, submitted = run_tool(needs_visitor=False)
    if result.status is not Status.SUCCESS:
        found = signed_in_account(get_db())
        if found is None:
            return render_post_result(result, "error.html", "accounts/_result.html",
                                      redirect_to=url_for(".sign_in_page"))
        return render_post_result(result, "accounts/index.html", "accounts/_result.html",
                                  redirect_to=url_for(".account"),
                                  page_context=lambda: _account_context(
                                      found, submitted, result.errors))
    return _signed_out(result)


@human_route(bp, "/account/sign-out", actions.sign_out, methods=("POST",))
def sign_out() -> Response:
    """Sign this browser out: its cookie forgets the account."""
    return _signed_out(run_tool(needs_visitor=False).result)


@human_route(bp, "/account/sign-out-everywhere", actions.sign_out_everywhere,
             methods=("POST",))
def sign_out_everywhere() -> Response:
    """Sign the account out on every device, this one too."""
    return _signed_out(run_tool(needs_visitor=False).result)


def _signed_out(result: ToolResult) -> Response:
    """After signing out: a fresh cookie, and the sign-in page saying so."""
    if result.status is Status.SUCCESS:
        session.clear()
    return render_post_result(result, "accounts/sign_in.html", "accounts/_result.html",
                              redirect_to=url_for(".sign_in_page"),
                              page_context=_sign_in_context)
