#!/usr/bin/env bash
# Tests the npm packages in dist/ as a user gets them: published to a local registry
# (verdaccio, on a free loopback port, its storage in a temporary directory), then
# `npm install rimeflake` by name in an empty project, with no Rust toolchain on PATH:
# the README's Node quick start and examples/node as CommonJS, as an ES module and as
# TypeScript (`tsc --strict`, no other setting), the integrations' subpaths with their libraries,
# and the main package installed without its platform package, whose error must say which
# package is missing and how to get it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

main=$dist/rimeflake-$version.tgz
platform=linux-x64-gnu
# The platform packages are scoped (a scope the project owns); npm pack names the file of
# @rimeflake/<platform> rimeflake-<platform>-<version>.tgz.
addon_pkg=@rimeflake/$platform
addon=$dist/rimeflake-$platform-$version.tgz
for f in "$main" "$addon"; do [ -f "$f" ] || die "$f is missing: run make dist-node"; done
# The TypeScript a user gets today (npm's latest when this was written); pinned, so that a
# new release changes this line rather than the result.
typescript=typescript@7.0.2

# verdaccio, from its own lock file (scripts/dist/verdaccio), installed under target/.
registry_tool=$target/dist-verdaccio
if [ ! "$registry_tool/node_modules/.package-lock.json" -nt "$root/scripts/dist/verdaccio/package-lock.json" ]; then
  say "npm ci: verdaccio (scripts/dist/verdaccio) into $registry_tool"
  rm -rf "$registry_tool"
  mkdir -p "$registry_tool"
  cp "$root/scripts/dist/verdaccio"/package{,-lock}.json "$registry_tool/"
  (cd "$registry_tool" && npm ci --no-audit --no-fund --ignore-scripts)
fi

scratch work
port=$(free_port)
url=http://127.0.0.1:$port/
# Other packages (typescript) come through verdaccio from the registry npm is set up with;
# rimeflake's never do: only what is published here can be installed.
upstream=$(npm config get registry)
mkdir -p "$work/registry"
cat >"$work/registry/config.yaml" <<EOF
storage: $work/registry/storage
auth:
  htpasswd:
    file: $work/registry/htpasswd
    max_users: -1
uplinks:
  upstream:
    url: $upstream
packages:
  'rimeflake':
    access: \$all
    publish: \$all
  '@rimeflake/*':
    access: \$all
    publish: \$all
  # The unscoped names an earlier layout used: never fetched from upstream, so a stray
  # reference to one fails here instead of installing whatever is published under it.
  'rimeflake-*':
    access: \$all
    publish: \$all
  '**':
    access: \$all
    proxy: upstream
log: { type: file, path: $work/registry/log, level: warn }
EOF

say "verdaccio on $url"
"$registry_tool/node_modules/.bin/verdaccio" --config "$work/registry/config.yaml" --listen "127.0.0.1:$port" \
  >"$work/registry/stdout" 2>&1 &
registry_pid=$!
on_exit "kill $registry_pid 2>/dev/null; wait $registry_pid 2>/dev/null"
wait_port "$port" 60 || { cat "$work/registry/stdout" >&2; die "verdaccio did not listen on $port"; }

# npm as the user runs it: this registry, an empty cache (nothing installed before is reused),
# and a token that the registry accepts from anyone (npm will not publish without one).
export npm_config_registry=$url
export npm_config_cache=$work/npm-cache
export npm_config_userconfig=$work/npmrc
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
printf '//127.0.0.1:%s/:_authToken=anonymous\n' "$port" >"$work/npmrc"
export RIMEFLAKE_STATE_DIR=$work/state
export RIMEFLAKE_NO_CONTAINER_WARNING=1

# A fresh project directory.
project() {
  mkdir -p "$1"
  printf '{ "name": "%s", "version": "1.0.0", "private": true }\n' "${1##*/}" >"$1/package.json"
}

# The README's Node snippet: the first ```js block after the line that opens with **Node**.
readme_snippet() {
  awk '/^\*\*Node\*\*/ { node = 1 } node && /^```js$/ { on = 1; next } on && /^```$/ { exit } on' "$root/README.md"
}

