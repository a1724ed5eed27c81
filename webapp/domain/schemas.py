"""The input contracts: one marshmallow schema per tool and per human-only action.

Each schema drives the server validation, the rendered form (labels, agent descriptions, HTML
constraints: see `flask_webmcp.forms`), the agent's input schema and the OpenAPI document.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date
from datetime import datetime
from datetime import timedelta
from typing import Any
from typing import TypedDict
from typing import cast

from flask_babel import gettext as _
from flask_babel import lazy_gettext
from flask_babel import lazy_ngettext
from marshmallow import RAISE
from marshmallow import Schema
from marshmallow import ValidationError
from marshmallow import fields
from marshmallow import post_load
from marshmallow import validate
from marshmallow import validates_schema

from .organizers import GIVEN_ROLES
from .organizers import ROLE_NAMES
from .organizers import ROLES
from .tokens import canonical_check_in_code


def _l(message: str, **variables: object) -> str:
    """`message` as a lazy translation, typed as the str it stands for: marshmallow and the
    forms read it as one, in the language of the request that uses it."""
    return cast(str, lazy_gettext(message, **variables))


# The vocabularies of the filters: value (the same in every language) -> label people read.
LOCATIONS = {"taipei": _l("Taipei"), "taichung": _l("Taichung"), "kaohsiung": _l("Kaohsiung"),
             "online": _l("Online")}
PRICES = {"free": _l("Free"), "paid": _l("Paid")}
LEVELS = {"beginner": _l("Beginner"), "intermediate": _l("Intermediate"),
          "advanced": _l("Advanced")}

# marshmallow's own messages in plain words, as lazy translations so a field error is written
# in the language of the request; people read them under the field, agents in `errors`.
# Fields get them in `ToolInput.on_bind_field`, validators where they are made below.
FIELD_MESSAGES = {
    "required": _l("Fill in this field."),
    "null": _l("Fill in this field."),
    "validator_failed": _l("This value is not accepted."),
    "too_large": _l("This number is too large."),
    "invalid_utf8": _l("This text could not be read; type it again."),
}
INVALID = {
    fields.Email: _l("Enter an e-mail address such as name@example.com."),
    fields.NaiveDateTime: _l("Enter a date and time such as 2026-12-31T19:00."),
    fields.Date: _l("Enter a date such as 2026-12-31."),
    fields.Boolean: _l("Choose yes or no."),
    fields.Integer: _l("Enter a whole number."),
    fields.String: _l("Enter text."),
}


class WholeMatch(validate.Regexp):
    """A pattern the whole value must match: Python's `$` also matches before a final newline
    (so `re.match` takes "evt-x\\n"), which a browser's `$` and the id's consumers do not."""

    def __call__(self, value: str) -> str:  # type: ignore[override]
        if cast("re.Pattern[str]", self.regex).fullmatch(value) is None:
            raise ValidationError(self._format_error(value))
        return value


# Ids as the site makes them. Written so that a browser compiles them too (the `v` flag wants
# "-" escaped in a class): a client that is shown no page gets them as the id's pattern.
EVENT_ID = WholeMatch(r"^evt-[a-z0-9][a-z0-9\-]{0,63}$", error=_l("Not a valid event id."))
# A registration id (also the shape of a registration's address).
REGISTRATION_ID_SHAPE = r"reg-[A-Za-z0-9_\-]{8,64}"
# An agent connection's id (also the shape of its address).
CONNECTION_ID_SHAPE = r"agt-[A-Za-z0-9_\-]{12}"
REGISTRATION_ID = WholeMatch(f"^{REGISTRATION_ID_SHAPE}$",
                                  error=_l("Not a valid registration id."))
# Whose words the titles of choices listing events are (the agent reads them as data).
ORGANIZER_TITLES = _l("organizer-written event titles")
# Where a client that is shown no page (MCP) gets the ids a page would offer or carry.
EVENT_ID_SOURCE = _l("Id of an event exactly as search_events returned it; never invent or "
                     "alter one")
REGISTRATION_ID_SOURCE = _l("Id of one of the user's active registrations (reg-…), as their My "
                            "registrations page lists it: ask the user for it; never guess")
PAGE_SIZE = 10
# A search counts its matches exactly up to this many (then says `countCapped`) and shows no
# page past the ones that count can fill: however common its words, a search reads at most
# this many events. The cap is part of the tool's contract (the agent's schema says how far
# `page` goes), so it is not a per-site setting.
SEARCH_COUNT_CAP = 100
LAST_PAGE = -(-SEARCH_COUNT_CAP // PAGE_SIZE)
# The dates a search may name: wider than any real search, yet narrow enough that turning a
# day into the UTC start of the next one in the site's time zone never leaves the calendar.
SEARCH_DATES = validate.Range(min=date(2000, 1, 1), max=date(2999, 12, 31),
                              error=_l("Give a date from {min} to {max}."))


class VisibleText(validate.Validator):
    """Text whose every character people can see: no controls (NUL, line breaks), no format
    characters (bidirectional overrides and isolates, zero-width spaces and joiners, which
    can hide or reorder what an organizer reads), no line or paragraph separators."""

    INVISIBLE = frozenset({"Cc", "Cf", "Zl", "Zp"})  # Unicode general categories

    def __call__(self, value: str) -> str:
        for char in value:
            if unicodedata.category(char) in self.INVISIBLE:
                code = f"U+{ord(char):04X} {unicodedata.name(char, '')}".strip()
                raise ValidationError(_(
                    "Remove the invisible character %(code)s: use only characters people can "
                    "see (no control, direction-changing or zero-width characters).",
                    code=code))
        return value


class EmailAddress(fields.Email):
    """An e-mail address in the one form the site keeps: compatibility characters folded
    (NFKC: the full-width ＡＮＮ＠ＥＸＡＭＰＬＥ．ＣＯＭ a Chinese input method types is
    ann@example.com) and in lower case; invisible characters refused. So one address is one
    person, for the per-address budget and for one seat per address and event, and the
    address a person reviews is the one that is kept."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        address = unicodedata.normalize("NFKC", super()._deserialize(value, attr, data,
                                                                      **kwargs)).lower()
        VisibleText()(address)  # named first: the clearest thing to say of such an address
        # A domain is the same name to IDNA with characters it drops (variation selectors,
        # soft hyphens...): a look-alike of another address, refused rather than kept.
        domain = address.rpartition("@")[2]
        try:
            same_domain = domain.encode("idna").decode("idna") == domain
        except UnicodeError:
            same_domain = False
        if not same_domain:
            raise ValidationError(str(self.error_messages["invalid"]))
        return address


