# The two commands a fresh machine needs (see README): `make run` and `make test`.
VENV   ?= .venv
PYTHON ?= python3
BIN     = $(VENV)/bin
SUDO    = $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test check test-shifted install catalogs translations browser lighthouse mcp-client \
	nginx services postgres redis static lint bench wrk docs clean

## Install everything and serve the site with gunicorn on http://127.0.0.1:8000, with the mail
## delivery loop beside it (no mail server needed: each mail becomes instance/mail/<id>.eml)
# Ctrl-C reaches both (one process group); when gunicorn ends for any reason the loop is told
# to stop too (SIGTERM: it finishes the mail it is sending) and waited for. Reminders of
# tomorrow's events are queued every hour (`mail remind`; cron does it in production), and
# waitlist offers whose hold ran out are passed on every five minutes (`waitlist pass-on`).
run: install static
	@$(BIN)/flask --app webapp mail run & mail=$$!; \
	( while :; do $(BIN)/flask --app webapp mail remind; sleep 3600; done ) & remind=$$!; \
	( while :; do $(BIN)/flask --app webapp waitlist pass-on; sleep 300; done ) & passon=$$!; \
	trap 'kill -TERM $$mail $$remind $$passon 2>/dev/null; wait $$mail' EXIT; \
	$(BIN)/gunicorn

## Install everything (Chromium, Lighthouse, nginx, PostgreSQL and Redis included), lint,
## type-check, and run the whole test suite and the shifted-clock runs
# The lint and the shifted-clock runs go on beside the main pass, into build/beside.log, printed
# after it: they use what its last modules leave of the cores (the main pass alone keeps both
# cores busy until then: vmstat showed no idle time with 3, 4 or 6 processes).
test: install browser lighthouse mcp-client nginx services static
	@mkdir -p build
	@( $(MAKE) --no-print-directory lint test-shifted >build/beside.log 2>&1; \
	    echo $$? >build/beside.rc ) & \
	$(BIN)/pytest $(PARALLEL) --durations=25; main=$$?; wait; \
	echo; echo "=== beside the main pass: lint, then the shifted-clock runs ==="; \
	cat build/beside.log; \
	[ $$main = 0 ] || echo "the main pass failed" >&2; \
	[ "$$(cat build/beside.rc)" = 0 ] || echo "the lint or a shifted-clock run failed" >&2; \
	[ $$main = 0 ] && [ "$$(cat build/beside.rc)" = 0 ]

# The tests run in several processes (pytest-xdist), each module in one of them, so a module's
# servers, browsers and Lighthouse batch are made once. Two processes per core: 4 took 11:00 on
# this 2-core machine where 6 took 11:54 (quiet, the same commit). Modules are handed out in
# the order tests/conftest.py gives them (the longest first); without --no-loadscope-reorder
# pytest-xdist would sort them by how many tests they hold, and a module of three long tests
# (the state walk) started last kept the run waiting a minute.
PARALLEL = -n $(shell echo $$(( 2 * $$(nproc) ))) --dist loadfile --no-loadscope-reorder

## While working: lint, types and the tests that need no browser, no PostgreSQL and no server
## of their own (`slow`), in under two minutes; `make test` runs everything
check: install static
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/pytest $(PARALLEL) -q -m "not browser and not slow and not postgresql"

# Where the shifted runs move every process's clock: the next such moment in Asia/Taipei.
SHIFTED_CLOCKS = early-morning new-years-eve leap-day

## The tests that take the clock (clock_edges) and those of the clock itself (shifted), once per
# moment of SHIFTED_CLOCKS, every process's clock moved there (tests/shifted_clock): the verdict
# must not depend on the hour or the date. All moments run, then any that failed are named.
# They run in one process per moment: beside the main pass the cores are busy anyway, and each
# xdist worker would collect the whole suite again to run a few tests (measured quiet, per
# moment: 33 s of CPU with two workers, 20 s in one process; 22 s and 25 s of wall time).
test-shifted: install services static
	@failed=; for moment in $(SHIFTED_CLOCKS); do \
	    echo; echo "=== the clock's tests, every clock shifted to $$moment ==="; \
	    PYTHONPATH="$(CURDIR)/tests/shifted_clock$${PYTHONPATH:+:$$PYTHONPATH}" \
	        SHIFT_CLOCK_TO=$$moment $(BIN)/pytest -p no:xdist -q \
	        -m "(clock_edges or shifted) and not browser" \
	        || failed="$$failed $$moment"; \
	done; \
	if [ -n "$$failed" ]; then echo "shifted-clock runs failed:$$failed" >&2; exit 1; fi

