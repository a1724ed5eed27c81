"""The app factory: configuration sources, secrets, and no database work at import time."""

from __future__ import annotations

from webapp import create_app


def test_testing_config_is_applied(app):
    assert app.testing
    assert not create_app({"SECRET_KEY": "x", "DATABASE": "/tmp/unused.sqlite"}).testing


def test_prefixed_environment_variables_configure_the_app(monkeypatch, tmp_path):
    monkeypatch.setenv("FLASK_DATABASE", str(tmp_path / "env.sqlite"))
    monkeypatch.setenv("FLASK_SECRET_KEY", "from the environment")
    monkeypatch.setenv("FLASK_VISITOR_TTL", "600")
    app = create_app()
    assert app.config["DATABASE"] == str(tmp_path / "env.sqlite")
    assert app.config["SECRET_KEY"] == "from the environment"
    assert app.config["VISITOR_TTL"] == 600
    assert app.permanent_session_lifetime.total_seconds() == 600


def test_creating_the_app_opens_no_database(tmp_path):
    database = tmp_path / "lazy.sqlite"
    app = create_app({"SECRET_KEY": "x", "DATABASE": str(database)})
    assert not database.exists()
    app.test_client().get("/health")
    assert not database.exists(), "the health check must not touch the database"
    assert app.test_client().get("/en/events").status_code == 200
    assert database.exists(), "the first request that needs data creates and seeds it"


def test_a_secret_key_is_created_once_in_the_instance_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("FLASK_SECRET_KEY", raising=False)
    instance = tmp_path / "instance"
    monkeypatch.setattr("flask.Flask.auto_find_instance_path", lambda self: str(instance))
    app_a = create_app({"DATABASE": str(tmp_path / "a.sqlite")})
    app_b = create_app({"DATABASE": str(tmp_path / "b.sqlite")})
    assert app_a.instance_path == str(instance)
    assert app_a.config["SECRET_KEY"] == app_b.config["SECRET_KEY"]
    assert len(app_a.config["SECRET_KEY"]) == 64
    key_file = instance / "secret_key"
    assert key_file.read_text() == app_a.config["SECRET_KEY"]
    assert key_file.stat().st_mode & 0o777 == 0o600


def test_home_redirects_to_the_events(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response.headers["Location"] == "/en/events"  # the client reads English
