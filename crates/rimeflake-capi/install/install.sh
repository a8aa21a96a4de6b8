#!/usr/bin/env bash
# Installs the C library: install.sh PREFIX BUILD_DIR VERSION (BUILD_DIR holds librimeflake.so
# and librimeflake.a from `cargo build --release -p rimeflake-capi`).
#   PREFIX/include/rimeflake.h, rimeflake.hpp
#   PREFIX/lib/librimeflake.so.VERSION, .so.0 and .so symlinks, librimeflake.a
#   PREFIX/lib/pkgconfig/rimeflake.pc, PREFIX/lib/cmake/rimeflake/rimeflakeConfig*.cmake
set -euo pipefail
prefix=$1
build=$2
version=$3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
major=${version%%.*}
rest=${version#*.}
minor=${rest%%.*}
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

install -d "$prefix/include" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/rimeflake"
install -m 644 "$root/include/rimeflake.h" "$root/include/rimeflake.hpp" "$prefix/include/"
install -m 755 "$build/librimeflake.so" "$prefix/lib/librimeflake.so.$version"
ln -sfn "librimeflake.so.$version" "$prefix/lib/librimeflake.so.$major"
ln -sfn "librimeflake.so.$major" "$prefix/lib/librimeflake.so"
install -m 644 "$build/librimeflake.a" "$prefix/lib/librimeflake.a"

fill() {
  sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" -e "s|@MAJOR@|$major|g" \
    -e "s|@MINOR@|$minor|g" "$1" >"$2"
}
fill "$here/rimeflake.pc.in" "$prefix/lib/pkgconfig/rimeflake.pc"
fill "$here/rimeflakeConfig.cmake.in" "$prefix/lib/cmake/rimeflake/rimeflakeConfig.cmake"
fill "$here/rimeflakeConfigVersion.cmake.in" "$prefix/lib/cmake/rimeflake/rimeflakeConfigVersion.cmake"
echo "installed rimeflake $version under $prefix"
