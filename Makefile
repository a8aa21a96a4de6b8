# rimeflake: the targets people, the README and CI share. `make help` lists them.
#
# Every public target has a `## help` comment on its line. Languages hook in by adding their
# own target as a prerequisite: `test: test-rust test-python`, `lint: lint-rust lint-python`,
# `bench: bench-cli bench-rust`. Each target installs what it needs itself, so a fresh machine
# (and CI, through .ci/run) only needs `make test`.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

CARGO ?= cargo
# Where cargo writes (CARGO_TARGET_DIR, which many set globally; target/ by default).
CARGO_TARGET := $(abspath $(or $(CARGO_TARGET_DIR),target))
# The example is a crate of its own (as a user's would be); it shares the workspace's target dir.
EXAMPLE_RUST := --manifest-path examples/rust/Cargo.toml --target-dir $(CARGO_TARGET)
# The CLI as `make demo` builds it (without its server backends and serve; cargo build shows its
# progress; running the binary does not rebuild or print anything else).
RIMEFLAKE := $(CARGO_TARGET)/debug/rimeflake
# Python's .venv (the extension built by maturin develop; the Python section says what else).
PYTHON ?= python3
# The host's target triple. The napi CLI always builds the addon with `--target` (into
# target/<triple>/), where a build without one goes to target/debug with its own copy of every
# dependency: the Python extension and the C library name the same target, so the three debug
# builds share their dependencies (tokio, ring, rustls, the server clients) instead of building
# them two or three times.
HOST_TRIPLE := $(shell $(CARGO) -vV 2>/dev/null | sed -n 's/^host: //p')
MATURIN_DEVELOP = VIRTUAL_ENV="$(CURDIR)/$(VENV)" "$(CURDIR)/$(VENV)/bin/maturin" develop --target $(HOST_TRIPLE)
VENV := .venv
VENV_PY := $(VENV)/bin/python
PY_BUILD_STAMP := $(VENV)/.maturin-installed
# What the demo and the examples write stays inside the checkout, as the tests' state does.
DEMO_STATE := $(CURDIR)/target/demo-state
# A step banner: long steps say what they do before they do it.
say = @printf '\n\033[1m== %s\033[0m\n' "$(1)"

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":[^#]*## "} /^[a-zA-Z0-9_.-]+:[^#]*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# ---- tools ------------------------------------------------------------------------------------

.PHONY: rust rust-lint-tools
rust: ## check that the Rust toolchain (cargo, from rustup) is there
	@command -v $(CARGO) >/dev/null || { echo "make: $(CARGO) not found: install Rust with rustup" >&2; exit 1; }
	@$(CARGO) --version

rust-lint-tools: rust ## add rustfmt and clippy to the toolchain when they are missing
	@if command -v rustup >/dev/null; then \
	  installed="$$(rustup component list --installed)"; \
	  for c in rustfmt clippy; do \
	    grep -q "^$$c" <<<"$$installed" || rustup component add "$$c"; \
	  done; \
	fi

# ---- demo -------------------------------------------------------------------------------------

# The embedded default: a worker ID leased in the state directory and durable state beside it;
# here the directory is target/demo-state, inside the checkout.
# It builds only what it shows (debug builds, no test or lint tools) and leaves `git status`
# clean. The first IDs come from the core's own example (examples/rust: the core and libc, no
# server client), so a fresh clone shows IDs within seconds; then the CLI, built without its
# server backends and `serve` (which the demo does not use: hyper, tokio's threaded runtime and
# TLS are most of the CLI's build; `make dist` and `cargo install` build every feature), then
# Python, Node and C. Each step says what it does and about how long it takes from a fresh clone
# on 2 quiet cores (docs/development.md says how that was measured), and after each build how
# long it took here.
DEMO_C_PREFIX := $(CURDIR)/target/demo-c-prefix
# timed CMD: runs CMD, then prints how long it took.
timed = start=$$(date +%s); $(1); echo "  ($$(( $$(date +%s) - start )) s)"

.PHONY: demo demo-rust demo-cli demo-python demo-node demo-c
demo: demo-rust demo-cli demo-python demo-node demo-c ## print IDs from Rust (the core's example, then the CLI), Python, Node and C (debug builds; from a fresh clone, the first ID in about 10 s, the end in about 4 minutes on 2 quiet cores)

demo-rust: rust
	$(call say,rust: examples/rust, the core alone (cargo run: about 10 s from a fresh clone))
	@RIMEFLAKE_STATE_DIR="$(DEMO_STATE)" $(CARGO) run $(EXAMPLE_RUST)

demo-cli: rust
	$(call say,cli: building rimeflake without its server backends and serve (cargo build -p rimeflake-cli --no-default-features: about 20 s))
	@$(call timed,$(CARGO) build -p rimeflake-cli --no-default-features)
	$(call say,cli: rimeflake gen -n 3 (the embedded default: state in target/demo-state))
	@RIMEFLAKE_STATE_DIR="$(DEMO_STATE)" $(RIMEFLAKE) gen -n 3
	$(call say,cli: rimeflake gen -n 3 --format base62 | rimeflake decode --format base62)
	@RIMEFLAKE_STATE_DIR="$(DEMO_STATE)" $(RIMEFLAKE) gen -n 3 --format base62 | $(RIMEFLAKE) decode --format base62
	$(call say,cli: rimeflake gen --worker 7 --layout twitter | rimeflake decode --layout twitter)
	@RIMEFLAKE_STATE_DIR="$(DEMO_STATE)" $(RIMEFLAKE) gen --worker 7 --layout twitter | $(RIMEFLAKE) decode --layout twitter
	$(call say,cli: rimeflake state show (leases, holders, reservations))
	@RIMEFLAKE_STATE_DIR="$(DEMO_STATE)" $(RIMEFLAKE) state show

demo-python: rust $(PY_BUILD_STAMP)
	$(call say,python: building the extension into .venv (maturin develop, with both server backends: about 2 minutes))
	@$(call timed,cd bindings-python && $(MATURIN_DEVELOP) --quiet)
	$(call say,python: examples/python/quickstart.py)
	@RIMEFLAKE_STATE_DIR="$(DEMO_STATE)" $(VENV_PY) examples/python/quickstart.py

demo-node: rust node
	$(call say,node: the napi CLI into bindings-node/node_modules (npm, locked versions); then the addon (napi build, on the extension's dependencies: about 45 s))
	@cd bindings-node && { [ node_modules/.package-lock.json -nt package-lock.json ] || $(NPM_CI) --loglevel=error; }
	@$(call timed,cd bindings-node && $(NAPI_BUILD) >/dev/null)
	@$(MAKE) --no-print-directory -s example-node-deps
	$(call say,node: examples/node/quickstart.js)
	@RIMEFLAKE_STATE_DIR="$(DEMO_STATE)" $(NODE) examples/node/quickstart.js

demo-c: rust c-tools
	$(call say,c: librimeflake (cargo build -p rimeflake-capi: about 25 s); installed in target/demo-c-prefix)
	@$(call timed,$(CARGO) build -p rimeflake-capi --target $(HOST_TRIPLE))
	@crates/rimeflake-capi/install/install.sh "$(DEMO_C_PREFIX)" "$(CARGO_TARGET)/$(HOST_TRIPLE)/debug" "$(VERSION)" >/dev/null
	$(call say,c: examples/c/quickstart.c built with pkg-config; then run)
	@mkdir -p target/demo-c
	@PKG_CONFIG_PATH="$(DEMO_C_PREFIX)/lib/pkgconfig" $(MAKE) --no-print-directory -s -C examples/c \
	  quickstart-demo OUT="$(CURDIR)/target/demo-c/quickstart"
	@RIMEFLAKE_STATE_DIR="$(DEMO_STATE)" target/demo-c/quickstart

# ---- system packages --------------------------------------------------------------------------

# Everything the tests need from the system, installed once: `make test` starts with it, and
# the per-suite targets below (faketime, servers, c-tools) find the packages there. The stamp
# lives in the target directory, so `cargo clean` (or deleting it) makes `make deps` look again.
DEPS_STAMP := $(CARGO_TARGET)/.deps-installed
APT_DEPS := redis-server redis-sentinel postgresql mariadb-server zookeeper default-jre-headless openssl faketime pkg-config
BREW_DEPS := redis postgresql@16 mariadb zookeeper openssl libfaketime pkg-config

.PHONY: deps
deps: $(DEPS_STAMP) ## install the system packages the tests use, once: redis-server, redis-sentinel, PostgreSQL, MariaDB, ZooKeeper (and a Java runtime), openssl, libfaketime, pkg-config (apt-get on Debian and Ubuntu, Homebrew on macOS)

$(DEPS_STAMP):
	$(call say,deps: system packages for the tests (once; $(DEPS_STAMP) remembers))
	@if command -v apt-get >/dev/null; then \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo apt-get update && $$sudo apt-get install -y --no-upgrade $(APT_DEPS); \
	elif command -v brew >/dev/null; then \
	  brew install $(BREW_DEPS); \
	else \
	  echo "make deps: neither apt-get nor brew found: install $(APT_DEPS) (Debian's names) yourself, then touch $(DEPS_STAMP)" >&2; exit 1; \
	fi
	@mkdir -p "$(@D)" && touch "$@"

# ---- the inner loop ---------------------------------------------------------------------------

# What `make check` runs: no server, no libfaketime, no other language, no release build, so it
# needs nothing but the Rust toolchain. The core's tests without cargo features (the remote
# backends' tests need servers); each test binary is named, so a new one is added here on
# purpose (docs/development.md lists what is left to `make test`). The tests of the core's own
# modules (tests/internal/: the file store, the local lease, the simulation) run with --lib.
# The simulation runs half of its seed budget here (100 seeds, the least for which it checks
# that every case was met); `make test` runs all 200.
CHECK_SIM_SEEDS := 100
CHECK_CORE_TESTS := --lib --test contract --test fill_atomic --test fork --test fork_registry \
  --test message_text --test peers --test proptest --test rollback --test sequence_start \
  --test start_above \
  --test start_interrupt \
  --test vectors
CHECK_CLI_TESTS := --bins --test cli --test messages --test resolver --test settings

.PHONY: check contract
# The front ends' contract: the core's tables of settings, counters and presets write the typed
# stubs' blocks (Python, TypeScript), C's stats and config structs, C++'s Config setters and the
# docs' tables; then the C header.
# The core's test `contract` (in `make check`) fails while one is stale.
contract: rust ## rewrite what the core's tables of settings, counters and presets generate (stubs, C structs, C++ setters, docs tables, include/rimeflake.h)
	RIMEFLAKE_CONTRACT_UPDATE=1 $(CARGO) test --quiet -p rimeflake --test contract generated_blocks
	$(MAKE) --no-print-directory header
	$(CARGO) test --quiet -p rimeflake --test contract

check: rust-lint-tools ## the fast inner loop (debug, no servers): fmt check, clippy of the workspace, the core's unit tests and server-free integration tests, the CLI's fast tests
	$(call say,check: cargo fmt --check)
	$(CARGO) fmt --all --check
	$(call say,check: cargo clippy --workspace --all-targets)
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(call say,check: cargo clippy -p rimeflake (the library as users build it: default features, no tests))
	$(CARGO) clippy -p rimeflake -- -D warnings
	$(call say,check: the core's tests without servers)
	RIMEFLAKE_SIM_SEEDS=$(CHECK_SIM_SEEDS) $(CARGO) test -p rimeflake $(CHECK_CORE_TESTS)
	$(call say,check: the CLI's tests without servers or libfaketime)
	$(CARGO) test -p rimeflake-cli $(CHECK_CLI_TESTS)

# ---- tests ------------------------------------------------------------------------------------

.PHONY: test test-rust example-rust
test: deps test-rust test-serve test-loom test-python test-c test-node test-docs test-checks dist test-dist ## run every test suite (each language adds its test-<lang> here), then build and test the release artifacts

# The example runs first so that cargo test's summary lines close the output; its state goes
# to target/, so tests write nothing outside the tree.
test-rust: rust faketime servers ## Rust: the Rust example, then cargo test --workspace (real Redis, PostgreSQL, MariaDB and ZooKeeper servers included; the serve tests run in test-serve)
	$(call say,rust: the example (examples/rust))
	RIMEFLAKE_STATE_DIR="$(CURDIR)/target/rimeflake-state" $(MAKE) --no-print-directory example-rust
	$(call say,rust: cargo test --workspace)
	$(CARGO) test --workspace --exclude rimeflake-serve

example-rust: rust ## run the Rust example (examples/rust)
	$(CARGO) run $(EXAMPLE_RUST)

# `rimeflake serve` against real clients (curl, Python's urllib with prometheus_client's parser,
# Go's net/http, Java's HttpClient), a restart with the clock set back, two servers on one Redis
# and one PostgreSQL, hostile and overloading clients, the Leaf path, and the deployment files
# (systemd-analyze, the Kubernetes manifest and the OpenAPI description, read with PyYAML). The
# tests run the CLI's binary, built first; the Python they use is .venv's, with
# prometheus-client and PyYAML installed once (a stamp file).
SERVE_PY_STAMP := $(VENV)/.serve-tools-installed-2

.PHONY: test-serve
test-serve: rust faketime servers serve-tools $(SERVE_PY_STAMP) ## rimeflake serve: real HTTP clients, restart under faketime, two servers on one backend, hostile clients
	$(call say,serve: cargo build -p rimeflake-cli; cargo test -p rimeflake-serve)
	$(CARGO) build -p rimeflake-cli
	RIMEFLAKE_TEST_PYTHON="$(CURDIR)/$(VENV_PY)" $(CARGO) test -p rimeflake-serve

$(SERVE_PY_STAMP):
	$(call say,serve: .venv with prometheus-client and PyYAML (pip))
	@test -x $(VENV_PY) || $(PYTHON) -m venv $(VENV)
	$(VENV_PY) -m pip install --disable-pip-version-check -q prometheus-client pyyaml
	@touch $@

# The clients the serve tests drive: curl and a JDK (Debian's packages), and Go 1.24 or later
# (its net/http speaks HTTP/2 cleartext from 1.24; Debian's golang-go is older: go.dev/dl); and
# systemd-analyze, which checks the systemd unit.
.PHONY: serve-tools
serve-tools:
	@pkgs=""; \
	command -v curl >/dev/null || pkgs="$$pkgs curl"; \
	command -v java >/dev/null || pkgs="$$pkgs default-jdk-headless"; \
	command -v systemd-analyze >/dev/null || pkgs="$$pkgs systemd"; \
	[ -z "$$pkgs" ] || { \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo apt-get update && $$sudo apt-get install -y $$pkgs; }
	@command -v go >/dev/null || { echo "make: go not found: install Go 1.24 or later (https://go.dev/dl)" >&2; exit 1; }
	@go version | grep -Eq 'go1\.(2[4-9]|[3-9][0-9])' || { echo "make: $$(go version): the serve tests need Go 1.24 or later (https://go.dev/dl)" >&2; exit 1; }

# The process tests (crates/rimeflake-cli/tests/processes.rs) set the clock back with libfaketime.
.PHONY: faketime
faketime: ## install libfaketime (Debian's faketime package) when it is missing
	@command -v faketime >/dev/null || { \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo apt-get update && $$sudo apt-get install -y faketime; }

# The server backend tests start real Redis, PostgreSQL, MariaDB and ZooKeeper servers
# (crates/rimeflake-testkit/src/servers.rs).
# Debian keeps PostgreSQL's programs under /usr/lib/postgresql/<version>/bin, off PATH.
.PHONY: servers
servers: ## install redis-server, redis-sentinel, PostgreSQL, MariaDB, ZooKeeper (with a Java runtime) and openssl (Debian's packages) when they are missing, for the backend tests
	@pkgs=""; \
	command -v redis-server >/dev/null || pkgs="$$pkgs redis-server"; \
	command -v redis-sentinel >/dev/null || pkgs="$$pkgs redis-sentinel"; \
	command -v openssl >/dev/null || pkgs="$$pkgs openssl"; \
	ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || pkgs="$$pkgs postgresql"; \
	command -v mariadb-install-db >/dev/null || pkgs="$$pkgs mariadb-server"; \
	[ -f /usr/share/java/zookeeper.jar ] || pkgs="$$pkgs zookeeper"; \
	command -v java >/dev/null || pkgs="$$pkgs default-jre-headless"; \
	[ -z "$$pkgs" ] || { \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo apt-get update && $$sudo apt-get install -y $$pkgs; }

SOAK_SECONDS ?= 300

.PHONY: soak
soak: rust ## the deterministic simulation on fresh seeds for SOAK_SECONDS (default 300); prints any failing seed
	RIMEFLAKE_SIM_SECONDS=$(SOAK_SECONDS) $(CARGO) test -p rimeflake --lib \
	  internal_tests::simulation::crashes_clock_jumps -- --nocapture

# ---- peer vectors ------------------------------------------------------------------------------

# IDs made by the peers' own code (Go modules from the Go module proxy, versions pinned in
# testdata/peers/go.mod) and the layout specs that read them; the tests decode them.
.PHONY: peer-vectors
peer-vectors: ## regenerate testdata/peers/vectors.json with the peers' own code (needs Go)
	@command -v go >/dev/null || { echo "make: go not found: install Go (https://go.dev/dl)" >&2; exit 1; }
	$(call say,peers: go run testdata/peers > testdata/peers/vectors.json)
	cd testdata/peers && go run . > vectors.json.tmp && mv vectors.json.tmp vectors.json

# ---- lint -------------------------------------------------------------------------------------

.PHONY: lint lint-rust lint-api lint-workflows
lint: lint-rust lint-python lint-c lint-node lint-docs lint-api lint-workflows ## check formatting and lints, warnings as errors (each language adds lint-<lang>)

# The GitHub workflows (.github/workflows) cannot run here, so actionlint reads them: syntax,
# expressions, runner labels, action inputs, and their run: scripts through shellcheck (Debian's
# package). actionlint is a Go program, built once from the Go module proxy at a pinned version
# into the target directory.
ACTIONLINT_VERSION := v1.7.12
ACTIONLINT := $(CARGO_TARGET)/tools/actionlint-$(ACTIONLINT_VERSION)

lint-workflows: $(ACTIONLINT) ## every workflow of .github/workflows checked by actionlint (and shellcheck)
	@command -v shellcheck >/dev/null || { \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo apt-get update && $$sudo apt-get install -y shellcheck; }
	$(ACTIONLINT) -shellcheck="$$(command -v shellcheck)" .github/workflows/*.yml

$(ACTIONLINT):
	@command -v go >/dev/null || { echo "make: go not found: install Go (https://go.dev/dl) for actionlint" >&2; exit 1; }
	$(call say,workflows: go install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION))
	@rm -rf "$(@D)/actionlint-build" && mkdir -p "$(@D)/actionlint-build"
	GOBIN="$(@D)/actionlint-build" go install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)
	@mv "$(@D)/actionlint-build/actionlint" "$@" && rmdir "$(@D)/actionlint-build"

lint-api: ## the core's public API is the committed crates/rimeflake/public-api.txt (update: scripts/docs/public_api.py --check --update)
	CARGO="$(CARGO)" $(PYTHON) scripts/docs/public_api.py --check

lint-rust: rust-lint-tools ## Rust: cargo fmt --check and clippy -D warnings (workspace, the lean builds of the CLI and the C library, and the example)
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p rimeflake-cli -p rimeflake-capi --no-default-features -- -D warnings
	$(CARGO) fmt --manifest-path examples/rust/Cargo.toml --check
	$(CARGO) clippy $(EXAMPLE_RUST) -- -D warnings

# ---- benchmarks -------------------------------------------------------------------------------

BENCH_SECONDS ?= 5
BENCH_THREADS ?= 2

.PHONY: bench bench-cli bench-rust bench-hotpath bench-serve bench-startup bench-criterion test-stress test-loom
bench: bench-cli bench-rust bench-startup bench-serve bench-python bench-c bench-node ## run the benchmarks (each adds its bench-<name> here)

bench-cli: rust ## rimeflake bench: threads on one generator, twitter layout, release build
	$(CARGO) run --release -p rimeflake-cli -- bench --layout twitter \
	  --threads $(BENCH_THREADS) --seconds $(BENCH_SECONDS) --namespace bench-twitter

bench-rust: rust servers ## Rust: rimeflake beside peer crates and the floors, and on Redis/PostgreSQL servers it starts on loopback (bench/rust), writes bench/RESULTS.md
	$(CARGO) run --release -p rimeflake-bench-rust -- --write

bench-hotpath: rust servers ## Rust: next_id of the core at BEFORE=<commit> beside the working tree's, built alike and run in turns (bench/hotpath); WRITE=1 puts the table in bench/RESULTS.md
	@test -n "$(BEFORE)" || { echo "make bench-hotpath BEFORE=<commit> [WRITE=1]"; exit 2; }
	CARGO_TARGET_DIR=$(CARGO_TARGET) bench/hotpath/run.sh $(BEFORE) $(if $(WRITE),--write)

bench-serve: rust serve-tools ## rimeflake serve beside a minimal hyper server (the floor) and Go's net/http on bwmarrin/snowflake (bench/serve/go) under a hyper load client (bench/serve), release build, appends to bench/RESULTS.md
	$(CARGO) build --release -p rimeflake-cli -p rimeflake-bench-serve
	cd bench/serve/go && go build -o $(abspath $(CARGO_TARGET))/release/go-snowflake .
	$(CARGO_TARGET)/release/rimeflake-bench-serve --write
bench-startup: rust servers ## Rust: start-up latency on Redis/PostgreSQL (ordinary start, new namespace, after FLUSHALL or a deleted state), release build; prints a table for bench/RESULTS.md
	$(CARGO) run --release -p rimeflake-bench-rust --bin rimeflake-bench-startup

bench-criterion: rust ## Rust: criterion benches of the core (next_id, fill 4096, decode, base62)
	$(CARGO) bench -p rimeflake --bench generator

test-stress: rust ## Rust: the 4 threads x 1e6 IDs stress test, release build
	$(CARGO) test --release -p rimeflake --test stress

# loom swaps the generator's atomics and mutex for its own (--cfg loom): a target dir of its own
# keeps the main build's artifacts valid.
test-loom: rust ## Rust: loom model check of the generator's atomic step (LOOM_MAX_PREEMPTIONS, default 3)
	$(call say,rust: loom model check (its own target dir, target/loom: --cfg loom changes every crate))
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR="$(CURDIR)/target/loom" $(CARGO) test --release -p rimeflake-loom --test loom

# ---- python -----------------------------------------------------------------------------------

# .venv holds maturin, pytest, mypy, numpy, the SkyWalking agent and a debug build of the
# extension (maturin develop); bench/python/.venv holds a release wheel and the peer libraries
# the benchmark compares.
BENCH_VENV := bench/python/.venv
# The SkyWalking Python agent that rimeflake.skywalking.install_skywalking() is tested and measured
# against (bindings-python/tests/test_skywalking.py, bench/python/bench.py). Not 1.3.0: its
# wheel lacks the generated skywalking.protocol package, so its agent cannot be imported.
SKYWALKING_AGENT := apache-skywalking==1.2.0
BENCH_PEERS := uuid-utils==1.2.0 sonyflake-turbo==1.0.1 snowflake-id==1.0.2 python-ulid==4.1.0 numpy \
  $(SKYWALKING_AGENT) opentelemetry-sdk==1.45.2

# The libraries of the integrations (rimeflake.otel, .sqlalchemy, .django), at the versions
# their tests run against, with PostgreSQL's driver (psycopg 3) and Django's stubs for mypy.
# Django 5.2 is the newest that runs on Python 3.10 and 3.11.
# scripts/dist/test-python.sh reads PY_INTEGRATION_LIBS from here.
PY_INTEGRATION_LIBS := opentelemetry-sdk==1.45.2 sqlalchemy==2.1.9 django==5.2.19
PY_INTEGRATIONS := $(PY_INTEGRATION_LIBS) psycopg[binary]==3.3.9 django-stubs==5.2.9
PY_TOOLS := maturin pytest mypy numpy $(SKYWALKING_AGENT) $(PY_INTEGRATIONS)
# Installed once per .venv (stamp files), so warm runs do not ask pip again: maturin alone
# builds the extension (make demo), the rest is for the tests and lints. The tools' stamp holds
# the list it installed, so a changed list installs again.
PY_TOOLS_STAMP := $(VENV)/.tools-installed
ifneq ($(shell cat $(PY_TOOLS_STAMP) 2>/dev/null),$(strip $(PY_TOOLS)))
.PHONY: $(PY_TOOLS_STAMP)
endif

.PHONY: python-env test-python example-python lint-python bench-python
python-env: rust $(PY_TOOLS_STAMP) ## Python: .venv with maturin, pytest, mypy, numpy and the extension built in it (debug)
	$(call say,python: building the extension into .venv (maturin develop: cargo's progress follows))
	cd bindings-python && $(MATURIN_DEVELOP) --features internals

$(PY_BUILD_STAMP):
	$(call say,python: creating .venv and installing maturin (pip: about 10 s))
	@test -x $(VENV_PY) || $(PYTHON) -m venv $(VENV)
	@$(VENV_PY) -m pip install --disable-pip-version-check -q maturin
	@touch $@

$(PY_TOOLS_STAMP):
	$(call say,python: creating .venv and installing $(PY_TOOLS) (pip))
	@test -x $(VENV_PY) || $(PYTHON) -m venv $(VENV)
	$(VENV_PY) -m pip install --disable-pip-version-check $(foreach t,$(PY_TOOLS),'$(t)')
	@echo '$(strip $(PY_TOOLS))' >$@

example-python: python-env ## run the Python example (examples/python)
	$(VENV_PY) examples/python/quickstart.py

# The example runs first so that pytest's summary closes the output. It runs here rather than
# through example-python, so the extension is built once (python-env is a prerequisite).
test-python: python-env servers ## Python: the example, then pytest bindings-python/tests (stubtest included; a real Redis for the backend test, a real PostgreSQL for the ORMs')
	$(call say,python: the example (examples/python))
	RIMEFLAKE_STATE_DIR="$(CURDIR)/target/rimeflake-state" RIMEFLAKE_NO_CONTAINER_WARNING=1 \
	  $(VENV_PY) examples/python/quickstart.py
	$(call say,python: pytest bindings-python/tests)
	scripts/with-redis scripts/with-postgres $(VENV_PY) -m pytest bindings-python/tests

lint-python: python-env ## Python: mypy --strict on the package (stubs included) and the example
	$(VENV_PY) -m mypy --strict bindings-python/python/rimeflake examples/python

bench-python: rust ## Python: release wheel + peers in bench/python/.venv, then bench/python/bench.py; BEFORE=<commit> [WRITE=1]: rimeflake's rows at that commit beside the working tree's, in turns (bench/turns)
	@test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	@$(BENCH_VENV)/bin/python -m pip install -q --disable-pip-version-check maturin $(BENCH_PEERS)
ifdef BEFORE
	CARGO_TARGET_DIR=$(CARGO_TARGET) bench/turns/run.sh python $(BEFORE) $(if $(WRITE),--write)
else
	rm -rf target/wheels-bench
	$(BENCH_VENV)/bin/maturin build --release -m bindings-python/Cargo.toml -o target/wheels-bench \
	  -i $(BENCH_VENV)/bin/python
	$(BENCH_VENV)/bin/python -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
	  target/wheels-bench/rimeflake-*.whl
	$(BENCH_VENV)/bin/python bench/python/bench.py
endif

# ---- C and C++ --------------------------------------------------------------------------------

# The C library (crates/rimeflake-capi): librimeflake.so (soname librimeflake.so.0) and .a,
# include/rimeflake.h (generated by cbindgen, committed) and include/rimeflake.hpp.
PREFIX ?= /usr/local
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
C_PREFIX := $(CURDIR)/target/c-prefix
# The server backends built into the library (rimeflake-capi's cargo features): all by default,
# as the release tarball has them; `make install C_FEATURES=` installs the lean library, which
# refuses a server URL with RIMEFLAKE_CONFIG (docs/c.md#build-options).
C_FEATURES ?= redis postgres mysql zookeeper

.PHONY: c-tools header install test-c example-c lint-c bench-c bench-c-size
c-tools: ## C: check cc, c++ and cmake; install pkg-config (Debian's package) when it is missing
	@for t in cc c++ cmake python3; do command -v $$t >/dev/null || { echo "make: $$t not found" >&2; exit 1; }; done
	@command -v pkg-config >/dev/null || { \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo apt-get update && $$sudo apt-get install -y pkg-config; }

header: rust ## C: regenerate include/rimeflake.h from crates/rimeflake-capi (cbindgen, pinned)
	RIMEFLAKE_WRITE_HEADER=1 $(CARGO) test --quiet -p rimeflake-capi --lib committed_header_is_current

install: rust ## C: build librimeflake (release; C_FEATURES= for the lean one); install header, .so/.so.0, .a, rimeflake.pc, CMake config under PREFIX
	$(CARGO) build --release -p rimeflake-capi --no-default-features --features "$(C_FEATURES)"
	crates/rimeflake-capi/install/install.sh "$(PREFIX)" "$(CARGO_TARGET)/release" "$(VERSION)"

# The tests link the installed library (target/c-prefix); the examples are copied out of the
# tree and built against a second, fresh install, as a user's program would be.
test-c: rust c-tools faketime servers ## C and C++: the crate's tests with and without the server backends, the C tests plainly and under ASan+UBSan (a real Redis for the backend test), then the examples built outside the tree
	$(call say,c: cargo test -p rimeflake-capi --lib, with the server backends and without (the lean library))
	$(CARGO) test -p rimeflake-capi --lib
	$(CARGO) test -p rimeflake-capi --lib --no-default-features
	$(MAKE) --no-print-directory install PREFIX="$(C_PREFIX)"
	scripts/with-redis crates/rimeflake-capi/tests/c/build.sh "$(C_PREFIX)" "$(CURDIR)/target/c-tests"
	$(MAKE) --no-print-directory example-c

example-c: c-tools ## C and C++: install into a temporary prefix, build examples/c (pkg-config) and examples/cpp (CMake) there, run them
	crates/rimeflake-capi/tests/examples.sh

lint-c: rust ## C: the committed header is current (cargo test of rimeflake-capi's header check)
	$(CARGO) test --quiet -p rimeflake-capi --lib committed_header_is_current

bench-c-size: rust ## C: librimeflake's size with each choice of server backends (release, zig for glibc 2.17, as make dist-c builds it), into bench/RESULTS.md
	scripts/dist/c-sizes.sh --results

bench-c: c-tools ## C: rimeflake_next_id / rimeflake_fill beside the core's next_id / fill and the floor (bench/c), appends to bench/RESULTS.md
	$(MAKE) --no-print-directory install PREFIX="$(C_PREFIX)"
	$(MAKE) --no-print-directory -C bench/c PREFIX="$(C_PREFIX)" run

# ---- node -------------------------------------------------------------------------------------

# bindings-node/node_modules holds the napi CLI, TypeScript and the libraries the integrations'
# tests run against (rimeflake/otel, /drizzle, /typeorm: package.json's devDependencies), from
# npm ci, from package-lock.json, which it never rewrites; `napi build` puts a debug build of the addon beside index.js (which
# is written by hand: --no-js), with the internals feature that the tests and the benchmark
# use. bench/node/node_modules holds the peer libraries, and the benchmark loads a release
# build from target/node-release.
NODE ?= node
NPM ?= npm
NPM_CI := $(NPM) ci --no-audit --no-fund --ignore-scripts
NAPI_BUILD := ./node_modules/.bin/napi build --platform --no-js --features internals
NODE_RELEASE := $(CURDIR)/target/node-release

.PHONY: node node-env test-node example-node example-node-deps lint-node bench-node
node: ## check that Node.js (18 or later) and npm are there
	@command -v $(NODE) >/dev/null && command -v $(NPM) >/dev/null || { \
	  echo "make: node/npm not found: install Node.js 18 or later (https://nodejs.org, or apt-get install nodejs npm)" >&2; exit 1; }
	@$(NODE) -e 'const [a] = process.versions.node.split("."); if (+a < 18) { console.error("make: Node.js " + process.version + " is too old: 18 or later"); process.exit(1) }'

node-env: rust node ## Node: npm ci in bindings-node (when the lock changed), then a debug build of the addon
	@$(NODE) -e 'const [a, b] = process.versions.node.split(".").map(Number); if (a < 20 || (a === 20 && b < 17)) { console.error("make: building the addon needs Node.js 20.17 or later (the napi-rs CLI and its dependencies), not " + process.version + "; the package it builds runs on 18 or later"); process.exit(1) }'
	@cd bindings-node && { [ node_modules/.package-lock.json -nt package-lock.json ] || $(NPM_CI); }
	cd bindings-node && $(NAPI_BUILD)

# examples/node depends on the package as a user's project would (file:../../bindings-node).
example-node-deps:
	@test -e examples/node/node_modules/rimeflake || \
	  (cd examples/node && $(NPM) install --no-audit --no-fund --ignore-scripts --no-package-lock --offline)

example-node: node-env example-node-deps ## run the Node examples (examples/node: CommonJS, ESM)
	$(NODE) examples/node/quickstart.js
	$(NODE) examples/node/quickstart.mjs

# The examples run first so that the test runner's summary closes the output. The restart test
# sets the clock back with libfaketime.
test-node: node-env faketime servers ## Node: the examples, then node --test bindings-node/test (tsc included; a real Redis for the backend test, a real PostgreSQL for the ORMs'; the packages as published: make test-dist-node)
	RIMEFLAKE_STATE_DIR="$(CURDIR)/target/rimeflake-state" RIMEFLAKE_NO_CONTAINER_WARNING=1 \
	  $(MAKE) --no-print-directory example-node
	cd bindings-node && ../scripts/with-redis ../scripts/with-postgres $(NODE) --test --test-timeout=600000 test/

lint-node: node-env ## Node: tsc --noEmit --strict over the TypeScript example and the every-export checks (the integrations' subpaths included); node --check on the JavaScript
	cd bindings-node && ./node_modules/.bin/tsc -p test/types && ./node_modules/.bin/tsc -p test/types/drizzle
	$(MAKE) --no-print-directory example-node-deps
	bindings-node/node_modules/.bin/tsc -p examples/node
	for f in bindings-node/*.js bindings-node/test/*.js examples/node/*.js bench/node/bench.js; do $(NODE) --check "$$f"; done

# With BEFORE, bench/turns/run.sh builds the addon at that commit as here (release, internals).
bench-node: rust node ## Node: release build + peers in bench/node/node_modules, then bench/node/bench.js (writes bench/RESULTS.md); BEFORE=<commit> [WRITE=1]: rimeflake's rows at that commit beside the working tree's, in turns (bench/turns)
	@cd bindings-node && { [ node_modules/.package-lock.json -nt package-lock.json ] || $(NPM_CI); }
	@cd bench/node && { [ node_modules/.package-lock.json -nt package-lock.json ] || $(NPM_CI); }
ifdef BEFORE
	CARGO_TARGET_DIR=$(CARGO_TARGET) bench/turns/run.sh node $(BEFORE) $(if $(WRITE),--write)
else
	cd bindings-node && $(NAPI_BUILD) --release -o $(NODE_RELEASE)
	NAPI_RS_NATIVE_LIBRARY_PATH="$(NODE_RELEASE)/$$(cd $(NODE_RELEASE) && ls rimeflake.*.node | head -1)" \
	  $(NODE) bench/node/bench.js
endif

# ---- release artifacts ------------------------------------------------------------------------

# `make dist` writes what a release publishes into dist/ (release profile: stripped, no debug
# info); `make test-dist` installs each artifact as a user would (from local registries, with no
# Rust toolchain on PATH) and runs the README's examples against it. The scripts live in
# scripts/dist, one pair per artifact: <name>.sh builds it, test-<name>.sh tests it.
DIST := $(CURDIR)/dist

.PHONY: dist dist-cli dist-c dist-python dist-node test-dist test-dist-cli test-dist-crate \
  test-dist-c test-dist-python test-dist-node test-dist-elf test-dist-readme
dist: dist-cli dist-c dist-python dist-node ## build every release artifact into dist/ (wheel and sdist, npm packages, C tarball, CLI tarball), SHA256SUMS and a size table
	scripts/dist/sums.sh

dist-cli: rust ## dist/: the CLI tarball (stripped rimeflake binary, every feature, for glibc 2.17 and later: zig)
	scripts/dist/cli.sh

dist-c: rust c-tools ## dist/: the C tarball (headers, .so and .a with both server backends, for glibc 2.17 and later: zig; pkg-config and CMake files, README)
	scripts/dist/c.sh

dist-python: rust ## dist/: the manylinux abi3 wheel (maturin --zig) and the sdist
	scripts/dist/python.sh

dist-node: rust node ## dist/: the npm main package and this platform's package, as a publish makes them
	scripts/dist/node.sh

test-dist: test-dist-elf test-dist-cli test-dist-crate test-dist-c test-dist-python test-dist-node test-dist-readme ## test dist/ as users install it: local PyPI and npm registries, no Rust toolchain on PATH

# Before a release is published: the version, CHANGELOG.md, the tag and dist/ must agree (every
# release workflow runs the same script before it publishes anything). TAG defaults to the tag
# on HEAD; ONLY names the kinds of artifact expected (python, npm, c, cli; default all).
.PHONY: release-check
release-check: ## refuse a release unless the version, CHANGELOG heading, tag (TAG=v<version>, default HEAD's) and dist/ agree
	$(PYTHON) scripts/release/check.py $(if $(TAG),--tag "$(TAG)") $(if $(ONLY),--only "$(ONLY)") --dist "$(DIST)"

test-dist-readme: node ## README's install lines as written (pip from dist/, npm of the two tarballs, tar), then each installed package issues IDs
	scripts/dist/test-readme.sh

test-dist-elf: ## every ELF file the artifacts ship needs glibc 2.17 or older (its newest GLIBC_ symbol) and no library beyond glibc
	scripts/dist/test-elf.sh

test-dist-cli: ## the CLI from its tarball
	scripts/dist/test-cli.sh

test-dist-crate: rust ## cargo package of rimeflake and rimeflake-cli; a scratch crate built on the packaged rimeflake
	scripts/dist/test-crate.sh

test-dist-c: c-tools ## the C tarball: the README's pkg-config lines (dynamic and static) and CMake find_package
	scripts/dist/test-c.sh

test-dist-python: ## pip install rimeflake by name from a local PyPI (pypiserver), the quick start, the integrations' extras
	scripts/dist/test-python.sh

test-dist-node: node servers ## npm install rimeflake by name from a local registry (verdaccio): CommonJS, ESM, TypeScript, the integrations (a real PostgreSQL for TypeORM's)
	scripts/dist/test-node.sh

# ---- docs -------------------------------------------------------------------------------------

# README.md and docs/: every relative link and anchor resolves; every code block is run (or is,
# word for word, an example file that a test runs). The scripts live in scripts/docs.
.PHONY: lint-docs test-docs test-checks
lint-docs: ## README and docs: every link resolves; comments point only inside the repository; the core's layers hold (docs/architecture.md)
	$(PYTHON) scripts/docs/check_links.py
	$(PYTHON) scripts/docs/references.py
	$(PYTHON) scripts/docs/layers.py
	$(PYTHON) scripts/docs/layers.py --circles crates/rimeflake-cli/src crates/rimeflake-serve/src \
	  crates/rimeflake-capi/src crates/rimeflake-testkit/src bindings-python/src bindings-node/src

test-checks: ## the checks of lint-docs (layers, references) and release-check against planted faults
	$(PYTHON) scripts/docs/test_checks.py
	$(PYTHON) scripts/release/test_check.py

test-docs: python-env node-env c-tools servers ## README and docs: run every code block as written
	scripts/docs/run-snippets.sh
