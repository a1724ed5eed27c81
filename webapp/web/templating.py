"""Jinja helpers for people: dates and times in their language (the zone named once a page),
the labels of the filter vocabularies, and lazy translations rendered as plain, escaped text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from datetime import date
from datetime import datetime
from datetime import timedelta
from typing import Any
from typing import NamedTuple
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from babel.dates import format_date
from babel.dates import format_datetime
from babel.dates import format_timedelta
from babel.dates import get_timezone_location
from babel.numbers import format_decimal
from babel.numbers import get_currency_symbol
from flask import Flask
from flask import g
from flask import has_request_context
from flask import url_for
from flask_babel import force_locale
from flask_babel import get_locale
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel.speaklater import LazyString
from markupsafe import Markup
from markupsafe import escape

from ..clock import site_now
from ..clock import site_timezone
from ..clock import site_today
from ..domain.actions.registrations import confirmation_minutes
from ..domain.activity import ACTIVITY_WORDS
from ..domain.activity import WENT_THROUGH
from ..domain.organizers import GIVEN_ROLES
from ..domain.organizers import ROLE_NAMES
from ..domain.schemas import CURRENCIES
from ..domain.schemas import LAST_PAGE
from ..domain.schemas import LEVELS
from ..domain.schemas import LINK_TIMES
from ..domain.schemas import LOCATIONS
from ..domain.schemas import PAGE_SIZE
from ..domain.schemas import PRICES
from ..domain.schemas import TEXT_LANGUAGES
from ..domain.shortcuts import date_ranges
from .addresses import absolute_url
from .cards import card_font
from .languages import LANGUAGES
from .languages import current_language


class DateWords(NamedTuple):
    """How one language writes `when`'s dates for one time zone."""

    day: str  # the day as a CLDR pattern
    zone: str  # the zone as people name it: "Taiwan Time", "台灣時間"


@functools.cache
def date_words(locale: str, zone: ZoneInfo) -> DateWords:
    """The words of `when` in `locale` for `zone`, looked up once per process: they never
    change, and a results page writes ten dates (their lookups were half of each date's
    cost)."""
    with force_locale(locale):
        # Translators: a date as Babel (CLDR) patterns write it; EEE is the weekday,
        # MMM the month.
        return DateWords(day=_("EEE, d MMM y"), zone=get_timezone_location(zone, locale=locale))


def _offset(moment: datetime) -> str:
    """The moment's offset from UTC in hours: "+8", "+5.5"."""
    offset = moment.utcoffset()
    return f"{offset.total_seconds() / 3600 if offset is not None else 0:+g}"


def _zoned(text: str, moment: datetime, words: DateWords) -> str:
    """`text` (a time) followed by its zone: "10:00 Taiwan Time (UTC+8)"."""
    return _("%(time)s %(zone)s (UTC%(offset)s)", time=text, zone=words.zone,
             offset=_offset(moment))


def when(iso: str | None, with_time: bool = True, with_zone: bool = False) -> str:
    """An ISO 8601 time as people read it in their language, in the site's time zone:
    "Tue, 15 Dec 2026, 10:00", "2026年12月15日（二）10:00". The zone is said once per page
    (`time_zone_note`), so a time names it only `with_zone`: where it is read alone (a mail,
    an image) or where people join from elsewhere (an online event)."""
    if not iso:
        return ""
    zone = site_timezone()
    moment = datetime.fromisoformat(iso).astimezone(zone)
    # Babel is given the Locale itself: given its name, it parses the name again on every
    # call, five times per date (a third of a date's cost).
    locale = get_locale()
    words = date_words(str(locale), zone)
    day = format_datetime(moment, words.day, locale=locale)
    if not with_time:
        return day
    text = _("%(day)s, %(time)s", day=day, time=format_datetime(moment, "HH:mm", locale=locale))
    if with_zone:
        return _zoned(text, moment, words)
    _say_times_zone()
    return text


# Within this, an activity line says how long ago it was; an older one gives its day and time.
RECENTLY = timedelta(days=7)


