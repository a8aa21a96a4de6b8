#!/usr/bin/env bash
# Builds what a release publishes on PyPI into $dist:
#   rimeflake-<version>-cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
#     one abi3 wheel for every CPython >= 3.9, linked by zig against glibc 2.17's symbols
#     (maturin --zig), so it installs on any x86-64 Linux with glibc 2.17 or later;
#     `auditwheel show` must agree, or the script fails;
#   rimeflake-<version>.tar.gz
#     the sdist (maturin sdist), which must build a working wheel from itself.
# The release profile of the workspace applies (stripped, no debug info). The build tools live in
# target/dist-venv at pinned versions, installed once (common.sh: zig_env).
# .github/workflows/wheels.yml runs this script for Linux x86-64.
set -euo pipefail
source "$(dirname "$0")/common.sh"

# The oldest glibc the wheel may need (its manylinux tag): $glibc, from common.sh.
policy=manylinux_${glibc/./_}_x86_64
# maturin, zig and auditwheel (common.sh pins them), first on PATH.
zig_env

scratch out
mkdir -p "$dist"
# What an earlier run left of this artifact (not the C and CLI tarballs, also rimeflake-*.tar.gz).
rm -f "$dist"/rimeflake-*.whl "$dist/rimeflake-$version.tar.gz"

say "python: abi3 wheel for $policy (maturin build --release --zig)"
maturin build --release --zig --compatibility "manylinux_${glibc/./_}" \
  --target "$triple" -m "$root/bindings-python/Cargo.toml" -o "$out/wheel"
wheel=$(ls "$out"/wheel/rimeflake-"$version"-cp39-abi3-*.whl)
case "${wheel##*/}" in
  *"$policy"*) ;;
  *) die "the wheel is not tagged $policy: ${wheel##*/}" ;;
esac

say "python: auditwheel show"
auditwheel show "$wheel" | tee "$out/auditwheel.txt"
# auditwheel names the most compatible tag the wheel's symbols allow ("is consistent with the
# following platform tag: "manylinux_2_X_x86_64""), which must be 2_17 or older.
shown=$(tr '\n' ' ' <"$out/auditwheel.txt" | grep -o 'following platform tag: *"[^"]*"') ||
  die "auditwheel show names no platform tag"
shown=${shown#*\"}
shown=${shown%\"}
case "$shown" in
  manylinux1_x86_64|manylinux2010_x86_64|manylinux2014_x86_64) ;;
  manylinux_2_*_x86_64)
    minor=${shown#manylinux_2_}
    minor=${minor%%_*}
    [ "$minor" -le "${glibc#2.}" ] || die "auditwheel says $shown: the wheel needs a glibc newer than $glibc"
    ;;
  *) die "auditwheel says $shown, not a manylinux x86-64 policy" ;;
esac
echo "auditwheel: $shown (at most $policy)"

say "python: sdist (maturin sdist)"
maturin sdist -m "$root/bindings-python/Cargo.toml" -o "$out/sdist"
sdist=$out/sdist/rimeflake-$version.tar.gz
[ -f "$sdist" ] || die "maturin sdist made no $sdist ($(ls "$out/sdist"))"

# The sdist must build on its own, as pip does for a platform with no wheel: pip unpacks it and
# runs maturin's build backend on it (the venv's maturin, not a fresh one from PyPI: no build
# isolation). Its cargo build keeps a target dir of its own, so later runs rebuild only rimeflake.
say "python: a wheel from the sdist (pip wheel, cargo build --release of the unpacked sdist)"
CARGO_TARGET_DIR=$target/sdist-check python3 -m pip wheel --disable-pip-version-check -q \
  --no-deps --no-build-isolation -w "$out/from-sdist" "$sdist"
python3 -m venv "$out/sdist-venv"
"$out/sdist-venv/bin/python" -m pip install --disable-pip-version-check -q --no-index \
  "$out"/from-sdist/rimeflake-*.whl
(cd "$out" && "$out/sdist-venv/bin/python" -c '
import rimeflake
with rimeflake.Generator(1, layout="twitter", backend="memory") as g:
    a, b = g.next_id(), g.next_id()
assert a < b and rimeflake.decode(b, layout="twitter").worker_id == 1
print("the wheel built from the sdist issues IDs:", a, b)')

mv "$wheel" "$sdist" "$dist/"
wheel=$dist/${wheel##*/}
ext=$(unzip -Z1 "$wheel" | grep '^rimeflake/_native.*\.so$')
unzip -q -o "$wheel" "$ext" -d "$out/unpacked"
say "python: in $dist"
printf '%-72s %10s bytes\n' "${wheel##*/}" "$(stat -c %s "$wheel")" \
  "  $ext (inside, uncompressed)" "$(stat -c %s "$out/unpacked/$ext")" \
  "rimeflake-$version.tar.gz" "$(stat -c %s "$dist/rimeflake-$version.tar.gz")"
