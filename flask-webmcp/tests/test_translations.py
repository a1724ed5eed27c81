"""The toolkit's own catalog (the flask_webmcp domain): it holds exactly the sentences the
source marks, each translated with its placeholders, and a request in a language the app
names gets them in that language."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog as Messages
from babel.messages.extract import DEFAULT_KEYWORDS
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po
from flask import Flask
from flask import request

from flask_webmcp import Catalog
from flask_webmcp import WebMCP
from flask_webmcp.result import invalid_input
from flask_webmcp.text import DOMAIN
from flask_webmcp.text import TRANSLATIONS
from flask_webmcp.text import catalog

EXTENSION = Path(__file__).resolve().parent.parent
LOCALES = ["zh_Hant_TW"]
PLACEHOLDER = re.compile(r"%\(\w+\)s|\{\w+\}")


def source_messages() -> set[str]:
    """Every msgid the source marks, as `make translations` extracts them."""
    with open(EXTENSION / "babel.cfg", encoding="utf-8") as config:
        method_map, options_map = parse_mapping_cfg(config)
    return {message if isinstance(message, str) else message[0]
            for _file, _line, message, _comments, _context in extract_from_dir(
                str(EXTENSION), method_map, options_map, keywords=DEFAULT_KEYWORDS)}


def messages(locale: str) -> Messages:
    with open(TRANSLATIONS / locale / "LC_MESSAGES" / f"{DOMAIN}.po", "rb") as po:
        return read_po(po, locale=locale)


def test_the_catalogs_are_the_known_languages():
    assert sorted(path.name for path in TRANSLATIONS.iterdir() if path.is_dir()) == LOCALES


@pytest.mark.parametrize("locale", LOCALES)
def test_the_catalog_holds_exactly_the_messages_of_the_source(locale):
    """Run `make translations` when this fails."""
    assert {message.id for message in messages(locale) if message.id} == source_messages()


@pytest.mark.parametrize("locale", LOCALES)
def test_every_message_is_translated_with_its_placeholders(locale):
    translated = [message for message in messages(locale) if message.id]
    assert [m.id for m in translated if not m.string or m.fuzzy] == []
    for message in translated:
        assert isinstance(message.id, str) and isinstance(message.string, str)
        assert sorted(PLACEHOLDER.findall(message.string)) == sorted(
            PLACEHOLDER.findall(message.id)), message.id


@pytest.mark.parametrize("locale", LOCALES)
def test_the_compiled_catalog_is_the_catalog_as_written(locale):
    """(`make catalogs`, or building the wheel, compiles it.)"""
    loaded = catalog(locale)
    stale = [m.id for m in messages(locale) if m.id and loaded.gettext(str(m.id)) != m.string]
    assert stale == []


def test_a_request_gets_the_sentences_in_the_language_the_app_names():
    app = Flask(__name__)
    WebMCP(app, Catalog([]), locale=lambda: request.args.get("lang"))
    answers = {}
    for lang in ("zh_Hant_TW", "en", ""):
        with app.test_request_context(f"/?lang={lang}"):
            answers[lang] = invalid_input("t", {}).message
    assert answers["zh_Hant_TW"] == "部分輸入不正確；請看各欄位的錯誤說明。"
    assert answers["en"] == answers[""] == (
        "Some of the input is not valid; see the errors for each field.")
    with app.app_context():  # outside a request: as written
        assert invalid_input("t", {}).message == answers["en"]