def ago(iso: str) -> str:
    """How long ago `iso` was, as people say it ("3 minutes ago", "3 分鐘前"; "just now"
    within a minute), on the site's clock; its day and time once past RECENTLY."""
    passed = site_now() - datetime.fromisoformat(iso)
    if passed > RECENTLY:
        return when(iso)
    if passed < timedelta(minutes=1):
        return _("just now")
    return format_timedelta(-passed, add_direction=True, locale=get_locale())


def time_zone_note() -> str:
    """The sentence that names the zone of every time on the page, once: "Times are Taiwan
    Time (UTC+8)." Empty on a page that shows no time."""
    if not g.get("times_shown"):
        return ""
    zone = site_timezone()
    return _("Times are %(zone)s (UTC%(offset)s).",
             zone=date_words(str(get_locale()), zone).zone,
             offset=_offset(site_now().astimezone(zone)))


def _say_times_zone() -> None:
    """Mark that the page shows a time without its zone, so its footer names the zone."""
    if has_request_context():
        g.times_shown = True


def day(iso: str | None) -> str:
    """An ISO 8601 date as people read it in their language ("Sat, 5 Dec 2026",
    "2026年12月5日（六）")."""
    if not iso:
        return ""
    locale = get_locale()
    return format_date(date.fromisoformat(iso), date_words(str(locale), site_timezone()).day,
                       locale=locale)


# When a card starts saying when registration closes: within three days of it.
CLOSING_SOON = timedelta(days=3)
# When a card says an event is almost full: at most this many seats left.
FEW_SEATS = 3


def closes_soon(event: Mapping[str, Any]) -> bool:
    """Whether an open event's registration closes within CLOSING_SOON (on the site's
    clock), so its card says when."""
    deadline = datetime.fromisoformat(event["registrationDeadline"])
    return event["state"] == "open" and deadline - site_now() <= CLOSING_SOON


def clock_time(iso: str | None) -> str:
    """The time of day of an ISO 8601 time, in the site's time zone: "10:51"."""
    if not iso:
        return ""
    moment = datetime.fromisoformat(iso).astimezone(site_timezone())
    _say_times_zone()
    return format_datetime(moment, "HH:mm", locale=get_locale())


def search_link(filters: Mapping[str, Any], **changes: Any) -> str:
    """The first page of the search for `filters` with `changes` made (None drops one)."""
    wanted = {**filters, **changes}
    return url_for("events.search", **{name: value for name, value in wanted.items()
                                       if value not in (None, "") and name != "page"})


def span(starts: str, ends: str, with_zone: bool = False) -> str:
    """From when to when, the date said once when both are on the same day:
    "Tue, 15 Dec 2026, 10:00–12:00" (and its zone, once, `with_zone`: see `when`)."""
    zone = site_timezone()
    start = datetime.fromisoformat(starts).astimezone(zone)
    end = datetime.fromisoformat(ends).astimezone(zone)
    if start.date() != end.date():
        return _("%(start)s to %(end)s", start=when(starts, with_zone=with_zone),
                 end=when(ends, with_zone=with_zone))
    locale = get_locale()
    words = date_words(str(locale), zone)
    text = _("%(day)s, %(start)s–%(end)s", day=format_datetime(start, words.day, locale=locale),
             start=format_datetime(start, "HH:mm", locale=locale),
             end=format_datetime(end, "HH:mm", locale=locale))
    if with_zone:
        return _zoned(text, start, words)
    _say_times_zone()
    return text


# Han characters: organizer text with any is read as Chinese (a title that mixes both, such as
# "台中 Python 讀書會 | Taichung Python Study Group", is Chinese with English names in it).
HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
# What people read of when the organizer of an online event mails its link (`LINK_TIMES`):
# the site never has the link itself.
LINK_NOTES = {
    "on_registration": _l("The organizer mails the link to join as soon as you register."),
    "day_before": _l("The organizer mails the link to join the day before."),
    "hour_before": _l("The organizer mails the link to join an hour before the start."),
}
# Where an event's street address is looked up on a map (Google Maps' documented search URL).
MAP_SEARCH = "https://www.google.com/maps/search/?"