contents() {
  local listing
  listing=$(tar -tzf "$main")
  for f in package.json index.js index.mjs index.d.ts README.md LICENSE integration.js \
    otel.{js,mjs,d.ts} drizzle.{js,mjs,d.ts} typeorm.{js,mjs,d.ts}; do
    grep -qx "package/$f" <<<"$listing" || die "$main has no $f"
  done
  ! grep -q '\.node$' <<<"$listing" || die "the main package carries an addon: $listing"
  listing=$(tar -tzf "$addon")
  for f in package.json LICENSE rimeflake.$platform.node; do
    grep -qx "package/$f" <<<"$listing" || die "$addon has no $f"
  done
  # What a publish would send: every platform package as an optional dependency at this
  # version, no script that runs at install time, no internal name in the declarations.
  tar -xzf "$main" -C "$work" package/package.json package/index.d.ts
  node -e '
    const p = require(process.argv[1])
    const opt = p.optionalDependencies || {}
    const want = ["linux-x64-gnu", "linux-arm64-gnu", "linux-x64-musl", "linux-arm64-musl", "darwin-x64", "darwin-arm64"]
    for (const w of want) if (opt["@rimeflake/" + w] !== p.version) throw new Error("optionalDependencies lack @rimeflake/" + w + "@" + p.version + ": " + JSON.stringify(opt))
    if (Object.keys(opt).length !== want.length) throw new Error("unexpected optionalDependencies: " + JSON.stringify(opt))
    for (const s of ["preinstall", "install", "postinstall", "prepare"]) if ((p.scripts || {})[s]) throw new Error("install-time script " + s)
  ' "$work/package/package.json"
  ! grep -En '^export .*\b_[A-Za-z]|__napi' "$work/package/index.d.ts" || die "index.d.ts declares internal names"
  # The loader looks for the scoped name, and no unscoped one is left in what ships.
  tar -xzf "$main" -C "$work" package/index.js
  grep -q '@rimeflake/\${key}' "$work/package/index.js" || die "index.js does not load @rimeflake/<platform>"
  ! grep -n "rimeflake-\(linux\|darwin\|win32\|\\\${\)" "$work/package/index.js" "$work/package/package.json" ||
    die "the main package names an unscoped platform package"
  # The platform package: its scoped name, and its addon stripped of symbols and debug info (the
  # glibc it needs: test-elf.sh, over every ELF file of every artifact).
  mkdir "$work/addon"
  tar -xzf "$addon" -C "$work/addon" package/package.json "package/rimeflake.$platform.node"
  [ "$(node -p 'require(process.argv[1]).name' "$work/addon/package/package.json")" = "$addon_pkg" ] ||
    die "${addon##*/} is not the package $addon_pkg"
  if readelf -S --wide "$work/addon/package/rimeflake.$platform.node" | grep -Eq ' \.(symtab|debug_[a-z_]+) '; then
    die "the addon is not stripped"
  fi
  echo "main $(du -k "$main" | cut -f1) KiB, $addon_pkg $(du -k "$addon" | cut -f1) KiB," \
    "addon $(du -k "$work/addon/package/rimeflake.$platform.node" | cut -f1) KiB unpacked"
}

publish() {
  as_user npm publish "$addon"
  as_user npm publish "$main"
  # By name, from this registry only.
  [ "$(as_user npm view rimeflake version)" = "$version" ]
  [ "$(as_user npm view "$addon_pkg" version)" = "$version" ]
}

app=$work/app
install_by_name() {
  project "$app"
  (cd "$app" && as_user npm install rimeflake)
  [ -f "$app/node_modules/$addon_pkg/rimeflake.$platform.node" ] || die "npm did not install $addon_pkg"
  [ -f "$app/node_modules/rimeflake/LICENSE" ] && [ -f "$app/node_modules/$addon_pkg/LICENSE" ]
  # The libraries the integrations plug into are optional peers: npm leaves them out.
  local peer
  for peer in @opentelemetry/sdk-trace-base drizzle-orm typeorm; do
    [ ! -e "$app/node_modules/$peer" ] || die "npm install rimeflake installed the optional peer $peer"
  done
  # The installed copy is what loads, not the checkout.
  local resolved
  resolved=$(cd "$app" && as_user node -p "require.resolve('rimeflake')")
  [[ "$resolved" == "$app/"* ]] || die "rimeflake resolves to $resolved"
}

