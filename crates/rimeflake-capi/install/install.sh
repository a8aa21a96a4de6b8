#!/usr/bin/env bash
# Installs the C library: install.sh PREFIX BUILD_DIR VERSION (BUILD_DIR holds librimeflake.so
# and librimeflake.a from `cargo build --release -p rimeflake-capi`, that is
# $CARGO_TARGET_DIR/release). `make install` and the release tarball (scripts/dist/c.sh) both
# install through this script, so the two cannot differ:
#   PREFIX/include/rimeflake.h, rimeflake.hpp
#   PREFIX/lib/librimeflake.so.VERSION, .so.0 (the soname) and .so symlinks, librimeflake.a
#   PREFIX/lib/pkgconfig/rimeflake.pc, PREFIX/lib/cmake/rimeflake/rimeflakeConfig*.cmake
# The pkg-config and CMake files find the prefix from where they are, so the tree works after
# being moved or unpacked anywhere.
set -euo pipefail
[ $# = 3 ] || { echo "usage: ${0##*/} PREFIX BUILD_DIR VERSION" >&2; exit 2; }
prefix=$1
build=$2
version=$3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
major=${version%%.*}
rest=${version#*.}
minor=${rest%%.*}
for f in librimeflake.so librimeflake.a; do
  [ -f "$build/$f" ] || { echo "${0##*/}: $build/$f is missing: run cargo build --release -p rimeflake-capi (with the same CARGO_TARGET_DIR)" >&2; exit 1; }
done

install -d "$prefix/include" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/rimeflake"
install -m 644 "$root/include/rimeflake.h" "$root/include/rimeflake.hpp" "$prefix/include/"
install -m 755 "$build/librimeflake.so" "$prefix/lib/librimeflake.so.$version"
ln -sfn "librimeflake.so.$version" "$prefix/lib/librimeflake.so.$major"
ln -sfn "librimeflake.so.$major" "$prefix/lib/librimeflake.so"
install -m 644 "$build/librimeflake.a" "$prefix/lib/librimeflake.a"
# The release profile strips the shared library (symbols and debug info), but rustc links no
# static library, so the standard library's debug info is still in the .a's objects (about
# 45% of it): --strip-debug drops it and keeps the symbols a linker needs. A debug build (the
# one `make demo` installs) keeps its debug info, which is what it is for.
if [ "$(basename "$build")" = release ]; then
  strip --strip-debug "$prefix/lib/librimeflake.a"
fi

fill() {
  sed -e "s|@VERSION@|$version|g" -e "s|@MAJOR@|$major|g" -e "s|@MINOR@|$minor|g" "$1" >"$2"
  chmod 644 "$2"
}
fill "$here/rimeflake.pc.in" "$prefix/lib/pkgconfig/rimeflake.pc"
fill "$here/rimeflakeConfig.cmake.in" "$prefix/lib/cmake/rimeflake/rimeflakeConfig.cmake"
fill "$here/rimeflakeConfigVersion.cmake.in" "$prefix/lib/cmake/rimeflake/rimeflakeConfigVersion.cmake"
echo "installed rimeflake $version under $prefix"
