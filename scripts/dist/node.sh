#!/usr/bin/env bash
# The npm packages of a release, as publishing makes them, into dist/:
#   rimeflake-<version>.tgz                  the main package (index.js, index.mjs, index.d.ts, the
#                                            integrations' subpaths),
#                                            whose optionalDependencies name every platform
#                                            package at the same version (napi prepublish)
#   rimeflake-<platform>-<version>.tgz       one per platform with a built addon
#                                            (here: linux-x64-gnu), holding rimeflake.<platform>.node
# Both carry the repository's LICENSE and no install-time script.
#
#   node.sh                     build this machine's addon (x86_64 Linux, glibc 2.17 and later),
#                               then pack (make dist-node)
#   node.sh build TRIPLE [FLAG...]
#                               build one release addon for TRIPLE into $target/npm-dist/artifacts
#                               (FLAGs go to napi build, e.g. --use-napi-cross); the release
#                               workflow runs this once per platform
#   node.sh pack [DIR]          pack the packages from the addons in DIR (default: the artifacts
#                               directory above; the release workflow passes the addons every
#                               platform's job built)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

pkg=$root/bindings-node
napi=$pkg/node_modules/.bin/napi
artifacts=$target/npm-dist/artifacts

# The napi CLI, from the lock file (as make node-env installs it). It and its dependencies need
# Node 20.17 or later; the packages it builds run on 18 or later.
napi_cli() {
  node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 17) ? 0 : 1)' ||
    die "the napi CLI needs Node.js 20.17 or later, not $(node --version)"
  if [ ! -x "$napi" ] || [ ! "$pkg/node_modules/.package-lock.json" -nt "$pkg/package-lock.json" ]; then
    say "npm ci in bindings-node (the napi CLI)"
    (cd "$pkg" && npm ci --no-audit --no-fund --ignore-scripts)
  fi
}

# build TRIPLE [FLAG...]: the release profile (stripped, no debug info), no internals feature.
build() {
  local triple=$1
  shift
  napi_cli
  say "napi build --release --target $triple (cargo's release profile)"
  local out
  out=$(mktemp -d "${TMPDIR:-/tmp}/rimeflake-napi.XXXXXX")
  (cd "$pkg" && "$napi" build --platform --release --no-js --target "$triple" -o "$out" "$@")
  # What gets published is the committed index.d.ts: it must be what this build declares.
  if ! cmp -s "$out/index.d.ts" "$pkg/index.d.ts"; then
    diff -u "$pkg/index.d.ts" "$out/index.d.ts" >&2 || true
    die "bindings-node/index.d.ts differs from what the release build declares: run make node-env and commit it"
  fi
  mkdir -p "$artifacts"
  local addon
  for addon in "$out"/rimeflake.*.node; do
    [ -e "$addon" ] || die "napi build wrote no rimeflake.*.node into $out"
    # An ELF addon must be stripped of debug info (the release profile's job).
    if command -v readelf >/dev/null && readelf -h "$addon" >/dev/null 2>&1; then
      ! readelf -S "$addon" | grep -q '\.debug_' || die "$addon carries debug info: check [profile.release] in Cargo.toml"
    fi
    mv "$addon" "$artifacts/"
    echo "built $artifacts/${addon##*/} ($(du -k "$artifacts/${addon##*/}" | cut -f1) KiB)"
  done
  rm -rf "$out"
}

# pack [DIR]: the packages, staged outside the checkout so that nothing in it changes.
pack() {
  local from=${1:-$artifacts}
  napi_cli
  ls "$from"/rimeflake.*.node >/dev/null 2>&1 || die "no rimeflake.*.node in $from: run node.sh build first"
  local stage
  stage=$(mktemp -d "${TMPDIR:-/tmp}/rimeflake-npm.XXXXXX")
  say "staging the packages in $stage"
  # What package.json ships (its "files": the entries and the integrations' subpaths), and
  # LICENSE from the repository's root.
  local f
  cp "$pkg/package.json" "$stage/"
  for f in $(node -p 'require(process.argv[1]).files.join("\n")' "$pkg/package.json"); do
    [ "$f" = LICENSE ] || cp "$pkg/$f" "$stage/"
  done
  cp "$root/LICENSE" "$stage/"
  cp -r "$pkg/npm" "$stage/npm"
  mkdir "$stage/artifacts"
  cp "$from"/rimeflake.*.node "$stage/artifacts/"
  # Each addon into its platform package (npm/<platform>/), as the release workflow does.
  "$napi" artifacts --cwd "$stage" --output-dir artifacts --npm-dir npm
  # (it also leaves a copy beside the main package's files, which that package does not ship)
  rm -f "$stage"/rimeflake.*.node
  # What `napi prepublish` does before publishing, without publishing anything: the platform
  # packages get the main package's version, and the main package lists them all as
  # optionalDependencies.
  "$napi" prepublish --cwd "$stage" --npm-dir npm --tag-style npm --skip-optional-publish --no-gh-release
  node -e '
    const p = require(process.argv[1])
    const want = p.napi.targets.length
    const opt = Object.entries(p.optionalDependencies || {})
    if (opt.length !== want || opt.some(([, v]) => v !== p.version)) {
      console.error("optionalDependencies are not every platform at " + p.version + ": " + JSON.stringify(p.optionalDependencies))
      process.exit(1)
    }
    for (const s of ["preinstall", "install", "postinstall", "prepare"]) {
      if (p.scripts && p.scripts[s]) { console.error("package.json has an install-time script: " + s); process.exit(1) }
    }' "$stage/package.json"

  mkdir -p "$dist"
  rm -f "$dist"/rimeflake-[0-9]*.tgz "$dist"/rimeflake-{linux,darwin,win32}-*.tgz
  local dir name
  for dir in "$stage/npm"/*/; do
    name=$(node -p 'require(process.argv[1]).main' "$dir/package.json")
    [ -e "$dir/$name" ] || continue # no addon for this platform here
    cp "$root/LICENSE" "$dir"
    say "npm pack ${dir#"$stage"/}"
    (cd "$dir" && npm pack --ignore-scripts --pack-destination "$dist")
  done
  say "npm pack (the main package)"
  (cd "$stage" && npm pack --ignore-scripts --pack-destination "$dist")
  rm -rf "$stage"
  ls -l "$dist"/rimeflake-*.tgz
}

case "${1:-all}" in
  # glibc 2.17's toolchain (an npm package of napi-rs), as the release workflow builds it: the
  # addon then loads on any glibc from 2.17 on, not only on this machine's.
  all) build "$triple" --use-napi-cross && pack ;;
  build) shift; [ $# -ge 1 ] || die "usage: node.sh build TRIPLE [FLAG...]"; build "$@" ;;
  pack) shift; pack "$@" ;;
  *) die "usage: node.sh [build TRIPLE [FLAG...] | pack [DIR]]" ;;
esac