def one_of(vocabulary: dict[str, Any]) -> validate.OneOf:
    """A choice validator whose labels become the options people and agents see."""
    return validate.OneOf(list(vocabulary), labels=list(vocabulary.values()),
                          error=_l("Must be one of: {choices}."))


def length(*, min: int | None = None, max: int) -> validate.Length:  # noqa: A002
    """A length validator that says what is wrong in the language of the request."""
    # In the plural form the most characters allowed takes; marshmallow fills {min} and {max}.
    if min:
        error = lazy_ngettext("Use {min} to {max} character.", "Use {min} to {max} characters.",
                              max)
    else:
        error = lazy_ngettext("Use at most {max} character.", "Use at most {max} characters.",
                              max)
    return validate.Length(min=min, max=max, error=cast(str, error))


def invalid_message(field_obj: fields.Field[Any]) -> Any:
    """The "not a valid …" message of a field, by its type (a field of another type keeps
    its own)."""
    return next((message for kind, message in INVALID.items() if isinstance(field_obj, kind)),
                field_obj.error_messages["invalid"])


class ToolInput(Schema):
    """Base of every input schema: unknown fields are an error, not silently dropped, and
    every message is a translation."""

    error_messages = {"unknown": _l("Unknown field."), "type": _l("Invalid input type.")}

    class Meta:
        unknown = RAISE

    def on_bind_field(self, field_name: str, field_obj: fields.Field[Any]) -> None:
        """Give the field marshmallow's messages as translations."""
        invalid = invalid_message(field_obj)
        field_obj.error_messages = {**field_obj.error_messages, **FIELD_MESSAGES,
                                    "invalid": invalid}
        # An e-mail field checks addresses with a validator it made from its own message
        # (which marshmallow insists is a str): that validator gets the translation instead.
        field_obj.validators = [validate.Email(error=invalid)
                                if isinstance(validator, validate.Email) else validator
                                for validator in field_obj.validators]


