"""The message catalogs are complete and current: what `make test` checks before any page.

The source is extracted the way `make translations` extracts it (babel.cfg), and the
Traditional Chinese catalog must hold exactly those messages, each translated, none fuzzy,
with the same placeholders; and the compiled catalog the site loads must say what the .po
says. A new people-facing string therefore fails here until it is translated.
"""

from __future__ import annotations

import re
from gettext import GNUTranslations
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.catalog import Message
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po
from flask_babel import get_translations
from flask_babel import gettext
from helpers import PROJECT_ROOT

TRANSLATIONS = PROJECT_ROOT / "webapp" / "translations"
LOCALES = ["zh_Hant_TW"]
# The keywords `make translations` adds to Babel's own (_, gettext, ngettext, N_, ...), with
# the arguments that hold the message (None: the first).
KEYWORDS = {"_l": None, "lazy_gettext": None, "lazy_ngettext": (1, 2)}
PLACEHOLDER = re.compile(r"%\(\w+\)s|\{\w+\}")
# Counts that take every plural form of the catalog's language (zh_Hant_TW has one).
COUNTS = (0, 1, 2, 5, 21, 100)


def source_messages() -> set[str | tuple[str, ...]]:
    """Every msgid the source marks for translation, as `pybabel extract -F babel.cfg`: a
    sentence with a count as its (singular, plural) pair, as the catalog names it."""
    with open(PROJECT_ROOT / "babel.cfg", encoding="utf-8") as config:
        method_map, options_map = parse_mapping_cfg(config)
    from babel.messages.extract import DEFAULT_KEYWORDS

    keywords = {**DEFAULT_KEYWORDS, **KEYWORDS}
    found: set[str | tuple[str, ...]] = set()
    for _file, _line, message, _comments, _context in extract_from_dir(
            str(PROJECT_ROOT), method_map, options_map, keywords=keywords):
        found.add(message if isinstance(message, str) else tuple(message))
    return found


def catalog(locale: str) -> Catalog:
    with open(TRANSLATIONS / locale / "LC_MESSAGES" / "messages.po", "rb") as po:
        return read_po(po, locale=locale)


def translated(locale: str) -> list[Message]:
    return [message for message in catalog(locale) if message.id]


def sources(message: Message) -> tuple[str, ...]:
    """The msgid of a message, or the (singular, plural) pair of a sentence with a count."""
    return (message.id,) if isinstance(message.id, str) else tuple(message.id)


def forms(message: Message) -> tuple[str, ...]:
    """The msgstr of a message, or each plural form of a sentence with a count."""
    string = message.string or ""
    return (string,) if isinstance(string, str) else tuple(string)


@pytest.mark.parametrize("locale", LOCALES)
def test_the_catalog_holds_exactly_the_messages_of_the_source(locale):
    """Run `make translations` when this fails: it lists what to add or drop."""
    in_catalog = {message.id for message in translated(locale)}
    in_source = source_messages()
    assert in_source - in_catalog == set(), "new in the source, not in the catalog"
    assert in_catalog - in_source == set(), "in the catalog, gone from the source"


@pytest.mark.parametrize("locale", LOCALES)
def test_every_message_is_translated_and_none_is_fuzzy(locale):
    messages = translated(locale)
    assert len(messages) > 200
    assert [m.id for m in messages if not all(forms(m))] == []
    assert [m.id for m in messages if m.fuzzy] == []


@pytest.mark.parametrize("locale", LOCALES)
def test_translations_keep_every_placeholder(locale):
    """A placeholder lost or misspelled would fail (or say less) only when it is shown. Each
    plural form keeps those of the plural source, which names the count."""
    for message in translated(locale):
        for string in forms(message):
            assert sorted(PLACEHOLDER.findall(string)) == sorted(
                PLACEHOLDER.findall(sources(message)[-1])), message.id
    assert [(message.id, errors) for message, errors in catalog(locale).check()] == []


@pytest.mark.parametrize("locale", LOCALES)
def test_the_site_loads_the_catalog_as_written(app, locale):
    """The compiled catalog (`make catalogs`) is the .po as it is now."""
    code = {"zh_Hant_TW": "zh-TW"}[locale]
    with app.test_request_context(f"/{code}/events"):
        loaded = get_translations()
        assert isinstance(loaded, GNUTranslations)
        stale = []
        for message in translated(locale):
            if not message.pluralizable:
                if gettext(sources(message)[0]) != forms(message)[0]:
                    stale.append(message.id)
                continue
            singular, plural = sources(message)
            # Each count gets the form the catalog's plural rule gives it.
            if any(loaded.ngettext(singular, plural, count) != forms(message)[
                    loaded.plural(count)] for count in COUNTS):
                stale.append(message.id)
    assert stale == [], "run `make catalogs`"


def test_the_catalog_folder_holds_only_known_locales():
    folders = sorted(path.name for path in Path(TRANSLATIONS).iterdir() if path.is_dir())
    assert folders == LOCALES


# Where the toolkit keeps its own Chinese (its message domain).
TOOLKIT_CATALOG = (PROJECT_ROOT / "flask-webmcp" / "src" / "flask_webmcp" / "translations"
                   / "zh_Hant_TW" / "LC_MESSAGES" / "flask_webmcp.po")
# Words a Chinese page once used for "agent" side by side (代理人, 代理程式, a bare 代理):
# people read one term, AI 代理.
OTHER_AGENT_WORDS = re.compile(r"代理(?:人|程式)|(?<!AI )代理")


def test_an_agent_is_called_one_thing_in_chinese():
    with open(TOOLKIT_CATALOG, "rb") as po:
        toolkit = [message for message in read_po(po, locale="zh_Hant_TW") if message.id]
    mixed, unnamed = [], []
    for message in [*translated("zh_Hant_TW"), *toolkit]:
        for source, string in zip(sources(message), forms(message) * 2, strict=False):
            if OTHER_AGENT_WORDS.search(string):
                mixed.append(string)
            elif re.search(r"\bagents?\b", source, re.IGNORECASE) and "AI 代理" not in string:
                unnamed.append((source, string))
    assert mixed == []
    assert unnamed == []