def written_in(text: str | None) -> str:
    """The BCP 47 tag of the site language organizer text is written in, from its script."""
    return LANGUAGES["zh-TW" if HAN.search(text or "") else "en"].tag


def lang_attribute(text: str | None, declared: str | None = None) -> Markup:
    """` lang="en"` on organizer text written in another language than the page's, so a
    screen reader reads it in its own voice (WCAG 3.1.2); nothing when they agree. The
    language the organizer `declared` for the event's text wins over a guess from its
    script (an English title may name a talk given in Chinese)."""
    tag = declared or written_in(text)
    return Markup(' lang="%s"') % tag if tag != current_language().tag else Markup("")


# Where Chinese (Han, and the kana of Japanese names) meets Latin letters or digits, zh-TW
# puts a space between them ("ann@example.com 編輯了…"); between two Chinese words, none.
HAN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
LATIN_OR_DIGIT = re.compile(r"[A-Za-z0-9]")
PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def _apart(left: str, right: str) -> bool:
    """Whether two characters side by side want a space between them (Chinese and Latin)."""
    return bool((HAN.match(left) and LATIN_OR_DIGIT.match(right))
                or (LATIN_OR_DIGIT.match(left) and HAN.match(right)))


def spaced(sentence: Any, **values: Any) -> Markup:
    """`sentence` (a translation with %(name)s placeholders) filled with `values`, escaped
    (Markup, such as a link, kept as it is), with a space where a value meets the words beside
    it as Chinese and Latin letters or digits, as zh-TW writes them: "ann@example.com 編輯了…"
    but "已離開的成員編輯了…", whichever a value is. Only those seams are spaced: what a
    value says stays as it was typed."""
    template = str(escape(str(sentence)))
    pieces: list[str] = []
    done = 0
    for found in PLACEHOLDER.finditer(template):
        value = values[found.group(1)]
        filled = escape(str(value) if isinstance(value, LazyString) else value)
        shown = filled.striptags()
        before = template[found.start() - 1:found.start()]
        after = template[found.end():found.end() + 1]
        pieces += [template[done:found.start()].replace("%%", "%"),
                   " " if shown and before and _apart(before, shown[0]) else "", str(filled),
                   " " if shown and after and _apart(shown[-1], after) else ""]
        done = found.end()
    pieces.append(template[done:].replace("%%", "%"))
    # Every piece is escaped text or a value escaped above (or Markup it was given).
    return Markup("".join(pieces))  # noqa: S704


def map_url(street_address: str) -> str:
    """A map's search for a street address: made here from the address, never typed by the
    organizer, so the link cannot lead anywhere else."""
    return MAP_SEARCH + urlencode({"api": "1", "query": street_address})


def price_text(event: dict[str, Any]) -> str:
    """What an event costs, for people: "Free", "NT$1,500", or "Paid" with no amount known.
    The symbol is the international one ("NT$", not the "$" Taiwan reads as its own)."""
    amount = event.get("priceAmount")
    if event["price"] == "free" or amount == 0:
        return str(PRICES["free"])
    if amount is None:
        return str(PRICES["paid"])
    symbol = get_currency_symbol(event.get("priceCurrency") or "TWD", locale="en")
    return symbol + format_decimal(amount, locale=get_locale())


def city_beside_venue(event: dict[str, Any]) -> str:
    """The city to name after an event's venue: none when the venue already names it."""
    city = str(LOCATIONS[event["location"]])
    venue = str(event["venue"]).casefold()
    return "" if city.casefold() in venue or event["location"] in venue else city


# The activity log in words. What each action is called is declared on it (domain.activity);
# who did it: the person, their agent in this browser (WebMCP), or an agent they connected.
SOURCES = {
    "human": _l("You"),
    "agent": _l("Your agent"),
    "mcp": _l("Your connected agent"),
}
OUTCOMES = {
    "success": _l("success"),
    "no_results": _l("no results"),
    "invalid_input": _l("invalid input"),
    "confirmation_required": _l("confirmation required"),
    "not_found": _l("not found"),
    "conflict": _l("conflict"),
    "session_expired": _l("session expired"),
    "rate_limited": _l("rate limited"),
    "internal_error": _l("internal error"),
}



