"""Signing in with a link mailed to one's address: no password to choose, forget or leak.

Asking for a link mails one, to whatever address is given: the answer is the same whether the
address has an account or not (nobody learns who has one), and the first sign-in makes the
account. A link works once, for `ctx.sign_in_link_lifetime`; only its hash is kept. Following
it shows a button (mail scanners open links, and must not sign anyone in): pressing it signs
in, which brings what this browser did before, and every registration made with the address
from any browser, into the account. These are steps for people only: an agent never signs in.
"""

from __future__ import annotations

import secrets
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel import ngettext

from flask_webmcp.actions import human_action
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.result import invalid_input
from flask_webmcp.result import not_found

from ...mail.kinds import SIGN_IN_LINK
from ...storage import Account
from ...storage import Storage
from ..activity import logged_as
from ..projections import local_time
from ..projections import registration_summary
from ..schemas import DeleteAccountInput
from ..schemas import DeleteAccountParams
from ..schemas import NoInput
from ..schemas import NoParams
from ..schemas import RequestSignInInput
from ..schemas import RequestSignInParams
from ..schemas import SignInInput
from ..schemas import SignInParams
from ..tokens import hash_token
from . import ActionContext


@logged_as(_l("Ask for a sign-in link"),
           _l("%(who)s asked for a sign-in link"))