# The README's snippet as written (CommonJS), and as an ES module (its require as an import).
readme_cjs() {
  readme_snippet >"$app/readme.cjs"
  grep -q "require('rimeflake')" "$app/readme.cjs" || die "no Node snippet in README.md"
  local out
  out=$(cd "$app" && as_user node readme.cjs)
  echo "$out"
  grep -Eq '^true [0-9]{4}-' <<<"$out" || die "unexpected output: $out"
}

as_import() {
  sed -E "s/^const \{ (.*) \} = require\('rimeflake'\)/import { \1 } from 'rimeflake'/"
}

readme_esm() {
  readme_snippet | as_import >"$app/readme.mjs"
  grep -q "^import .* from 'rimeflake'" "$app/readme.mjs"
  local out
  out=$(cd "$app" && as_user node readme.mjs)
  echo "$out"
  grep -Eq '^true [0-9]{4}-' <<<"$out" || die "unexpected output: $out"
}

examples_cjs_esm() {
  cp "$root/examples/node/quickstart.js" "$root/examples/node/quickstart.mjs" "$app/"
  (cd "$app" && as_user node quickstart.js && as_user node quickstart.mjs)
  # A memory backend, a fixed worker ID, the error classes and skywalking (the former pack test).
  cat >"$app/check.cjs" <<'EOF'
const { Generator, decode, ConfigError, RimeflakeError } = require('rimeflake')
const gen = new Generator({ backend: 'memory', workerId: 4 })
const id = gen.nextId()
if (decode(id).workerId !== 4) throw new Error('worker ID')
if (!(ConfigError.prototype instanceof RimeflakeError)) throw new Error('error classes')
try { new Generator({ workerID: 4 }) } catch (e) { if (!(e instanceof TypeError) || !/did you mean 'workerId'/.test(e.message)) throw e }
// The tests' and the benchmark's exports (the internals feature) are not in what ships.
const rf = require('rimeflake')
const internal = Object.keys(rf).concat(Object.getOwnPropertyNames(Generator.prototype)).filter((k) => k.startsWith('_'))
if (internal.length) throw new Error('internal names shipped: ' + internal.join(', '))
console.log(String(id))
EOF
  cat >"$app/check.mjs" <<'EOF'
import { Generator, skywalking, VERSION } from 'rimeflake'
const gen = new Generator({ backend: 'memory', workerId: 5 })
console.log(gen.nextIdString(), skywalking.globalId(), VERSION)
EOF
  local out
  out=$(cd "$app" && as_user node check.cjs)
  [[ "$out" =~ ^[0-9]+$ ]] || die "check.cjs printed: $out"
  out=$(cd "$app" && as_user node check.mjs)
  [[ "$out" =~ ^[0-9]+\ [0-9a-f]{32}\.[0-9]+\.[0-9]+\ $version$ ]] || die "check.mjs printed: $out"
}

# TypeScript with tsc's defaults and --strict: no tsconfig, no @types/node, no lib setting. Its
# own project, an ES module one ("type": "module"), as tsc's default output is ES modules.
typescript_check() {
  local ts=$work/ts f
  project "$ts"
  node -e 'const f = process.argv[1], p = require(f); p.type = "module"; require("fs").writeFileSync(f, JSON.stringify(p))' "$ts/package.json"
  (cd "$ts" && as_user npm install rimeflake && as_user npm install --save-dev "$typescript")
  readme_snippet | as_import >"$ts/readme.ts"
  cp "$root/examples/node/quickstart.ts" "$ts/quickstart.ts"
  for f in readme quickstart; do
    (cd "$ts" && as_user ./node_modules/.bin/tsc --strict "$f.ts")
    [ -f "$ts/$f.js" ] || die "tsc wrote no $f.js"
    (cd "$ts" && as_user node "$f.js")
  done
}

