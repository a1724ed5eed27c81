"""POST forms carry the token the app's CSRF protection expects, and that field is never tool
input: Flask-WTF's when the app uses it, another the app names, or none."""

from __future__ import annotations

from flask import Flask
from flask import render_template_string
from flask_wtf.csrf import CSRFProtect

from flask_webmcp import Catalog
from flask_webmcp import CsrfField
from flask_webmcp import WebMCP
from flask_webmcp.inputs import input_fields

FIELD = '{% from "webmcp/macros.html" import csrf_field %}{{ csrf_field() }}'


def app_with(**options: object) -> Flask:
    app = Flask(__name__)
    app.config["SECRET_KEY"] = "test"
    if options.pop("flask_wtf", False):
        CSRFProtect(app)
    WebMCP(app, Catalog([]), **options)  # type: ignore[arg-type]
    return app


def test_with_flask_wtf_the_field_is_its_token_and_no_input():
    app = app_with(flask_wtf=True)
    with app.test_request_context():
        from flask_wtf.csrf import generate_csrf

        assert render_template_string(FIELD) == (
            f'<input type="hidden" name="csrf_token" value="{generate_csrf()}">')
        assert input_fields({"csrf_token": "t", "query": "x"}) == {"query": "x"}


def test_a_field_the_app_names_is_written_and_left_out_of_the_input():
    app = app_with(csrf=CsrfField("_token", lambda: "abc"))
    with app.test_request_context():
        assert render_template_string(FIELD) == '<input type="hidden" name="_token" value="abc">'
        assert input_fields({"_token": "abc", "csrf_token": "x"}) == {"csrf_token": "x"}


def test_without_protection_or_with_none_asked_for_there_is_no_field():
    for app in (app_with(), app_with(flask_wtf=True, csrf=False)):
        with app.test_request_context():
            assert render_template_string(FIELD) == ""
            assert input_fields({"csrf_token": "x"}) == {"csrf_token": "x"}