@human_action("request_sign_in", schema=RequestSignInInput, answers=(Status.SUCCESS,))
def request_sign_in(db: Storage, params: RequestSignInParams, ctx: ActionContext
                    ) -> ToolResult:
    """Mail a sign-in link to the address given (the same answer for every address)."""
    token = secrets.token_urlsafe(32)
    token_hash = hash_token(token)
    minutes = int(ctx.sign_in_link_lifetime.total_seconds() // 60)
    with db.transaction():
        db.create_sign_in_link(token_hash, params["email"], ctx.now,
                               ctx.now + ctx.sign_in_link_lifetime)
        db.queue_mail(f"sign-in:{token_hash}", params["email"], SIGN_IN_LINK.name,
                      ctx.language, {"link": ctx.pages.sign_in_link(token, ctx.language),
                                     "minutes": minutes}, ctx.now)
    return ToolResult(
        action="request_sign_in", status=Status.SUCCESS,
        message=_("We have sent a sign-in link to %(email)s. It works once, for %(minutes)d "
                  "minutes. If it does not arrive, look in your spam folder or ask for "
                  "another.", email=params["email"], minutes=minutes),
        data={"email": params["email"]})


@logged_as(_l("Sign in"), _l("%(who)s signed in"))
@human_action("sign_in", schema=SignInInput, answers=(Status.SUCCESS, Status.NOT_FOUND))
def sign_in(db: Storage, params: SignInParams, ctx: ActionContext) -> ToolResult:
    """Spend a sign-in link: start a session of its address's account (made now if it has
    none), which takes in what this browser did and every registration made with the address.

    The session's id is for the browser's cookie only (`page_only`); the table keeps its hash.
    """
    session_id = secrets.token_urlsafe(32)
    with db.transaction():
        email = db.use_sign_in_link(hash_token(params["token"]), ctx.now)
        if email is None:
            return not_found("sign_in", link_gone_message())
        account = db.account_for(email, f"acc-{secrets.token_urlsafe(9)}",
                                 f"vis-{secrets.token_urlsafe(16)}", ctx.now)
        db.start_session(account, hash_token(session_id), ctx.now,
                         ends_by=ctx.now + ctx.session_lifetime, joining=ctx.visitor_id)
    return ToolResult(
        action="sign_in", status=Status.SUCCESS,
        message=_("You are signed in as %(email)s. Every registration made with this "
                  "address is listed under “My registrations”, from any browser.", email=email),
        data={"email": email}, target=account.id,
        page_only={"session_id": session_id, "visitor_id": account.visitor_id})


def link_gone_message() -> str:
    """What a link that cannot sign in any more is told (used, expired, or never made)."""
    return _("This sign-in link has expired or was already used. Ask for a new one below.")


@logged_as(_l("Sign out"), _l("%(who)s signed out"))
@human_action("sign_out", schema=NoInput, answers=(Status.SUCCESS,))
def sign_out(db: Storage, params: NoParams, ctx: ActionContext) -> ToolResult:
    """End this browser's session (the browser forgets the account)."""
    if ctx.session_hash is not None:
        db.end_session(ctx.session_hash)
    return ToolResult(action="sign_out", status=Status.SUCCESS,
                      message=_("You are signed out."))


@logged_as(_l("Sign out on every device"), _l("%(who)s signed out on every device"))
@human_action("sign_out_everywhere", schema=NoInput, answers=(Status.SUCCESS,))
def sign_out_everywhere(db: Storage, params: NoParams, ctx: ActionContext) -> ToolResult:
    """End every session of the account, on every device (this one too)."""
    if ctx.account is not None:
        db.end_every_session(ctx.account.id)
    return ToolResult(action="sign_out_everywhere", status=Status.SUCCESS,
                      message=_("You are signed out on every device."))


@logged_as(_l("Delete my account"), _l("%(who)s deleted the account"))
@human_action("delete_account", schema=DeleteAccountInput,
              answers=(Status.SUCCESS, Status.INVALID_INPUT, Status.NOT_FOUND))
def delete_account(db: Storage, params: DeleteAccountParams, ctx: ActionContext
                   ) -> ToolResult:
    """Delete the signed-in account and its owner's data (the Personal Data Protection Act's
    right to deletion): seats of events to come are given back, every registration made with
    the address keeps no name or address, everything else goes."""
    if ctx.account is None:
        return not_found("delete_account", _("This browser is not signed in: there is no "
                                             "account to delete here."))
    if params["email"] != ctx.account.email:
        return invalid_input("delete_account", {"email": [
            _("Type the address you are signed in with: %(email)s.", email=ctx.account.email)]})
    if sole_owner_of := db.forget_account(ctx.account, ctx.now):
        # An organization is never left without an owner: its events and people need one.
        why = ngettext(
            "You are the only owner of %(names)s. Invite another owner there (ownership "
            "passes when they accept), then delete your account.",
            "You are the only owner of %(names)s. Invite another owner to each (ownership "
            "passes when they accept), then delete your account.",
            len(sole_owner_of),
            names=_(", ").join(_("“%(name)s”", name=name) for name in sole_owner_of))
        return invalid_input("delete_account", {"_schema": [why]}, message=why)
    return ToolResult(action="delete_account", status=Status.SUCCESS,
                      message=_("Your account and your data are deleted, and you are signed "
                                "out everywhere."))


def account_data(db: Storage, account: Account, ctx: ActionContext) -> dict[str, Any]:
    """Everything the site holds of a signed-in person, as they may download it (the right to
    a copy): the account, registrations, saved events, connected agents (never a token) and
    the activity log."""
    visitor = account.visitor_id
    return {
        "account": {"email": account.email,
                    "createdAt": local_time(account.created_at, ctx.timezone)},
        "registrations": [{**registration_summary(registration, ctx.timezone),
                           "email": registration.email}
                          for registration in db.visitor_registrations(visitor)],
        "savedEvents": [{"id": event.id, "title": event.title}
                        for event in db.saved_events(visitor)],
        "agents": [{"label": connection.label,
                    "createdAt": local_time(connection.created_at, ctx.timezone),
                    "expiresAt": local_time(connection.expires_at, ctx.timezone)}
                   for connection in db.visitor_agent_connections(visitor)],
        "activity": [{"at": local_time(entry.at, ctx.timezone), "source": entry.source,
                      "action": entry.action, "status": entry.status,
                      "target": entry.target_id}
                     for entry in db.recent_activity(visitor, ACTIVITY_EXPORTED)],
    }


# The activity a download holds: every line kept (pruning keeps 90 days of it).
ACTIVITY_EXPORTED = 100_000
