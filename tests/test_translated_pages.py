"""Every sample page, in both languages, says everything in its own language.

The pages are the linter's: a walk through the site in each language that reaches every
template (webapp/dev/samples.py). On a Chinese page, once organizer-written text (shown as
written), ids, codes and what the visitor typed are set aside, no English word may remain but
the few left in English on purpose (names: WebMCP, AI, UTC...). On an English page no Chinese
character may remain outside organizer text. Both look at what people read (text, titles,
labels, placeholders) and at what agents read (tool and parameter descriptions).
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from bs4 import BeautifulSoup
from bs4 import Comment
from bs4 import Doctype

from flask_webmcp.dev.lint import RenderedPage
from webapp.config import SITE_ROOT
from webapp.dev.samples import SAMPLE_EVENT
from webapp.dev.samples import SAMPLE_VENUES
from webapp.dev.samples import sample_pages

# Attributes whose text people or agents read.
READ_ATTRIBUTES = ("title", "aria-label", "placeholder", "alt", "tooltitle",
                   "tooldescription", "toolparamdescription", "data-unreachable-message",
                   "data-unreachable-next-action")
# Words left in English on purpose, on the Chinese pages: names of things (Google Calendar,
# the .ics and CSV file types, "QR Code" as Taiwan writes it, among them), and the language switch,
# which names English in English; OAuth and the MCP clients that sign in with it (Claude,
# Claude Code, VS Code, Cursor); LINE, the chat app an event is shared to; NT, of NT$1,500,
# as Taiwan writes a price in New Taiwan dollars.
KEPT_IN_ENGLISH = {"WebMCP", "MCP", "AI", "UTC", "id", "English", "Google", "ics", "QR", "Code",
                   "OAuth", "Claude", "VS", "Cursor", "LINE", "NT", "CSV",
                   # the picture formats an upload takes, and its size's unit
                   "JPEG", "PNG", "WebP", "MB"}
# A check-in code, as the registration mail shows it (`domain.tokens.CheckInCodes`).
CHECK_IN_CODE = re.compile(r"\b[A-Z2-7]{4}(?:-[A-Z2-7]{4})+\b")
# What the sample walk types into forms (shown again, as typed: the organization it starts,
# the addresses it signs in and invites with and the reason it cancels an event for among
# them), and the name its OAuth client registers with (the consent page shows it as the
# client gave it).
TYPED: tuple[str, ...] = (
    "Ann Lee", "a***@example.com", "ann@example.com", "no-event-has-this-word", "not-a-date",
    "web", "Ann's <agent>", "台北網頁開發者聚會", "owner@example.com", "bob@example.com",
    "not-an-address", "講者臨時生病。", "ann.door@example.com")
# ... and the event the walk's organizer drafts, whole and paragraph by paragraph, with its topic
# tags one by one (its chips) and as its form shows them again.
TAGS = SAMPLE_EVENT["topic_tags"].split("、")
TYPED += (*SAMPLE_EVENT.values(), *SAMPLE_EVENT["description"].split("\n\n"), *SAMPLE_VENUES,
          ", ".join(TAGS), *TAGS)
ENGLISH_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]")


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """Every sample page, by language prefix."""
    from webapp import create_app

    app = create_app({"TESTING": True, "SECRET_KEY": "pages",
                      "DATABASE": str(tmp_path_factory.mktemp("pages") / "events.sqlite")})
    by_language: dict[str, list[RenderedPage]] = {"zh-TW": [], "en": []}
    for page in sample_pages(app):
        by_language[page.url.split("/")[1]].append(page)
    return by_language


def organizer_text() -> list[str]:
    """Everything organizers wrote in the sample data, longest first (so it is cut whole)."""
    events = json.loads((SITE_ROOT / "data" / "events.json").read_text("utf-8"))["events"]
    texts = {part.strip() for event in events
             for name in ("title", "summary", "description", "venue")
             for part in event[name].split("\n\n")}
    return sorted((text for text in texts if text), key=len, reverse=True)


def what_people_read(html: str) -> list[str]:
    """The texts of a page people and agents read, organizer text, ids and input cut out."""
    soup = BeautifulSoup(html, "html.parser")
    for hidden in soup.find_all(["script", "style", "code"]):
        hidden.decompose()
    for markup in soup.find_all(string=lambda text: isinstance(text, Comment | Doctype)):
        markup.extract()
    texts = [str(text) for text in soup.find_all(string=True)]
    texts += [str(element[name]) for element in soup.find_all(True)
              for name in READ_ATTRIBUTES if element.has_attr(name)]
    texts += [str(meta["content"]) for meta in soup.select("meta[name=description]")]
    cut = [*organizer_text(), *TYPED]
    kept = []
    for text in texts:
        for written in cut:
            text = text.replace(written, " ")
        text = re.sub(r"\b(?:evt|reg)-[A-Za-z0-9_-]+", " ", text)  # ids
        text = CHECK_IN_CODE.sub(" ", text)
        text = re.sub(r"\bC\d{3}\b", " ", text)  # the Act's codes of personal data (C001)
        text = re.sub(r"\b[a-z]+(?:_[a-z]+)+\b", " ", text)  # tool names, as agents call them
        text = re.sub(r"https?://\S+", " ", text)  # full addresses (a mailed link)
        text = re.sub(r"/[\w/-]*", " ", text)  # addresses
        if text.strip():
            kept.append(text.strip())
    return kept


def test_the_walk_covers_every_template_in_both_languages(pages):
    templates = {language: Counter(name for page in found for name in page.templates)
                 for language, found in pages.items()}
    assert templates["zh-TW"].keys() == templates["en"].keys()
    assert len(pages["zh-TW"]) == len(pages["en"]) > 20


def test_chinese_pages_have_no_english_left(pages):
    leftovers = {}
    for page in pages["zh-TW"]:
        words = {word for text in what_people_read(page.html)
                 for word in ENGLISH_WORD.findall(text)} - KEPT_IN_ENGLISH
        if words:
            leftovers[page.url] = sorted(words)
    assert leftovers == {}


def test_english_pages_have_no_chinese_left(pages):
    leftovers = {}
    for page in pages["en"]:
        found = {text for text in what_people_read(page.html) if CJK.search(text)}
        found -= {"繁體中文"}  # the language switch names Chinese in Chinese
        if found:
            leftovers[page.url] = sorted(found)
    assert leftovers == {}


def test_the_scan_would_see_an_english_leftover(pages):
    """The check itself: a label left untranslated on a Chinese page is found."""
    page = pages["zh-TW"][0]
    spoiled = page.html.replace("</main>", "<p>Seats left</p></main>")
    words = {word for text in what_people_read(spoiled) for word in ENGLISH_WORD.findall(text)}
    assert {"Seats", "left"} <= words - KEPT_IN_ENGLISH