class SearchEventsInput(ToolInput):
    """Filters of `search_events`; every one is optional and "" means "any"."""

    query = fields.String(
        validate=length(max=100),
        metadata={"label": _l("Keywords"), "input_type": "search", "autocomplete": "off",
                  "description": _l("Words or Chinese characters to find in the events' titles, "
                                         "summaries, venues and descriptions")})
    location = fields.String(
        validate=one_of(LOCATIONS),
        metadata={"label": _l("Location"), "empty_label": _l("Any location"),
                  "description": _l("City where the event takes place, or online")})
    price = fields.String(
        validate=one_of(PRICES),
        metadata={"label": _l("Price"), "empty_label": _l("Free or paid"),
                  "description": _l("Whether attending is free or paid")})
    level = fields.String(
        validate=one_of(LEVELS),
        metadata={"label": _l("Level"), "empty_label": _l("Any level"),
                  "description": _l("Experience the event is aimed at")})
    date_from = fields.Date(
        validate=SEARCH_DATES,
        metadata={"label": _l("From"), "description": _l("Earliest start date, inclusive")})
    date_to = fields.Date(
        validate=SEARCH_DATES,
        metadata={"label": _l("To"), "description": _l("Latest start date, inclusive")})
    page = fields.Integer(
        load_default=1,
        validate=validate.Range(min=1, max=LAST_PAGE, error=cast(str, lazy_ngettext(
            "Give a page from {min} to {max}: a search shows its first %(num)s match. Add "
            "words or filters to find others.",
            "Give a page from {min} to {max}: a search shows its first %(num)s matches. Add "
            "words or filters to find others.", SEARCH_COUNT_CAP))),
        metadata={"label": _l("Page"),
                  "description": _l("Page of results, %(size)s per page", size=PAGE_SIZE)})

    @validates_schema
    def dates_in_order(self, data: dict[str, Any], **kwargs: object) -> None:
        """A date range must not end before it starts (no form control can say this)."""
        start, end = data.get("date_from"), data.get("date_to")
        if start and end and start > end:
            raise ValidationError(_("The 'from' date is after the 'to' date."), "date_from")


class PageParams(TypedDict):
    """A page of results, always given (a search without one shows the first)."""

    page: int


# (A base class, not `Required[...]`: with postponed annotations Python 3.11 cannot see it.)
class SearchEventsParams(PageParams, total=False):
    """What `SearchEventsInput` loads: the page, and the filters given."""

    query: str
    location: str
    price: str
    level: str
    date_from: date
    date_to: date


class GetEventDetailsInput(ToolInput):
    """The event to show: bound to a detail page, or chosen among the listed results."""

    event_id = fields.String(
        required=True, validate=EVENT_ID,
        metadata={"label": _l("Events on this page"), "widget": "radio",
                  "description": _l("Id of one of the events listed on this page"),
                  "option_titles": ORGANIZER_TITLES, "id_source": EVENT_ID_SOURCE})


class EventParams(TypedDict):
    """What `GetEventDetailsInput` and `SaveEventInput` load: one event."""

    event_id: str


class SaveEventInput(ToolInput):
    """The event to save: always the one the page or preview pane shows."""

    event_id = fields.String(required=True, validate=EVENT_ID,
                             metadata={"id_source": EVENT_ID_SOURCE})


class PrepareEventRegistrationInput(ToolInput):
    """Who attends the event of the page; nothing is registered until a person confirms."""

    event_id = fields.String(required=True, validate=EVENT_ID,
                             metadata={"id_source": EVENT_ID_SOURCE})
    attendee_name = fields.String(
        required=True, validate=[length(min=1, max=80), VisibleText()],
        metadata={"label": _l("Attendee name"), "autocomplete": "name",
                  "description": _l("Full name of the person attending, as on the attendee "
                                    "list")})
    email = EmailAddress(
        required=True, validate=length(max=254),
        metadata={"label": _l("E-mail"), "autocomplete": "email",
                  "description": _l("E-mail address the organizer uses to reach the "
                                    "attendee")})


