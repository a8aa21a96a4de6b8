#!/usr/bin/env bash
# dist/rimeflake-<version>-<triple>.tar.gz: the C library as a release ships it, in one top
# directory of the same name, installed by crates/rimeflake-capi/install/install.sh (the script
# `make install` runs):
#   include/rimeflake.h, rimeflake.hpp
#   lib/librimeflake.so.<version> (stripped), .so.0 (its soname) and .so links, librimeflake.a,
#     built with rimeflake-capi's default features (both server backends, TLS) and linked by zig
#     against glibc 2.17's symbols (common.sh: zig_build), as the wheel is
#   lib/pkgconfig/rimeflake.pc, lib/cmake/rimeflake/  (both find the prefix from where they are)
#   LICENSE, README.md (the compile lines: dynamic with an rpath, static, CMake)
set -euo pipefail
source "$(dirname "$0")/common.sh"

# grep -q for a pipeline: reads all its input, so the command before it never dies of SIGPIPE
# (which `set -o pipefail` would count as the pipeline failing, or not matching).
matches() { grep "$@" >/dev/null; }

top=rimeflake-$version-$triple
say "C: cargo zigbuild --release -p rimeflake-capi for glibc $glibc (a cold build takes several minutes)"
zig_build -p rimeflake-capi
so=$zig_release/librimeflake.so
file -b "$so" | matches ', stripped' || die "$so is not stripped: the release profile should strip it"
at_most_glibc "$so" || die "$so needs $(newest_glibc "$so"), newer than glibc $glibc"
needs=$(newest_glibc "$so")

scratch stage
"$root/crates/rimeflake-capi/install/install.sh" "$stage/$top" "$zig_release" "$version"
install -m 644 "$root/LICENSE" "$stage/$top/LICENSE"
sed -e "s|@VERSION@|$version|g" -e "s|@NAME@|$top|g" -e "s|@GLIBC@|${needs#GLIBC_}|g" \
  "$root/crates/rimeflake-capi/install/README.dist.md" >"$stage/$top/README.md"
# Nothing of this machine's paths may be in what ships (the files locate themselves).
if grep -rl --exclude='*.so*' --exclude='*.a' -e "$stage" -e "$root" "$stage/$top"; then
  die "the files above hold a build path"
fi

mkdir -p "$dist"
# This artifact of an earlier version, if any (the other artifacts are other names).
rm -f "$dist"/rimeflake-[0-9]*-"$triple".tar.gz
# A tarball that is the same for the same files: sorted names, no owner, the commit's time.
mtime=$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" \
  -cf - "$top" | gzip -n -9 >"$dist/$top.tar.gz"
lib=$stage/$top/lib
echo "wrote $dist/$top.tar.gz ($(stat -c %s "$dist/$top.tar.gz") bytes;" \
  "librimeflake.so.$version $(stat -c %s "$lib/librimeflake.so.$version") bytes," \
  "librimeflake.a $(stat -c %s "$lib/librimeflake.a") bytes)"