# The main package alone: npm told to leave optional dependencies out.
without_addon() {
  local bare=$work/bare out
  project "$bare"
  (cd "$bare" && as_user npm install --omit=optional rimeflake)
  [ -d "$bare/node_modules/rimeflake" ] || die "rimeflake was not installed"
  [ ! -e "$bare/node_modules/$addon_pkg" ] || die "$addon_pkg was installed although optional packages were omitted"
  for entry in "require('rimeflake')" "import('rimeflake').catch((e) => { console.error(e.message); process.exit(1) })"; do
    if out=$(cd "$bare" && as_user node -e "$entry" 2>&1); then die "rimeflake loaded without $addon_pkg"; fi
    echo "$out" | grep -m1 -E 'rimeflake' || true
    grep -q "is in the package $addon_pkg, which is not installed" <<<"$out" || die "the error does not name $addon_pkg: $out"
    grep -q "npm install $addon_pkg@$version" <<<"$out" || die "the error does not say how to install it: $out"
    ! grep -qi 'npm has a bug' <<<"$out" || die "the error gives npm's optional-dependency advice: $out"
  done
}

# The code blocks of a docs page, in order, each into $dir/<page>-<n>.js or .mjs (a block with
# import statements is an ES module); prints the files' names and the blocks' info strings.
page_blocks() {
  python3 - "$root/docs/$1.md" "$2" "$1" <<'EOF'
import re, sys
text, out, page = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
for n, (info, body) in enumerate(re.findall(r"^```js([^\n]*)\n(.*?)^```", text, flags=re.S | re.M)):
    ext = ".mjs" if re.search(r"^import\s", body, re.M) else ".js"
    name = f"{page}-{n}{ext}"
    open(f"{out}/{name}", "w").write(body)
    print(name, info.strip() or "-")
EOF
}

# rimeflake/otel, /drizzle and /typeorm from the installed package, with the libraries at the
# versions the tests pin (bindings-node's devDependencies, through verdaccio's uplink): the
# docs pages' JavaScript examples (on a throwaway PostgreSQL where they say with-postgres), and
# a TypeScript file on the subpaths' declarations (tsc --strict; skipLibCheck, as drizzle-orm's
# own declarations fail a full check).
integrations() {
  local libs name info
  libs=$(node -p '
    const d = require(process.argv[1]).devDependencies
    const want = ["@opentelemetry/api", "@opentelemetry/sdk-trace-base", "drizzle-orm", "@libsql/client", "pg", "typeorm"]
    want.map((n) => n + "@" + d[n]).join(" ")' "$root/bindings-node/package.json")
  # shellcheck disable=SC2086 # one word per package
  (cd "$app" && as_user npm install $libs)
  for page in opentelemetry drizzle typeorm; do
    while read -r name info; do
      echo "docs/$page.md: $name ($info)"
      if [ "$info" = with-postgres ]; then
        (cd "$app" && as_user "$root/scripts/with-postgres" bash -c 'DATABASE_URL=$RIMEFLAKE_TEST_POSTGRES_URL exec node "$1"' - "$name")
      else
        (cd "$app" && as_user node "$name")
      fi
    done < <(page_blocks "$page" "$app")
  done
  cp "$root/bindings-node/test/types/integrations.ts" "$app/integrations.ts"
  cp "$root/bindings-node/test/types/drizzle/usage.ts" "$app/drizzle-usage.ts"
  (cd "$app" && as_user npm install --save-dev "$typescript" @types/node@20 &&
    as_user ./node_modules/.bin/tsc --strict --noEmit --skipLibCheck --module nodenext \
      --target es2022 --types node integrations.ts drizzle-usage.ts)
}

check "the tarballs: LICENSE in both, optionalDependencies under @rimeflake/, no install script, a stripped addon" contents
check "npm publish of both tarballs to verdaccio" publish
check "npm install rimeflake by name into an empty project (and @rimeflake/$platform with it)" install_by_name
check "README's Node quick start (CommonJS)" readme_cjs
check "README's Node quick start (ES module)" readme_esm
check "examples/node quickstart.js and .mjs, and the former pack test's checks" examples_cjs_esm
check "README's quick start and examples/node/quickstart.ts: tsc --strict ($typescript, its defaults), then node" typescript_check
check "rimeflake/otel, /drizzle, /typeorm with their libraries: the docs' examples, tsc --strict" integrations
check "without the platform package (--omit=optional): the error names it and how to install it" without_addon
summary
