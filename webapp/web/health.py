"""Health checks for load balancers and for tying a trace to a release."""

from __future__ import annotations

import subprocess
from importlib import metadata

from flask import Blueprint
from flask import Response
from flask import current_app
from flask import jsonify

from ..config import SITE_ROOT

bp = Blueprint("health", __name__, url_prefix="/health")
GIT_COMMIT = "webapp.git_commit"


@bp.get("")
def health() -> Response:
    """Liveness: the process answers (it touches nothing else, so it is the framework floor)."""
    return jsonify(status="ok")


@bp.get("/version")
def version() -> Response:
    """The release this process runs: package version and source commit."""
    return jsonify(version=metadata.version("webmcp-events"), commit=_commit())


def _commit() -> str:
    """The commit from configuration (FLASK_COMMIT), else from git, else "unknown"."""
    if current_app.config.get("COMMIT"):
        return str(current_app.config["COMMIT"])
    # Asked once per process: where git is missing it would otherwise run on every request.
    if GIT_COMMIT not in current_app.extensions:
        current_app.extensions[GIT_COMMIT] = _git_commit()
    commit: str = current_app.extensions[GIT_COMMIT]
    return commit


def _git_commit() -> str:
    """HEAD of the checkout the app runs from, or "unknown"."""
    try:
        found = subprocess.run(["git", "rev-parse", "HEAD"], cwd=SITE_ROOT, timeout=2,
                               capture_output=True, text=True, check=True)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return found.stdout.strip() or "unknown"
