# Every target installs what it needs into .venv first (make install).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORE_STAMP := $(VENV)/.installed-core

.PHONY: help install chromium servers test check model lint crawl recrawl demo bench bench-quality bench-docs bench-quick bench-growth clean

# `make` alone: what each target does (docs/commands.md has the same list)
help:
	@echo "make demo                        the sample site crawled three times (extracted-docs/demo)"
	@echo "make crawl URL=... [ARGS=...]    scrapy crawl docs -a start_urls=URL plus ARGS (-a/-s ...)"
	@echo "make recrawl URL=... [ARGS=...]  the cron wrapper by hand (make -s)"
	@echo "make install                     .venv with requirements-dev.txt (everything; crawl and demo install the core)"
	@echo "make test [TEST_WORKERS=N] [PYTEST_ARGS=...]  the tests (installs chromium and servers first)"
	@echo "make check [PYTEST_ARGS=...]     the fast tier: no crawl process, database server or browser"
	@echo "make model [MODEL_EXAMPLES=200]  the model-based test of recrawls, the long run (shrinks what it finds)"
	@echo "make lint                        ruff check, ruff format --check, mypy"
	@echo "make chromium                    Debian's chromium when missing (as root or sudo -n)"
	@echo "make servers                     Debian's postgresql and redis-server when missing"
	@echo "make bench, bench-quick, bench-quality, bench-docs [ROOT=...]  the benchmarks"
	@echo "make bench-growth [QUICK=1]      costs against site size: 10k/30k/100k pages, about an hour (QUICK=1: 2k/10k, minutes)"
	@echo "make clean                       removes .venv and the tools' caches"

# a crawl needs the core only (requirements-core.txt: Scrapy, w3lib, itemadapter); the tests,
# lint and benchmarks every extra and the tools (requirements-dev.txt)
# and the project itself, editable (no copy: this checkout's code), so that its commands are
# found by their entry points outside the project directory too, to say where to run them
$(CORE_STAMP): requirements-core.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-core.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(CORE_STAMP)

$(STAMP): $(CORE_STAMP) requirements.txt requirements-dev.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP)

# benchmark-only dependencies (trafilatura, the reference of bench.extract_quality):
# never in requirements.txt nor requirements-dev.txt
BENCH_STAMP := $(VENV)/.installed-bench
$(BENCH_STAMP): $(STAMP) requirements-bench.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-bench.txt
	touch $(BENCH_STAMP)

# The browser of PLAYWRIGHT_ENABLED crawls and of the browser tests: Debian's chromium
# package, installed when missing (never `playwright install`, which downloads one).
# As root, apt-get; otherwise `sudo -n` (never a password prompt); else a message.
CHROMIUM_PATHS := /usr/lib/chromium/chromium /usr/bin/chromium /usr/bin/chromium-browser
APT_INSTALL := apt-get update -q && env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium
chromium:
	@for path in $(CHROMIUM_PATHS); do test -x "$$path" && exit 0; done; \
	if [ "$$(id -u)" = 0 ]; then echo "Installing Debian's chromium package"; sh -c '$(APT_INSTALL)'; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then \
	  echo "Installing Debian's chromium package (sudo)"; sudo -n sh -c '$(APT_INSTALL)'; \
	else echo "Chromium is missing and cannot be installed without root: run, as root," \
	  "apt-get install --no-install-recommends chromium (or with sudo)" >&2; exit 1; fi

# The servers of the tests of the shared stores: Debian's postgresql (tests/pg_server.py
# runs initdb + pg_ctl in a temporary directory) and redis-server, installed when missing,
# the way chromium is; looked for where Debian puts them (not on PATH: postgresql's
# binaries are in /usr/lib/postgresql/<version>/bin)
SERVER_PACKAGES := postgresql redis-server
APT_SERVERS := apt-get update -q && env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(SERVER_PACKAGES)
servers:
	@missing=; ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	test -x /usr/bin/redis-server || missing="$$missing redis-server"; \
	test -z "$$missing" && exit 0; \
	if [ "$$(id -u)" = 0 ]; then echo "Installing Debian's$$missing"; sh -c '$(APT_SERVERS)'; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then \
	  echo "Installing Debian's$$missing (sudo)"; sudo -n sh -c '$(APT_SERVERS)'; \
	else echo "Missing for the tests:$$missing; cannot install without root: run, as root," \
	  "apt-get install --no-install-recommends $(SERVER_PACKAGES) (or with sudo)" >&2; exit 1; fi

