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
# The example is a crate of its own (as a user's would be); it shares the workspace's target dir.
EXAMPLE_RUST := --manifest-path examples/rust/Cargo.toml --target-dir target
# The CLI as `make demo` builds it (cargo build shows its progress; running the binary does not
# rebuild or print anything else).
RIMEFLAKE := target/debug/rimeflake
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
.PHONY: demo
demo: rust python-env ## build the CLI and print a few IDs from every language built so far
	$(call say,building the CLI (cargo build -p rimeflake-cli))
	@$(CARGO) build -p rimeflake-cli
	$(call say,rust: rimeflake gen -n 3 (state in target/demo-state))
	@RIMEFLAKE_STATE_DIR="$(DEMO_STATE)" $(RIMEFLAKE) gen -n 3
	$(call say,rust: rimeflake gen -n 3 --format base62 | rimeflake decode --format base62)
	@RIMEFLAKE_STATE_DIR="$(DEMO_STATE)" $(RIMEFLAKE) gen -n 3 --format base62 | $(RIMEFLAKE) decode --format base62
	$(call say,rust: rimeflake gen --worker 7 --layout twitter (its own namespace: twitter))
	@RIMEFLAKE_STATE_DIR="$(DEMO_STATE)" $(RIMEFLAKE) gen --worker 7 --layout twitter
	$(call say,python: examples/python/quickstart.py)
	@RIMEFLAKE_STATE_DIR="$(DEMO_STATE)" $(VENV_PY) examples/python/quickstart.py

# ---- tests ------------------------------------------------------------------------------------

.PHONY: test test-rust example-rust
test: test-rust test-loom test-python ## run every test suite (each language adds its test-<lang> here)

# The example runs first so that cargo test's summary lines close the output; its state goes
# to target/, so tests write nothing outside the tree.
test-rust: rust faketime ## Rust: the Rust example, then cargo test --workspace
	$(call say,rust: the example (examples/rust))
	RIMEFLAKE_STATE_DIR="$(CURDIR)/target/rimeflake-state" $(MAKE) --no-print-directory example-rust
	$(call say,rust: cargo test --workspace)
	$(CARGO) test --workspace

example-rust: rust ## run the Rust example (examples/rust)
	$(CARGO) run $(EXAMPLE_RUST)

# The process tests (crates/rimeflake-cli/tests/processes.rs) set the clock back with libfaketime.
.PHONY: faketime
faketime: ## install libfaketime (Debian's faketime package) when it is missing
	@command -v faketime >/dev/null || { \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo apt-get update && $$sudo apt-get install -y faketime; }

SOAK_SECONDS ?= 300

.PHONY: soak
soak: rust ## the deterministic simulation on fresh seeds for SOAK_SECONDS (default 300); prints any failing seed
	RIMEFLAKE_SIM_SECONDS=$(SOAK_SECONDS) $(CARGO) test -p rimeflake --test simulation \
	  crashes_clock_jumps -- --nocapture

# ---- peer vectors ------------------------------------------------------------------------------

# IDs made by the peers' own code (Go modules from the Go module proxy, versions pinned in
# testdata/peers/go.mod) and the layout specs that read them; the tests decode them.
.PHONY: peer-vectors
peer-vectors: ## regenerate testdata/peers/vectors.json with the peers' own code (needs Go)
	@command -v go >/dev/null || { echo "make: go not found: install Go (https://go.dev/dl)" >&2; exit 1; }
	$(call say,peers: go run testdata/peers > testdata/peers/vectors.json)
	cd testdata/peers && go run . > vectors.json.tmp && mv vectors.json.tmp vectors.json

# ---- lint -------------------------------------------------------------------------------------

.PHONY: lint lint-rust
lint: lint-rust lint-python ## check formatting and lints, warnings as errors (each language adds lint-<lang>)

