#!/usr/bin/env bash
# The install lines of README.md (its block that starts with `make dist`), run as written in a
# scratch directory where dist/ is $dist, with no Rust toolchain on PATH: the pip line in a fresh
# venv, the npm line in an empty project, the two tar lines; then what each installed is used.
set -euo pipefail
source "$(dirname "$0")/common.sh"

scratch work
ln -s "$dist" "$work/dist"
export RIMEFLAKE_STATE_DIR=$work/state RIMEFLAKE_NO_CONTAINER_WARNING=1
# npm as a user runs it, with a cache of its own (nothing installed before is reused).
export npm_config_cache=$work/npm-cache npm_config_audit=false npm_config_fund=false \
  npm_config_update_notifier=false

# The block's lines, with their comments.
block=$(awk '/^```sh no-run: make dist / { on = 1; next } on && /^```$/ { exit } on' "$root/README.md")
[ -n "$block" ] || die "README.md has no install block starting with make dist"
# The line that starts with $1, exactly one, without its comment.
line() {
  local found
  found=$(grep -E "^$1" <<<"$block") || die "README.md's install block has no line starting with '$1'"
  [ "$(wc -l <<<"$found")" = 1 ] || die "README.md's install block has more than one line starting with '$1'"
  sed 's/[[:space:]]*#.*$//' <<<"$found"
}
# Runs README line(s) from DIR (created), as the user would type them.
run_in() {
  local dir=$1
  shift
  mkdir -p "$dir"
  printf '%s\n' "$@"
  as_user bash -c "set -euo pipefail; cd $(printf %q "$dir"); $(printf '%s\n' "$@")"
}

first_line_builds() {
  [ "$(head -n 1 <<<"$block" | sed 's/[[:space:]]*#.*$//')" = "make dist" ] || die "the block does not start with make dist"
}

python_line() {
  as_user python3 -m venv "$work/venv"
  run_in "$work" "source venv/bin/activate" "$(line 'pip install ')"
  (cd "$work" && as_user venv/bin/python -W error -c '
import rimeflake, sys
with rimeflake.Generator(layout="twitter") as gen:
    a, b = gen.next_id(), gen.next_id()
assert a < b and rimeflake.__version__ == sys.argv[1], (a, b, rimeflake.__version__)
print("python:", a, b, rimeflake.decode(b, layout="twitter").datetime)' "$version")
}

node_line() {
  local app=$work/app
  mkdir -p "$app"
  printf '{ "name": "app", "version": "1.0.0", "private": true }\n' >"$app/package.json"
  ln -s "$dist" "$app/dist"
  run_in "$app" "$(line 'npm install ')"
  [ -f "$app/node_modules/@rimeflake/linux-x64-gnu/rimeflake.linux-x64-gnu.node" ] || die "no addon installed"
  (cd "$app" && as_user node -e '
const { Generator, VERSION } = require("rimeflake")
const gen = new Generator({ layout: "twitter" })
const a = gen.nextId(), b = gen.nextId()
if (!(a < b) || VERSION !== process.argv[1]) throw new Error(`${a} ${b} ${VERSION}`)
console.log("node:", String(a), String(b))
gen.close()' "$version")
}

tar_lines() {
  run_in "$work" "$(line "tar -xzf dist/rimeflake-$version-")" "$(line 'tar -xzf dist/rimeflake-cli-')"
  [ -f "$work/rimeflake-$version-$triple/include/rimeflake.h" ] || die "the C tarball did not unpack"
  local out
  out=$(as_user "$work/rimeflake-cli-$version-$triple/rimeflake" gen -n 2)
  echo "cli: $(tr '\n' ' ' <<<"$out")"
  [ "$(wc -l <<<"$out")" = 2 ] || die "rimeflake gen -n 2 printed: $out"
}

check "README's install block starts with make dist" first_line_builds
check "README's pip line, in a fresh venv; the package issues IDs" python_line
check "README's npm line, in an empty project; the package and @rimeflake/linux-x64-gnu issue IDs" node_line
check "README's tar lines; the CLI from its tarball issues IDs" tar_lines
summary
