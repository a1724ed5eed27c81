"""gunicorn settings for `make run` and for production behind nginx (deploy/nginx.conf);
environment variables override the defaults.

In production gunicorn listens on loopback only and nginx faces the clients: it buffers whole
requests and answers, so a slow client never holds one of the threads below.
"""

import multiprocessing
import os

wsgi_app = "wsgi:app"
bind = os.environ.get("BIND", "127.0.0.1:8000")
# The address every absolute address the site hands out is made from (never a request's
# Host): behind nginx or a load balancer, set FLASK_SITE_URL to the public one.
os.environ.setdefault("FLASK_SITE_URL", f"http://{bind}")
# SQLite serializes writes, so a few workers with a few threads each is plenty on one host.
workers = int(os.environ.get("WEB_CONCURRENCY", min(4, 2 * multiprocessing.cpu_count())))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", 4))
timeout = 30
graceful_timeout = 20
# Longer than nginx keeps an idle upstream connection (4 s): nginx never sends a request on a
# connection gunicorn is closing.
keepalive = 5
# The app alone decides which proxy headers to believe (FLASK_TRUSTED_PROXIES, werkzeug's
# ProxyFix): gunicorn takes no scheme from X-Forwarded-Proto, even from loopback.
forwarded_allow_ips = ""
# The access log (on stdout) never shows a calendar feed's token: the address is its key.
accesslog = "-"
logger_class = "webapp.access_log.RedactingLogger"
errorlog = "-"
# The workers load the app after the fork: no connection may cross fork() (the master only
# prepares the database, with an app of its own that it closes before any fork).
preload_app = False


def on_starting(server):
    """Create, migrate and seed the database once, in the master before any worker exists,
    and close it again: no connection crosses fork(), and no worker ever creates it.

    A failure here (say another server holds the write lock past the busy timeout) does not
    stop the server: the workers migrate it as they start, or on their first request.
    """
    from webapp import create_app
    from webapp.storage import StorageError
    from webapp.storage.connection import close_backend
    from webapp.storage.connection import prepare_database

    app = create_app()
    try:
        with app.app_context():
            prepare_database()
    except StorageError:
        server.log.exception("database not prepared yet; the workers try again")
    finally:
        close_backend(app)


def post_worker_init(worker):
    """Migrate the database as each worker starts (after the fork), never creating it.

    A failure here (say the database is locked past the busy timeout, or its file is gone)
    must not stop the worker: gunicorn halts the whole server when one worker fails to boot.
    The worker logs it and prepares the database again on its first request instead.
    """
    from webapp.storage import StorageError
    from webapp.storage.connection import never_create_database
    from webapp.storage.connection import prepare_database

    never_create_database(worker.wsgi)
    with worker.wsgi.app_context():
        try:
            prepare_database()
        except StorageError:
            worker.log.exception("database not ready yet; retrying on the first request")
    worker.log.info("Worker ready (pid: %s): database prepared", worker.pid)