# the tests in parallel, one worker per core (TEST_WORKERS=0: in this process); an idle
# worker takes tests queued for the other (worksteal; runs of 10 min 15 s and 11 min 32 s
# against 11 min 1 s without it: within this machine's noise)
TEST_WORKERS ?= auto
test: $(STAMP) chromium servers
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

# the inner loop: every test but those marked e2e, postgres, redis or browser (the
# markers: pyproject.toml, tests/conftest.py); make test runs them all
FAST := not e2e and not postgres and not redis and not browser
check: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal -m "$(FAST)" $(PYTEST_ARGS)

# the model-based test of recrawls (tests/test_model_runs.py) with many sequences; make test
# runs a few. A failure is shrunk to its shortest sequence, printed as Python to keep.
MODEL_EXAMPLES ?= 200
model: $(STAMP)
	MODEL_EXAMPLES=$(MODEL_EXAMPLES) MODEL_SHRINK=1 $(BIN)/python -m pytest -p no:cacheprovider --hypothesis-show-statistics tests/test_model_runs.py

lint: $(STAMP)
	$(BIN)/ruff check crawler tests demo bench
	$(BIN)/ruff format --check crawler tests demo bench
	$(BIN)/mypy

# make crawl URL=https://docs.example.com/ [ARGS="-a max_pages=100 -a redo=extraction"]
crawl: $(CORE_STAMP)
	@test -n "$(URL)" || { echo 'usage: make crawl URL=https://docs.example.com/ [ARGS="-s NAME=value ..."]' >&2; exit 2; }
	$(BIN)/scrapy crawl docs -a start_urls="$(URL)" $(ARGS)

# for cron: silent on success, a message and status 1 on failure, never overlaps
recrawl: $(CORE_STAMP)
	@test -n "$(URL)" || { echo 'usage: make -s recrawl URL=https://docs.example.com/ [ARGS="..."]' >&2; exit 2; }
	@$(BIN)/python -m crawler.recrawl "$(URL)" $(ARGS)

demo: $(CORE_STAMP)
	$(BIN)/python -m demo

# benchmarks: never part of make test; figures recorded in docs/benchmarks.md
bench: $(STAMP) $(BENCH_STAMP) chromium
	$(BIN)/python -m bench.crawl --json bench/results/crawl.json
	$(BIN)/python -m bench.crawl --breakdown --json bench/results/crawl_breakdown.json
	$(BIN)/python -m bench.recrawl --json bench/results/recrawl.json
	$(BIN)/python -m bench.boilerplate --repeat 5 --json bench/results/boilerplate.json
	$(BIN)/python -m bench.cache_scale --json bench/results/cache_scale.json
	$(BIN)/python -m bench.cache_commands --json bench/results/cache_commands.json
	$(BIN)/python -m bench.extract_quality --json bench/results/extract_quality.json
	$(BIN)/python -m bench.render_requests --pages 200 --json bench/results/render_requests.json

# main-content extraction against the hand-checked evaluation set (bench/evalset):
# the converter now, the converter at 650bd7f and trafilatura, side by side
bench-quality: $(BENCH_STAMP)
	$(BIN)/python -m bench.extract_quality --json bench/results/extract_quality.json

# real documentation sites from Debian's doc packages (Sphinx, MkDocs, rustdoc, mdBook, Doxygen,
# DocBook, AsciiDoc, Node), against each generator's own content container; ROOT: the unpacked
# packages (by default a cache it fills with apt-get download + dpkg -x, as root)
bench-docs: $(BENCH_STAMP)
	$(BIN)/python -m bench.docs_sites $(if $(ROOT),--root $(ROOT)) --json bench/results/docs_sites.json

bench-quick: $(STAMP)
	$(BIN)/python -m bench.crawl --pages 200 --repeat 1
	$(BIN)/python -m bench.recrawl --pages 60 --repeat 1
	$(BIN)/python -m bench.boilerplate --quick
	$(BIN)/python -m bench.cache_scale --sizes 20000 --operations 5000 --dir $$(mktemp -d)
	$(BIN)/python -m bench.cache_commands --pages 2000 --dir $$(mktemp -d)

# how a crawl's costs grow with the site (issue 40): first crawl, unchanged and 1%-edited
# recrawl at 10k, 30k and 100k pages, about an hour; QUICK=1: 2k and 10k pages, minutes
bench-growth: $(STAMP)
	$(BIN)/python -m bench.growth $(if $(QUICK),--quick --json bench/results/growth_quick.json,--json bench/results/growth.json)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
