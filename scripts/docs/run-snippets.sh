#!/usr/bin/env bash
# Usage: scripts/docs/run-snippets.sh
#
# Runs every fenced code block of README.md and docs/*.md as written (`make test-docs`): shell
# blocks with the debug CLI on PATH, Python blocks in .venv, JavaScript and TypeScript blocks with
# node against bindings-node; Rust, C, C++, CMake and SQL blocks must be, line for line, part of
# a file a test builds and runs. scripts/docs/snippets.py says how each block is handled; this
# script builds the CLI the shell blocks call first. `make python-env` and `make node-env` build
# the rest (the Makefile's test-docs asks for them). RUN_SNIPPETS_VERBOSE=1 shows each block's
# output.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

# The shell blocks call `rimeflake`: target/debug/rimeflake, first on their PATH. cargo prints
# its progress only when it has something to build.
cargo build --quiet -p rimeflake-cli

exec python3 scripts/docs/snippets.py
