#!/usr/bin/env bash
# Compares rimeflake's own rows of the Node or Python benchmark at a past commit with the
# working tree's, in one run: the binding is built at <commit> (in a temporary git worktree)
# and in the working tree, alike (release, as make bench-node and make bench-python build it),
# then the working tree's bench script runs on each build in turns, TURNS times each (5 by
# default), the first of each round alternating, one process per turn, with --rimeflake-only
# (rimeflake's rows and the floors, printed as JSON). bench/turns/table.py prints the ratios
# (after / before); with --write it puts them in bench/RESULTS.md, under the Node or Python
# section, between <!-- node-turns:begin --> and <!-- node-turns:end --> (python-turns).
#
#   bench/turns/run.sh node <commit> [--write]     (make bench-node BEFORE=<commit> [WRITE=1])
#   bench/turns/run.sh python <commit> [--write]   (make bench-python BEFORE=<commit> [WRITE=1])
#
# Node needs bindings-node/node_modules (the napi CLI) and bench/node/node_modules, Python
# bench/python/.venv with maturin and the peers: the make targets install them first.
set -euo pipefail

usage="usage: bench/turns/run.sh node|python <commit> [--write]"
lang=${1:?$usage}
before=${2:?$usage}
write=${3:-}
case $lang in
  node | python) ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
export CARGO_TARGET_DIR=$target
work=$target/turns-$lang
turns=${TURNS:-5}
py=$root/bench/python/.venv/bin/python
rev=$(git -C "$root" rev-parse --short "$before^{commit}")
here=$(git -C "$root" rev-parse --short HEAD)
dirty=
if git -C "$root" status --porcelain -- crates/rimeflake "bindings-$lang" | grep -q .; then dirty=" (with uncommitted changes)"; fi
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# The commit's tree, checked out beside the working tree for the length of the run.
tree=$work/before-tree
git -C "$root" worktree remove --force "$tree" 2>/dev/null || true
git -C "$root" worktree prune
rm -rf "$work"
mkdir -p "$work/runs"
git -C "$root" worktree add --detach --quiet "$tree" "$rev"
trap 'git -C "$root" worktree remove --force "$tree"' EXIT

# build <label> <tree>: the binding of <tree> into $work/<label>, as the make targets build it.
build() {
  local out=$work/$1 src=$2
  case $lang in
    node)
      # The napi CLI of the working tree (the same version at every commit since it was pinned).
      [ -e "$src/bindings-node/node_modules" ] || ln -s "$root/bindings-node/node_modules" "$src/bindings-node/node_modules"
      (cd "$src/bindings-node" && ./node_modules/.bin/napi build --platform --no-js --features internals --release -o "$out" >&2)
      ;;
    python)
      "$root/bench/python/.venv/bin/maturin" build --quiet --release -m "$src/bindings-python/Cargo.toml" -o "$out/wheel" -i "$py" >&2
      "$py" -m pip install -q --disable-pip-version-check --no-deps --target "$out/lib" "$out"/wheel/rimeflake-*.whl
      ;;
  esac
}

# run <label> <tree>: one process of the working tree's bench script on that build.
run() {
  case $lang in
    node)
      NAPI_RS_NATIVE_LIBRARY_PATH=$(echo "$work/$1"/rimeflake.*.node) RIMEFLAKE_BENCH_LIB=$2/bindings-node \
        node "$root/bench/node/bench.js" --rimeflake-only
      ;;
    python)
      PYTHONPATH=$work/$1/lib "$py" "$root/bench/python/bench.py" --rimeflake-only
      ;;
  esac
}

echo "building the $lang binding at $rev and at $here$dirty (release)..." >&2
build before "$tree"
build after "$root"

for round in $(seq "$turns"); do
  if (( round % 2 )); then order="before after"; else order="after before"; fi
  for label in $order; do
    echo "turn $round/$turns: $label" >&2
    if [ "$label" = before ]; then src=$tree; else src=$root; fi
    run "$label" "$src" >"$work/runs/$round-$label.json"
  done
done

python3 "$root/bench/turns/table.py" "$lang" "$work/runs" "$rev" "$here$dirty" "$turns" "$load0" \
  "$root/bench/RESULTS.md" ${write:+"$write"}
