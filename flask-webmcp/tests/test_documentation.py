"""The documentation builds without a warning, and it covers the whole public API."""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path
from typing import get_origin

import pytest

import flask_webmcp

DOCS = Path(__file__).resolve().parent.parent / "docs"


def public_modules() -> list[str]:
    """Every module of the extension that names a public API (`__all__`)."""
    names = [flask_webmcp.__name__] + [
        module.name for module in pkgutil.walk_packages(flask_webmcp.__path__, "flask_webmcp.")]
    return [name for name in names if hasattr(importlib.import_module(name), "__all__")]


def test_the_api_reference_documents_every_public_module():
    documented = set(re.findall(r"^\.\. automodule:: (\S+)$", (DOCS / "api.md").read_text(),
                                re.MULTILINE))
    assert documented == set(public_modules())


def test_every_public_function_and_class_has_a_docstring():
    """(A type alias has none of its own: a `#:` comment documents it.)"""
    missing = [f"{module}.{name}" for module in public_modules()
               for name in importlib.import_module(module).__all__
               if callable(value := getattr(importlib.import_module(module), name))
               and get_origin(value) is None and not (value.__doc__ or "").strip()]
    assert missing == []


@pytest.mark.slow
def test_the_docs_build_without_warnings(tmp_path):
    """As `make docs` builds them: a warning, or a reference that resolves nowhere, fails."""
    built = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-W", "-n", "--keep-going", "-b", "html",
         str(DOCS), str(tmp_path / "html")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    guide = re.sub(r"<[^>]+>", "", (tmp_path / "html" / "guide.html").read_text())
    # The listings are included from the example, not copied: they are there.
    assert "def find_books" in guide and "def sample_pages" in guide
