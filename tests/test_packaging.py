"""What a plain `pip install .` gives: a site that serves, with nothing development needs.

The running site must not depend on test or development packages (BeautifulSoup, the
linter, schema synthesis): they cost every worker import time, and a production install does
not have them.
"""

from __future__ import annotations

import configparser
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from helpers import JSON
from helpers import PROJECT_ROOT
from servers import HttpVisitor
from servers import free_port
from servers import wait_until_up

# What a build, a test run or development leaves in a checkout, none of it packed.
BUILD_LEFTOVERS = shutil.ignore_patterns(
    ".git", ".venv", "node_modules", "build", "dist", "*.egg-info", "__pycache__", "instance",
    ".mypy_cache", ".hypothesis", ".pytest_cache", ".ruff_cache", "tests", "bench")

# What only development uses: none of it may be imported to serve a request.
DEV_ONLY = ("bs4", "webapp.dev", "flask_webmcp.dev")


def test_setup_cfg_packs_every_package():
    config = configparser.ConfigParser()
    config.read(PROJECT_ROOT / "setup.cfg")
    listed = set(config["options"]["packages"].split())
    found = {".".join(path.parent.relative_to(PROJECT_ROOT).parts)
             for path in (PROJECT_ROOT / "webapp").rglob("__init__.py")}
    assert found <= listed, f"not packed: {sorted(found - listed)}"


def test_serving_a_search_imports_nothing_development_needs(tmp_path):
    """A fresh interpreter serves a page, a search and an event, then lists what it imported."""
    script = """
import json, sys
from webapp import create_app
app = create_app({"TESTING": True, "SECRET_KEY": "x", "DATABASE": sys.argv[1]})
client = app.test_client()
for url in ("/zh-TW/events", "/en/events?query=webmcp&location=taipei",
            "/zh-TW/events/evt-webmcp-intro"):
    assert client.get(url).status_code == 200, url
print(json.dumps(sorted(sys.modules)))
"""
    served = subprocess.run([sys.executable, "-c", script, str(tmp_path / "events.sqlite")],
                            capture_output=True, text=True, cwd=PROJECT_ROOT, check=True)
    modules = json.loads(served.stdout)
    loaded = [name for name in modules if name.split(".")[0] == "bs4"
              or any(name == dev or name.startswith(dev + ".") for dev in DEV_ONLY)]
    assert loaded == []
    assert "webapp.web.events" in modules  # the search really ran through the site


@pytest.mark.slow
def test_a_plain_install_serves_the_site(tmp_path):
    """`pip install ./flask-webmcp .` (not editable) into an empty environment, then gunicorn,
    run from a folder that is not the checkout: templates, static files and sample data come
    along, and the toolkit's own templates with it."""
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    bin_dir = environment / "bin"
    # pip builds in the folder it is given (build/, egg-info, the compiled catalogs): a copy
    # of the checkout, so that no build rewrites a file the other test workers are reading.
    checkout = shutil.copytree(PROJECT_ROOT, tmp_path / "checkout", ignore=BUILD_LEFTOVERS)
    # The site's compiled catalogs are not committed: the build must make them itself.
    for compiled in checkout.glob("webapp/translations/*/LC_MESSAGES/*.mo"):
        compiled.unlink()
    # The toolkit first, from its folder, as the README's commands install it.
    subprocess.run([bin_dir / "pip", "install", "--quiet", str(checkout / "flask-webmcp"),
                    str(checkout)], check=True, cwd=tmp_path)
    has_bs4 = subprocess.run([bin_dir / "python", "-c", "import bs4"], capture_output=True)
    assert has_bs4.returncode != 0, "bs4 is a development dependency, not the site's"

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [bin_dir / "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", "2",
         "webapp:create_app()"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={"PATH": os.environ["PATH"], "FLASK_DATABASE": str(tmp_path / "events.sqlite"),
             "FLASK_SECRET_KEY": "plain install"})
    try:
        wait_until_up(base, server)
        visitor = HttpVisitor(base)
        page = visitor.open_page("/events")
        assert page.status == 200 and "evt-webmcp-intro" in page.text
        # The compiled catalogs came along: the Chinese pages are in Chinese.
        chinese = visitor.request("GET", "/zh-TW/events")
        assert '<html lang="zh-Hant-TW">' in chinese.text and "即將舉辦的活動" in chinese.text
        # And the toolkit's own catalog came along in its wheel: its sentences are in Chinese too.
        refused = visitor.request("GET", "/zh-TW/events?price=x", headers=JSON).json()
        assert refused["message"] == "部分輸入不正確；請看各欄位的錯誤說明。"
        found = visitor.request("GET", "/events?query=webmcp", headers=JSON).json()
        assert found["status"] == "success" and found["data"]["count"] >= 1
        stylesheet = visitor.request("GET", "/static/css/site.css")
        assert stylesheet.status == 200 and "text/css" in stylesheet.headers["Content-Type"]
        # The bridge came along in the toolkit's wheel, served beside the site's files.
        bridge = visitor.request("GET", "/static/webmcp/webmcp-bridge.js")
        assert bridge.status == 200 and "respondWith" in bridge.text
        assert visitor.request("GET", "/health/version").json()["version"]
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_source_tree_is_what_is_packed():
    """The folders the package maps (setup.cfg package_dir) exist at the top of the checkout."""
    config = configparser.ConfigParser()
    config.read(PROJECT_ROOT / "setup.cfg")
    mapped = dict(line.split(" = ") for line in
                  config["options"]["package_dir"].strip().splitlines())
    assert mapped == {"webapp.templates": "templates", "webapp.static": "static",
                      "webapp.data": "data"}
    for folder in mapped.values():
        assert any(Path(PROJECT_ROOT, folder).iterdir())
