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
RIMEFLAKE := $(CARGO) run --quiet -p rimeflake-cli --

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

# The embedded default: a worker ID leased in the state directory ($RIMEFLAKE_STATE_DIR, else
# ~/.local/state/rimeflake) and durable state beside it.
.PHONY: demo
demo: rust ## build the CLI and print a few IDs from every language built so far
	@$(CARGO) build --quiet -p rimeflake-cli
	@echo "== rust: rimeflake gen -n 3"
	@$(RIMEFLAKE) gen -n 3
	@echo "== rust: rimeflake gen -n 3 --format base62 | rimeflake decode --format base62"
	@$(RIMEFLAKE) gen -n 3 --format base62 | $(RIMEFLAKE) decode --format base62

# ---- tests ------------------------------------------------------------------------------------

.PHONY: test test-rust example-rust
test: test-rust ## run every test suite (each language adds its test-<lang> here)

# The example runs first so that cargo test's summary lines close the output; its state goes
# to target/, so tests write nothing outside the tree.
test-rust: rust ## Rust: the Rust example, then cargo test --workspace
	RIMEFLAKE_STATE_DIR="$(CURDIR)/target/rimeflake-state" $(MAKE) --no-print-directory example-rust
	$(CARGO) test --workspace

example-rust: rust ## run the Rust example (examples/rust)
	$(CARGO) run --quiet $(EXAMPLE_RUST)

# ---- lint -------------------------------------------------------------------------------------

.PHONY: lint lint-rust
lint: lint-rust ## check formatting and lints, warnings as errors (each language adds lint-<lang>)

lint-rust: rust-lint-tools ## Rust: cargo fmt --check and clippy -D warnings (workspace and example)
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) fmt --manifest-path examples/rust/Cargo.toml --check
	$(CARGO) clippy $(EXAMPLE_RUST) -- -D warnings

# ---- benchmarks -------------------------------------------------------------------------------

BENCH_SECONDS ?= 5
BENCH_THREADS ?= 2

.PHONY: bench bench-cli
bench: bench-cli ## run the benchmarks (each adds its bench-<name> here)

bench-cli: rust ## rimeflake bench: threads on one generator, twitter layout, release build
	$(CARGO) run --release --quiet -p rimeflake-cli -- bench --layout twitter \
	  --threads $(BENCH_THREADS) --seconds $(BENCH_SECONDS) --namespace bench-twitter
