"""Health checks for load balancers and for tying a trace to a release."""

from __future__ import annotations

import subprocess
from importlib import metadata

from flask import Blueprint
from flask import current_app
from flask import jsonify

from . import PROJECT_ROOT

bp = Blueprint("health", __name__, url_prefix="/health")


@bp.get("")
def health():
    """Liveness: the process answers (it touches nothing else, so it is the framework floor)."""
    return jsonify(status="ok")


@bp.get("/version")
def version():
    """The release this process runs: package version and source commit."""
    return jsonify(version=metadata.version("webmcp-events"), commit=_commit())


def _commit() -> str:
    """The commit from configuration (FLASK_COMMIT), else from git, else "unknown"."""
    if current_app.config.get("COMMIT"):
        return str(current_app.config["COMMIT"])
    try:
        found = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT_ROOT, timeout=2,
                               capture_output=True, text=True, check=True)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    current_app.config["COMMIT"] = found.stdout.strip() or "unknown"
    return current_app.config["COMMIT"]