## flask-webmcp's guide and API reference, into build/docs (every warning and every reference
## that does not resolve fails it; flask-webmcp/tests/test_docs.py runs it in the suite)
docs: install
	$(BIN)/sphinx-build -q -W -n --keep-going -b html flask-webmcp/docs build/docs

## Benchmarks: print the figures and write them to bench/results/latest.json
bench: install browser lighthouse services static wrk
	$(BIN)/python -m bench

# wrk sends the benchmarks' HTTP load (keep-alive, latency percentiles, little CPU of its own).
wrk:
	@command -v wrk >/dev/null || { $(SUDO) apt-get update && $(SUDO) apt-get install -y wrk; }

install: $(VENV)/.installed catalogs

# Reinstall whenever the package metadata changes.
# The toolkit is a distribution of its own (flask-webmcp/), installed from its folder first so
# the site's requirement on it is met by the checkout, not looked for on PyPI.
$(VENV)/.installed: setup.cfg pyproject.toml flask-webmcp/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e './flask-webmcp[dev,csrf,docs]' -e '.[test]'
	touch $@

# The message catalogs (webapp/translations/<locale>/LC_MESSAGES/messages.po, and the
# toolkit's own, flask-webmcp/src/flask_webmcp/translations/<locale>/LC_MESSAGES/
# flask_webmcp.po) are the source; the .mo files loaded are built from them. The site's are
# not committed (its wheel compiles them, setup.py); the toolkit's are, as WTForms ships its
# own, so its wheel needs no build step (its tests fail when one is stale).
CATALOGS = $(wildcard webapp/translations/*/LC_MESSAGES/messages.po) \
           $(wildcard flask-webmcp/src/flask_webmcp/translations/*/LC_MESSAGES/flask_webmcp.po)
catalogs: $(CATALOGS:.po=.mo)

%.mo: %.po $(VENV)/.installed
	$(BIN)/pybabel compile --statistics -i $< -o $@

## After changing people-facing text: extract it and merge it into every catalog (then
## translate what is new or marked fuzzy; `make test` fails until nothing is missing)
translations: $(VENV)/.installed
	mkdir -p build
	$(BIN)/pybabel extract -F babel.cfg -k _l -k lazy_gettext -k lazy_ngettext:1,2 \
	    --add-location=file \
	    --sort-by-file --no-wrap -c Translators: -o build/messages.pot .
	$(BIN)/pybabel update -i build/messages.pot -d webapp/translations \
	    --no-wrap --ignore-obsolete
	$(BIN)/pybabel extract -F flask-webmcp/babel.cfg --add-location=file --sort-by-file \
	    --no-wrap -c Translators: --project flask-webmcp -o build/flask_webmcp.pot flask-webmcp
	$(BIN)/pybabel update -i build/flask_webmcp.pot -D flask_webmcp \
	    -d flask-webmcp/src/flask_webmcp/translations --no-wrap --ignore-obsolete

# Debian's Chromium drives the WebMCP browser tests; Playwright never downloads a browser here.
# fonts-noto-cjk: without a CJK font the browsers draw Chinese as boxes (screenshots, Lighthouse).
browser:
	@command -v chromium >/dev/null || { $(SUDO) apt-get update && $(SUDO) apt-get install -y chromium; }
	@fc-list :lang=zh-tw | grep -q . || { $(SUDO) apt-get update && $(SUDO) apt-get install -y fonts-noto-cjk; }
	@chromium --version 2>/dev/null | grep -q Chromium || { echo "chromium is not usable" >&2; exit 1; }

# Lighthouse audits the pages people land on (tests/browser/test_lighthouse.py, bench table 11)
# with Debian's chromium (CHROME_PATH): npm installs exactly what tools/lighthouse's lock file
# pins, without install scripts, and never a browser. Debian's nodejs (18 in bookworm) is enough
# for the pinned Lighthouse 12; 13 needs Node 22.
LIGHTHOUSE_INSTALLED = tools/lighthouse/node_modules/.installed
lighthouse: browser $(LIGHTHOUSE_INSTALLED)

