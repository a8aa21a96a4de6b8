#!/usr/bin/env bash
# Tests dist/rimeflake-<version>-<triple>.tar.gz as a user gets it, with no Rust toolchain on
# PATH: the tarball is copied into a random directory and the lines of its README are run there
# as written (unpack, PKG_CONFIG_PATH, the dynamic and static compile lines, CMake), on the C
# example of the README (examples/c/quickstart.c) and the C++ one with CMake find_package
# (examples/cpp). Each program runs with its state in a temporary directory.
set -euo pipefail
source "$(dirname "$0")/common.sh"

# grep -q for a pipeline: reads all its input, so the command before it never dies of SIGPIPE
# (which `set -o pipefail` would count as the pipeline failing, or not matching).
matches() { grep "$@" >/dev/null; }

top=rimeflake-$version-$triple
tarball=$dist/$top.tar.gz
[ -f "$tarball" ] || die "$tarball is missing: run make dist-c"

scratch work
cp "$tarball" "$work/"
cp "$root/examples/c/quickstart.c" "$work/"
readme=$work/README.md
tar -xzf "$tarball" -O "$top/README.md" >"$readme"
export RIMEFLAKE_STATE_DIR=$work/state
export RIMEFLAKE_NO_CONTAINER_WARNING=1
unset LD_LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH

# The README's line that starts with $1 (inside its ``` blocks), exactly one.
line() {
  local found
  found=$(grep -E "^$1" "$readme") || die "README.md has no line starting with '$1'"
  [ "$(wc -l <<<"$found")" = 1 ] || die "README.md has more than one line starting with '$1'"
  printf '%s\n' "$found"
}
# Runs README lines in $work, as the user would type them, after the unpack and the
# PKG_CONFIG_PATH lines.
readme_run() {
  local script
  script=$(printf 'set -euo pipefail\ncd %q\n%s\n' "$work" "$(line 'export PKG_CONFIG_PATH=')")
  script+=$(printf '\n%s' "$@")
  printf '%s\n' "$@"
  as_user bash -c "$script"
}
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
# The quick start's own output: the library's version and an ID decoded.
ran_ok() {
  local out
  out=$(as_user env -u LD_LIBRARY_PATH "$@")
  echo "$out"
  grep -q "^rimeflake $version" <<<"$out" || die "$1 printed no 'rimeflake $version' line"
}

unpack() {
  readme_run "$(line 'tar -xzf ')"
  local d=$work/$top expected got
  expected=$(printf '%s\n' LICENSE README.md include/rimeflake.h include/rimeflake.hpp \
    lib/cmake/rimeflake/rimeflakeConfig.cmake lib/cmake/rimeflake/rimeflakeConfigVersion.cmake \
    lib/librimeflake.a lib/librimeflake.so lib/librimeflake.so.0 "lib/librimeflake.so.$version" \
    lib/pkgconfig/rimeflake.pc | sort)
  got=$(cd "$d" && find . -mindepth 1 ! -type d | sed 's|^\./||' | sort)
  [ "$got" = "$expected" ] || die "the tarball holds: $got"
  [ "$(readlink "$d/lib/librimeflake.so")" = librimeflake.so.0 ] || die "librimeflake.so does not point at .so.0"
  [ "$(readlink "$d/lib/librimeflake.so.0")" = "librimeflake.so.$version" ] || die "librimeflake.so.0 does not point at .so.$version"
  readelf -d "$d/lib/librimeflake.so.$version" | matches 'SONAME.*\[librimeflake\.so\.0\]' || die "soname is not librimeflake.so.0"
  if readelf -S --wide "$d/lib/librimeflake.so.$version" | matches -E ' \.(symtab|debug_[a-z_]+) '; then
    die "librimeflake.so is not stripped"
  fi
  if readelf -S --wide "$d/lib/librimeflake.a" | matches -E ' \.debug_[a-z_]+ '; then die "librimeflake.a carries debug info"; fi
  grep -q '^prefix=${pcfiledir}/../..$' "$d/lib/pkgconfig/rimeflake.pc" || die "rimeflake.pc is not relocatable"
}

dynamic() {
  readme_run "$(line 'cc -o quickstart ')"
  needed "$work/quickstart" | matches -x librimeflake.so.0 || die "quickstart does not need librimeflake.so.0"
  readelf -d "$work/quickstart" | matches -E '(RUNPATH|RPATH).*'"$top"'/lib' || die "quickstart has no rpath to the library"
  # Found through the rpath: no LD_LIBRARY_PATH (ran_ok unsets it), no ldconfig.
  ldd "$work/quickstart" | matches "$work/$top/lib/.*librimeflake.so.0" || die "ldd does not find the unpacked library"
  ran_ok "$work/quickstart"
}

static() {
  readme_run "$(line 'cc -static -o quickstart-static ')"
  # A static program: no dynamic section, so no librimeflake.so (or any other) needed.
  if readelf -d "$work/quickstart-static" | matches NEEDED; then
    die "quickstart-static needs shared libraries: $(needed "$work/quickstart-static" | tr '\n' ' ')"
  fi
  file -b "$work/quickstart-static" | matches 'statically linked' || die "quickstart-static is not statically linked"
  # The library moved away: the static program does not look for it.
  mv "$work/$top" "$work/$top.away"
  ran_ok "$work/quickstart-static"
  mv "$work/$top.away" "$work/$top"
}

# The C++ quick start with find_package, its two targets: rimeflake::rimeflake (shared) and
# rimeflake::rimeflake_static; the README's two cmake lines, from a project directory.
cmake_cpp() {
  cp -r "$root/examples/cpp/." "$work/"
  rm -rf "$work/build"
  local configure build
  configure=$(line 'cmake -S . -B build ')
  build=$(line 'cmake --build build')
  readme_run "$configure" "$build"
  needed "$work/build/quickstart" | matches -x librimeflake.so.0 || die "build/quickstart does not need librimeflake.so.0"
  if needed "$work/build/quickstart_static" | matches librimeflake; then die "build/quickstart_static needs librimeflake.so"; fi
  ran_ok "$work/build/quickstart" | sed 's/^/  /'
  ran_ok "$work/build/quickstart_static" | sed 's/^/  /'
}

check "C tarball: unpacked by the README's line; its files, links, soname, stripped, relocatable .pc" unpack
check "C: the README's dynamic line (pkg-config, rpath); runs with no LD_LIBRARY_PATH" dynamic
check "C: the README's static line (cc -static, pkg-config --static); needs no librimeflake.so" static
check "C++: CMake find_package (the README's cmake lines), shared and static targets" cmake_cpp
summary