class PrepareEventRegistrationParams(TypedDict):
    """What `PrepareEventRegistrationInput` loads."""

    event_id: str
    attendee_name: str
    email: str


class PrepareRegistrationCancellationInput(ToolInput):
    """Which of the visitor's active registrations to cancel (a person confirms)."""

    registration_id = fields.String(
        required=True, validate=REGISTRATION_ID,
        metadata={"label": _l("Your active registrations"), "widget": "radio",
                  "description": _l("Id of the registration to cancel, from the list on this "
                                    "page"),
                  "option_titles": ORGANIZER_TITLES, "id_source": REGISTRATION_ID_SOURCE})


class RegistrationParams(TypedDict):
    """What `PrepareRegistrationCancellationInput` loads: one of the visitor's registrations."""

    registration_id: str


class GetMyPlansInput(ToolInput):
    """`get_my_plans` takes nothing: the plans are those of the visitor who asks (loads
    `NoParams`)."""


class ConfirmInput(ToolInput):
    """A human-only confirm form: the single-use token of the review it confirms."""

    confirmation_token = fields.String(required=True, validate=length(min=1, max=200))


class ConfirmParams(TypedDict):
    """What `ConfirmInput` loads."""

    confirmation_token: str


class ConfirmCancellationInput(ConfirmInput):
    """Confirming a cancellation: the token, and the registration its address names."""

    registration_id = fields.String(required=True, validate=REGISTRATION_ID)


class ConfirmCancellationParams(ConfirmParams):
    """What `ConfirmCancellationInput` loads."""

    registration_id: str


# A place on an event's waitlist (what accepting or leaving it names).
WAITLIST_ENTRY_SHAPE = r"wait-[A-Za-z0-9_\-]{8,64}"


class WaitlistEntryInput(ToolInput):
    """Accepting a seat offered from the waitlist, or leaving it: the place its address
    names (a person's action: only their own place)."""

    entry_id = fields.String(required=True, validate=WholeMatch(
        f"^{WAITLIST_ENTRY_SHAPE}$", error=_l("Not a valid place on a waitlist.")))


class WaitlistEntryParams(TypedDict):
    """What `WaitlistEntryInput` loads."""

    entry_id: str


class ConnectAgentInput(ToolInput):
    """Connecting an agent (a person's action): a name to know it by on the page."""

    label = fields.String(
        validate=[length(max=60), VisibleText()],
        metadata={"label": _l("Name (optional)"), "autocomplete": "off",
                  "placeholder": _l("e.g. the assistant on my laptop")})


class ConnectAgentParams(TypedDict, total=False):
    """What `ConnectAgentInput` loads."""

    label: str


class NoInput(ToolInput):
    """An action that takes nothing: what it does is for the visitor who asks (making or
    stopping their calendar feed, say)."""


class NoParams(TypedDict):
    """What `NoInput` loads: nothing."""


class DisconnectAgentInput(ToolInput):
    """Disconnecting an agent (a person's action): the connection its address names."""

    connection_id = fields.String(required=True, validate=WholeMatch(
        f"^{CONNECTION_ID_SHAPE}$", error=_l("Not a valid connection id.")))


class DisconnectAgentParams(TypedDict):
    """What `DisconnectAgentInput` loads."""

    connection_id: str


class RequestSignInInput(ToolInput):
    """Asking for a sign-in link (a person's action): the address it is mailed to."""

    email = EmailAddress(
        required=True, validate=length(max=254),
        metadata={"label": _l("E-mail"), "autocomplete": "email"})


class RequestSignInParams(TypedDict):
    """What `RequestSignInInput` loads."""

    email: str


class SignInInput(ToolInput):
    """Signing in (a person's action): the token of the link its address names."""

    token = fields.String(required=True, validate=length(min=1, max=200))


class SignInParams(TypedDict):
    """What `SignInInput` loads."""

    token: str


