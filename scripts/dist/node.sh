#!/usr/bin/env bash
# The npm packages of a release, as publishing makes them, into dist/:
#   rimeflake-<version>.tgz                  the main package (index.js, index.mjs, index.d.ts, the
#                                            integrations' subpaths),
#                                            whose optionalDependencies name every platform
#                                            package at the same version
#   rimeflake-<platform>-<version>.tgz       the package @rimeflake/<platform> (npm pack names
#                                            a scoped package's file <scope>-<name>), one per
#                                            platform with a built addon (here: linux-x64-gnu),
#                                            holding rimeflake.<platform>.node
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
  # What `napi prepublish` would do before publishing, but with the names the platform packages
  # carry (npm/<platform>/package.json: @rimeflake/<platform>, a scope the project owns, where
  # napi would name them rimeflake-<platform>, a name anyone could register first): every platform
  # package gets the main package's version, and the main package lists each one, for every
  # target of napi.targets, as an optional dependency at that version.
  node -e '
    const fs = require("fs"), path = require("path")
    const [stage] = process.argv.slice(1)
    const mainFile = path.join(stage, "package.json"), main = require(mainFile)
    const deps = {}
    for (const dir of fs.readdirSync(path.join(stage, "npm")).sort()) {
      const file = path.join(stage, "npm", dir, "package.json"), p = require(file)
      if (p.name !== "@rimeflake/" + dir) { console.error(file + " is named " + p.name + ", not @rimeflake/" + dir); process.exit(1) }
      p.version = main.version
      fs.writeFileSync(file, JSON.stringify(p, null, 2) + "\n")
      deps[p.name] = main.version
    }
    if (Object.keys(deps).length !== main.napi.targets.length) {
      console.error("npm/ holds " + Object.keys(deps).join(", ") + " for the " + main.napi.targets.length + " targets of napi.targets")
      process.exit(1)
    }
    main.optionalDependencies = deps
    fs.writeFileSync(mainFile, JSON.stringify(main, null, 2) + "\n")
    for (const s of ["preinstall", "install", "postinstall", "prepare"]) {
      if (main.scripts && main.scripts[s]) { console.error("package.json has an install-time script: " + s); process.exit(1) }
    }' "$stage"

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
