"""Configuration: the defaults live in one place, and the README documents every setting."""

from __future__ import annotations

import re

from helpers import PROJECT_ROOT

from webapp import create_app
from webapp.config import defaults

# A setting the code reads: config["NAME"], config.get("NAME"...), or gunicorn's environment.
READ = re.compile(r"""config(?:\.get\(|\[)\s*["']([A-Z][A-Z0-9_]+)["']""")
ENVIRONMENT = re.compile(r"""os\.environ\.get\(\s*["']([A-Z][A-Z0-9_]+)["']""")


def read_settings() -> set[str]:
    sources = [*(PROJECT_ROOT / "webapp").rglob("*.py"), PROJECT_ROOT / "gunicorn.conf.py"]
    found: set[str] = set()
    for path in sources:
        text = path.read_text(encoding="utf-8")
        found |= set(READ.findall(text)) | set(ENVIRONMENT.findall(text))
    return found


def documented_settings() -> str:
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return "\n".join(row.split("|")[1] for row in rows)


def is_documented(name: str, table: str) -> bool:
    """Named in the table's first column, as itself or as FLASK_NAME."""
    return re.search(rf"`(FLASK_)?{name}`", table) is not None


def test_every_setting_the_code_reads_has_a_default():
    missing = read_settings() - set(defaults("instance")) - {
        "SECRET_KEY",  # made once in the instance folder when not given
        "BIND", "WEB_CONCURRENCY", "GUNICORN_THREADS"}  # gunicorn's, with defaults there
    assert missing == set()


def test_the_readme_names_every_setting():
    table = documented_settings()
    settings = read_settings() | set(defaults("instance"))
    undocumented = sorted(name for name in settings if not is_documented(name, table))
    assert undocumented == []


def test_the_app_starts_from_the_defaults_alone(tmp_path):
    app = create_app({"SECRET_KEY": "x", "DATABASE": str(tmp_path / "events.sqlite")})
    for name, value in defaults(app.instance_path).items():
        if name not in ("DATABASE", "RATELIMIT_STORAGE_URI"):
            assert app.config[name] == value, name
    assert app.config["PERMANENT_SESSION_LIFETIME"] == app.config["VISITOR_TTL"]
    # The host's counters: beside the database (each database counts apart).
    assert app.config["RATELIMIT_STORAGE_URI"] == (
        f"host://{tmp_path / 'events.rate-limits.sqlite'}")
