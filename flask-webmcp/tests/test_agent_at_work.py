"""Every tool form says, in the request's language, what people see while their agent uses
it: a style sheet cannot translate the sentence it shows on `:tool-form-active`."""

from __future__ import annotations

from bs4 import BeautifulSoup
from flask import Flask
from flask import render_template_string
from flask import request
from marshmallow import Schema
from marshmallow import fields

from flask_webmcp import Catalog
from flask_webmcp import Tool
from flask_webmcp import WebMCP


class FindBook(Schema):
    title = fields.String(metadata={"label": "Title"})


FORM = ('{% from "webmcp/macros.html" import tool_form %}'
        '{{ tool_form("find_book", "/books", controls=tool_controls("find_book")) }}')


def said_on_the_form(lang: str) -> str:
    app = Flask(__name__)
    WebMCP(app, Catalog([Tool("find_book", "Find a book", "Finds a book by its title.",
                              FindBook, autosubmit=True)]),
           locale=lambda: request.args.get("lang"), csrf=False)
    with app.test_request_context(f"/?lang={lang}"):
        form = BeautifulSoup(render_template_string(FORM), "html.parser").find("form")
    assert form is not None and form["toolname"] == "find_book"
    return str(form["data-agent-at-work"])


def test_the_form_says_it_in_the_requests_language():
    assert said_on_the_form("zh_Hant_TW") == "你的 AI 代理正在使用這個表單"
    assert said_on_the_form("en") == "Your agent is using this form"