$(LIGHTHOUSE_INSTALLED): tools/lighthouse/package.json tools/lighthouse/package-lock.json
	@command -v npm >/dev/null || { $(SUDO) apt-get update && $(SUDO) apt-get install -y nodejs npm; }
	cd tools/lighthouse && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --ignore-scripts --no-audit --no-fund
	touch $@

# The TypeScript SDK's MCP client connects to the site under gunicorn
# (tests/test_mcp_typescript.py): npm installs exactly what tools/mcp-client's lock file pins,
# without install scripts. The pinned SDK (1.32) asks for Node 18 or later, which Debian's
# nodejs is (only its HTTP server parts, unused here, want Node 20).
MCP_CLIENT_INSTALLED = tools/mcp-client/node_modules/.installed
mcp-client: $(MCP_CLIENT_INSTALLED)

$(MCP_CLIENT_INSTALLED): tools/mcp-client/package.json tools/mcp-client/package-lock.json
	@command -v npm >/dev/null || { $(SUDO) apt-get update && $(SUDO) apt-get install -y nodejs npm; }
	cd tools/mcp-client && npm ci --ignore-scripts --no-audit --no-fund
	touch $@

# Debian's nginx runs in front of gunicorn in the production setup (deploy/), and its test
# starts it from a temporary folder on loopback ports; it is never used as a service here.
nginx:
	@command -v nginx >/dev/null || { $(SUDO) apt-get update && $(SUDO) apt-get install -y nginx; }
	@nginx -v 2>&1 | grep -q nginx/ || { echo "nginx is not usable" >&2; exit 1; }

# The PostgreSQL backend and the shared rate limits are tested for real (tests/services.py):
# Debian's packaged PostgreSQL cluster runs as a service (its initdb refuses root), and the
# tests make a throwaway database in it for each run; they start a throwaway redis-server of
# their own on a free port. `make run` needs neither (it serves SQLite, counting the rate limits in a file beside it).
services: postgres redis

# The cluster is started when it is not running, and the user running the tests gets a
# PostgreSQL role of the same name (peer authentication on the local socket) that may create
# databases, and may end other sessions of them: `DROP DATABASE ... WITH (FORCE)` at the end of
# a run must also end an autovacuum worker busy in the throwaway database, which a role without
# pg_signal_backend may not do (the drop then fails at random, after every test passed).
# Nothing else of the cluster is changed, so this is harmless where it runs.
TEST_ROLE := $(shell id -un)
postgres:
	@command -v pg_lsclusters >/dev/null || { $(SUDO) apt-get update && $(SUDO) apt-get install -y postgresql; }
	@pg_lsclusters -h | awk '$$4 != "online" { print $$1, $$2 }' | while read version name; do \
	    $(SUDO) pg_ctlcluster "$$version" "$$name" start; done
	@pg_lsclusters -h | grep -q online || { echo "no PostgreSQL cluster is running" >&2; exit 1; }
	@$(SUDO) runuser -u postgres -- psql -qtAc \
	    "SELECT 1 FROM pg_roles WHERE rolname = '$(TEST_ROLE)'" | grep -q 1 || \
	    $(SUDO) runuser -u postgres -- createuser --createdb '$(TEST_ROLE)'
	@$(SUDO) runuser -u postgres -- psql -qtA -v ON_ERROR_STOP=1 \
	    -c "SET client_min_messages = warning" -c 'GRANT pg_signal_backend TO "$(TEST_ROLE)"'

redis:
	@command -v redis-server >/dev/null || { $(SUDO) apt-get update && $(SUDO) apt-get install -y redis-server; }
	@redis-server --version | grep -q 'Redis server' || { echo "redis-server is not usable" >&2; exit 1; }

# Precompressed copies let WhiteNoise serve static files gzipped without compressing per request:
# the site's, and the extension's (the bridge), which the site serves the same way.
static: install
	$(BIN)/python -m whitenoise.compress --quiet static
	$(BIN)/python -m whitenoise.compress --quiet flask-webmcp/src/flask_webmcp/static

# Types last: mypy reads its files and settings from pyproject.toml.
lint: install
	$(BIN)/ruff check .
	$(BIN)/flask --app webapp webmcp lint
	$(BIN)/mypy

clean:
	rm -rf $(VENV) instance bench/results tools/lighthouse/node_modules tools/mcp-client/node_modules
	find static -name '*.gz' -delete
