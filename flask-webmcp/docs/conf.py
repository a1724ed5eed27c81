"""Sphinx settings for flask-webmcp's documentation (`make docs` at the repository's top)."""

from __future__ import annotations

project = "flask-webmcp"
author = "The webmcp-events contributors"
copyright = "2026, " + author  # noqa: A001 - Sphinx's name for it
extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
# The API pages list what each module names in __all__, in the order of the source.
autodoc_default_options = {"members": True, "ignore-module-all": False,
                           "member-order": "bysource"}
autodoc_typehints = "description"
autodoc_class_signature = "separated"
html_theme = "alabaster"
# Every reference must resolve (`-n`), but what a type hint names from other libraries has no
# page here (the build reads nothing from the network): their types are left unlinked.
nitpick_ignore_regex = [
    ("py:class", r"(flask|werkzeug|marshmallow|jinja2|click|apispec|bs4|itsdangerous)\..*"),
    ("py:class", r"(collections\.abc|contextlib|typing|pathlib|datetime|decimal|enum|gettext)\..*"),
    ("py:class", r"(Flask|Blueprint|Response|Schema|Rule|Tag|APISpec|TestResponse|Command|Path)"),
    # A type variable of the route decorators: the view they return is the view they got.
    ("py:class", r"flask_webmcp\.routes\.View"),
]