def activity_sentence(line: dict[str, Any]) -> str:
    """An activity line as a sentence: "You saved “WebMCP Intro Workshop”"; a call that was
    refused says what was tried and why ("Your agent tried: Save event — not found")."""
    who = activity_source(line["source"])
    title = line.get("title") or _("an event")
    words = ACTIVITY_WORDS.get(line["action"])
    if words is not None and line["status"] in WENT_THROUGH:
        return str(words.done) % {"who": who, "title": title}
    return _("%(who)s tried: %(what)s (%(outcome)s)", who=who,
             what=activity_action(line["action"]), outcome=activity_outcome(line["status"]))


def activity_action(name: str) -> str:
    """What an activity line did, in words (an action added later reads as its name)."""
    words = ACTIVITY_WORDS.get(name)
    return str(words.tried) if words else name.replace("_", " ").capitalize()


def activity_source(source: str) -> str:
    """Who did what an activity line (or a pending confirmation) records, in words."""
    return str(SOURCES.get(source, source))


def activity_outcome(status: str) -> str:
    """How an activity line ended, in words."""
    return str(OUTCOMES.get(status, status.replace("_", " ")))


def pairs(items: list[dict[str, str]], value: str, label: str) -> list[tuple[str, str]]:
    """(value, label) pairs from a list of dicts: the choices of a page-bound radio group."""
    return [(item[value], item[label]) for item in items]


def index_by(items: list[dict[str, Any]], key: str) -> dict[Any, dict[str, Any]]:
    """The dicts of a list by the value of their `key` (each result of a list is found by its
    id in one step, not by scanning the list for each option of its radio group)."""
    return {item[key]: item for item in items}


# Up to this many pages of results, Previous and Next are all a person needs; past it, the pager
# offers its jump box ("Go to page [ ] Go").
PAGER_JUMP_AFTER = 5


def page_count(matches: int) -> int:
    """How many pages of results a search's count of matches fills (at most the last page a
    search shows)."""
    return min(-(-matches // PAGE_SIZE), LAST_PAGE)


def plain_text(value: Any) -> Any:
    """What a template prints: a lazy translation as the plain text it stands for, so that it
    is escaped like any other text (its own `__html__` would mark it safe HTML)."""
    return str(value) if isinstance(value, LazyString) else value


def init_app(app: Flask) -> None:
    """Register the helpers."""
    app.jinja_env.finalize = plain_text
    app.jinja_env.filters["when"] = when
    app.jinja_env.filters["clock_time"] = clock_time
    app.jinja_env.filters["pairs"] = pairs
    app.jinja_env.filters["index_by"] = index_by
    app.jinja_env.filters["span"] = span
    app.jinja_env.filters["price_text"] = price_text
    app.jinja_env.filters["city_beside_venue"] = city_beside_venue
    app.jinja_env.filters["page_count"] = page_count
    app.jinja_env.filters["day"] = day
    app.jinja_env.filters["ago"] = ago
    app.jinja_env.filters["lang_attribute"] = lang_attribute
    app.jinja_env.filters["spaced"] = spaced
    app.jinja_env.filters["map_url"] = map_url
    app.jinja_env.globals.update(LOCATIONS=LOCATIONS, PRICES=PRICES, LEVELS=LEVELS,
                                 CURRENCIES=CURRENCIES, TEXT_LANGUAGES=TEXT_LANGUAGES,
                                 LINK_TIMES=LINK_TIMES, LINK_NOTES=LINK_NOTES,
                                 ROLE_NAMES=ROLE_NAMES, GIVEN_ROLES=GIVEN_ROLES,
                                 confirmation_minutes=confirmation_minutes,
                                 activity_sentence=activity_sentence,
                                 search_link=search_link, closes_soon=closes_soon,
                                 time_zone_note=time_zone_note,
                                 FEW_SEATS=FEW_SEATS, PAGER_JUMP_AFTER=PAGER_JUMP_AFTER,
                                 share_cards=lambda: card_font() is not None,
                                 date_ranges=lambda: date_ranges(site_today()),
                                 absolute_url=absolute_url,
                                 activity_source=activity_source)
