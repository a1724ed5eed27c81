"""The README's quick start, run as written: a new virtual environment, `pip install` of this
folder, the files it shows, `flask run`, and the answers it says come back."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
import venv
from pathlib import Path

import pytest

EXTENSION = Path(__file__).resolve().parent.parent
README = (EXTENSION / "README.md").read_text(encoding="utf-8")
# A file the quick start shows: an HTML comment naming it, then its fenced block.
# What a build or a test run leaves in a checkout, never part of what pip is given to build.
BUILD_LEFTOVERS = shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__",
                                         ".pytest_cache", "tests", "docs")
SHOWN_FILE = re.compile(r"<!-- file: (?P<name>\S+) -->\n```\w+\n(?P<body>.*?)```", re.DOTALL)


def quick_start_files() -> dict[str, str]:
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return {match["name"]: match["body"] for match in SHOWN_FILE.finditer(section)}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def get(url: str, accept: str = "text/html") -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - loopback
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def wait_for(server: subprocess.Popen[bytes], url: str, timeout: float = 60) -> None:
    """Until the server answers (it fails at once if the server has stopped)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            said = server.stderr.read().decode() if server.stderr else ""
            raise RuntimeError(f"the server stopped: {said}")
        try:
            get(url)
            return
        except (ConnectionError, urllib.error.URLError):
            time.sleep(0.1)  # the poll's pace, not a wait standing in for its condition
    raise RuntimeError(f"nothing answered {url} in {timeout} s")


def test_the_quick_start_shows_every_file_it_needs():
    assert set(quick_start_files()) == {"app.py", "templates/talks.html",
                                        "templates/_talks.html"}


@pytest.mark.slow
def test_the_quick_start_works_as_written(tmp_path):
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    # pip builds in the folder it is given (its build/ and egg-info): a copy, so that this
    # build never races the site's suite building the same folder at the same moment.
    sources = shutil.copytree(EXTENSION, tmp_path / "flask-webmcp", ignore=BUILD_LEFTOVERS)
    subprocess.run([environment / "bin" / "pip", "install", "--quiet", str(sources)],
                   check=True, cwd=tmp_path)
    site = tmp_path / "site"
    for name, body in quick_start_files().items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(body, encoding="utf-8")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [environment / "bin" / "flask", "--app", "app", "run", "--port", str(port)],
        cwd=site, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={"PATH": os.environ["PATH"]})
    try:
        wait_for(server, f"{base}/talks")
        status, page = get(f"{base}/talks?query=flask")
        assert status == 200
        assert re.search(r'<form id="find_talks" [^>]*toolname="find_talks"', page)
        assert "toolautosubmit" in page and "<li>Flask at scale</li>" in page
        status, body = get(f"{base}/talks?query=flask", accept="application/json")
        assert status == 200
        found = json.loads(body)
        assert found["data"] == {"talks": ["Flask at scale"]}
        assert found["message"] == "Talks found: 1."
        status, body = get(f"{base}/talks?query={'x' * 60}", accept="application/json")
        refused = json.loads(body)
        assert status == 422 and refused["status"] == "invalid_input"
        assert refused["errors"] == {"query": ["Longer than maximum length 50."]}
        # What the README shows of each answer (the start of it) is what came back.
        shown = [json.loads(start.rstrip(", ") + "}") for start in
                 re.findall(r"^# (\{.*)\.\.\.\}$", README, re.MULTILINE)]
        assert len(shown) == 2
        for pairs, answer in zip(shown, (found, refused), strict=True):
            assert {key: answer[key] for key in pairs} == pairs
    finally:
        server.terminate()
        server.wait(timeout=30)
        if server.stderr is not None:
            server.stderr.close()