class CancelFromMailInput(ToolInput):
    """Cancelling through a mailed manage link (a person's action): the registration and the
    signature its address names."""

    registration_id = fields.String(required=True, validate=REGISTRATION_ID)
    signature = fields.String(required=True, validate=WholeMatch(
        r"^[A-Za-z0-9_\-]{43}$", error=_l("Not a valid link.")))


class CancelFromMailParams(TypedDict):
    """What `CancelFromMailInput` loads."""

    registration_id: str
    signature: str


class DeleteAccountInput(ToolInput):
    """Deleting one's account (a person's action): the account's address, typed again to say
    this is meant."""

    email = EmailAddress(
        required=True, validate=length(max=254),
        metadata={"label": _l("Your e-mail address, to confirm"), "autocomplete": "off"})


class DeleteAccountParams(TypedDict):
    """What `DeleteAccountInput` loads."""

    email: str


class CreateOrganizationInput(ToolInput):
    """Starting an organization (a person's action in the organizer area): its public name
    and a line saying what it is, in whichever language its people write."""

    name = fields.String(
        required=True, validate=[length(min=1, max=80), VisibleText()],
        metadata={"label": _l("Organization name"), "autocomplete": "organization"})
    description = fields.String(
        load_default="", validate=[length(max=280), VisibleText()],
        metadata={"label": _l("What it is, in one line"), "autocomplete": "off"})


class CreateOrganizationParams(TypedDict):
    """What `CreateOrganizationInput` loads."""

    name: str
    description: str


class InviteMemberInput(ToolInput):
    """Inviting someone into an organization by e-mail, in a role (a person's action)."""

    organization_id = fields.String(required=True, validate=length(min=1, max=40))
    email = EmailAddress(
        required=True, validate=length(max=254),
        metadata={"label": _l("Their e-mail address"), "autocomplete": "off"})
    role = fields.String(
        required=True,
        # Lazy: each label is read in the language of the page that shows it.
        validate=validate.OneOf(ROLES, labels=cast(list[str], [ROLE_NAMES[role]
                                                               for role in ROLES])),
        metadata={"label": _l("Role"), "widget": "radio"})


class InviteMemberParams(TypedDict):
    """What `InviteMemberInput` loads."""

    organization_id: str
    email: str
    role: str


class RevokeInvitationInput(ToolInput):
    """Revoking an invitation still open (a person's action)."""

    organization_id = fields.String(required=True, validate=length(min=1, max=40))
    invitation_id = fields.String(required=True, validate=length(min=1, max=40))


class RevokeInvitationParams(TypedDict):
    """What `RevokeInvitationInput` loads."""

    organization_id: str
    invitation_id: str


class AcceptInvitationInput(ToolInput):
    """Accepting an invitation (a person's action): the token of its mailed link."""

    token = fields.String(required=True, validate=length(min=1, max=200))


class AcceptInvitationParams(TypedDict):
    """What `AcceptInvitationInput` loads."""

    token: str


class ChangeRoleInput(ToolInput):
    """Giving a member another role (a person's action: an owner's). Ownership is never given
    this way: it passes only to one who accepts an invitation to own."""

    organization_id = fields.String(required=True, validate=length(min=1, max=40))
    account_id = fields.String(required=True, validate=length(min=1, max=40))
    role = fields.String(
        required=True,
        validate=validate.OneOf(GIVEN_ROLES, labels=cast(list[str], [ROLE_NAMES[role]
                                                                     for role in GIVEN_ROLES])),
        metadata={"label": _l("Role")})


class ChangeRoleParams(TypedDict):
    """What `ChangeRoleInput` loads."""

    organization_id: str
    account_id: str
    role: str


class MemberInput(ToolInput):
    """One member of an organization (removing them: a person's action, an owner's)."""

    organization_id = fields.String(required=True, validate=length(min=1, max=40))
    account_id = fields.String(required=True, validate=length(min=1, max=40))


class MemberParams(TypedDict):
    """What `MemberInput` loads."""

    organization_id: str
    account_id: str


class OrganizationInput(ToolInput):
    """One organization (leaving it, taking its logo away: a person's action)."""

    organization_id = fields.String(required=True, validate=length(min=1, max=40))


