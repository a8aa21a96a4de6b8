#!/usr/bin/env bash
# Builds examples/c (Makefile + pkg-config) and examples/cpp (CMake find_package) the way a
# user would: copied outside the repository, against a fresh `make install PREFIX=...`.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/rimeflake-examples-XXXXXX")
trap 'rm -rf "$work"' EXIT
make -C "$root" --no-print-directory install PREFIX="$work/prefix"
cp -r "$root/examples/c" "$root/examples/cpp" "$work/"
export RIMEFLAKE_STATE_DIR="$work/state"

echo "== examples/c (pkg-config), built in $work/c"
PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" make -C "$work/c" --no-print-directory
"$work/c/quickstart"
PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" make -C "$work/c" --no-print-directory quickstart-static
if ldd "$work/c/quickstart-static" | grep -q librimeflake; then
  echo "quickstart-static links librimeflake.so, not the static library" >&2
  exit 1
fi
"$work/c/quickstart-static"

echo "== examples/cpp (CMake find_package), built in $work/cpp/build"
cmake -S "$work/cpp" -B "$work/cpp/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cpp/build" >/dev/null
"$work/cpp/build/quickstart"
"$work/cpp/build/quickstart_static"