lint-rust: rust-lint-tools ## Rust: cargo fmt --check and clippy -D warnings (workspace and example)
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) fmt --manifest-path examples/rust/Cargo.toml --check
	$(CARGO) clippy $(EXAMPLE_RUST) -- -D warnings

# ---- benchmarks -------------------------------------------------------------------------------

BENCH_SECONDS ?= 5
BENCH_THREADS ?= 2

.PHONY: bench bench-cli bench-rust bench-criterion test-stress test-loom
bench: bench-cli bench-rust bench-python ## run the benchmarks (each adds its bench-<name> here)

bench-cli: rust ## rimeflake bench: threads on one generator, twitter layout, release build
	$(CARGO) run --release --quiet -p rimeflake-cli -- bench --layout twitter \
	  --threads $(BENCH_THREADS) --seconds $(BENCH_SECONDS) --namespace bench-twitter

bench-rust: rust ## Rust: rimeflake beside peer crates and the floors (bench/rust), writes bench/RESULTS.md
	$(CARGO) run --release --quiet -p rimeflake-bench-rust -- --write

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

# .venv holds maturin, pytest, mypy, numpy and a debug build of the extension (maturin develop);
# bench/python/.venv holds a release wheel and the peer libraries the benchmark compares.
PYTHON ?= python3
VENV := .venv
VENV_PY := $(VENV)/bin/python
BENCH_VENV := bench/python/.venv
BENCH_PEERS := uuid-utils==1.2.0 sonyflake-turbo==1.0.1 snowflake-id==1.0.2 python-ulid==4.1.0 numpy

PY_TOOLS := maturin pytest mypy numpy
# Installed once per .venv (a stamp file), so warm runs do not ask pip again.
PY_TOOLS_STAMP := $(VENV)/.tools-installed

.PHONY: python-env test-python example-python lint-python bench-python
python-env: rust $(PY_TOOLS_STAMP) ## Python: .venv with maturin, pytest, mypy, numpy and the extension built in it (debug)
	$(call say,python: building the extension into .venv (maturin develop: cargo's progress follows))
	cd bindings-python && VIRTUAL_ENV="$(CURDIR)/$(VENV)" "$(CURDIR)/$(VENV)/bin/maturin" develop

$(PY_TOOLS_STAMP):
	$(call say,python: creating .venv and installing $(PY_TOOLS) (pip))
	@test -x $(VENV_PY) || $(PYTHON) -m venv $(VENV)
	$(VENV_PY) -m pip install --disable-pip-version-check $(PY_TOOLS)
	@touch $@

example-python: python-env ## run the Python example (examples/python)
	$(VENV_PY) examples/python/quickstart.py

# The example runs first so that pytest's summary closes the output. It runs here rather than
# through example-python, so the extension is built once (python-env is a prerequisite).
test-python: python-env ## Python: the example, then pytest bindings-python/tests (stubtest included)
	$(call say,python: the example (examples/python))
	RIMEFLAKE_STATE_DIR="$(CURDIR)/target/rimeflake-state" RIMEFLAKE_NO_CONTAINER_WARNING=1 \
	  $(VENV_PY) examples/python/quickstart.py
	$(call say,python: pytest bindings-python/tests)
	$(VENV_PY) -m pytest bindings-python/tests

lint-python: python-env ## Python: mypy --strict on the package (stubs included) and the example
	$(VENV_PY) -m mypy --strict bindings-python/python/rimeflake examples/python

bench-python: rust ## Python: release wheel + peers in bench/python/.venv, then bench/python/bench.py
	@test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	@$(BENCH_VENV)/bin/python -m pip install -q --disable-pip-version-check maturin $(BENCH_PEERS)
	rm -rf target/wheels-bench
	$(BENCH_VENV)/bin/maturin build --release -q -m bindings-python/Cargo.toml -o target/wheels-bench \
	  -i $(BENCH_VENV)/bin/python
	$(BENCH_VENV)/bin/python -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
	  target/wheels-bench/rimeflake-*.whl
	$(BENCH_VENV)/bin/python bench/python/bench.py