class OrganizationParams(TypedDict):
    """What `OrganizationInput` loads."""

    organization_id: str


class CancelEventInput(ToolInput):
    """Cancelling an event the organization runs (a person's action: a manager's or an
    owner's), with a line telling attendees why, if the organizer wants to."""

    organization_id = fields.String(required=True, validate=length(min=1, max=40))
    # Any event id of the address (the route found it among the organization's events).
    event_id = fields.String(required=True, validate=length(min=1, max=80))
    reason = fields.String(
        load_default="", validate=[length(max=280), VisibleText()],
        metadata={"label": _l("Why it is cancelled (optional)"), "autocomplete": "off"})


class CancelEventParams(TypedDict):
    """What `CancelEventInput` loads."""

    organization_id: str
    event_id: str
    reason: str


class CheckInCode(fields.String):
    """A check-in code as typed or scanned at the door, loaded in the form the mail shows it
    (`tokens.canonical_check_in_code`): dashes and spaces optional, any case."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        code = canonical_check_in_code(super()._deserialize(value, attr, data, **kwargs))
        if code is None:
            raise ValidationError(_("A check-in code has 12 letters and digits, like "
                                    "K7QM-2XPA-64TD. Check what was typed."))
        return code


class CheckInInput(ToolInput):
    """Checking an attendee in at an event's door (a person's action): the code of their
    registration mail, typed or read from its QR code."""

    organization_id = fields.String(required=True, validate=length(min=1, max=40))
    event_id = fields.String(required=True, validate=length(min=1, max=40))
    code = CheckInCode(
        required=True, validate=length(min=1, max=40),
        metadata={"label": _l("Check-in code"), "autocomplete": "off",
                  "autocapitalize": "characters", "spellcheck": "false",
                  "enterkeyhint": "go", "placeholder": "K7QM-2XPA-64TD",
                  # The door's one field: each answer leaves it ready for the next code.
                  "autofocus": "autofocus"})


class CheckInParams(TypedDict):
    """What `CheckInInput` loads."""

    organization_id: str
    event_id: str
    code: str


# The currencies an organizer may price an event in: the New Taiwan dollar first (the default).
CURRENCIES = {"TWD": _l("New Taiwan dollar (TWD)"), "USD": _l("US dollar (USD)"),
              "JPY": _l("Japanese yen (JPY)"), "EUR": _l("Euro (EUR)")}
YES_NO = {False: _l("No"), True: _l("Yes")}
# What an organizer's event may be: a start from the year 2000 on (the page says when it has
# passed), lasting at most a fortnight, for up to this many people at this price.
EVENT_TIMES = validate.Range(min=datetime(2000, 1, 1), max=datetime(2999, 12, 31),
                             error=_l("Give a time from {min} to {max}."))
LONGEST_EVENT = timedelta(days=14)
MOST_SEATS = 100_000
HIGHEST_PRICE = 1_000_000
# The languages an organizer writes an event's text in (BCP 47 tags, as `lang` takes them):
# the site's two, Traditional Chinese for Taiwan first (the default).
TEXT_LANGUAGES = {"zh-Hant-TW": _l("Traditional Chinese"), "en": _l("English")}
# When the people registered for an online event get the link to join it.
LINK_TIMES = {"on_registration": _l("As soon as they register"),
              "day_before": _l("The day before"), "hour_before": _l("An hour before")}
# An event's topic tags: a few short words, typed on one line between commas or 、.
MOST_TAGS = 5
LONGEST_TAG = 20
TAG_SEPARATORS = re.compile("[,、]")  # after NFKC, which makes a full-width comma ","
# The parts of an organizer's event form, in order (each field names its own: `section`).
EVENT_FORM_SECTIONS = {"what": _l("What"), "when": _l("When"), "where": _l("Where"),
                       "price_and_seats": _l("Price and seats")}


class TopicTags(fields.String):
    """Topic tags typed on one line, separated by commas or 、 (full-width or not): loaded as
    a tuple in one form each (NFKC, inner spaces as one, no leading #), without repeats (of
    tags that differ only in case, the first spelling is kept), so that one topic is one tag
    wherever it was typed."""

    def _deserialize(self, value: Any, attr: str | None, data: Any,  # type: ignore[override]
                     **kwargs: Any) -> tuple[str, ...]:
        text = unicodedata.normalize("NFKC", super()._deserialize(value, attr, data, **kwargs))
        VisibleText()(text)
        tags: dict[str, str] = {}
        for typed in TAG_SEPARATORS.split(text):
            tag = " ".join(typed.split()).lstrip("#").strip()
            if tag:
                tags.setdefault(tag.casefold(), tag)
        if len(tags) > MOST_TAGS:
            raise ValidationError(_("Give at most %(most)d tags.", most=MOST_TAGS))
        too_long = [tag for tag in tags.values() if len(tag) > LONGEST_TAG]
        if too_long:
            raise ValidationError(_("Keep each tag to %(most)d characters: %(tag)s",
                                    most=LONGEST_TAG, tag=too_long[0]))
        return tuple(tags.values())


class MultilineText(VisibleText):
    """Visible text in paragraphs: line breaks (and tabs) allowed, every other invisible
    character refused as `VisibleText` refuses it."""

    def __call__(self, value: str) -> str:
        return super().__call__(value.replace("\r", "").replace("\n", "").replace("\t", ""))


def _local_time(label: str, description: str) -> Any:
    """A date and time in the site's zone (Asia/Taipei), as a browser's date-time control
    sends it; the action turns it into UTC."""
    return fields.NaiveDateTime(
        required=True, validate=EVENT_TIMES,
        metadata={"label": label, "input_type": "datetime-local", "description": description,
                  "section": "when"})


class EventFieldsInput(ToolInput):
    """An organizer's event, as its form edits it (a person's action in the organizer area):
    what visitors read of it, when (Taipei time) and where, what it costs and how many come.
    The same fields create a draft and edit a draft or a published event."""

    organization_id = fields.String(required=True, validate=length(min=1, max=40))
    title = fields.String(
        required=True, validate=[length(min=2, max=120), VisibleText()],
        metadata={"label": _l("Title"), "autocomplete": "off", "section": "what"})
    summary = fields.String(
        required=True, validate=[length(min=10, max=280), VisibleText()],
        metadata={"label": _l("Summary, in one or two sentences"), "autocomplete": "off",
                  "section": "what"})
    description = fields.String(
        required=True, validate=[length(min=10, max=5000), MultilineText()],
        metadata={"label": _l("Description"), "input_type": "textarea", "section": "what"})
    # Not guessed from the script: an English title may name a Chinese talk.
    language = fields.String(required=True, validate=one_of(TEXT_LANGUAGES),
                             metadata={"label": _l("The language you write this event in"),
                                       "section": "what"})
    topic_tags = TopicTags(
        load_default=(),
        metadata={"label": _l("Topics (up to 5, separated by commas)"),
                  "autocomplete": "off", "section": "what"})
    level = fields.String(required=True, validate=one_of(LEVELS),
                          metadata={"label": _l("Level"), "section": "what"})
    starts_at = _local_time(_l("Starts (Taipei time)"), _l("When the event starts"))
    ends_at = _local_time(_l("Ends (Taipei time)"), _l("When the event ends"))
    registration_deadline = _local_time(_l("Registration closes (Taipei time)"),
                                        _l("The last moment people may register"))
    location = fields.String(required=True, validate=one_of(LOCATIONS),
                             metadata={"label": _l("City, or online"), "section": "where"})
    venue = fields.String(
        required=True, validate=[length(min=2, max=160), VisibleText()],
        metadata={"label": _l("Venue"), "autocomplete": "off", "section": "where"})
    street_address = fields.String(
        load_default="", validate=[length(max=200), VisibleText()],
        metadata={"label": _l("Street address (in person: recommended)"),
                  "autocomplete": "off", "section": "where"})
    online_platform = fields.String(
        load_default="", validate=[length(max=40), VisibleText()],
        metadata={"label": _l("Online platform, e.g. Google Meet (online: required)"),
                  "autocomplete": "off", "section": "where"})
    link_sent = fields.String(
        load_default="", validate=one_of(LINK_TIMES),
        metadata={"label": _l("When attendees get the link (online: required)"),
                  "empty_label": _l("Not online"), "section": "where"})
    price_amount = fields.Integer(
        required=True,
        validate=validate.Range(min=0, max=HIGHEST_PRICE, error=_l("Give a number from {min} "
                                                                   "to {max}.")),
        metadata={"label": _l("Price (0: free)"), "section": "price_and_seats"})
    price_currency = fields.String(required=True, validate=one_of(CURRENCIES),
                                   metadata={"label": _l("Currency"),
                                             "section": "price_and_seats"})
    payment_note = fields.String(
        load_default="", validate=[length(max=500), VisibleText()],
        metadata={"label": _l("How to pay (optional), e.g. cash or LINE Pay at the door"),
                  "autocomplete": "off", "section": "price_and_seats"})
    capacity = fields.Integer(
        required=True, strict=False,
        validate=validate.Range(min=1, max=MOST_SEATS, error=_l("Give a number from {min} to "
                                                                "{max}.")),
        metadata={"label": _l("Seats"), "section": "price_and_seats"})
    waitlist = fields.Boolean(
        required=True, validate=validate.OneOf(list(YES_NO), labels=list(YES_NO.values())),
        metadata={"label": _l("When it is full, people may wait for a seat"),
                  "section": "price_and_seats"})

    @validates_schema
    def times_in_order(self, data: dict[str, Any], **kwargs: object) -> None:
        """An event ends after it starts, within a fortnight, and registration closes by its
        start (no form control can say this)."""
        starts, ends = data.get("starts_at"), data.get("ends_at")
        deadline = data.get("registration_deadline")
        if starts and ends and ends <= starts:
            raise ValidationError(_("The end must be after the start."), "ends_at")
        if starts and ends and ends - starts > LONGEST_EVENT:
            raise ValidationError(_("An event lasts at most %(days)d days.",
                                    days=LONGEST_EVENT.days), "ends_at")
        if starts and deadline and deadline > starts:
            raise ValidationError(_("Registration must close by the start."),
                                  "registration_deadline")

    @validates_schema
    def online_says_how_to_join(self, data: dict[str, Any], **kwargs: object) -> None:
        """An online event names the platform people join on and when they get its link:
        attendees cannot come without them. (An address stays optional in person: a venue
        people know may need none.)"""
        if data.get("location") != "online":
            return
        missing = {name: [_("An online event needs this.")]
                   for name in ("online_platform", "link_sent") if not data.get(name)}
        if missing:
            raise ValidationError(missing)

    @post_load
    def only_what_the_place_uses(self, data: dict[str, Any], **kwargs: object
                                 ) -> dict[str, Any]:
        """Keep the fields of one kind of place: an event moved online has no street address,
        one moved to a city no platform, so nothing stale reaches its page."""
        online = data.get("location") == "online"
        return {**data, **({"street_address": ""} if online
                           else {"online_platform": "", "link_sent": ""})}


class EventFieldsParams(TypedDict):
    """What `EventFieldsInput` loads (times naive, in the site's zone)."""

    organization_id: str
    title: str
    summary: str
    description: str
    language: str
    topic_tags: tuple[str, ...]
    level: str
    starts_at: datetime
    ends_at: datetime
    registration_deadline: datetime
    location: str
    venue: str
    street_address: str
    online_platform: str
    link_sent: str
    price_amount: int
    price_currency: str
    payment_note: str
    capacity: int
    waitlist: bool


class OrganizerEventInput(ToolInput):
    """One event of an organization's (publishing it: a person's action), at the version the
    person saw."""

    organization_id = fields.String(required=True, validate=length(min=1, max=40))
    event_id = fields.String(required=True, validate=EVENT_ID)
    version = fields.Integer(required=True, validate=validate.Range(min=1, max=2**31 - 1))


class OrganizerEventParams(TypedDict):
    """What `OrganizerEventInput` loads."""

    organization_id: str
    event_id: str
    version: int


class EditEventInput(EventFieldsInput, OrganizerEventInput):
    """Editing an organization's event, draft or published, from the version the form was
    filled with."""


class EditEventParams(EventFieldsParams, OrganizerEventParams):
    """What `EditEventInput` loads."""
