#!/usr/bin/env bash
# Usage: scripts/docs/run-snippets.sh
#
# Runs every fenced code block of README.md and docs/*.md as written (`make test-docs`): shell
# blocks with the debug CLI on PATH, Python blocks in .venv, JavaScript and TypeScript blocks with
# node against bindings-node; Rust, C++, CMake and SQL blocks must be, line for line, part of a
# file a test builds and runs. scripts/docs/snippets.py says how each block is handled.
#
# This script builds what the shell blocks call: the CLI, and the C library (debug builds, as
# `make demo` makes them), installed into a scratch prefix laid out as the C tarball is; the
# blocks find it in $PREFIX. `make python-env` and `make node-env` build the rest (the
# Makefile's test-docs asks for them). RUN_SNIPPETS_VERBOSE=1 shows each block's output.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)

# cargo prints its progress only when it has something to build.
cargo build --quiet -p rimeflake-cli -p rimeflake-capi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/rimeflake-docs-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
crates/rimeflake-capi/install/install.sh "$scratch/c-prefix" "$target/debug" "$version" >/dev/null
export RIMEFLAKE_DOCS_C_PREFIX="$scratch/c-prefix"

python3 scripts/docs/snippets.py
