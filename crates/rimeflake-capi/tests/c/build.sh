#!/usr/bin/env bash
# Builds and runs the C and C++ tests against an installed librimeflake (PREFIX), once plainly
# and once under AddressSanitizer + UndefinedBehaviorSanitizer.
#   build.sh PREFIX OUT_DIR
set -euo pipefail
prefix=$(cd "$1" && pwd)
out=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
mkdir -p "$out"
python3 "$here/vectors.py" "$root/testdata/vectors.json" "$out/vectors.h"

cflags=(-Wall -Wextra -Werror -std=c99 -pedantic -g -I"$prefix/include" -I"$out")
cxxflags=(-Wall -Wextra -Werror -std=c++17 -pedantic -g -I"$prefix/include")
libs=(-L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lrimeflake -lpthread)
san=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
sources=("$here"/test_*.c)

# rimeflake.hpp says it needs C++17 in one line: as C++14 the probe fails with the header's
# #error and no other error (none about std::optional); as C++17 it compiles.
echo "== rimeflake.hpp as C++14 (its #error) and as C++17"
if c++ -std=c++14 -fsyntax-only -I"$prefix/include" "$here/cxx_standard.cpp" 2>"$out/cxx14.err"; then
  echo "rimeflake.hpp compiled as C++14: its #error did not fire" >&2
  exit 1
fi
if ! grep -q '#error "rimeflake.hpp needs C++17 or later: compile with -std=c++17' "$out/cxx14.err" ||
  [ "$(grep -c 'error:' "$out/cxx14.err")" != 1 ]; then
  echo "rimeflake.hpp as C++14: expected its #error alone, got:" >&2
  cat "$out/cxx14.err" >&2
  exit 1
fi
c++ "${cxxflags[@]}" -fsyntax-only "$here/cxx_standard.cpp"

cc "${cflags[@]}" "${sources[@]}" -o "$out/test_c" "${libs[@]}"
c++ "${cxxflags[@]}" "$here/test_cpp.cpp" -o "$out/test_cpp" "${libs[@]}"
cc "${cflags[@]}" "${san[@]}" "${sources[@]}" -o "$out/test_c_san" "${libs[@]}"
c++ "${cxxflags[@]}" "${san[@]}" "$here/test_cpp.cpp" -o "$out/test_cpp_san" "${libs[@]}"

export TMPDIR="$out/tmp"
rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"
# Sanitizer reports fail the run (halt_on_error, a non-zero exit); leaks are reported too.
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for t in ${RIMEFLAKE_C_TESTS:-test_c test_cpp test_c_san test_cpp_san}; do
  echo "== $t"
  "$out/$t"
done
